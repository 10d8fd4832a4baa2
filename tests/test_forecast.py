import numpy as np
import pandas as pd
import pytest
from conftest import require

from seqlab.forecast import (
    ForecastDataError,
    Forecaster,
    NeuralConfig,
    NeuralForecaster,
    air_passengers,
    evaluate,
    mase,
    rolling_origin_splits,
    smape,
    summarize,
    validate_long,
)
from seqlab.forecast.classical import naive2_forecast, seasonality_test
from seqlab.errors import InvalidParameterError
from seqlab.forecast.neural import masked_scale, window_cuts
from seqlab.forecast.panel import Panel


def test_mase_hand_worked():
    # seasonal naive with m = 2 on [1, 2, 3, 4]: errors |3-1|, |4-2| -> scale 2
    assert mase([5, 6], [4, 4], [1, 2, 3, 4], 2) == pytest.approx((1 + 2) / 2 / 2)
    assert smape([100, 100], [100, 50]) == pytest.approx(100 * (0 + 50 / 150))


def test_metrics_match_utilsforecast():
    uf = require("utilsforecast.losses")
    rng = np.random.default_rng(0)
    rows = []
    for uid in ("a", "b", "c"):
        y = rng.normal(100, 10, 40).cumsum()
        rows.append(pd.DataFrame({"unique_id": uid, "ds": np.arange(40), "y": y}))
    df = pd.concat(rows)
    train, test = df[df.ds < 32], df[df.ds >= 32].copy()
    test["model"] = test.y * (1 + rng.normal(0, 0.05, len(test)))
    ref_mase = uf.mase(test, models=["model"], seasonality=4, train_df=train).set_index("unique_id")["model"]
    ref_smape = uf.smape(test, models=["model"]).set_index("unique_id")["model"]
    for uid in ("a", "b", "c"):
        t, tr = test[test.unique_id == uid], train[train.unique_id == uid]
        assert mase(t.y, t.model, tr.y, 4) == pytest.approx(ref_mase[uid], rel=1e-9)
        # utilsforecast reports sMAPE on a 0-1 scale (mean of |e| / (|y| + |f|)); the M4 scale is 200 x that
        assert smape(t.y, t.model) == pytest.approx(200 * ref_smape[uid], rel=1e-9)
    # the path the chapter's tables take: evaluate() per step, then summarize() per (series, window)
    cv = test.assign(cutoff=31)
    per = summarize(evaluate(cv, df, 4, ["model"]), naive2=None).iloc[0]
    assert per.mase == pytest.approx(ref_mase.mean(), rel=1e-9)
    assert per.smape == pytest.approx(200 * ref_smape.mean(), rel=1e-9)


def test_rolling_origin_splits_hand_worked():
    assert rolling_origin_splits(20, 3, 3) == [11, 14, 17]
    assert rolling_origin_splits(20, 3, 2, step_size=1) == [16, 17]
    with pytest.raises(ForecastDataError):
        rolling_origin_splits(5, 3, 3)


@pytest.mark.parametrize("mutate,msg", [
    (lambda d: d.assign(y=d.y.astype(object).where(d.index != 3, "abc")), "non-numeric"),
    (lambda d: d.assign(y=d.y.where(d.index != 3, np.nan)), "missing value"),
    (lambda d: pd.concat([d, d.iloc[[2]]]), "duplicate"),
    (lambda d: d.iloc[::-1], "not sorted"),
    (lambda d: d.drop(columns="ds"), "missing column"),
])
def test_bad_long_frames(mutate, msg):
    df = pd.DataFrame({"unique_id": "s", "ds": np.arange(10), "y": np.arange(10.0)})
    with pytest.raises(ForecastDataError, match=msg):
        validate_long(mutate(df))


def test_naive2_on_a_seasonal_series():
    t = np.arange(48)
    y = (100 + t) * (1 + 0.3 * np.sin(2 * np.pi * t / 12))
    assert seasonality_test(y, 12)
    f = naive2_forecast(y, 12, 12)
    assert np.corrcoef(f, y[-12:])[0, 1] > 0.9  # the seasonal shape carries into the forecast
    assert np.all(naive2_forecast(np.arange(1.0, 30), 3, 1) == 29)


def test_windows_never_see_the_validation_part():
    y = np.arange(100.0)
    i, t = window_cuts([94], 12, 6)  # the training part ends at 94
    X, M, Y, _ = Panel([y], pad=12).windows(i, t, 12, 6)
    assert Y.max() <= 93 and X.max() <= 93 and M.all()
    y2 = y.copy()
    y2[94:] = 1e9  # changing the held-out part changes nothing the model trains on
    X2, _, Y2, _ = Panel([y2], pad=12).windows(i, t, 12, 6)
    assert np.array_equal(X, X2) and np.array_equal(Y, Y2)


def test_window_cuts_hand_worked():
    # n = 10, input 4, h = 3: full inputs at t = 4..7; n = 5: one window at t = 2, input half masked;
    # n = 3: its target would leave the series, no window
    i, t = window_cuts([10, 5, 3], 4, 3)
    assert i.tolist() == [0, 0, 0, 0, 1] and t.tolist() == [4, 5, 6, 7, 2]
    X, M, Y, _ = Panel([np.arange(1.0, 11), np.arange(1.0, 6), np.ones(3)], pad=4).windows(i, t, 4, 3)
    assert X[-1].tolist() == [0, 0, 1, 2] and M[-1].tolist() == [0, 0, 1, 1] and Y[-1].tolist() == [3, 4, 5]
    # the scale reads the observed inputs only: |1| and |2| average to 1.5, not (1 + 2) / 4
    assert masked_scale(X, M)[-1, 0] == 1.5 and masked_scale(X, M)[0, 0] == 2.5


def test_neural_forecaster_trains_beside_a_short_series_and_refuses_none():
    # "short" (20 points) is shorter than input + h: its one window is partly masked
    rng = np.random.default_rng(0)
    rows = [pd.DataFrame({"unique_id": u, "ds": np.arange(n), "y": 50 + rng.normal(0, 1, n).cumsum()})
            for u, n in (("long", 60), ("short", 20))]
    df = pd.concat(rows, ignore_index=True)
    cfg = NeuralConfig(input_size=24, max_steps=30, batch_size=8, val_check_steps=10, seed=1)
    f = NeuralForecaster("gru", config=cfg).fit(df, 6)
    p = f.predict(df, 6)
    assert set(p) == {"long", "short"} and all(np.isfinite(v).all() and v.shape == (6,) for v in p.values())
    with pytest.raises(InvalidParameterError, match="nothing to train on"):
        NeuralForecaster("gru", config=cfg).fit(df[df.ds < 10], 6)


def test_neural_forecaster_is_deterministic_and_learns_a_seasonal_shape():
    df = air_passengers()
    train = df.iloc[:-12]
    cfg = NeuralConfig(max_steps=300, batch_size=32, seed=3)
    a = NeuralForecaster("gru", config=cfg, season_length=12).fit(train, 12).predict(train, 12)
    b = NeuralForecaster("gru", config=cfg, season_length=12).fit(train, 12).predict(train, 12)
    (uid,) = a
    np.testing.assert_array_equal(a[uid], b[uid])
    err = mase(df.y.iloc[-12:], a[uid], train.y, 12)
    assert err < 3.0  # far better than a flat guess at this scale


@pytest.fixture(scope="module")
def air_cv():
    df = air_passengers()
    fc = Forecaster(["Naive", "SeasonalNaive", "Naive2", "AutoTheta"], freq="ME", season_length=12)
    return df, fc.cross_validation(12, df, n_windows=4, step_size=12)


def test_cross_validation_frame(air_cv):
    df, cv = air_cv
    assert list(cv.columns) == ["unique_id", "ds", "cutoff", "y", "Naive", "SeasonalNaive", "Naive2", "AutoTheta"]
    assert len(cv) == 48 and cv.cutoff.nunique() == 4
    assert (cv.ds > cv.cutoff).all()
    first = cv[cv.cutoff == cv.cutoff.min()]
    # seasonal naive repeats the last observed year
    hist = df[df.ds <= first.cutoff.iloc[0]].y.to_numpy()
    np.testing.assert_allclose(first.SeasonalNaive.to_numpy(), hist[-12:])


def test_airpassengers_anchors(air_cv):
    df, cv = air_cv
    s = summarize(evaluate(cv, df, 12, ["Naive", "SeasonalNaive", "Naive2", "AutoTheta"])).set_index("model")
    assert s.mase["SeasonalNaive"] == pytest.approx(1.25, abs=0.03)
    assert s.mase["AutoTheta"] == pytest.approx(0.80, abs=0.05)
    assert s.owa["Naive2"] == pytest.approx(1.0)


def test_unknown_model_rejected():
    with pytest.raises(ValueError, match="unknown model"):
        Forecaster(["Prophet"])


def test_bootstrap_difference_detects_a_real_gap_and_refuses_tiny_samples():
    from seqlab.forecast import bootstrap_difference

    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        base = rng.uniform(0.5, 1.5)
        rows += [dict(unique_id=i, cutoff=0, model="A", step=1, scaled_error=base),
                 dict(unique_id=i, cutoff=0, model="B", step=1, scaled_error=base + 0.2 + rng.normal(0, 0.05))]
    err = pd.DataFrame(rows)
    r = bootstrap_difference(err, "A", "B")
    assert r["significant"] and r["ci_high"] < 0 and r["share_of_units_better"] == 1.0
    small = bootstrap_difference(err[err.unique_id < 3], "A", "B")
    assert not small["testable"] and not small["significant"]


def test_bootstrap_resamples_series_not_windows():
    from seqlab.forecast import bootstrap_difference

    rng = np.random.default_rng(1)
    d = rng.normal(0.05, 0.3, size=15)
    one = pd.DataFrame([dict(unique_id=i, cutoff=0, model=m, mase=1 + (d[i] if m == "A" else 0)) for i in range(15)
                        for m in "AB"])
    # the same 15 series scored in five identical windows: five times the units, no new information
    five = pd.concat([one.assign(cutoff=k) for k in range(5)], ignore_index=True)
    r1, r5 = bootstrap_difference(one, "A", "B"), bootstrap_difference(five, "A", "B")
    assert r5["units"] == 75 and r5["series"] == r1["series"] == 15
    assert (r5["ci_low"], r5["ci_high"]) == pytest.approx((r1["ci_low"], r1["ci_high"]))
    assert r5["mean_difference"] == pytest.approx(d.mean())


def _two_series(n_long=40, n_short=22):
    rng = np.random.default_rng(3)
    return pd.concat([pd.DataFrame({"unique_id": uid, "ds": np.arange(1, n + 1), "y": 10 + rng.normal(size=n).cumsum()})
                      for uid, n in (("long", n_long), ("short", n_short))], ignore_index=True)


def test_short_series_keep_only_the_windows_they_are_long_enough_for():
    df = _two_series()
    cv = Forecaster(["Naive"]).cross_validation(4, df, n_windows=3, min_train_length=12, step_size=4)
    # long (40): cuts 28, 32, 36 -> all three windows; short (22): cuts 10, 14, 18 -> only 14 and 18 train on >= 12
    assert cv.groupby("unique_id").cutoff.unique().map(list).to_dict() == {"long": [28, 32, 36], "short": [14, 18]}
    # each window's forecast uses that window's history only: Naive repeats the value at the cutoff
    for (uid, cutoff), w in cv.groupby(["unique_id", "cutoff"]):
        last = df[(df.unique_id == uid) & (df.ds == cutoff)].y.item()
        np.testing.assert_allclose(w.Naive.to_numpy(), last)
        assert list(w.ds) == list(range(cutoff + 1, cutoff + 5))


def test_without_min_train_length_every_series_needs_every_window():
    df = _two_series(n_short=8)
    with pytest.raises(ForecastDataError, match="too short"):
        Forecaster(["Naive"]).cross_validation(4, df, n_windows=3, step_size=4)
    cv = Forecaster(["Naive"]).cross_validation(4, df, n_windows=3, min_train_length=6, step_size=4)
    # the last window keeps every series, however short its training part (here 4 < 6)
    assert cv.groupby("unique_id").cutoff.unique().map(list).to_dict() == {"long": [28, 32, 36], "short": [4]}
    with pytest.raises(ForecastDataError, match="too short"):
        Forecaster(["Naive"]).cross_validation(4, _two_series(n_short=5), n_windows=3, min_train_length=6, step_size=4)
    with pytest.raises(ValueError, match="min_train_length"):
        Forecaster(["Naive"]).cross_validation(4, df, n_windows=3, min_train_length=1, step_size=4)
