"""Prediction intervals: levels, conformal quantiles, the interval and quantile scores, and the model protocol."""
import math

import numpy as np
import pandas as pd
import pytest
from conftest import require

from seqlab.errors import InvalidParameterError
from seqlab.forecast import (
    Forecaster,
    StatsForecastModel,
    air_passengers,
    check_levels,
    conformal_quantile,
    coverage,
    evaluate,
    pinball_loss,
    scaled_crps,
    scaled_pinball_loss,
    summarize,
    winkler_score,
)
from seqlab.forecast.intervals import (
    conformal_from_windows,
    interval_columns,
    min_calibration_size,
    quantile_columns,
    window_index,
)
from seqlab.forecast.metrics import crps_terms, mase_scale


# ------------------------------------------------------------------ levels and the conformal quantile
def test_levels_are_checked_and_normalised():
    assert check_levels([95, 80.0]) == [80, 95] and isinstance(check_levels([80.0])[0], int)
    assert check_levels(90) == [90] and check_levels(None) == [] and check_levels([99.5]) == [99.5]
    for bad in (120, 0, 100, -5, "x", ["80"], [True], [float("nan")], [], [80, 80], object()):
        with pytest.raises(InvalidParameterError):
            check_levels(bad)


def test_column_names_follow_statsforecast():
    assert interval_columns("M", [95, 80]) == ["M-lo-95", "M-lo-80", "M-hi-80", "M-hi-95"]
    assert quantile_columns("M", [80]) == {0.1: "M-lo-80", 0.5: "M", 0.9: "M-hi-80"}


def test_conformal_quantile_hand_worked():
    # n = 4 scores at 80%: rank ceil(5 * 0.8) = 4, the largest; at 95% rank 5 > 4: no finite quantile
    assert conformal_quantile([3, 1, 4, 2], 80) == 4
    assert conformal_quantile([3, 1, 4, 2], 95) == math.inf
    # n = 9 at 80%: rank ceil(10 * 0.8) = 8; NaN scores are left out
    assert conformal_quantile([*range(1, 10), np.nan], 80) == 8
    assert (min_calibration_size(80), min_calibration_size(90), min_calibration_size(95)) == (4, 9, 19)


# ------------------------------------------------------------------ scores, by hand
def test_interval_scores_hand_worked():
    y, lo, hi = [1, 2, 3], [0, 2.5, 0], [2, 3, 2]
    assert coverage(y, lo, hi) == pytest.approx(1 / 3)
    # 80%: 2/alpha = 10; widths 2, 0.5, 2; misses by 0.5 (below) and 1 (above)
    assert winkler_score(y, lo, hi, 80) == pytest.approx((2 + (0.5 + 5) + (2 + 10)) / 3)
    assert pinball_loss([10], [8], 0.9) == pytest.approx(1.8) and pinball_loss([10], [12], 0.9) == pytest.approx(0.2)
    qs = {0.1: np.array([8.0]), 0.5: np.array([10.0]), 0.9: np.array([12.0])}
    assert crps_terms([10], qs)[0] == pytest.approx(2 * (0.2 + 0 + 0.2) / 3)
    # scale of [1, 2, 3, 4] with m = 2: mean(|3 - 1|, |4 - 2|) = 2
    assert scaled_pinball_loss([10], qs, [1, 2, 3, 4], 2) == pytest.approx((0.2 + 0 + 0.2) / 3 / 2)
    assert scaled_crps([10], qs) == pytest.approx(2 * 0.4 / 3 / 10)
    with pytest.raises(InvalidParameterError):
        winkler_score(y, lo, hi, 120)


def _cv_with_intervals(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for uid in ("a", "b", "c"):
        y = 50 + rng.normal(0, 3, 48).cumsum()
        rows.append(pd.DataFrame({"unique_id": uid, "ds": np.arange(48), "y": y}))
    df = pd.concat(rows, ignore_index=True)
    train, test = df[df.ds < 40], df[df.ds >= 40].copy()
    f = test.y + rng.normal(0, 2, len(test))
    test["M"] = f
    for lv, z in ((80, 1.2816), (95, 1.96)):
        test[f"M-lo-{lv}"], test[f"M-hi-{lv}"] = f - 2.5 * z, f + 2.5 * z
    return df, train, test.assign(cutoff=39)


def test_interval_scores_match_utilsforecast():
    uf = require("utilsforecast.losses")
    df, train, cv = _cv_with_intervals()
    qcols = quantile_columns("M", [80, 95])
    quantiles = np.array(list(qcols))
    ref = {
        "coverage": uf.coverage(cv, models=["M"], level=80).set_index("unique_id")["M"],
        "winkler": uf.winkler_score(cv, models=["M"], level=95).set_index("unique_id")["M"],
        "ql": uf.quantile_loss(cv, models={"M": "M-hi-80"}, q=0.9).set_index("unique_id")["M"],
        "smql": uf.scaled_mqloss(cv, models={"M": list(qcols.values())}, quantiles=quantiles, seasonality=4,
                                 train_df=train).set_index("unique_id")["M"],
        "scrps": uf.scaled_crps(cv, models={"M": list(qcols.values())},
                                quantiles=quantiles).set_index("unique_id")["M"],
    }
    for uid, w in cv.groupby("unique_id"):
        qs = {q: w[c].to_numpy() for q, c in qcols.items()}
        assert coverage(w.y, w["M-lo-80"], w["M-hi-80"]) == pytest.approx(ref["coverage"][uid], rel=1e-12)
        assert winkler_score(w.y, w["M-lo-95"], w["M-hi-95"], 95) == pytest.approx(ref["winkler"][uid], rel=1e-12)
        assert pinball_loss(w.y, w["M-hi-80"], 0.9) == pytest.approx(ref["ql"][uid], rel=1e-12)
        tr = train[train.unique_id == uid].y
        assert scaled_pinball_loss(w.y, qs, tr, 4) == pytest.approx(ref["smql"][uid], rel=1e-9)
        assert scaled_crps(w.y, qs) == pytest.approx(ref["scrps"][uid], rel=1e-9)
    # the path the tables take: evaluate() per step, summarize() per (series, window), then the mean
    s = summarize(evaluate(cv, df, 4, ["M"]), naive2=None).iloc[0]
    assert s.coverage_80 == pytest.approx(ref["coverage"].mean(), rel=1e-12)
    assert s.spl == pytest.approx(ref["smql"].mean(), rel=1e-9)
    assert s.scrps == pytest.approx(ref["scrps"].mean(), rel=1e-9)
    scales = {u: mase_scale(train[train.unique_id == u].y, 4) for u in ("a", "b", "c")}
    assert s.winkler_95 == pytest.approx(np.mean([ref["winkler"][u] / scales[u] for u in scales]), rel=1e-9)


def test_summarize_reports_both_averages():
    # series a: two windows with MASE 1 and 3; series b: one window with MASE 5
    err = pd.DataFrame({"unique_id": ["a", "a", "b"], "cutoff": [1, 2, 2], "model": "M", "step": 1,
                        "scaled_error": [1.0, 3.0, 5.0], "smape_term": [10.0, 30.0, 50.0]})
    by_units = summarize(err, naive2=None).iloc[0]
    assert by_units.mase == pytest.approx(3.0) and by_units.mase_series == pytest.approx(3.5)
    assert by_units.smape == pytest.approx(30.0) and (by_units.series, by_units.units) == (2, 3)
    by_series = summarize(err, naive2=None, average="series").iloc[0]
    assert by_series.mase == pytest.approx(3.5) and by_series.mase_units == pytest.approx(3.0)
    assert by_series.smape == pytest.approx(35.0)
    with pytest.raises(InvalidParameterError, match="average"):
        summarize(err, average="windows")


# ------------------------------------------------------------------ the Forecaster's intervals
def _walk(n=40, ids=("a",), seed=1):
    rng = np.random.default_rng(seed)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": np.arange(1, n + 1), "y": 20 + rng.normal(0, 1, n).cumsum()})
                      for u in ids], ignore_index=True)


def test_conformal_interval_hand_worked():
    """Naive on one series: refit 4 times one period apart, errors over each training part's scale, rank 4 of 4."""
    df, h, m = _walk(), 3, 2
    out = Forecaster(["Naive"], season_length=m).forecast(h, df, level=[80], calibration_windows=4, calibration_step=1)
    y = df.y.to_numpy()
    scores = []
    for j in range(4):
        cut = len(y) - h - j
        scores.append(np.abs(y[cut : cut + h] - y[cut - 1]) / mase_scale(y[:cut], m))
    q = np.sort(np.array(scores), axis=0)[3]  # n = 4 at 80%: rank ceil(5 * 0.8) = 4
    half = q * mase_scale(y, m)
    np.testing.assert_allclose(out["Naive-hi-80"] - out["Naive"], half, rtol=1e-12)
    np.testing.assert_allclose(out["Naive"] - out["Naive-lo-80"], half, rtol=1e-12)
    assert out.attrs["intervals"] == {"Naive": "conformal"} and out.attrs["calibration"] == {"windows": 4, "step": 1}


def test_native_intervals_are_statsforecasts_own():
    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS, SeasonalNaive

    df = air_passengers()
    ours = Forecaster(["SeasonalNaive", "AutoETS", "Naive2"], freq="ME", season_length=12).forecast(
        12, df, level=[80, 95], intervals="native")
    theirs = StatsForecast(models=[SeasonalNaive(12), AutoETS(season_length=12)], freq="ME").forecast(
        df=df, h=12, level=[80, 95])
    cols = ["SeasonalNaive", *interval_columns("SeasonalNaive", [80, 95]), "AutoETS", *interval_columns("AutoETS",
                                                                                                     [80, 95])]
    np.testing.assert_allclose(ours[cols].to_numpy(), theirs[cols].to_numpy(), rtol=1e-12)
    assert ours.attrs["intervals"] == {"SeasonalNaive": "native", "AutoETS": "native", "Naive2": "conformal"}
    assert list(ours.columns[2:7]) == ["SeasonalNaive", "SeasonalNaive-lo-95", "SeasonalNaive-lo-80",
                                       "SeasonalNaive-hi-80", "SeasonalNaive-hi-95"]


class MeanModel:
    """A global model written against the protocol only: the mean of each series' last 6 values."""

    name = "Mean6"

    def fit(self, df, h):
        self.fits = getattr(self, "fits", 0) + 1
        return self

    def predict(self, df, h):
        return {uid: np.full(h, g.y.to_numpy()[-6:].mean()) for uid, g in df.groupby("unique_id", sort=False)}


def test_every_model_gets_the_same_conformal_treatment():
    df = _walk(60, ids=("zz", "aa", "mm"), seed=2)
    mean = MeanModel()
    fc = Forecaster(["Naive", "Naive2", mean], season_length=4)
    cv = fc.cross_validation(4, df, n_windows=3, level=[80, 95], intervals="native", step_size=4)
    assert cv.attrs["intervals"] == {"Naive": "native", "Naive2": "conformal", "Mean6": "conformal"}
    for name in fc.names:
        lo95, lo80, hi80, hi95 = (cv[c] for c in interval_columns(name, [80, 95]))
        assert (lo95 <= lo80).all() and (lo80 <= cv[name]).all() and (cv[name] <= hi80).all() and (hi80 <= hi95).all()
    # a global model is fitted once per origin: 3 windows and their calibration origins (3 series at 95%: 7
    # windows one period apart, the first a horizon before each cutoff), shared where they coincide
    assert cv.attrs["calibration"] == {"windows": 7, "step": 1}
    offsets = {o for w in (4, 8, 12) for o in [w, *range(w + 4, w + 11)]}
    assert mean.fits == len(offsets)


def test_cross_validation_intervals_never_see_their_test_values():
    df = _walk(60, ids=("a", "b"), seed=3)
    fc = Forecaster(["Naive", "SeasonalNaive", "Naive2"], season_length=4)
    kw = dict(level=[80, 95])
    before = fc.cross_validation(4, df, n_windows=3, **kw, step_size=4)
    changed = df.copy()
    changed.loc[changed.groupby("unique_id").cumcount() >= 56, "y"] += 1000.0  # the last window's test values
    after = fc.cross_validation(4, changed, n_windows=3, **kw, step_size=4)
    pd.testing.assert_frame_equal(before.drop(columns="y"), after.drop(columns="y"))


def test_conformal_from_windows_equals_the_refitting_path():
    """Calibrating on a cross-validation frame's earlier windows is the Forecaster's own conformal, without refits.

    Four windows a horizon apart: the last calibrates on the three before it, exactly the
    origins ``forecast(level, calibration_windows=3, calibration_step=h)`` refits at.
    """
    df, h = _walk(60, ids=("a", "b", "c"), seed=4), 4
    names = ["Naive", "SeasonalNaive", "Naive2"]
    fc = Forecaster(names, season_length=4)
    cv = fc.cross_validation(h, df, n_windows=4, step_size=h)
    post = conformal_from_windows(cv, df, 4, names, [80, 95])
    last = post[window_index(post) == 0].reset_index(drop=True)
    ref = fc.forecast(h, df.groupby("unique_id").head(60 - h), level=[80, 95], calibration_windows=3,
                      calibration_step=h)
    cols = [c for n in names for c in [n, *interval_columns(n, [80, 95])]]
    np.testing.assert_allclose(last[cols].to_numpy(), ref[cols].to_numpy(), rtol=1e-12)
    assert list(post.columns) == ["unique_id", "ds", "cutoff", "y", *cols]
    # 3 series x 3 earlier windows = 9 scores per step for the last window: 80% finite, 95% (needs 19) not
    assert post.attrs["calibration_scores"] == {0: 9, 1: 6, 2: 3, 3: 0}
    assert np.isfinite(last["Naive-hi-80"]).all() and np.isinf(last["Naive-hi-95"]).all()
    first = post[window_index(post) == 3]
    assert np.isinf(first["Naive-lo-80"]).all() and np.isinf(first["Naive-hi-80"]).all()


def test_conformal_from_windows_never_sees_later_windows():
    df, h = _walk(60, ids=("a", "b", "c", "d"), seed=5), 3
    cv = Forecaster(["Naive", "Naive2"], season_length=3).cross_validation(h, df, n_windows=4, step_size=h)
    before = conformal_from_windows(cv, df, 3, ["Naive", "Naive2"], [80])
    later = cv.copy()
    j = window_index(later)
    later.loc[j == 0, "y"] += 500.0  # the last window's actual values ...
    later.loc[j == 1, "Naive"] -= 300.0  # ... and a later window's forecasts
    after = conformal_from_windows(later, df, 3, ["Naive", "Naive2"], [80])
    keep = window_index(after) >= 2
    pd.testing.assert_frame_equal(before[keep], after[keep])
    with pytest.raises(InvalidParameterError, match="no column 'GRU'"):
        conformal_from_windows(cv, df, 3, ["GRU"], [80])
    with pytest.raises(InvalidParameterError, match="levels"):
        conformal_from_windows(cv, df, 3, ["Naive"], None)


def test_too_few_calibration_errors_give_unbounded_intervals():
    out = Forecaster(["Naive"]).forecast(2, _walk(), level=[95], calibration_windows=3)
    assert np.isinf(out["Naive-hi-95"]).all() and np.isinf(out["Naive-lo-95"]).all()
    assert "unbounded" in out.attrs["notes"][0]


def test_model_names_cannot_collide():
    from statsforecast.models import AutoETS

    fc = Forecaster(["AutoETS", AutoETS(season_length=12, alias="ETS12")], season_length=12)
    assert fc.names == ["AutoETS", "ETS12"]
    with pytest.raises(InvalidParameterError, match="two models are named 'Naive'"):
        Forecaster(["Naive", StatsForecastModel("Naive")])
    with pytest.raises(InvalidParameterError, match="not a model"):
        Forecaster([object()])
    with pytest.raises(InvalidParameterError, match="column of the results"):
        Forecaster([StatsForecastModel("Naive", alias="y")])


@pytest.mark.parametrize("kwargs,words", [
    (dict(level=120), "between 0 and 100"), (dict(level="x"), "numbers"), (dict(level=[80], intervals="bayes"),
                                                                            "intervals must be"),
    (dict(level=[80], calibration_windows=0), "calibration_windows"), (dict(level=[80], calibration_step=1.5),
                                                                        "calibration_step"),
])
def test_bad_interval_arguments(kwargs, words):
    with pytest.raises(InvalidParameterError, match=words):
        Forecaster(["Naive"]).forecast(3, _walk(), **kwargs)
