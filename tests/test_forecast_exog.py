"""Exogenous regressors (issue 56, B): ``forecast(h, df, X_df)`` as in statsforecast. On series built with a known
effect (y = season + 5 promo + noise) AutoARIMA recovers the effect and beats itself without the regressor on a
hold-out; its forecasts are statsforecast's own; the GRU reads regressors as input channels; a stored fit keeps
them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from seqlab.forecast import ForecastDataError, Forecaster
from seqlab.forecast.neural import NeuralConfig, NeuralForecaster

N, H, EFFECT = 120, 12, 5.0


def promo_series(seed=7, ids=("a", "b"), n=N):
    """Monthly series y = level + 8 sin(2 pi t / 12) + 5 promo + N(0, 1), promo a random 0/1 dummy."""
    rng = np.random.default_rng(seed)
    frames = []
    for k, u in enumerate(ids):
        t = np.arange(n + H)
        promo = (rng.random(n + H) < 0.3).astype(float)
        y = 100 + 10 * k + 8 * np.sin(2 * np.pi * t / 12) + EFFECT * promo + rng.normal(0, 1, n + H)
        frames.append(pd.DataFrame({"unique_id": u, "ds": pd.date_range("2010-01-01", periods=n + H, freq="MS"),
                                    "y": y, "promo": promo}))
    full = pd.concat(frames, ignore_index=True)
    train = full.groupby("unique_id").head(n).reset_index(drop=True)
    test = full.groupby("unique_id").tail(H).reset_index(drop=True)
    return train, test


def mase(test, fc, train, column):
    out = []
    for u, g in test.groupby("unique_id"):
        hist = train.loc[train.unique_id == u, "y"].to_numpy()
        scale = np.mean(np.abs(hist[12:] - hist[:-12]))
        out.append(np.mean(np.abs(g.y.to_numpy() - fc.loc[fc.unique_id == u, column].to_numpy())) / scale)
    return float(np.mean(out))


@pytest.fixture(scope="module")
def arima():
    train, test = promo_series()
    X_df = test[["unique_id", "ds", "promo"]]
    fc = Forecaster(["AutoARIMA", "Naive"], freq="MS", season_length=12)
    return train, test, X_df, fc.forecast(H, train, X_df), fc


def test_autoarima_recovers_the_effect(arima):
    train, _, X_df, _, fc = arima
    on, off = (fc.forecast(H, train, X_df.assign(promo=v)) for v in (1.0, 0.0))
    effect = (on.AutoARIMA - off.AutoARIMA).to_numpy().reshape(2, H)  # per series: its regression coefficient
    assert np.allclose(effect, effect[:, :1]) and (abs(effect[:, 0] - EFFECT) < 0.5).all(), effect[:, 0]
    # measured: 4.980 (series a) and 5.246 (series b)
    np.testing.assert_array_equal(on.Naive, off.Naive)  # Naive forecasts from y alone


def test_autoarima_with_the_regressor_beats_it_without_on_the_hold_out(arima):
    train, test, _, with_x, _ = arima
    without = Forecaster(["AutoARIMA"], freq="MS", season_length=12).forecast(H, train[["unique_id", "ds", "y"]])
    got, base = mase(test, with_x, train, "AutoARIMA"), mase(test, without, train, "AutoARIMA")
    assert got < 0.6 * base, (got, base)  # measured: 0.248 against 0.845


def test_the_classical_forecasts_are_statsforecasts_own(arima):
    from statsforecast import StatsForecast
    from statsforecast.models import AutoARIMA

    train, _, X_df, with_x, _ = arima
    sf = StatsForecast(models=[AutoARIMA(season_length=12)], freq="MS").forecast(df=train, h=H, X_df=X_df)
    sf = sf.reset_index() if "unique_id" not in sf.columns else sf
    both = with_x.merge(sf, on=["unique_id", "ds"], suffixes=("", "_sf"))
    assert len(both) == 2 * H
    np.testing.assert_allclose(both.AutoARIMA, both.AutoARIMA_sf, rtol=0, atol=1e-9)  # measured: 0.0


def small_gru():
    return NeuralForecaster("gru", config=NeuralConfig(hidden_size=16, max_steps=60, val_check_steps=20,
                                                       batch_size=64), season_length=12, device="cpu")


def test_the_gru_reads_regressors_as_input_channels():
    train, test = promo_series()
    X_df = test[["unique_id", "ds", "promo"]]
    fc = Forecaster([small_gru()], freq="MS", season_length=12)
    got = fc.forecast(H, train, X_df)
    flipped = fc.forecast(H, train, X_df.assign(promo=1.0 - X_df.promo))
    assert np.isfinite(got.GRU).all() and not np.array_equal(got.GRU, flipped.GRU)
    plain = Forecaster([small_gru()], freq="MS", season_length=12).forecast(H, train[["unique_id", "ds", "y"]])
    assert fc.models[0].model.rnn.input_size == 3 and not np.array_equal(plain.GRU, got.GRU)


def test_a_stored_fit_keeps_the_regressors(tmp_path):
    train, test = promo_series(n=48)
    X_df = test[["unique_id", "ds", "promo"]]
    make = lambda: Forecaster(["AutoARIMA", small_gru(), "Naive"], freq="MS", season_length=12)
    options = dict(level=[80], calibration_windows=2, calibration_step=H)  # 2 series x 2 windows: 4 errors a step
    want = make().forecast(H, train, X_df, **options)
    make().fit(H, train, X_df, **options).save(tmp_path / "m")
    loaded = Forecaster.load(tmp_path / "m")
    assert loaded.predict().equals(want)  # the horizon's regressors are stored with the fit
    longer = pd.concat([train, test.assign(y=test.y)]).sort_values(["unique_id", "ds"], kind="stable")
    later = X_df.assign(ds=X_df.ds + pd.DateOffset(years=1))
    assert np.isfinite(loaded.predict(longer, later)[["AutoARIMA", "GRU"]].to_numpy()).all()
    with pytest.raises(Exception, match="give X_df"):
        loaded.predict(longer)


@pytest.mark.parametrize("mutate,words", [
    (lambda x: x[x.unique_id == "a"], "no future values for series 'b'"),
    (lambda x: x.iloc[1:], "must give series 'a' its 12 dates"),
    (lambda x: x.assign(promo=np.where(np.arange(len(x)) == 3, np.nan, x.promo)), "regressor 'promo' has an empty"),
    (lambda x: x.assign(y=1.0), "holds a y column"),
    (lambda x: x.rename(columns={"promo": "price"}), "df has no regressor column 'price'"),
])
def test_bad_future_regressors_are_one_error_before_any_fit(mutate, words):
    train, test = promo_series()
    X_df = test[["unique_id", "ds", "promo"]]
    with pytest.raises(ForecastDataError, match=words):
        Forecaster(["AutoARIMA"], freq="MS", season_length=12).forecast(H, train, mutate(X_df))


def test_cross_validation_reads_each_windows_regressors_from_the_history():
    train, test = promo_series()
    full = pd.concat([train, test]).sort_values(["unique_id", "ds"], kind="stable").reset_index(drop=True)
    fc = Forecaster(["AutoARIMA"], freq="MS", season_length=12)
    cv = fc.cross_validation(H, full, n_windows=1, exog=["promo"])
    once = fc.forecast(H, train, test[["unique_id", "ds", "promo"]])
    np.testing.assert_array_equal(cv.AutoARIMA.to_numpy(), once.AutoARIMA.to_numpy())
