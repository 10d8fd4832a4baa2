"""The text pages' building blocks (§14.56-§14.60, §14.64): the steps the pages call, the follow-up
experiments on tiny configurations, the committed artifact sets, and every exercise solution of the summary."""
import dataclasses
import math
import re
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import REPO, page_functions
from hypothesis import assume, given, settings
from hypothesis import strategies as st

# --- the summary's exercises: every solution cell runs and passes its own checks -------------------------------

def solution_cells() -> dict[int, str]:
    text = (REPO / "src" / "seqlab" / "book" / "pages" / "summary.md").read_text(encoding="utf-8")
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", text, flags=re.S)
    out = {}
    for cell in cells:
        m = re.search(r"^# Solution (\d+)", cell, flags=re.M)
        if m:
            assert re.search(r":tags: \[hide-(input|cell)\]", cell), f"solution {m.group(1)} is not folded"
            out[int(m.group(1))] = "\n".join(line for line in cell.split("\n") if not line.startswith(":tags:"))
    return out


def test_every_exercise_has_a_solution_and_every_group_an_exercise():
    text = (REPO / "src" / "seqlab" / "book" / "pages" / "summary.md").read_text(encoding="utf-8")
    asked = [int(n) for n in re.findall(r"^\*\*(\d+) \(", text, flags=re.M)]
    assert asked and sorted(solution_cells()) == asked
    for group in ("recurrence", "attention", "the Transformer", "text", "forecasting"):
        assert re.search(rf"^\*\*\d+ \({group}\)\.\*\*", text, flags=re.M), f"no exercise on {group}"


@pytest.mark.parametrize("number", sorted(solution_cells()))
def test_exercise_solution_runs(number, capsys):
    exec(compile(solution_cells()[number], f"summary.md solution {number}", "exec"), {})
    assert capsys.readouterr().out.strip(), "a solution prints its answer"


# --- §14.56: the BPE walk-through and round trips ---------------------------------------------------------------

def test_merge_trace_follows_the_library():
    from seqlab.chapter import s14_56
    from seqlab.text import BPETokenizer

    trace = s14_56.merge_trace()
    assert len(trace) == s14_56.MERGES
    assert list(trace.new_id) == list(range(256, 256 + len(trace)))
    assert (trace.tokens_after < trace.tokens_before).all()
    assert (trace.tokens_before.iloc[1:].to_numpy() == trace.tokens_after.iloc[:-1].to_numpy()).all()
    # the merged pair is a most frequent one: its count heads the candidate list
    for r in trace.itertuples():
        first = int(re.search(r"\((\d+)\)", r.most_frequent_pairs).group(1))
        assert r.count == first
    tok = BPETokenizer().train(s14_56.SENTENCE, vocab_size=256 + len(trace))
    assert len(tok.encode(s14_56.SENTENCE)) == trace.tokens_after.iloc[-1]


def test_round_trip_bytes_never_lose_text():
    from seqlab.chapter import s14_56
    from seqlab.text import BPETokenizer, CharTokenizer

    text = "the king and the queen"
    rt = s14_56.round_trip({"char": CharTokenizer().train(text), "bpe": BPETokenizer().train(text, 260)}).set_index(
        "tokenizer")
    assert rt.lossless["bpe"] and rt.unknown_tokens["bpe"] == 0
    assert not rt.lossless["char"] and rt.unknown_tokens["char"] > 0


# --- the experiment's building blocks ----------------------------------------------------------------------------

def tiny_char_model(text, train):
    from seqlab.experiments import lm
    from seqlab.text import CharTokenizer
    from seqlab.text.corpus import split_train_val
    from seqlab.text.training import train_lm

    tok = CharTokenizer().train(text)
    tr, va = split_train_val(torch.tensor(tok.encode(text)))
    torch.manual_seed(0)
    model = lm.GPT(lm.chapter_gpt_config(tok.vocab_size))
    return model, tok, train_lm(model, tr, va, train).history


@pytest.fixture(scope="module")
def tiny():
    from seqlab.experiments import lm
    from seqlab.text.corpus import load_tinyshakespeare

    train = dataclasses.replace(lm.CHAPTER_TRAIN, max_iters=4, batch_size=2, eval_interval=2, eval_iters=1,
                                warmup_iters=1, lr_decay_iters=4)
    return train, load_tinyshakespeare()[:4000]


def test_bits_per_char_is_per_token_loss_over_characters(tiny):
    from seqlab.experiments import lm, lm_followups
    from seqlab.text import BPETokenizer

    train, text = tiny
    model, tok, _ = tiny_char_model(text, train)
    ev = lm_followups.bits_per_char(model, tok, text[:1000])
    assert ev["chars_per_token"] == 1.0 and math.isclose(ev["bits_per_char"], ev["nats_per_token"] / math.log(2))
    bpe = BPETokenizer().train(text, 300)
    gpt = lm.GPT(lm.chapter_gpt_config(bpe.vocab_size))
    ev = lm_followups.bits_per_char(gpt, bpe, text[:2000])
    assert ev["chars_per_token"] > 1
    assert math.isclose(ev["bits_per_char"], ev["nats_per_token"] / ev["chars_per_token"] / math.log(2))
    assert ev["eval_chars"] == round(ev["eval_tokens"] * ev["chars_per_token"])


def test_entropy_probe_records_without_changing():
    from seqlab.text.sampling import EntropyProbe, TopK, apply_processors, distribution_entropy

    logits = torch.randn(3, 20)
    probe = EntropyProbe()
    out = apply_processors(logits, [TopK(4), probe])
    assert torch.equal(out, apply_processors(logits, [TopK(4)]))
    ent, kept = probe.per_row()
    assert torch.allclose(ent, distribution_entropy(out).double()) and (kept == 4).all()
    assert (ent < distribution_entropy(logits).double()).all()


def test_sweep_config_reproduces_the_chapter_recipe():
    from seqlab.experiments import lm, lm_followups

    assert lm_followups.sweep_train_config(lm.CHAPTER_TRAIN.max_iters) == lm.CHAPTER_TRAIN
    assert lm_followups.sweep_train_config(1500).lr_decay_iters == 1500


def test_followup_experiments_tiny(tmp_path, tiny):
    from seqlab.experiments import lm_followups
    from seqlab.store import verify_artifacts

    train, text = tiny
    judge, tok = lm_followups.run_lm_sweep(tmp_path, log=lambda *_: None, iters=(4, 6), train=train, text=text)
    curves = pd.read_csv(tmp_path / lm_followups.SWEEP_NAME / "curves.csv")
    assert set(curves.model) == {"GPT", "LSTM"} and set(curves.budget_iters) == {4, 6}
    with pytest.raises(Exception, match="stale"):
        lm_followups.load_sweep_artifacts(tmp_path)
    char = tiny_char_model(text, train)
    lm_followups.run_lm_bpe(tmp_path, log=lambda *_: None, vocabs=(270,), train=train, text=text, char_model=char)
    res = pd.read_csv(tmp_path / lm_followups.BPE_NAME / "results.csv").set_index("tokenizer")
    assert list(res.index) == ["character", "byte BPE (270)"]
    assert res.eval_chars.nunique() <= 2 and res.iterations.nunique() == 1
    lm_followups.run_lm_decoding(tmp_path, log=lambda *_: None, gpt=char[0], tok=char[1], judge=judge,
                       grid={"temperature": (0.5, 1.0), "top_p": (1.0,)}, samples=2, tokens=12)
    verify_artifacts(lm_followups.DECODING_NAME, root=tmp_path)
    scores = pd.read_csv(tmp_path / lm_followups.DECODING_NAME / "samples.csv")
    assert len(scores) == 6
    same = scores.set_index(["knob", "value", "sample"])
    # top-p 1.0 filters nothing and draws with the same seed: the same samples as temperature 1.0
    assert np.allclose(same.loc["top_p"].nll_gpt.to_numpy(), same.loc[("temperature", 1.0)].nll_gpt.to_numpy())


# --- the committed follow-up sets ------------------------------------------------------------------------------

def test_committed_followups_load_and_refuse_changes(tmp_path):
    from seqlab.experiments import lm_followups
    from seqlab.store import ROOT, ArtifactError

    curves, _ = lm_followups.load_sweep_artifacts()
    assert set(curves.budget_iters) == set(lm_followups.SWEEP_ITERS)
    results, _, samples, _ = lm_followups.load_bpe_artifacts()
    assert list(results.tokenizer) == ["character"] + [f"byte BPE ({v})" for v in lm_followups.BPE_VOCABS]
    assert results.eval_chars.max() / results.eval_chars.min() < 1.01  # the same validation text for all
    scores, texts, _ = lm_followups.load_decoding_artifacts()
    assert set(scores.knob) == set(lm_followups.DECODING_GRID) and set(texts) == set(lm_followups.DECODING_GRID)
    root = tmp_path / "artifacts"
    for name in ("lm", lm_followups.DECODING_NAME):
        shutil.copytree(ROOT / name, root / name)
    with open(root / lm_followups.DECODING_NAME / "samples.csv", "a") as f:
        f.write("temperature,9,0,0,0,0,0,0,0,0,0,0\n")
    with pytest.raises(ArtifactError, match="does not match its manifest"):
        lm_followups.load_decoding_artifacts(root)


# --- §14.57-§14.60 steps ------------------------------------------------------------------------------------------

def test_crossover_is_found_and_not_invented():
    from seqlab.chapter import s14_57

    def frame(gpt, lstm):
        rows = [dict(model="GPT", seconds=s, val_loss_nats=v) for s, v in gpt]
        rows += [dict(model="LSTM", seconds=s, val_loss_nats=v) for s, v in lstm]
        return pd.DataFrame(rows)

    crossing = frame([(10, 2.0), (100, 1.0)], [(10, 1.8), (100, 1.2)])
    c = s14_57.crossover(crossing)
    assert c["ahead_at_start"] == "LSTM" and c["ahead_at_end"] == "GPT" and 10 < c["at"] < 100
    parallel = frame([(10, 2.0), (100, 1.5)], [(10, 1.8), (100, 1.3)])
    c = s14_57.crossover(parallel)
    assert math.isnan(c["at"]) and c["ahead_at_end"] == "LSTM" and c["gap_at_end_nats"] == pytest.approx(0.2)
    assert np.isnan(s14_57.loss_at(parallel, "GPT", [5.0])[0])  # never extrapolated


def test_seconds_per_step_ignores_a_slowed_stretch():
    from seqlab.chapter import s14_57

    run = pd.DataFrame(dict(iter=[25, 50, 75, 100], seconds=[2.5, 5.0, 20.0, 22.5], budget_iters=100))
    assert s14_57.seconds_per_step(run) == pytest.approx(0.1)


def test_matched_diversity_interpolates_along_each_knob():
    from seqlab.chapter import s14_59

    rows = []
    for knob, slope in (("temperature", 1.0), ("top_p", 0.5)):
        for value, ent in ((0.5, 1.0), (1.0, 2.0)):
            rows.append(dict(knob=knob, value=value, entropy=ent, nll_judge=slope * ent, nll_judge_se=0.1 * slope,
                             nll_gpt=ent, repetition_rate=0.0, distinct_3=ent / 2, tokens_kept=3.0))
    m = s14_59.at_matched_diversity(pd.DataFrame(rows), on="entropy", levels=(0.5,)).set_index("knob")
    assert np.allclose(m.target, 1.5) and np.allclose(m.setting, 0.75)
    assert m.nll_judge["temperature"] == pytest.approx(1.5) and m.nll_judge["top_p"] == pytest.approx(0.75)
    rank = s14_59.rank_rules(m.reset_index()).iloc[0]
    assert rank.best == "top_p" and rank.worst == "temperature"
    vs = s14_59.against(m.reset_index()).iloc[0]  # top-p minus temperature, errors combined
    assert vs.knob == "top_p" and vs.difference == pytest.approx(-0.75)
    assert vs.se == pytest.approx(math.hypot(0.05, 0.1)) and vs.settled


def test_explorer_is_an_offline_slider():
    from seqlab.chapter import s14_58
    from seqlab.experiments.lm import load_lm_artifacts

    gpt, tok, *_ = load_lm_artifacts()
    fig = s14_58.explorer(gpt, tok, temperatures=(0.5, 1.0), top_ps=(0.5, 1.0))
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 4 and len(fig.data) == 4 * len(s14_58.EXPLORER_PROMPTS)
    ys = [tuple(fig.data[i].y) for i in range(0, len(fig.data), len(s14_58.EXPLORER_PROMPTS))]
    assert len(set(ys)) == len(ys)  # every position draws something different
    for tr in fig.data:
        assert 0 <= min(tr.y) and sum(tr.y) <= 1 + 1e-6


def test_step_cost_measures_both_paths():
    from seqlab.chapter import s14_60

    steps = s14_60.step_cost(contexts=(8, 64), repeats=1)
    assert list(steps.context) == [8, 64] and (steps.seconds_with_cache > 0).all()
    assert (steps.flops_without_cache > steps.flops_with_cache).all()
    assert steps.flops_with_cache.is_monotonic_increasing  # a cached step still grows with the context


# --- the page's own sampling code, pinned to the library --------------------------------------------------------

PAGE_FUNCTIONS = ("softmax_with_temperature", "next_logits", "sample_step", "generate_uncached", "top_k_filter",
                  "top_p_filter", "min_p_filter", "decoding_rule", "generate_cached")


@pytest.fixture(scope="module")
def page_code():
    """The functions the text page's visible cells define, compiled from the page itself."""
    return page_functions("text", PAGE_FUNCTIONS, {"torch": torch})


def test_page_rules_equal_the_processors(page_code):
    from seqlab.text.sampling import MinP, Temperature, TopK, TopP, apply_processors

    g = torch.Generator().manual_seed(0)
    for _ in range(200):
        z = 3 * torch.randn(66, generator=g)
        tied = z.clone()
        tied[:3] = tied[3]  # ties with the k-th largest are kept by both
        for tau in (0.25, 1.0, 1.7):
            lib = apply_processors(z[None], [Temperature(tau)]).softmax(-1)[0]
            assert torch.allclose(page_code["softmax_with_temperature"](z, tau), lib, atol=1e-6)
        for k in (1, 4, 10, 66):
            assert torch.equal(page_code["top_k_filter"](tied, k), apply_processors(tied[None], [TopK(k)])[0])
        for p in (0.05, 0.5, 0.9, 0.99, 1.0):
            assert torch.equal(page_code["top_p_filter"](z, p), apply_processors(z[None], [TopP(p)])[0])
        for p in (0.0, 0.05, 0.1, 0.5, 1.0):
            assert torch.equal(page_code["min_p_filter"](z, p), apply_processors(z[None], [MinP(p)])[0])
        rule = page_code["decoding_rule"](tau=0.8, k=10, p=0.9)
        lib = apply_processors(z[None], [Temperature(0.8), TopK(10), TopP(0.9)]).softmax(-1)[0]
        assert torch.allclose(rule(z), lib, atol=1e-6)


def test_page_step_equals_sample_next(page_code):
    from seqlab.text.sampling import Temperature, TopP, sample_next

    z = torch.randn(66, generator=torch.Generator().manual_seed(1))
    rule = page_code["decoding_rule"](tau=0.7, p=0.9)
    for seed in range(50):
        mine = page_code["sample_step"](z, rule, torch.Generator().manual_seed(seed))
        lib = sample_next(z[None], [Temperature(0.7), TopP(0.9)], generator=torch.Generator().manual_seed(seed))
        assert mine.item() == lib.item()


@pytest.mark.parametrize("window", [64, 16])
def test_page_loops_equal_generate(page_code, window):
    """The page's loops, with and without the cache, give seqlab's tokens (also once the window is full)."""
    from seqlab.nn import GPT, GPTConfig
    from seqlab.text.generation import generate
    from seqlab.text.sampling import Temperature, TopK

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=30, block_size=window, num_layers=2, num_heads=2, d_model=32))
    prompt = torch.tensor([[1, 2, 3, 4, 5]])
    rule = page_code["decoding_rule"](tau=0.9, k=8)
    seeded = lambda: torch.Generator().manual_seed(3)
    lib = {cached: generate(model, prompt, 40, [Temperature(0.9), TopK(8)], use_cache=cached, generator=seeded())
           for cached in (False, True)}
    assert torch.equal(page_code["generate_uncached"](model, prompt, 40, rule, seeded()), lib[False])
    assert torch.equal(page_code["generate_cached"](model, prompt, 40, rule, seeded()), lib[True])


def test_page_next_logits_equal_the_chapter_step(page_code):
    """§14.58's cell reads the model's next-token logits as the chapter's step does, also past the window."""
    from seqlab.chapter import s14_58
    from seqlab.experiments.lm import load_lm_artifacts

    gpt, tok, *_ = load_lm_artifacts()
    for text in (s14_58.CONTEXT, "KING RICHAR", "ROMEO:\n" * 20):
        assert torch.equal(page_code["next_logits"](gpt, tok, text), s14_58.next_logits(gpt, tok, text))


def test_page_loops_write_with_the_stored_model(page_code):
    from seqlab.experiments.lm import load_lm_artifacts
    from seqlab.text.generation import generate
    from seqlab.text.sampling import TopP

    gpt, tok, *_ = load_lm_artifacts()
    prompt = torch.tensor([tok.encode("ROMEO:\n")])
    rule = page_code["decoding_rule"](p=0.9)
    mine = page_code["generate_cached"](gpt, prompt, 80, rule, torch.Generator().manual_seed(1))
    lib = generate(gpt, prompt, 80, [TopP(0.9)], generator=torch.Generator().manual_seed(1))
    assert torch.equal(mine, lib) and tok.decode(mine[0].tolist()).startswith("ROMEO:\n")


# --- timing references ----------------------------------------------------------------------------------------

def test_committed_timing_references_load():
    from seqlab.chapter import s14_57, s14_60

    kv = s14_60.kv_reference()
    assert list(kv["step_cost"].context) == list(s14_60.STEP_CONTEXTS)
    assert list(kv["generation_cost"].new_tokens) == list(s14_60.NEW_TOKENS)
    head = s14_60.kv_speedup()
    assert head["step_speedup"] == kv["step_cost"].speedup.iloc[-1] and head["context_hi"] == 1024
    steps = s14_57.step_summary(s14_57.step_reference()["steps"])
    assert set(steps.model) == {"GPT", "LSTM"} and (steps.repeats == s14_57.STEP_REPEATS).all()


def test_timing_references_are_measured_under_heavy_eval(tmp_path, monkeypatch):
    from seqlab.chapter import s14_57, s14_60

    monkeypatch.setenv("HEAVY_EVAL", "1")
    monkeypatch.setattr(s14_60, "STEP_CONTEXTS", (8, 16))
    monkeypatch.setattr(s14_60, "NEW_TOKENS", (4,))
    monkeypatch.setattr(s14_60, "REFERENCE_REPEATS", 1)
    monkeypatch.setattr(s14_60, "REFERENCE_GENERATION_REPEATS", 1)
    ref = s14_60.kv_reference(root=tmp_path)
    assert list(ref["step_cost"].context) == [8, 16] and ref["generation_cost"].identical_tokens.all()
    assert ref.machine["cores"] >= 1
    monkeypatch.setattr(s14_57, "STEP_REPEATS", 1)
    monkeypatch.setattr(s14_57, "STEP_WARMUP", 0)
    steps = s14_57.step_reference(root=tmp_path)["steps"]
    assert sorted(steps.model) == ["GPT", "LSTM"] and (steps.seconds > 0).all()


def test_step_cost_figure_names_the_statistic_of_the_reference():
    from seqlab.chapter import s14_60

    df = pd.DataFrame(dict(context=[16, 32], seconds_with_cache=[1e-3, 1.1e-3], seconds_without_cache=[2e-3, 4e-3]))
    static, _ = s14_60.step_cost_figure(df)
    assert f"median of {s14_60.REFERENCE_REPEATS} repeats" in static.labels.subtitle
    assert "median of 3 repeats" in s14_60.step_cost_figure(df, repeats=3)[0].labels.subtitle
    assert "best of" not in static.labels.subtitle


def test_kv_notes_carry_the_claims_verdicts():
    """The CLI notes of §14.60 hand on the claims' verdicts, not fixed verdicts of their own."""
    from seqlab.chapter import s14_60
    from seqlab.chapter._util import provenance
    from seqlab.claims import Claim

    ref = s14_60.kv_reference()
    expected = {c.name: c.holds for c in s14_60.kv_claims(ref["step_cost"], ref["generation_cost"])}

    class Ctx:
        figures = False

    _, _, notes = s14_60.run(Ctx())
    assert {c.name: c.holds for c in notes if isinstance(c, Claim)} == expected
    # besides the verdicts, only where the numbers come from
    assert [n for n in notes if isinstance(n, str)] == [provenance("timing_kv_cache", heavy="measured now")]


# --- §14.56's printed token splits: lines break between tokens, never inside one --------------------------------

@pytest.mark.parametrize("width", [1, 5, 8, 72])
def test_bar_lines_breaks_only_between_tokens(width):
    from seqlab.chapter.s14_56 import bar_lines

    pieces = ["th", "e", "␣kin", "g", "␣an", "d", "␣th", "e", "␣quee", "n"]
    out = bar_lines(pieces, width)
    assert out.replace("|\n", "|").split("|") == pieces  # every token whole, each line ending on a bar
    assert all(len(line) <= width or "|" not in line.rstrip("|") for line in out.split("\n"))
    assert bar_lines(["ab", "c", "ddddd", "ee"], 9) == "ab|c|\nddddd|ee"  # worked by hand


def test_bar_lines_rejects_a_width_below_one():
    from seqlab.chapter.s14_56 import bar_lines

    with pytest.raises(ValueError, match="width"):
        bar_lines(["a"], 0)


@pytest.fixture(scope="module")
def matching_cells():
    return page_functions("text", ("value_at",), {"np": np})


@settings(max_examples=60, deadline=None)
@given(xs=st.lists(st.floats(0, 1), min_size=2, max_size=8, unique=True), frac=st.floats(0, 1),
       seed=st.integers(0, 1000))
def test_the_pages_interpolation_equals_numpy(matching_cells, xs, frac, seed):
    """§14.59's matched-diversity cell: a target inside the settings' range, read as np.interp reads it."""
    x = np.sort(np.asarray(xs))
    assume(np.min(np.diff(x)) > 1e-6)
    y = np.random.default_rng(seed).normal(size=len(x))
    target = x[0] + frac * (x[-1] - x[0])
    assert matching_cells["value_at"](target, x, y) == pytest.approx(np.interp(target, x, y), abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(r=st.integers(2, 40), c=st.integers(2, 40), seed=st.integers(0, 1000))
def test_the_pages_newton_schulz_equals_the_optimizer(r, c, seed):
    """§14.57's cell writes the Muon orthogonalisation out; the optimizer's batched one gives the same matrix."""
    from seqlab.text.optim import newton_schulz

    cell = page_functions("text", ("orthogonalize",), {"torch": torch})["orthogonalize"]
    m = torch.randn(r, c, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    torch.testing.assert_close(cell(m), newton_schulz(m), rtol=1e-9, atol=1e-9)
