"""The chapter's experiment runners, end to end on tiny configurations: they run, write a verified artifact set
whose manifest records what they used, and the loaders read it back."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from seqlab.store import verify_artifacts


def test_lm_experiment_tiny(tmp_path):
    from seqlab.experiments import lm
    from seqlab.text.corpus import load_tinyshakespeare

    train = dataclasses.replace(lm.CHAPTER_TRAIN, max_iters=4, batch_size=2, eval_interval=2, eval_iters=1,
                                warmup_iters=1)
    text = load_tinyshakespeare()[:4000]
    lm.run_lm_experiment(tmp_path, log=lambda *_: None, train=train, text=text, sample_tokens=20, sample_seeds=1)
    manifest = verify_artifacts(lm.NAME, root=tmp_path)
    assert manifest["config"]["train"]["max_iters"] == 4 and manifest["config"]["sample_tokens"] == 20
    with pytest.raises(Exception, match="stale"):  # the chapter's loader refuses a run made with other settings
        lm.load_lm_artifacts(tmp_path)
    curves = pd.read_csv(tmp_path / lm.NAME / "loss_curves.csv")
    assert set(curves.model) == {"GPT", "LSTM"} and curves.val_loss.notna().all()
    tradeoff = pd.read_csv(tmp_path / lm.NAME / "tradeoff.csv")
    assert len(tradeoff) == len(lm.TEMPERATURES) + len(lm.TOP_PS)


def test_forecast_experiment_tiny(tmp_path):
    from seqlab.experiments import forecast
    from seqlab.forecast import NeuralConfig

    tiny = NeuralConfig(hidden_size=8, max_steps=4, batch_size=16, val_check_steps=2, patience=1, seed=1)
    datasets = {"AirPassengers": ("air", 2), "M1 yearly": ("M1/yearly", 3)}
    # two architectures, so the rounds (generic only, then generic + interpretable) are exercised
    small = forecast.nbeats_plan(tiny)
    plan = dataclasses.replace(small, configs=(small.configs[0], dataclasses.replace(
        small.configs[0], stack="interpretable", blocks=2)), steps={k: (2, 4) for k in small.steps})
    forecast.run_forecast_experiment(tmp_path, log=lambda *_: None, datasets=datasets, neural_config=tiny,
                                     nbeats=plan)
    manifest = verify_artifacts(forecast.NAME, forecast.experiment_config(datasets, tiny, plan), root=tmp_path)
    assert manifest["config"]["datasets"] == {"AirPassengers": ["air", 2], "M1 yearly": ["M1/yearly", 3]}
    summary = pd.read_csv(tmp_path / forecast.NAME / "summary.csv")
    everything = set(forecast.CLASSICAL_MODELS) | set(forecast.NEURAL) | set(forecast.COMBINATIONS)
    assert set(summary.model) == everything
    air = summary[summary.dataset == "AirPassengers"]
    assert (air.units == 2).all() and summary.mase.notna().all()
    # intervals on every set: conformal for every model where the earlier windows calibrate them (M1 yearly's
    # hold-out; not AirPassengers' one series), statsforecast's own for the models that have them
    iv = pd.read_csv(tmp_path / forecast.NAME / "intervals.csv")
    m1 = iv[iv.dataset == "M1 yearly"]
    assert set(m1[m1.kind == "conformal"].model) == everything
    assert (m1[m1.kind == "conformal"].calibration_scores >= 19).all()
    native = set(forecast.CLASSICAL_MODELS) - {"Naive2", "M4 Comb"}
    assert set(m1[m1.kind == "native"].model) == native
    assert set(iv[iv.dataset == "AirPassengers"].kind) == {"native"}
    for c in ("coverage_80", "coverage_95"):
        assert iv[c].between(0, 1).all()
    assert (iv.coverage_95 >= iv.coverage_80).all() and (iv.winkler_95 > 0).all() and iv.scrps.gt(0).all()
    # the last window was scored on its own, with the windows before it as calibration
    from seqlab.forecast import competition

    assert (m1.units == competition("M1", "yearly")[0].unique_id.nunique()).all()  # every series
    # three rounds per set: the generic pool and the whole pool of round 2's members, then round 3's whole pool
    rounds = pd.read_csv(tmp_path / forecast.NAME / "nbeats_rounds.csv")
    assert rounds.groupby("dataset")["round"].apply(list).to_dict() == {"AirPassengers": [1, 2, 3],
                                                                        "M1 yearly": [1, 2, 3]}
    assert list(rounds.pool) == ["generic", "generic + interpretable", "generic + interpretable"] * 2
    assert (rounds.members <= rounds.pool_size).all()
    sel = pd.read_csv(tmp_path / forecast.NAME / "nbeats_selection.csv")
    for r in rounds.itertuples():
        within = sel[(sel.dataset == r.dataset) & (sel["round"] == max(r.round, 2)) & (sel.members <= r.pool_size)]
        assert r.validation_mase == pytest.approx(within.validation_mase.min())
    # the chapter's N-BEATS is round 3's ensemble
    m1_holdout = summary[(summary.dataset == "M1 yearly") & (summary.scope == "official hold-out")]
    picked = rounds[(rounds.dataset == "M1 yearly") & (rounds["round"] == 3)].last_window_mase.iloc[0]
    assert picked == pytest.approx(m1_holdout.set_index("model").mase["N-BEATS"], rel=1e-12)
    # no ablation in a quick run: round 3's recipe changes nothing
    assert pd.read_csv(tmp_path / forecast.NAME / "nbeats_recipe.csv").empty
    # every forecast is stored, and scoring again from the stored forecasts writes the same files
    stored = pd.read_csv(tmp_path / forecast.NAME / "forecasts.csv.gz")
    assert {*forecast.CLASSICAL_MODELS, *forecast.NEURAL, *forecast.ROUND_NAMES.values()} <= set(stored.columns)
    assert {"AutoETS-lo-95", "AutoETS-hi-80", "Naive-hi-95"} <= set(stored.columns)
    before = {p.name: p.read_bytes() for p in (tmp_path / forecast.NAME).iterdir()}
    forecast.score_forecast_artifacts(tmp_path, log=lambda *_: None)
    after = {p.name: p.read_bytes() for p in (tmp_path / forecast.NAME).iterdir()}
    assert before == after
    # retraining the GRU and Transformer alone keeps every other forecast and the N-BEATS search's files
    first = pd.read_csv(tmp_path / forecast.NAME / "forecasts.csv.gz")
    forecast.retrain_global_models(tmp_path, log=lambda *_: None, workers=1)
    again = pd.read_csv(tmp_path / forecast.NAME / "forecasts.csv.gz")
    assert list(again.columns) == list(first.columns) and len(again) == len(first)
    kept = [c for c in first.columns if c not in ("GRU", "Transformer")]
    pd.testing.assert_frame_equal(again[kept], first[kept])
    for name in ("GRU", "Transformer"):  # a rerun of the same training, compared with a tolerance
        np.testing.assert_allclose(again[name], first[name], rtol=1e-4)
    for f in ("nbeats_selection.csv", "nbeats_members.csv", "nbeats_rounds.csv"):
        assert (tmp_path / forecast.NAME / f).read_bytes() == before[f]
    # and the independent recomputation (utilsforecast, numpy) agrees with every scored table of this run too
    import test_forecast_recompute as rc

    stored = rc.load_stored(tmp_path, datasets)
    for check in (rc.check_summary_mase_and_smape, rc.check_unit_mase_and_significance, rc.check_rounds_last_window,
                  rc.check_interval_coverage):
        check(stored, tmp_path)


def test_seq2seq_experiments_tiny():
    from seqlab.experiments.seq2seq import copy_experiment, reversal_experiment

    c = copy_experiment(4, attention="general", n_train=16, epochs=3, n_test=8)
    assert c["sequence_length"] == 4 and 0 <= c["heldout_free_running"] <= 1
    r = reversal_experiment(T=4, n=16, epochs=3)
    assert r["alpha"].shape == (4, 4) and len(r["losses"]) == 3


def test_section_14_49_trains_its_reversal_itself_once_per_seed(monkeypatch, tmp_path):
    """§14.49 needs nothing from §14.48: it asks the cached runner, which trains on first use and then reuses."""
    from seqlab.chapter import run_section
    from seqlab.experiments import seq2seq

    trained = []
    real = seq2seq.reversal_experiment

    def tiny(seed):
        trained.append(seed)
        return real(seed, T=4, n=16, epochs=2)

    monkeypatch.setattr(seq2seq, "reversal_experiment", tiny)
    seq2seq._reversal_once.cache_clear()
    try:
        first = run_section("14.49", tmp_path, seed=5, figures=False)  # seeds 51, 53 shift to 5, 7
        again = run_section("14.49", tmp_path, seed=5, figures=False)
        assert trained == [7]
        assert first.tables["reversal"].equals(again.tables["reversal"]) and len(first.tables["reversal_attention"]) == 16
        assert seq2seq.reversal_experiment_cached(7) is seq2seq.reversal_experiment_cached(seed=7)
        assert trained == [7]
    finally:
        seq2seq._reversal_once.cache_clear()  # later tests must see the chapter's real run


def test_the_library_preset_is_what_the_experiment_chose():
    """``NBeatsForecaster.ig_ensemble`` is neutral code; §14.63's experiment is where its settings were chosen."""
    from seqlab.experiments.forecast import NBEATS_CONFIG, NBEATS_PLAN, chosen_nbeats, nbeats_results, recipe_plan
    from seqlab.forecast.nbeats import NBeatsForecaster

    preset = NBeatsForecaster.ig_ensemble(12)
    round3 = recipe_plan(NBEATS_PLAN, nbeats_results()["recipe"])  # round 3's members, as its rule made them
    assert [dataclasses.replace(c, max_steps=NBEATS_CONFIG.max_steps) for c in preset.configs] == list(round3.configs)
    assert round3.inputs["M3 monthly"] == preset.input_multiples and round3.losses == preset.losses
    # the preset's step count is the one the last HEAVY_EVAL run's round 3 chose on M3 monthly's validation windows
    assert preset.config.max_steps == chosen_nbeats("M3 monthly")[0]


def test_every_ablation_variant_is_one_public_member():
    """Each ablation variant trains through NBeatsForecaster.member_jobs as a one-member ensemble whose member is
    exactly the changed first member (its seed included)."""
    from seqlab.experiments import forecast
    from seqlab.experiments.forecast.training import _one_member

    plan = forecast.NBEATS_PLAN
    for variant, (where, change) in forecast.ABLATIONS.items():
        first = plan.forecaster(where, 12, max(plan.grid(where))).member_configs()[0]
        config = dataclasses.replace(first, **change)
        one = _one_member(config, plan.seeds[0], 12)
        assert one.member_configs() == [config], variant
