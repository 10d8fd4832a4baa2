"""N-BEATS: shapes of every equation's module, windows that never look past their cut, masked short series,
the MASE loss in the metric's own scale, and an ensemble whose result does not depend on the worker count."""
from dataclasses import asdict, replace

import numpy as np

import pytest
import torch

from seqlab.errors import InvalidParameterError
from seqlab.forecast.metrics import mase_scale
from seqlab.forecast.nbeats import (
    Block,
    FullyConnected,
    GenericBasis,
    MASELoss,
    NBeats,
    NBeatsConfig,
    NBeatsForecaster,
    Panel,
    SeasonalityBasis,
    TrendBasis,
    UniformSeriesSampler,
    UniformWindowSampler,
    ensemble_median,
    member_forecasts,
    train_member,
)

TINY = NBeatsConfig(width=16, layers=2, blocks=2, batch_size=32, max_steps=12, ema=0.9)


def _series(lengths=(60, 30, 9), seed=0):
    rng = np.random.default_rng(seed)
    t = [np.arange(n) for n in lengths]
    return [50 + 10 * np.sin(2 * np.pi * k / 12) + 0.3 * k + rng.normal(0, 1, len(k)) for k in t]


def test_every_module_has_the_shapes_of_its_equation():
    B, L, h, width = 5, 24, 6, 16
    z = torch.randn(B, width)
    assert FullyConnected(L, width, 3)(torch.randn(B, L)).shape == (B, width)
    for basis in (GenericBasis(width, L, h), TrendBasis(width, L, h), SeasonalityBasis(width, L, h, period=12)):
        back, fore = basis(z)
        assert back.shape == (B, L) and fore.shape == (B, h)
    back, fore = Block(FullyConnected(L, width, 2), GenericBasis(width, L, h))(torch.randn(B, L))
    assert back.shape == (B, L) and fore.shape == (B, h)
    for stack in ("generic", "interpretable"):
        net = NBeats(L, h, width, layers=2, blocks=4, stack=stack, season=12)
        x, m = torch.randn(B, L), torch.ones(B, L)
        assert net(x, m).shape == (B, h)
        parts = net.decompose(x, m)
        assert parts.shape == (B, 4, h)
        # the forecast is the level (the last input) plus the blocks' forecasts
        torch.testing.assert_close(net(x, m), x[:, -1:] + parts.sum(1))


def test_trend_basis_is_a_polynomial_of_time():
    tb = TrendBasis(4, 8, 5, degree=2)
    tau = torch.arange(5.0) / 5
    torch.testing.assert_close(tb.Tf, torch.stack([tau ** 0, tau, tau ** 2]))


def test_a_window_never_sees_values_after_its_cut():
    y = np.arange(1.0, 41.0)
    L, h = 12, 6
    panel = Panel([y], L, season=4)
    cuts = np.arange(2, len(y) - h + 1)
    i = np.zeros(len(cuts), int)
    X, M, Y, q = panel.windows(i, cuts, L, h)
    for k, t in enumerate(cuts):
        seen = X[k][M[k] == 1]
        np.testing.assert_array_equal(seen, y[max(0, t - L):t])  # inputs: the L values before the cut
        np.testing.assert_array_equal(Y[k], y[t:t + h])  # target: the next h
        assert q[k] == pytest.approx(mase_scale(y[:t], 4))  # MASE scale: the history before the cut only
    # changing everything after each window's target changes nothing the window holds
    for t in (10, 20, 34):
        z = y.copy()
        z[t + h:] = 1e9
        a = panel.windows(np.array([0]), np.array([t]), L, h)
        b = Panel([z], L, season=4).windows(np.array([0]), np.array([t]), L, h)
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
        z[t:t + h] = -1.0  # changing the target changes the target only
        c = Panel([z], L, season=4).windows(np.array([0]), np.array([t]), L, h)
        np.testing.assert_array_equal(a[0], c[0])
        assert a[3] == c[3] and not np.array_equal(a[2], c[2])


def test_training_windows_reach_the_origin_and_no_further():
    from seqlab.forecast.nbeats.training import _cut_range

    n, h = np.array([40, 25]), 6
    lo, hi = _cut_range(n, h, TINY)
    assert list(hi) == list(n - h)  # the last window's target is the series' last horizon
    s = UniformSeriesSampler(lo, hi, seed=0)
    i, t = s.draw(20000)
    assert (t + h <= n[i]).all() and (t >= 2).all()
    assert [t[i == k].max() for k in range(len(n))] == list(n - h)
    _, hi_old = _cut_range(n, h, replace(TINY, reach_origin=False))
    assert list(hi_old) == list(n - 2 * h)  # the ablation: one horizon kept back
    lo5, _ = _cut_range(n, h, replace(TINY, history=2.0))
    assert list(lo5) == [23, 8]  # the last two horizons of cut points


def test_sampling_is_uniform_over_series_then_cut_points():
    lo, hi = np.array([2, 2]), np.array([200, 11])  # a long and a short series
    i, _ = UniformSeriesSampler(lo, hi, seed=1).draw(40000)
    assert abs((i == 1).mean() - 0.5) < 0.02
    i, _ = UniformWindowSampler(lo, hi, seed=1).draw(40000)
    assert abs((i == 1).mean() - 10 / 209) < 0.01  # the ablation: in proportion to the number of windows


def test_short_series_are_masked_not_padded():
    y = np.array([5.0, 6.0, 7.0])
    panel = Panel([y], 8)
    X, M = panel.last(8)
    np.testing.assert_array_equal(M[0], [0] * 5 + [1] * 3)
    np.testing.assert_array_equal(X[0], [0] * 5 + [5, 6, 7])
    Xp, Mp = Panel([y], 8, short="pad").last(8)  # the older scheme, kept for the ablation
    np.testing.assert_array_equal(Xp[0], [5] * 6 + [6, 7])
    assert Mp.all()
    # what sits in the masked positions cannot change the forecast
    torch.manual_seed(0)
    net = NBeats(8, 3, 16, 2, 3)
    x, m = torch.from_numpy(X), torch.from_numpy(M)
    garbage = x + (1 - m) * 1e3
    torch.testing.assert_close(net(x, m), net(garbage, m))


def test_mase_loss_is_the_windows_mase():
    y = np.abs(np.random.default_rng(3).normal(10, 3, 50)) + 1
    L, h, t = 12, 6, 30
    X, M, Y, q = Panel([y], L, season=12).windows(np.array([0]), np.array([t]), L, h)
    s = np.abs(X).mean()
    yhat = Y * 1.1
    loss = MASELoss()(torch.tensor(yhat / s), torch.tensor(Y / s), torch.tensor(np.array([s / q[0]])))
    assert loss.item() == pytest.approx(np.abs(yhat - Y).mean() / mase_scale(y[:t], 12), rel=1e-5)


def test_a_checkpoint_is_the_model_a_shorter_run_ends_with():
    ser = _series()
    _, long = train_member(ser, 6, 12, replace(TINY, max_steps=12), checkpoints=(6,))
    _, short = train_member(ser, 6, 12, replace(TINY, max_steps=6))
    np.testing.assert_array_equal(long[6], short[6])
    assert not np.array_equal(long[6], long[12])


def test_bfloat16_training_stays_near_float32_and_keeps_float32_weights():
    ser = _series()
    m32, f32 = train_member(ser, 6, 12, TINY)
    m16, f16 = train_member(ser, 6, 12, replace(TINY, dtype="bfloat16"))
    assert {p.dtype for p in m16.parameters()} == {torch.float32}  # only the products ran in bfloat16
    assert np.isfinite(f16[12]).all() and not np.array_equal(f16[12], f32[12])
    # twelve steps from the same start: bfloat16's rounding moves the forecasts by well under a tenth of the level
    assert np.max(np.abs(f16[12] - f32[12])) < 0.1 * np.mean(np.abs(f32[12]))
    _, again = train_member(ser, 6, 12, replace(TINY, dtype="bfloat16"))
    np.testing.assert_array_equal(again[12], f16[12])  # same seed, same numbers


def test_a_manifest_record_leaves_out_float32_so_stored_runs_still_match():
    assert "dtype" not in TINY.record() and TINY.record() == {k: v for k, v in asdict(TINY).items() if k != "dtype"}
    assert replace(TINY, dtype="bfloat16").record()["dtype"] == "bfloat16"


def test_ensemble_is_deterministic_and_independent_of_the_worker_count():
    import pandas as pd

    ser = _series()
    df = pd.concat([pd.DataFrame({"unique_id": f"s{k}", "ds": np.arange(len(y)), "y": y}) for k, y in enumerate(ser)])
    kw = dict(input_multiples=(1.5, 2.0), seeds=(1,), season_length=12)
    one = NBeatsForecaster(TINY, workers=1, **kw).fit(df, 6)
    two = NBeatsForecaster(TINY, workers=2, **kw).fit(df, 6)
    a, b = one.predict(df, 6), two.predict(df, 6)
    assert list(a) == ["s0", "s1", "s2"] and all(v.shape == (6,) for v in a.values())
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    # the experiment's path (each member's forecasts from its worker, then the median) gives the same numbers
    members = [member_forecasts(ser, 6, 12, c)[TINY.max_steps] for c in one.member_configs()]
    np.testing.assert_array_equal(np.vstack(list(a.values())), ensemble_median(members))
    assert [c.seed for c in one.member_configs()] == [1000, 1001]
    assert len(NBeatsForecaster(TINY, size=1, **kw).member_configs()) == 1


def test_member_forecasts_are_the_members_of_fit_at_every_checkpoint():
    """forecast_members: one training per member gives its forecast at each checkpoint; the last checkpoint's
    median is fit-then-predict's forecast, and a shorter run ends where the longer one passed."""
    import pandas as pd

    ser = _series()
    df = pd.concat([pd.DataFrame({"unique_id": f"s{k}", "ds": np.arange(len(y)), "y": y}) for k, y in enumerate(ser)])
    kw = dict(input_multiples=(1.5, 2.0), seeds=(1,), season_length=12, workers=1)
    ens = NBeatsForecaster(TINY, **kw)
    got = ens.forecast_members(df.sample(frac=1, random_state=0), 6, steps=(4, TINY.max_steps))
    assert got.ids == ["s0", "s1", "s2"] and len(got.forecasts) == 2 and all(s >= 0 for s in got.seconds)
    assert all(sorted(f) == [4, TINY.max_steps] and f[4].shape == (3, 6) for f in got.forecasts)
    fitted = ens.fit(df, 6).predict(df, 6)
    np.testing.assert_array_equal(got.median(TINY.max_steps), np.vstack([fitted[u] for u in got.ids]))
    short = NBeatsForecaster(replace(TINY, max_steps=4), **kw).forecast_members(df, 6)
    np.testing.assert_array_equal(short.median(4, members=1), got.median(4, members=1))
    # the jobs are the members asked for, each trained to the last checkpoint
    jobs = ens.member_jobs(df, 6, steps=(3, 5), members=[1])
    assert len(jobs) == 1 and jobs[0][1][3] == replace(ens.member_configs()[1], max_steps=5)
    for bad in (dict(steps=(0,)), dict(members=[2]), dict(members=[-1])):
        with pytest.raises(InvalidParameterError):
            ens.member_jobs(df, 6, **bad)
    with pytest.raises(InvalidParameterError, match="checkpoints"):
        got.median(7)
    with pytest.raises(InvalidParameterError):
        got.median(4, members=0)


def test_bad_settings_are_refused():
    with pytest.raises(InvalidParameterError):
        NBeatsConfig(loss="mape")
    with pytest.raises(InvalidParameterError, match="dtype must be one of float32, bfloat16"):
        NBeatsConfig(dtype="float16")
    with pytest.raises(InvalidParameterError):
        NBeatsForecaster(losses=("huber",))
    with pytest.raises(InvalidParameterError):
        NBeats(8, 2, stack="wavelet")
    with pytest.raises(RuntimeError):
        NBeatsForecaster().predict(None, 6)


def test_nbeats_by_name_is_the_default_preset():
    from seqlab.forecast import MODEL_NAMES, Forecaster
    from seqlab.forecast.nbeats import FAST_MEMBER, INTERPRETABLE_MEMBER, MAX_MEMBERS, NBeatsForecaster

    assert "N-BEATS" in MODEL_NAMES
    (m,) = Forecaster(["N-BEATS"], season_length=12, device="cpu").models
    assert isinstance(m, NBeatsForecaster) and m.season_length == 12 and m.accepts_engine
    preset = NBeatsForecaster.default(12, device="cpu")
    assert m.member_configs() == preset.member_configs() and m.input_multiples == (2.0,)
    configs = preset.member_configs()
    assert len(configs) == 4 and len({c.seed for c in configs}) == 4
    assert {(c.stack, c.blocks, c.sampling, c.short, c.max_steps) for c in configs} == {
        (INTERPRETABLE_MEMBER.stack, INTERPRETABLE_MEMBER.blocks, "windows", "mask", 2000)}
    assert {c.dtype for c in configs} <= {"float32", "bfloat16"}
    for dtype in ("float32", "bfloat16"):
        chosen = NBeatsForecaster.default(12, dtype=dtype, device="cpu").member_configs()
        assert [replace(c, dtype=FAST_MEMBER.dtype) for c in chosen] == \
            [replace(c, dtype=FAST_MEMBER.dtype) for c in configs] and {c.dtype for c in chosen} == {dtype}
    assert len(NBeatsForecaster.default(members=8).member_configs()) == 8
    assert NBeatsForecaster.default(max_steps=30).config.max_steps == 30
    assert NBeatsForecaster.default(seed=2).seeds == (5, 6, 7, 8)  # the next four, none shared with seed 1
    for bad in (dict(max_steps=0), dict(max_steps=True), dict(members=0), dict(members=MAX_MEMBERS + 1),
                dict(dtype="float16"), dict(dtype=None), dict(seed=0), dict(seed=1.5)):
        with pytest.raises(InvalidParameterError):
            NBeatsForecaster.default(**bad)


def test_the_ig_ensemble_is_round_3s_members():
    from seqlab.forecast.nbeats import GENERIC_MEMBER, INTERPRETABLE_MEMBER, MAX_MEMBERS, NBeatsForecaster

    m = NBeatsForecaster.ig_ensemble(12)
    assert m.input_multiples == (2.0, 3.0, 4.0) and len(m.member_configs()) == 6
    assert [c.stack for c in m.configs] == [GENERIC_MEMBER.stack, INTERPRETABLE_MEMBER.stack]
    assert {c.max_steps for c in m.configs} == {2500} and {c.dtype for c in m.configs} == {"float32"}
    assert {(c.sampling, c.short) for c in m.configs} == {("windows", "pad")}  # round 3's recipe
    assert len(NBeatsForecaster.ig_ensemble(members=8).member_configs()) == 8
    for bad in (dict(max_steps=0), dict(max_steps=True), dict(members=0), dict(members=MAX_MEMBERS + 1)):
        with pytest.raises(InvalidParameterError):
            NBeatsForecaster.ig_ensemble(**bad)


def test_architectures_come_first_and_keep_the_single_architecture_members():
    from seqlab.forecast.nbeats import GENERIC_MEMBER, INTERPRETABLE_MEMBER, NBeatsForecaster

    one = NBeatsForecaster(GENERIC_MEMBER, input_multiples=(2.0, 3.0), seeds=(1, 2)).member_configs()
    both = NBeatsForecaster([GENERIC_MEMBER, INTERPRETABLE_MEMBER], input_multiples=(2.0, 3.0),
                            seeds=(1, 2)).member_configs()
    # the generic members are the same jobs as before (same seeds), so every smaller ensemble is unchanged
    assert both[: len(one)] == one
    assert [c.stack for c in both] == ["generic"] * 4 + ["interpretable"] * 4
    assert {c.blocks for c in both[4:]} == {INTERPRETABLE_MEMBER.blocks}
    seeds = [c.seed for c in both]
    assert len(set(seeds)) == len(seeds) and seeds[4:] == [1100, 1101, 2100, 2101]
    assert len(NBeatsForecaster([GENERIC_MEMBER, INTERPRETABLE_MEMBER], size=3).member_configs()) == 2
    with pytest.raises(InvalidParameterError):
        NBeatsForecaster([])
    with pytest.raises(InvalidParameterError):
        NBeatsForecaster([GENERIC_MEMBER, {"stack": "generic"}])
