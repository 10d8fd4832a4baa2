"""The encoder-decoder Transformer (masks, shifted targets), its experiment and artifacts, and the §14.53-§14.55 page.

No timing is asserted anywhere: timings flip under load.
"""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from seqlab.analysis.complexity import (
    attention_core_flops,
    attention_flops,
    flop_crossover,
    gflops,
    recurrent_flops,
)
from seqlab.errors import InvalidParameterError
from seqlab.nn import Seq2SeqTransformer, padding_mask, shift_right, source_mask

PAGE = Path(__file__).resolve().parents[1] / "src" / "seqlab" / "book" / "pages" / "transformer.md"


def _model(norm_first=True, seed=0, layers=2):
    torch.manual_seed(seed)
    return Seq2SeqTransformer(12, 16, 2, 32, layers, layers, norm_first=norm_first).eval()


# --- shifted decoder inputs ------------------------------------------------------------------------------------------

def test_shift_right_is_start_plus_target_without_its_last_token():
    tgt = torch.tensor([[3, 4, 5, 6], [7, 8, 9, 10]])
    assert shift_right(tgt, 11).tolist() == [[11, 3, 4, 5], [11, 7, 8, 9]]
    assert shift_right(tgt[:, :1], 11).tolist() == [[11], [11]]
    with pytest.raises(InvalidParameterError):
        shift_right(torch.tensor([1, 2, 3]), 0)


def test_forward_decodes_the_shifted_target():
    m = _model()
    src, tgt = torch.randint(1, 10, (3, 6)), torch.randint(1, 10, (3, 5))
    with torch.no_grad():
        logits, none = m(src, tgt)
        memory = m.encode(src, source_mask(src))
        by_hand = m.decode(shift_right(tgt, m.start_token), memory, source_mask(src))
    assert none is None and logits.shape == (3, 5, 12)
    assert torch.equal(logits, by_hand)


def test_greedy_decoding_agrees_with_teacher_forcing_on_its_own_output():
    m = _model(seed=3)
    src = torch.randint(1, 10, (4, 7))
    out, _ = m.greedy_decode(src, 6)
    with torch.no_grad():
        logits, _ = m(src, out)
    assert out.shape == (4, 6)
    assert torch.equal(logits.argmax(-1), out)  # position i's prediction only saw out[:, :i]


# --- masks ------------------------------------------------------------------------------------------------------------

def test_source_mask_from_lengths_or_pad_token():
    src = torch.tensor([[5, 6, 0, 0], [1, 2, 3, 0]])
    by_pad = source_mask(src, pad_token=0)
    by_len = source_mask(src, lengths=torch.tensor([2, 3]))
    assert by_pad.shape == (2, 1, 1, 4) and torch.equal(by_pad, by_len)
    assert torch.equal(by_len, padding_mask(torch.tensor([2, 3]), 4))


@pytest.mark.parametrize("norm_first", [True, False])
def test_padded_source_positions_have_no_influence(norm_first):
    m = _model(norm_first)
    lengths = torch.tensor([6, 3, 4])
    src = torch.randint(1, 10, (3, 6))
    tgt = torch.randint(1, 10, (3, 5))
    pad = ~padding_mask(lengths, 6)[:, 0, 0]
    other = src.clone()
    other[pad] = (src[pad] % 9) + 1  # different tokens, same lengths
    assert not torch.equal(other, src)
    with torch.no_grad():
        a = m(src, tgt, lengths)[0]
        b = m(other, tgt, lengths)[0]
        mem_a = m.encode(src, source_mask(src, lengths=lengths))
        mem_b = m.encode(other, source_mask(other, lengths=lengths))
        # control: the same change matters once every position counts as real
        full = torch.full_like(lengths, 6)
        c, d = m(src, tgt, full)[0], m(other, tgt, full)[0]
    assert torch.equal(a, b)
    assert torch.equal(mem_a[~pad], mem_b[~pad])  # real positions of the memory are untouched
    assert (c - d).abs().max() > 1e-3


@pytest.mark.parametrize("norm_first", [True, False])
def test_a_future_target_token_has_no_influence(norm_first):
    m = _model(norm_first, seed=1)
    src, tgt = torch.randint(1, 10, (2, 6)), torch.randint(1, 10, (2, 7))
    with torch.no_grad():
        base = m(src, tgt)[0]
        for k in range(tgt.size(1)):
            changed = tgt.clone()
            changed[:, k] = changed[:, k] % 9 + 1
            out = m(src, changed)[0]
            # decoder position i reads y_1..y_{i-1}: y_k (0-based) is first read at position k + 1
            assert torch.equal(out[:, : k + 1], base[:, : k + 1]), k
            if k + 1 < tgt.size(1):
                assert (out[:, k + 1:] - base[:, k + 1:]).abs().max() > 0


def test_cross_attention_weights_are_distributions_that_skip_padding():
    m = _model()
    src, tgt = torch.randint(1, 10, (2, 6)), torch.randint(1, 10, (2, 4))
    lengths = torch.tensor([6, 2])
    maps = m.cross_attention(src, tgt, lengths)
    assert len(maps) == 2 and maps[0].shape == (2, 2, 4, 6)
    assert torch.allclose(maps[0].sum(-1), torch.ones(2, 2, 4), atol=1e-6)
    assert maps[0][1, :, :, 2:].abs().max() == 0


def test_constructor_rejects_bad_tokens():
    with pytest.raises(InvalidParameterError):
        Seq2SeqTransformer(10, pad_token=3, start_token=3)
    with pytest.raises(InvalidParameterError):
        Seq2SeqTransformer(10, start_token=10)
    with pytest.raises(InvalidParameterError):
        Seq2SeqTransformer(2)


# --- the experiment ----------------------------------------------------------------------------------------------------

def test_warmup_of_one_step_is_the_chapter_loop():
    from seqlab.experiments.transformer_tasks import make_model
    from seqlab.tasks.seq2seq import fit_seq2seq, random_tokens

    torch.manual_seed(0)
    X = random_tokens(16, 5, 8)
    runs = []
    for wu in (0, 1):
        torch.manual_seed(1)
        runs.append(fit_seq2seq(make_model("Transformer", 8), X, X.flip(1), 4, 5e-3, warmup=wu))
    assert runs[0].losses == runs[1].losses
    torch.manual_seed(1)
    slow = fit_seq2seq(make_model("Transformer", 8), X, X.flip(1), 4, 5e-3, warmup=3)
    assert slow.losses[0] == runs[0].losses[0] and slow.losses[1] != runs[0].losses[1]


@pytest.mark.parametrize("lr, warmup", [(0.03, 100), (5e-3, 7), (0.01, 1)])
def test_page_warmup_schedule_is_the_loops_own(lr, warmup):
    """The page writes the linear warm-up out (eq-warmup); step for step it is the learning rate the training loop's
    optimizer held, read from the optimizer (s14_53.warmup_rates), up to and past the end of the warm-up."""
    from conftest import page_functions

    from seqlab.chapter import s14_53

    warmup_lr = page_functions("transformer", ("warmup_lr",), {})["warmup_lr"]
    steps = warmup + 3
    used = s14_53.warmup_rates(lr, warmup, steps)
    assert len(used) == steps
    assert [warmup_lr(s, lr, warmup) for s in range(steps)] == used
    assert used[warmup - 1] == used[-1] == lr and (warmup == 1 or used[0] < lr)
    assert s14_53.schedule_claims(used, used)[0].holds


def test_gru_copy_reproduces_the_chapters_copy_experiment():
    from seqlab.experiments.seq2seq import copy_experiment
    from seqlab.experiments.transformer_tasks import task_experiment

    kw = dict(n_train=24, epochs=3, n_test=16)
    ours = task_experiment("GRU", "copy", 5, 41, **kw)
    chapter = copy_experiment(5, None, 41, **kw)
    for a, b in (("final_loss", "final_loss"), ("heldout_free_running", "heldout_free_running"),
                 ("heldout_teacher_forced", "heldout_teacher_forced"), ("train_teacher_forced", "copy_accuracy")):
        assert ours[a] == chapter[b], a


def test_experiment_writes_verified_artifacts_and_refuses_a_stale_set(tmp_path, monkeypatch):
    from seqlab.experiments import transformer_tasks as tt
    from seqlab.store import ArtifactError, verify_artifacts

    monkeypatch.setattr(tt, "LENGTHS", (4, tt.ATTENTION_T))
    monkeypatch.setattr(tt, "PROTOCOL", dict(tt.PROTOCOL, epochs=2, n_train=12, n_test=6))
    monkeypatch.setattr(tt, "WARMUP_STUDY", dict(tt.WARMUP_STUDY, seeds=[1], lrs=[1e-2], warmup_steps=1))
    tt.run_transformer_tasks(tmp_path, workers=1, log=lambda *_: None)
    manifest = verify_artifacts(tt.NAME, tt.experiment_config(), tmp_path)
    assert manifest["config"]["protocol"]["epochs"] == 2
    res = tt.load_transformer_tasks(tmp_path)
    assert len(res["comparison"]) == len(tt.TASKS) * len(tt.MODELS) * 2
    assert len(res["warmup"]) == 4 and set(res["warmup"].norm) == {"pre-LN", "post-LN"}
    assert set(res["cross_attention"].task) == set(tt.TASKS)
    monkeypatch.undo()
    with pytest.raises(ArtifactError, match="stale"):
        tt.load_transformer_tasks(tmp_path)


def test_committed_artifacts_verify_and_hold_every_run():
    from seqlab.experiments import transformer_tasks as tt

    res = tt.load_transformer_tasks()
    comp, warm = res["comparison"], res["warmup"]
    assert len(comp) == len(tt.TASKS) * len(tt.MODELS) * len(tt.LENGTHS)
    w = tt.WARMUP_STUDY
    assert len(warm) == 2 * 2 * len(w["lrs"]) * len(w["seeds"])
    assert comp.finite.all()
    assert res["manifest"]["config"] == tt.experiment_config()


# --- section tables ----------------------------------------------------------------------------------------------------

def test_section_53_tables(section_results):
    t = section_results("14.53").tables
    assert {"block_shapes", "block_parameters", "torch_equality", "ln_gradients", "layer_norm_check",
            "gradient_spread", "ln_warmup", "ln_warmup_summary"} <= set(t)
    assert set(t["ln_gradients"].layer) == set(range(1, 13))
    s = t["ln_warmup_summary"]
    assert {"lr", "norm", "warmup_steps", "seeds", "seeds_solved", "mean_heldout_free_running",
            "worst_heldout_free_running", "mean_heldout_loss"} <= set(s.columns)


def test_section_54_tables(section_results):
    t = section_results("14.54").tables
    assert {"attention_patterns", "layer_parameters", "causality_check", "pattern_weights", "padding_mask",
            "shifted_targets", "mask_checks", "task_comparison", "heldout_accuracy", "cross_attention",
            "rerun_check"} <= set(t)
    assert list(t["heldout_accuracy"].columns) == ["task", "sequence_length", "GRU", "GRU + attention", "Transformer"]
    pm = t["padding_mask"]
    assert pm[[c for c in pm.columns if c.startswith("p")]].sum(axis=1).tolist() == [5, 3, 4]
    sh = t["shifted_targets"]
    assert sh.decoder_input.tolist()[1:] == sh.target.tolist()[:-1]


# --- FLOP arithmetic ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("T,d", [(16, 32), (64, 32), (100, 7), (2048, 256)])
def test_flop_counts(T, d):
    assert attention_flops(T, d) == 8 * T * d * d + 4 * T * T * d
    assert attention_core_flops(T, d) == 4 * T * T * d
    assert recurrent_flops(T, d, "lstm") == 16 * T * d * d
    assert recurrent_flops(T, d, "rnn") == 4 * T * d * d


@pytest.mark.parametrize("d", [8, 32, 256])
def test_flop_crossover_is_2d(d):
    assert flop_crossover(d) == 2 * d
    T = int(flop_crossover(d))
    assert attention_flops(T, d) == recurrent_flops(T, d, "lstm")
    assert attention_flops(T - 1, d) < recurrent_flops(T - 1, d, "lstm")
    assert attention_flops(T + 1, d) > recurrent_flops(T + 1, d, "lstm")
    assert flop_crossover(d, "rnn") == 0  # attention always has more FLOPs than a vanilla RNN
    assert gflops(2e9, 0.5) == 4.0


def test_equal_flops_rows_and_score_split():
    from seqlab.chapter.s14_55 import equal_flops, score_cost_split

    grid = pd.DataFrame(dict(T=[32, 64, 128], d=[32, 32, 32], attention_gflops=[1.0, 2.0, 3.0],
                             lstm_gflops=[4.0, 4.0, 4.0], ratio_attention_to_lstm=[0.5, 2.0, 3.0]))
    eq = equal_flops(grid)
    assert eq["T"].tolist() == [64] and eq.ratio_attention_to_lstm[0] == 2.0
    parts = pd.DataFrame(dict(d_k=[8, 64], core_ns_per_score=[1.0 + 8 * 0.5, 1.0 + 64 * 0.5]))
    split = score_cost_split(parts).set_index("d_k")
    assert split.fixed_ns[8] == pytest.approx(1.0) and split.ns_per_unit_d_k[64] == pytest.approx(0.5)
    assert split.fixed_share[8] == pytest.approx(1.0 / 5.0)


# --- the page ----------------------------------------------------------------------------------------------------------

def _prose(text: str) -> str:
    text = text.split("---", 2)[2]
    text = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$ *\(eq-[\w-]+\)", "", text, flags=re.S)
    text = re.sub(r"\$[^$]*\$", "", text)
    text = re.sub(r"\{[\w:]+\}`[^`]*`", "", text)
    text = re.sub(r"`[^`]*`", "", text)
    return re.sub(r"§\d+(\.\d+)*", "", text)


def test_page_is_code_first_with_every_glue_defined_and_no_typed_numbers():
    text = PAGE.read_text(encoding="utf-8")
    assert "show(" not in text
    cells = "\n".join(re.findall(r"```\{code-cell\}.*?```", text, flags=re.S))
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    defined = set(re.findall(r'glue\(\s*"([^"]+)"', cells))
    defined |= set(re.findall(r'"(\w+)"', cells)) & used  # names glued through a variable (a loop over literals)
    patterns = re.findall(r'(?:glue\(\s*|glue_all\(\{)f"([^"]+)"', cells)  # names built in a loop
    modules = Path(__file__).resolve().parents[1] / "src" / "seqlab" / "chapter"
    for sid in ("s14_53", "s14_54", "s14_55"):  # claims said on the page (say(...)) glue their sentence by name
        defined |= set(re.findall(r'(?:claim|require)\(\s*"(\w+)"', (modules / f"{sid}.py").read_text()))
    unresolved = {u for u in used - defined
                  if not any(re.fullmatch(re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(p)), u) for p in patterns)}
    assert not unresolved, unresolved
    prose = _prose(text)
    assert not re.findall(r".{20}\d.{20}", prose), "hand-typed digits in prose"
    for label in ("eq-block-preln", "eq-block-postln", "eq-layernorm", "eq-ffn", "eq-mask-padding", "eq-mask-causal",
                  "eq-mask-cross", "eq-flops", "eq-flop-crossover"):
        assert f"({label})" in text, label
    for section in ("§14.53", "§14.54", "§14.55"):
        assert section in text
    assert "{ref}`recurrence`" in text and "{ref}`attention`" in text


def test_page_prose_is_long_enough_in_each_section():
    text = PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)
    for sid in ("§14.53", "§14.54", "§14.55"):
        body = next(p for p in parts if p.splitlines()[0].endswith(f"({sid})"))
        assert len(re.findall(r"[A-Za-z][A-Za-z'-]*", _prose("---\n---\n" + body))) >= 250, sid


def test_time_call_median_and_cpu_clock():
    from seqlab.analysis.complexity import time_call

    calls = iter([0.0, 0.0, 0.0, 0.0, 0.0])
    assert time_call(lambda: next(calls), repeats=4, stat="median", clock="cpu") >= 0
    with pytest.raises(ValueError, match="stat"):
        time_call(lambda: None, stat="mean")
    with pytest.raises(ValueError, match="clock"):
        time_call(lambda: None, clock="gpu")
    with pytest.raises(ValueError, match="repeats"):
        time_call(lambda: None, repeats=0)


def test_line_fit_through_every_point():
    from seqlab.analysis.complexity import line_fit

    f = line_fit([8, 16, 32, 64], [3 + 0.1 * k for k in (8, 16, 32, 64)])
    assert f["a"] == pytest.approx(3) and f["b"] == pytest.approx(0.1) and f["r2"] == pytest.approx(1)
    bent = line_fit([8, 16, 32, 64], [2.0, 2.0, 2.0, 10.0])
    assert bent["r2"] < 0.9 and bent["max_rel_residual"] > 0.3
    with pytest.raises(ValueError):
        line_fit([1, 1], [2, 3])


def test_crossover_last_is_where_attention_stays_dearer():
    from seqlab.analysis.complexity import crossover

    Ts, r = [16, 32, 64, 128], [1.5, 0.5, 2.0, 3.0]  # dearer at 16 (overhead), cheaper at 32, dearer from ~45
    assert crossover(Ts, r) == 16.0
    assert 32 < crossover(Ts, r, last=True) < 64
    assert crossover(Ts, [0.5, 2.0, 0.9, 0.8], last=True) is None
    assert crossover(Ts, [1.0, 2.0, 3.0, 4.0], last=True) == 16.0


def test_walkthrough_equations_equal_the_block():
    from seqlab.chapter import s14_53

    steps, block, x = s14_53.block_walkthrough(s14_53.SEED)
    assert len(steps) == 5 and (steps.max_abs_difference < 1e-5).all()
    assert set(steps["shape"]) == {"2 x 10 x 64"}
    assert s14_53.walkthrough_claims(steps)[0].holds


def test_cost_reference_is_stored_and_complete():
    from seqlab.chapter import s14_55

    ref = s14_55.cost_reference()
    assert set(ref.tables) == {"grid_rounds", "training_rounds", "grid", "training", "parts", "threads"}
    assert len(ref["grid"]) == len(s14_55.T_GRID) * len(s14_55.D_GRID)
    assert len(ref["training"]) == len(s14_55.TRAIN_T_GRID) * len(s14_55.D_GRID)
    assert sorted(ref["grid_rounds"]["round"].unique()) == list(range(s14_55.ROUNDS))
    assert sorted(ref["training_rounds"]["round"].unique()) == list(range(s14_55.ROUNDS))
    assert set(ref["threads"].layer) == {s14_55.GAUGE, "self-attention", "LSTM"}
    assert ref.machine["cores"] >= 2 and ref.machine_line()
    cross = s14_55.crossovers(ref["grid"], ref["training"])
    assert (cross.flop_T_star == 2 * cross.d).all()


def test_cost_bands_hold_every_rounds_crossover():
    """The derived grid is each point's median over the rounds, and each width's band holds every round's T*."""
    from seqlab.analysis.complexity import crossover
    from seqlab.chapter import s14_55

    ref = s14_55.cost_reference()
    rounds, grid = ref["grid_rounds"], ref["grid"].set_index(["T", "d"])
    per_round = rounds.pivot_table(index=["T", "d"], columns="round", values="ratio_attention_to_lstm")
    assert np.allclose(per_round.median(axis=1), grid.ratio_attention_to_lstm.loc[per_round.index])
    assert np.allclose(per_round.min(axis=1), grid.ratio_attention_to_lstm_lo.loc[per_round.index])
    cross = s14_55.crossovers(ref["grid"], ref["training"]).set_index("d")
    for (d, r), f in rounds.groupby(["d", "round"]):
        f = f.sort_values("T")
        t = crossover(f["T"], f.ratio_attention_to_lstm, last=True)
        lo, hi = cross.loc[d, "measured_T_lo"], cross.loc[d, "measured_T_hi"]
        assert t is not None and lo - 1e-9 <= t and (np.isnan(hi) or t <= hi + 1e-9), (d, r, t, lo, hi)


def test_quick_measurement_here_sits_beside_the_reference():
    from seqlab.chapter import s14_55, s14_55_here

    here = s14_55.measure_here(lengths=(64, 128), repeats=1)
    grid = pd.DataFrame(dict(T=[64, 128], d=[64, 64], ratio_attention_to_lstm=[0.5, 2.0]))
    side = s14_55.here_beside_reference(here, grid)
    assert side.reference_ratio.tolist() == [0.5, 2.0] and (side.here_ratio > 0).all()
    assert s14_55_here.here_claims(here, grid)[0].name == "s55_here_side"


def test_timing_loops_give_one_row_per_point_and_layer():
    """The library's timing loops, on two tiny layers (a shape check, not a timing)."""
    from seqlab.analysis.timing import forward_grid, thread_scaling, training_grid, training_step

    def make(d):
        return {"lin": torch.nn.Linear(d, d), "rnn": torch.nn.RNN(d, d, batch_first=True)}

    fwd = forward_grid(make, (4, 8), (2, 3), batch=2, repeats=1, seed=0,
                       flops=lambda T, d: {"lin": 2 * T * d * d, "rnn": 4 * T * d * d})
    assert len(fwd) == 4 and {"lin_ms", "rnn_ms", "lin_flops", "rnn_gflops"} <= set(fwd.columns)
    trn = training_grid(make, (4,), (2,), batch=2, repeats=1, seed=0)
    assert list(trn.columns) == ["T", "d", "lin_train_ms", "rnn_train_ms"] and (trn.lin_train_ms > 0).all()
    lin, x = torch.nn.Linear(3, 3), torch.randn(2, 4, 3)
    cases = [({"layer": "lin", "mode": "forward"}, lambda: lin(x), False),
             ({"layer": "lin", "mode": "training"}, training_step(lin, x), True)]
    threads = thread_scaling(cases, repeats=1, min_seconds=0.0, quiet_share=1.0, quiet_tries=1)
    assert threads.layer.tolist() == ["lin", "lin"] and (threads.speedup > 0).all()
    assert {"one_thread_ms", "two_threads_ms", "calls", "others_share", "attempts"} <= set(threads.columns)


def test_block_notes_carry_the_claims_verdicts():
    """The CLI notes of §14.53 hand on the claims' verdicts (the page words them); no sentence is rebuilt."""
    from seqlab.chapter import s14_53
    from seqlab.claims import Claim

    shapes, block, x = s14_53.block_walkthrough(s14_53.SEED)
    grads = s14_53.gradients_by_depth(s14_53.SEED)
    _, summary, _ = s14_53.warmup_study()
    ln, params = s14_53.layer_norm_check(block.norm1, x), s14_53.parameter_table(block)
    same = s14_53.torch_equality(s14_53.SEED, x)
    notes = s14_53.claims_for(shapes, grads, summary, ln, params, same)
    assert all(isinstance(c, Claim) for c in notes)
    said = {c.name: c for c in notes}
    assert {"s53_steps_match", "s53_spread", "s53_classical", "s53_narrow", "s53_same_as_torch"} <= set(said)
    chance = 1 / s14_53.PROTOCOL["vocab"]
    expected = s14_53.warmup_claims(summary, s14_53.WARMUP_STUDY["warmup_steps"], chance)
    assert all(said[c.name].holds == c.holds and said[c.name].evidence == c.evidence for c in expected)


def test_encoder_decoder_notes_carry_the_claims_verdicts():
    from seqlab.chapter import s14_54
    from seqlab.claims import Claim

    enc, dec, src, tgt = s14_54.layer_pair(s14_54.SEED)
    w = s14_54.attention_weights(enc, dec, src, tgt)
    checks, _ = s14_54.causality_check(dec, w["memory"], tgt, w["causal self"])
    batch, lengths = s14_54.padded_batch(s14_54.SEED)
    masks = s14_54.mask_checks(s14_54.demo_model(s14_54.SEED), batch, lengths, s14_54.SEED)
    grid, maps = s14_54.seed_grid(), s14_54.cross_attention_maps()
    # a stand-in for the cell retrained now (rerun_one trains; its claim is checked by its own test)
    rerun = pd.DataFrame(dict(run=["chapter's run", "trained now"], final_loss=[0.5, 0.5]))
    notes = s14_54.claims_for(checks, grid, masks, maps, rerun)
    assert all(isinstance(c, Claim) for c in notes)
    said = {c.name: c for c in notes}
    expected = [*s14_54.task_claims(grid, 1 / s14_54.PROTOCOL["vocab"]),
                *s14_54.alignment_claims(s14_54.alignment_share(maps)), *s14_54.mask_claims(checks, masks)]
    assert all(said[c.name].holds == c.holds and said[c.name].evidence == c.evidence for c in expected)
    assert said["s54_rerun_agreement"].holds and said["s54_rerun_agreement"].evidence["figures"] == 16


def test_crossover_at_the_shortest_length_is_read_as_an_upper_bound():
    """Attention already dearer at the shortest length timed: the sentence places no T* there."""
    from seqlab.book.sentences import render, templates
    from seqlab.chapter import s14_55_here

    T = [32, 64, 128, 256]
    here = pd.DataFrame(dict(T=T, d=64, ratio_attention_to_lstm=[1.19, 1.5, 2.0, 3.0]))
    grid = pd.DataFrame(dict(T=T, d=64, ratio_attention_to_lstm=[0.5, 0.8, 1.2, 2.0]))
    said = s14_55_here.here_claims(here, grid)[0]
    written = {t.name: t for t in templates(PAGE.read_text(encoding="utf-8"))}
    text = render(written["s55_here_side"], {"holds": said.holds, "evidence": said.evidence})
    assert not said.holds  # the crossover here lies at or below the shortest length, outside the band
    assert "does not cross 1 inside the band of" in text
    assert "T* ≈ 32" not in text


def test_grid_seeds_write_verified_artifacts_and_refuse_a_changed_file(tmp_path, monkeypatch):
    from seqlab.experiments import transformer_task_seeds as tts
    from seqlab.experiments import transformer_tasks as tt
    from seqlab.store import ArtifactError

    small = dict(tt.PROTOCOL, epochs=2, n_train=12, n_test=6)
    monkeypatch.setattr(tt, "PROTOCOL", small)  # what task_experiment trains with
    monkeypatch.setattr(tts, "PROTOCOL", small)  # what the manifest records
    monkeypatch.setattr(tts, "LENGTHS", (4,))
    grid = tts.run_grid_seeds(tmp_path, workers=1, log=lambda *_: None)
    back = tts.load_grid_seeds(tmp_path)
    assert len(back) == len(tts.GRID_SEEDS) * len(tt.TASKS) * len(tt.MODELS)
    assert sorted(back.seed.unique()) == list(tts.GRID_SEEDS) and "attention" not in back.columns
    pd.testing.assert_frame_equal(back, grid.reset_index(drop=True), check_dtype=False)
    path = tmp_path / tts.SEEDS_NAME / "comparison.csv"
    path.write_text(path.read_text().replace("GRU", "GRV", 1))
    with pytest.raises(ArtifactError):
        tts.load_grid_seeds(tmp_path)


#: How far a retraining on another CPU may land from the stored run, as a share of the gap between the stored
#: run and the grid's second seed. Measured at T = 4 without attention (seed 42 stored; seed 43 lies 0.0174 away
#: in final loss, 0.041 in held-out teacher-forced and 0.056 in free-running accuracy): retrained on two Intel
#: Xeons with AMX, the final loss landed 0.36% (0.000115) and 0.53% (0.000169) from the stored 0.031772, at most
#: 1% of the seed gap, and the held-out accuracies at most 0.00125 (3% of the gap). A quarter of the gap leaves
#: room for other CPUs, and still fails a run under another seed or another protocol.
CROSS_CPU_SHARE_OF_SEED_GAP = 0.25


def test_stored_grid_seed_is_the_chapters_copy_experiment_under_that_seed():
    """§14.48 reads its further seeds from §14.54's grid: one of them trained again by §14.48's own function
    lands far closer to its stored self than the grid's other seed does (floating-point sums differ by CPU)."""
    from seqlab.chapter import s14_48
    from seqlab.experiments.seq2seq import copy_experiment
    from seqlab.experiments.transformer_task_seeds import GRID_SEEDS

    more = s14_48.more_seeds()
    rows = more[(more.sequence_length == 4) & (more.attention == "none")].set_index("seed")
    seed, other = GRID_SEEDS[0], GRID_SEEDS[1]
    now = copy_experiment(4, None, seed)
    for k in ("final_loss", "heldout_teacher_forced", "heldout_free_running"):
        stored, gap = float(rows.loc[seed, k]), abs(float(rows.loc[other, k]) - float(rows.loc[seed, k]))
        assert gap > 0, k  # the bound below means something only where the seeds differ
        assert abs(now[k] - stored) <= CROSS_CPU_SHARE_OF_SEED_GAP * gap, (k, now[k], stored, gap)
    # training accuracy is 1.0 under both seeds, so there is no gap to measure against: the page's own
    # tolerance (0.005, eight of its 1,600 positions) holds it; every CPU measured gave 1.0
    assert abs(now["copy_accuracy"] - float(rows.loc[seed, "copy_accuracy"])) <= s14_48.REPRODUCE_TOL


def test_copy_runs_reads_a_seed_trained_now_only_once(monkeypatch):
    from seqlab.chapter import s14_48
    from seqlab.experiments.transformer_task_seeds import GRID_SEEDS

    def sweep(seed, lengths):
        return pd.DataFrame([dict(sequence_length=T, attention=a, final_loss=0.0, copy_accuracy=0.5,
                                  heldout_teacher_forced=0.5, heldout_free_running=0.5)
                             for a in ("none", "general") for T in lengths])

    monkeypatch.setattr(s14_48, "copy_sweep", sweep)
    runs = s14_48.copy_runs(seed=GRID_SEEDS[0])
    assert runs.groupby(["seed", "attention", "sequence_length"]).size().max() == 1
    assert set(runs.seed) == set(GRID_SEEDS)
    spread = s14_48.seed_spread(runs)
    assert (spread.seeds == len(GRID_SEEDS)).all() and list(spread.attention[:1]) == ["none"]
    assert (spread.heldout_free_running_lowest <= spread.heldout_free_running_mean).all()
