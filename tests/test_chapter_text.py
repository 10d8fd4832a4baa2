"""§14.56-§14.60: tokenization, the language model (from verified artifacts) and decoding."""
import shutil

import numpy as np
import pytest


def t(section_results, sid, name):
    df = section_results(sid).tables[name]
    assert len(df)
    return df


def test_14_56_vocabulary_vs_length(section_results):
    df = t(section_results, "14.56", "tokenizers").set_index("tokenizer")
    assert df.loc["character", "vocab_size"] == 66 and df.loc["character", "tokens"] == 1115394
    bpe = df[df.family == "bpe"].sort_values("vocab_size")
    assert bpe.tokens.is_monotonic_decreasing and bpe.lossless.all() and (bpe.unk_rate == 0).all()
    assert df.loc["byte BPE (256)", "tokens"] == 1115394  # bytes only: ASCII text, one token a byte
    # the word tokenizer spends a token on every space; BPE folds the space into the word
    assert df.loc["byte BPE (1024)", "tokens"] < df.loc["word (min_freq 1)", "tokens"] < df.loc["byte BPE (512)", "tokens"]
    assert df.loc["word (min_freq 10)", "unk_rate"] > 0 and not df.loc["word (min_freq 10)", "lossless"]
    assert (df.embedding_params == df.vocab_size * 128).all()


def test_14_57_language_model(section_results):
    s = t(section_results, "14.57", "lm_summary").set_index("model")
    assert set(s.index) == {"GPT", "LSTM"}
    assert (s.val_loss_nats < s.uniform_baseline_nats - 2).all()
    assert s.loc["GPT", "val_loss_nats"] <= 1.75  # the chapter model's quality target
    assert s.val_bits_per_char.round(3).equals((s.val_loss_nats / np.log(2)).round(3))
    from seqlab.store import heavy_eval

    mode = "trained now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
    assert any(n.startswith(f"Results {mode} ") for n in section_results("14.57").notes)


def test_14_58_temperature(section_results):
    ent = t(section_results, "14.58", "temperature_entropy")
    assert ent.entropy_nats.is_monotonic_increasing and ent.max_probability.is_monotonic_decreasing
    s = t(section_results, "14.58", "samples").set_index("strategy")
    assert s.repetition_rate["greedy"] > s.repetition_rate["temperature 1.0"]


def test_14_59_truncation_and_tradeoff(section_results):
    kept = t(section_results, "14.59", "tokens_kept").set_index("strategy").tokens_kept_of_top_12
    assert kept["top-k 5"] == 5 and kept["full"] == 12 and 1 <= kept["top-p 0.9"] <= 12
    tr = t(section_results, "14.59", "tradeoff")
    temp = tr[tr.knob == "temperature"].set_index("value")
    assert temp.distinct_3[1.5] > temp.distinct_3[0.5] and temp.nll_lstm[1.5] > temp.nll_lstm[0.5]


def test_14_60_cache_is_exact(section_results):
    c = t(section_results, "14.60", "generation_cost")
    assert c.identical_tokens.all() and list(c.new_tokens) == [32, 64, 128, 256]


def test_14_56_bpe_against_characters(section_results):
    r = t(section_results, "14.56", "bpe_vs_char").set_index("tokenizer")
    assert list(r.index) == ["character", "byte BPE (512)", "byte BPE (1024)"]
    assert r.iterations.nunique() == 1  # the same steps of the same batch for every tokenization
    assert np.allclose(r.bits_per_char, r.nats_per_token / r.chars_per_token / np.log(2))
    assert r.chars_per_token["character"] == 1 and r.chars_per_token.is_monotonic_increasing
    assert (r.bits_per_char < np.log2(r.vocab_size)).all()
    merges = t(section_results, "14.56", "bpe_merges")
    assert merges.tokens_after.is_monotonic_decreasing
    rt = t(section_results, "14.56", "round_trip").set_index("tokenizer")
    assert rt.lossless["byte BPE (512)"] and not rt.lossless["character"]


def test_14_57_compute_sweep(section_results):
    from seqlab.chapter.s14_57 import BUDGETS

    sw = t(section_results, "14.57", "compute_sweep")
    assert sorted(sw.steps.unique()) == list(BUDGETS) and len(sw) == 2 * len(BUDGETS)
    for _, g in sw.groupby("model"):
        assert g.sort_values("steps").seconds.is_monotonic_increasing
    lm = t(section_results, "14.57", "lm_summary").set_index("model")
    chapter = sw[sw.steps == 750].set_index("model")  # the chapter's budget, rerun on one thread
    assert np.allclose(chapter.val_loss_nats[lm.index], lm.val_loss_nats, atol=0.05)
    assert (sw.seconds <= sw.wall_seconds + 1e-9).all()
    for c in t(section_results, "14.57", "crossover").itertuples():
        assert c.by in ("seconds", "steps") and c.start < c.end and c.ahead_at_end in ("GPT", "LSTM")
        if not np.isnan(c.at):  # NaN: the curves do not cross in the range both cover
            assert c.start <= c.at <= c.end


def test_14_58_temperature_sweep(section_results):
    sw = t(section_results, "14.58", "temperature_sweep").sort_values("value")
    assert sw.entropy.is_monotonic_increasing
    assert sw.nll_judge.iloc[-1] > sw.nll_judge.iloc[0] and sw["sample"].str.len().min() > 0


def test_14_59_adaptive_truncation_and_matched_diversity(section_results):
    k = t(section_results, "14.59", "kept_by_context").set_index(["context", "strategy"]).tokens_kept
    assert k["confident", "top-k 10"] == k["uncertain", "top-k 10"] == 10  # fixed whatever the context
    for rule in ("top-p 0.9", "min-p 0.1"):  # adaptive: few candidates when confident, many when not
        assert k["confident", rule] < k["uncertain", rule]
    m = t(section_results, "14.59", "matched_diversity")
    assert set(m.knob) == {"temperature", "top_k", "top_p", "min_p"}
    assert (m.groupby("target").distinct_3.agg(lambda e: e.max() - e.min()) < 1e-6).all()
    e = t(section_results, "14.59", "matched_entropy")
    assert (e.groupby("target").entropy.agg(lambda v: v.max() - v.min()) < 1e-6).all()


def test_14_60_step_cost(section_results):
    s = t(section_results, "14.60", "step_cost").set_index("context")
    assert (s.seconds_without_cache.iloc[-1] > s.seconds_with_cache.iloc[-1])
    assert s.flops_with_cache.is_monotonic_increasing


def test_altered_artifact_is_refused(tmp_path):
    from seqlab.experiments.lm import load_lm_artifacts
    from seqlab.store import ROOT, ArtifactError

    root = tmp_path / "artifacts"
    shutil.copytree(ROOT / "lm", root / "lm")
    load_lm_artifacts(root)  # intact copy loads
    with open(root / "lm" / "tradeoff.csv", "a") as f:
        f.write("temperature,9,9,0,0,0,0,0,0\n")
    with pytest.raises(ArtifactError, match="does not match its manifest"):
        load_lm_artifacts(root)
    (root / "lm" / "samples.json").unlink()
    with pytest.raises(ArtifactError, match="missing"):
        load_lm_artifacts(root)


def test_stale_artifact_is_refused(tmp_path, monkeypatch):
    from seqlab.experiments import lm as experiments
    from seqlab.store import ROOT, ArtifactError

    root = tmp_path / "artifacts"
    shutil.copytree(ROOT / "lm", root / "lm")
    monkeypatch.setattr(experiments, "PROMPT", "JULIET:\n")  # the code now asks for something else
    with pytest.raises(ArtifactError, match="stale"):
        experiments.load_lm_artifacts(root)


@pytest.mark.parametrize("value,expected", [("", False), ("0", False), ("1", True), ("true", True)])
def test_heavy_eval_gate(monkeypatch, value, expected):
    from seqlab.store import heavy_eval

    monkeypatch.setenv("HEAVY_EVAL", value)
    assert heavy_eval() is expected


def test_heavy_eval_rejects_nonsense(monkeypatch):
    from seqlab.store import heavy_eval

    monkeypatch.setenv("HEAVY_EVAL", "maybe")
    with pytest.raises(ValueError):
        heavy_eval()


def test_log_ticks_leave_out_crowded_neighbours():
    from seqlab.plotting.figures import spaced_log_breaks

    # the vocabulary figure's sizes: 2,048 and 2,118 are 1.5% of the log range apart and would print over each other
    ticks = spaced_log_breaks([65, 256, 512, 1024, 2048, 2118, 11457, 25670])
    assert ticks[0] == 65 and ticks[-1] == 25670 and 2048 in ticks and 2118 not in ticks
    assert spaced_log_breaks([10, 100]) == [10, 100]
    assert spaced_log_breaks([1, 10, 100, 1000]) == [1, 10, 100, 1000]
    from seqlab.plotting.figures import _plain_numbers

    assert _plain_numbers([0.5, 1.0, 1.5, 2048, 7e5]) == ["0.5", "1", "1.5", "2,048", "700,000"]
    # one tick that needs scientific notation: the whole axis is written in powers of ten, not in two styles
    assert _plain_numbers([10, 0.01, 1e-5, 1e-8]) == ["10¹", "10⁻²", "10⁻⁵", "10⁻⁸"]
    assert _plain_numbers([1e-8, 0.5, 2048]) == ["10⁻⁸", "5×10⁻¹", "2.05×10³"]


def test_family_adjusts_every_matched_difference_with_holm():
    """Hand-worked: z = 3 and z = 0 give two-sided p = 0.0026998 and 1; Holm doubles the smaller one."""
    import pandas as pd

    from seqlab.chapter import s14_59

    row = dict(knob="top_p", target=0.5, nll=1.0, nll_base=1.0, settled=False)
    a = pd.DataFrame([dict(row, held="distinct_3", difference=0.3, se=0.1)])
    b = pd.DataFrame([dict(row, held="entropy", difference=0.0, se=0.1)])
    fam = s14_59.family(a, b)
    assert fam.p.round(7).tolist() == [0.0026998, 1.0]
    assert fam.p_holm.round(7).tolist() == [0.0053996, 1.0]
    assert fam.holm_settled.tolist() == [True, False]
    [c] = s14_59.family_claims(fam.assign(settled=[True, False]))
    # the one difference past two standard errors survives Holm: the level-by-level readings are not exploratory
    assert not c.holds and c.evidence["comparisons"] == 2 and c.evidence["held"] == 1
    [c] = s14_59.family_claims(fam.assign(settled=[True, True]))  # z = 0 "past" its bar: lost under Holm
    assert c.holds and c.evidence["lost"] == ["top-p at entropy 0.500"]


def test_seed_gaps_and_crossings_by_hand():
    """Two seeds, budgets 100 and 200 steps: the LSTM behind by 0.1 and 0.2 at 100, ahead by as much at 200.
    Between budgets a loss is read linearly in log-steps, so each crossing is at sqrt(100 * 200) steps."""
    import pandas as pd

    from seqlab.chapter import s14_57_seeds

    rows = []
    for seed, d in ((1, 0.1), (2, 0.2)):
        for steps, gap in ((100, d), (200, -d)):
            rows += [dict(model="GPT", steps=steps, seed=seed, val_loss_nats=2.0),
                     dict(model="LSTM", steps=steps, seed=seed, val_loss_nats=2.0 + gap)]
    sweeps = pd.DataFrame(rows)
    gaps = s14_57_seeds.seed_gaps(sweeps)
    assert gaps.steps.tolist() == [100, 200] and gaps.seeds.tolist() == [2, 2]
    assert gaps["mean"].round(12).tolist() == [0.15, -0.15] and gaps.ahead.tolist() == ["GPT", "LSTM"]
    assert gaps.lowest.round(12).tolist() == [0.1, -0.2] and gaps.highest.round(12).tolist() == [0.2, -0.1]
    cross = s14_57_seeds.seed_crossings(sweeps)
    assert cross.crossing_steps.tolist() == pytest.approx([200 ** 0.5 * 10] * 2, rel=1e-9)
    assert (cross.ahead_at_start == "GPT").all() and (cross.ahead_at_end == "LSTM").all()
    mixed = sweeps.copy()
    mixed.loc[(mixed.seed == 2) & (mixed.model == "LSTM") & (mixed.steps == 100), "val_loss_nats"] = 1.9
    assert s14_57_seeds.seed_gaps(mixed).ahead.tolist() == ["neither", "LSTM"]


def test_heavy_eval_retrains_the_seed_sweep_once(monkeypatch):
    from seqlab.chapter import s14_57_seeds
    from seqlab.experiments import lm_seeds

    ran = []
    monkeypatch.setattr(lm_seeds, "run_lm_sweep_seeds", lambda: ran.append(1))
    assert s14_57_seeds._trained.__wrapped__(False) is False and ran == []
    assert s14_57_seeds._trained.__wrapped__(True) is True and ran == [1]
