"""One forecasting kernel: one MASE scale, one split-conformal band, one panel, statsforecast's argument order."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.errors import InvalidParameterError, InvalidTypeError
from seqlab.forecast import Forecaster, evaluate
from seqlab.forecast.intervals import conformal_band, conformal_from_windows, conformal_quantile, conformal_scores
from seqlab.forecast.metrics import mase_by_row, mase_scale, mase_scales
from seqlab.forecast.panel import Panel


def walk(n=48, ids=("a", "b", "c"), seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"unique_id": np.repeat(ids, n), "ds": np.tile(np.arange(1, n + 1), len(ids)),
                         "y": np.cumsum(rng.normal(size=n * len(ids))) + 50.0})


def scale_by_hand(y, m):
    """The textbook definition, one prefix at a time."""
    lag = m if len(y) > m else 1
    return np.nan if len(y) <= lag else np.mean(np.abs(np.asarray(y[lag:]) - np.asarray(y[:-lag])))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=0, max_size=40), st.integers(1, 13))
def test_every_prefix_scale_is_the_textbook_one(values, m):
    q = mase_scales(values, m)
    assert len(q) == len(values) + 1
    for t in range(len(values) + 1):
        expected = scale_by_hand(values[:t], m)
        if np.isnan(expected):
            assert np.isnan(q[t])
        else:
            assert q[t] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert (np.isnan(mase_scale(values, m)) and np.isnan(q[-1])) or mase_scale(values, m) == q[-1]


def test_a_hand_worked_scale_and_row_mase():
    y = [1.0, 3.0, 2.0, 6.0, 5.0]  # lag 2: |2-1|, |6-3|, |5-2| -> 7/3
    assert mase_scale(y, 2) == pytest.approx(7 / 3)
    # y[:3] is longer than a season: lag 2, |2-1| / 1; y[:2] is not: lag 1, |3-1| / 1; y[:1] has no scale
    np.testing.assert_allclose(mase_scales(y, 2)[:4], [np.nan, np.nan, 2.0, 1.0])
    np.testing.assert_allclose(mase_by_row([[1.0, 2.0], [0.0, 0.0]], [[2.0, 4.0], [1.0, 1.0]], [1.5, 0.0]),
                               [1.0, np.nan])


def test_the_conformal_band_by_hand():
    scores = np.array([[0.5, 1.0], [1.5, 2.0], [1.0, 3.0], [2.0, 4.0]])  # 4 calibration origins, 2 steps
    lo, hi, q = conformal_band(np.array([[10.0, 20.0]]), np.array([2.0]), scores, 50)
    # level 50 with n = 4: the ceil(5 * 0.5) = 3rd smallest score per step
    np.testing.assert_allclose(q, [1.5, 3.0])
    np.testing.assert_allclose(lo, [[7.0, 14.0]])
    np.testing.assert_allclose(hi, [[13.0, 26.0]])
    _, hi95, q95 = conformal_band(np.array([[10.0, 20.0]]), np.array([2.0]), scores, 95)
    assert np.isinf(q95).all() and np.isinf(hi95).all()  # 4 scores cannot make a 95% interval
    lo0, _, _ = conformal_band(np.array([[10.0, 20.0]]), np.array([0.0]), scores, 50)
    assert np.isnan(lo0).all()  # no scale, no interval
    np.testing.assert_allclose(conformal_scores([[3.0]], [[1.0]], [4.0]), [[0.5]])
    assert q[0] == conformal_quantile(scores[:, 0], 50)


def test_conformal_from_windows_is_split_conformal_by_hand():
    df = walk()
    cv = Forecaster(["Naive"], season_length=1).cross_validation(4, df, n_windows=4, step_size=4)
    out = conformal_from_windows(cv, df, 1, ["Naive"], [50])

    def own_scale(uid, cutoff):
        g = df[(df.unique_id == uid) & (df.ds <= cutoff)]
        return mase_scale(g.y.to_numpy(), 1)

    frame = cv.assign(step=cv.groupby(["unique_id", "cutoff"]).cumcount(),
                      scale=[own_scale(u, c) for u, c in zip(cv.unique_id, cv.cutoff)])
    frame["score"] = (frame.y - frame.Naive).abs() / frame.scale
    last = cv.cutoff.max()
    q = {s: conformal_quantile(frame[(frame.cutoff < last) & (frame.step == s)].score, 50) for s in range(4)}
    target = frame.cutoff == last
    expected = frame.Naive[target] + frame.step[target].map(q) * frame.scale[target]
    np.testing.assert_allclose(out.loc[target, "Naive-hi-50"], expected)
    assert np.isinf(out.loc[cv.cutoff == cv.cutoff.min(), "Naive-hi-50"]).all()  # nothing before the first window


def test_mondrian_conformal_pools_scores_within_each_group_only():
    df = walk(n=48, ids=("a", "b", "c", "d"))
    df.loc[df.unique_id.isin(["c", "d"]), "y"] *= 7.0  # a second group whose scale differs
    cv = Forecaster(["Naive"], season_length=1).cross_validation(4, df, n_windows=4, step_size=4)
    groups = {"a": "calm", "b": "calm", "c": "wild", "d": "wild"}
    out = conformal_from_windows(cv, df, 1, ["Naive"], [50], groups=groups)
    for name, members in (("calm", ["a", "b"]), ("wild", ["c", "d"])):
        alone = conformal_from_windows(cv[cv.unique_id.isin(members)], df, 1, ["Naive"], [50])
        mine = out[out.unique_id.isin(members)]
        np.testing.assert_array_equal(mine["Naive-hi-50"].to_numpy(), alone["Naive-hi-50"].to_numpy())
    pooled = conformal_from_windows(cv, df, 1, ["Naive"], [50])
    assert not np.allclose(pooled["Naive-hi-50"].to_numpy()[8:], out["Naive-hi-50"].to_numpy()[8:])
    with pytest.raises(InvalidParameterError, match="'d' has no group"):
        conformal_from_windows(cv, df, 1, ["Naive"], [50], groups={"a": 1, "b": 1, "c": 2})


def test_a_group_too_small_for_its_level_falls_back_to_every_series():
    # "lone" is one series: at the last window it has 3 earlier scores per step, fewer than the 4 an
    # 80% interval needs, so its own band would be unbounded; it takes the pooled band instead
    df = walk(n=48, ids=("a", "b", "c", "d"))
    cv = Forecaster(["Naive"], season_length=1).cross_validation(4, df, n_windows=4, step_size=4)
    groups = {"a": "many", "b": "many", "c": "many", "d": "lone"}
    out = conformal_from_windows(cv, df, 1, ["Naive"], [80], groups=groups)
    pooled = conformal_from_windows(cv, df, 1, ["Naive"], [80])
    last = (cv.cutoff == cv.cutoff.max()) & (cv.unique_id == "d")
    np.testing.assert_array_equal(out.loc[last, "Naive-hi-80"], pooled.loc[last, "Naive-hi-80"])
    assert np.isfinite(out.loc[last, "Naive-hi-80"]).all()
    assert dict(window=0, group="lone", level=80, own_scores=3) in out.attrs["fallbacks"]
    assert not any(f["group"] == "many" and f["window"] == 0 for f in out.attrs["fallbacks"])
    strict = conformal_from_windows(cv, df, 1, ["Naive"], [80], groups=groups, fallback=False)
    assert np.isinf(strict.loc[last, "Naive-hi-80"]).all() and strict.attrs["fallbacks"] == []


def test_borrowed_counts_the_series_with_no_earlier_window():
    # "new" has 8 points: it fits only the last window, so its band is built from the others' errors
    df = pd.concat([walk(n=48, ids=("a", "b")), walk(n=12, ids=("new",)).assign(ds=lambda x: x.ds + 36)])
    cv = Forecaster(["Naive"], season_length=1).cross_validation(4, df, n_windows=3, step_size=4,
                                                                 min_train_length=8)
    out = conformal_from_windows(cv, df, 1, ["Naive"], [50])
    assert out.attrs["borrowed"] == {0: 1, 1: 0, 2: 2}


def test_m4_comb_is_the_mean_of_three_ets_fits_on_the_adjusted_series():
    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS

    from seqlab.forecast import M4Comb
    from seqlab.forecast.classical import seasonal_adjustment

    t = np.arange(60)
    y = (100 + t) * (1 + 0.3 * np.sin(2 * np.pi * t / 12)) + np.random.default_rng(0).normal(0, 2, 60)
    df = pd.DataFrame({"unique_id": "s", "ds": t + 1, "y": y})
    got = Forecaster([M4Comb(12)], season_length=12).forecast(6, df)["M4 Comb"].to_numpy()
    adjusted, future = seasonal_adjustment(y, 6, 12)
    assert not np.allclose(future, 1)  # the test finds the season
    fits = []
    for kw in (dict(model="ANN"), dict(model="AAN", damped=False), dict(model="AAN", damped=True)):
        fc = StatsForecast(models=[AutoETS(alias="m", **kw)], freq=1).forecast(
            df=pd.DataFrame({"unique_id": 0, "ds": t + 1, "y": adjusted}), h=6)
        fits.append(fc["m"].to_numpy())
    np.testing.assert_allclose(got, np.mean(fits, axis=0) * future, rtol=1e-12)
    # too short for Holt (n <= 4 parameters + 4): that member falls back to SES, and the forecast still comes
    short = Forecaster(["M4 Comb"], season_length=1).forecast(3, df.head(8))
    assert np.isfinite(short["M4 Comb"]).all()


def test_one_panel_for_the_frame_and_the_windows():
    df = walk(n=10, ids=("x", "y"))
    df = df[~((df.unique_id == "y") & (df.ds <= 4))].sample(frac=1.0, random_state=1)  # y: 6 points, shuffled rows
    p = Panel.from_frame(df.sort_values(["unique_id", "ds"]), pad=3, season=2)
    assert list(p.ids) == ["x", "y"] and p.lengths.tolist() == [10, 6] and p.starts.tolist() == [0, 10]
    y = p.series(1)
    np.testing.assert_array_equal(p.V[1, 3:9], y.astype(np.float32))
    assert p.M[1, :3].sum() == 0 and p.M[1, 3:9].all()
    X, Mk, Y, q = p.windows(np.array([1]), np.array([4]), 3, 2)
    np.testing.assert_array_equal(X[0], y[1:4].astype(np.float32))
    np.testing.assert_array_equal(Y[0], y[4:6].astype(np.float32))
    assert q[0] == pytest.approx(mase_scale(y[:4], 2))


def test_statsforecast_argument_order_and_defaults():
    df = walk()
    fc = Forecaster(["Naive"], season_length=1)
    with pytest.raises(InvalidTypeError, match="h first"):
        fc.cross_validation(df, 4)
    with pytest.raises(InvalidTypeError, match="h first"):
        fc.forecast(df, 4)
    cv = fc.cross_validation(h=4, df=df, n_windows=3)  # statsforecast's default: windows one step apart
    assert sorted(cv.cutoff.unique()) == [42, 43, 44]
    assert sorted(fc.cross_validation(4, df, n_windows=3, step_size=4).cutoff.unique()) == [36, 40, 44]
    assert list(fc.forecast(h=2, df=df).ds.unique()) == [49, 50]


def test_evaluate_takes_the_season_the_frame_carries():
    df = walk()
    fc = Forecaster(["Naive", "SeasonalNaive"], season_length=4)
    cv = fc.cross_validation(4, df, n_windows=2, step_size=4)
    assert cv.attrs["season_length"] == 4
    pd.testing.assert_frame_equal(evaluate(cv, df), evaluate(cv, df, 4, ["Naive", "SeasonalNaive"]))
    with pytest.raises(InvalidParameterError, match="disagrees"):
        evaluate(cv, df, season_length=12)
    read_back = cv.copy()
    read_back.attrs = {}
    with pytest.raises(InvalidParameterError, match="give season_length"):
        evaluate(read_back, df)


def test_training_windows_are_the_forecasters_windows():
    """training_windows cuts, from a cross-validation frame, each window's training part and test values: a model
    of one's own trains on the Forecaster's very windows and is scored with the same MASE scales."""
    from seqlab.forecast.origins import training_windows, window_origins

    df = walk(n=40, ids=("b", "a", "c"))
    df = df[~((df.unique_id == "c") & (df.ds <= 20))]  # a shorter series that skips the earliest window
    cv = Forecaster(["Naive"], season_length=4).cross_validation(3, df, n_windows=3, step_size=3,
                                                                    min_train_length=12)
    wins = training_windows(cv, df)
    assert [w.j for w in wins] == [0, 1, 2]
    assert wins[0].ids == ["a", "b", "c"] and wins[2].ids == ["a", "b"]  # sorted; "c" is too short for it
    for w in wins:
        for uid, y, test, scale in zip(w.ids, w.series, w.test, w.scale):
            rows = cv[cv.unique_id == uid]
            cutoff = sorted(rows.cutoff.unique())[::-1][w.j]
            np.testing.assert_array_equal(test, rows[rows.cutoff == cutoff].y.to_numpy())
            np.testing.assert_array_equal(y, df[(df.unique_id == uid) & (df.ds <= cutoff)].y.to_numpy())
            assert scale == mase_scale(y, 4)  # the season the frame carries
        assert list(w.frame.unique_id.unique()) == w.ids
    panel = Panel.from_frame(df)
    series, offsets = window_origins(panel, 3, 3, 3, min_train_length=12)
    assert len(series) == sum(len(w.ids) for w in wins)
    bare = cv.copy()
    bare.attrs = {}
    with pytest.raises(InvalidParameterError, match="season_length"):
        training_windows(bare, df)
    assert [w.j for w in training_windows(bare, df, season_length=4)] == [0, 1, 2]
