"""§14.61 Neural forecasting: windows, scaling, global models (on AirPassengers)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..forecast import Forecaster, NeuralConfig, NeuralForecaster, air_passengers
from ..forecast.metrics import mase
from ..forecast.neural import make_windows
from ..threads import single_threaded
from .base import section

H, SEASON = 12, 12


@section("14.61", "Neural forecasting: windows, scaling, global models")
def run(ctx):
    df = air_passengers()
    train, test = df.iloc[:-H], df.iloc[-H:]
    y = train.y.to_numpy()
    L = 2 * SEASON
    X, Y, _ = make_windows([y], L, H)
    scale = np.abs(X).mean(axis=1)
    windows = pd.DataFrame([dict(series_length=len(y), input_size=L, horizon=H, windows=len(X),
                                 first_window_inputs=f"y[0:{L}]", first_window_target=f"y[{L}:{L + H}]",
                                 scale_first=float(scale[0]), scale_last=float(scale[-1]))])
    with single_threaded():
        gru = NeuralForecaster("gru", config=NeuralConfig(max_steps=600, batch_size=64, seed=ctx.seed(1)),
                               season_length=SEASON)
        fc = Forecaster(["SeasonalNaive", "AutoETS", gru], freq="ME", season_length=SEASON).forecast(train, H)
    scores = pd.DataFrame([dict(model=m, mase=mase(test.y, fc[m], y, SEASON)) for m in ("SeasonalNaive", "AutoETS", "GRU")])
    notes = [
        f"Windowing turns one series of {len(y)} months into {len(X)} supervised examples: {L} past values in, "
        f"the next {H} out (all horizons at once).",
        f"Scaling: each window is divided by the mean |y| of its input, from {scale[0]:.0f} for the first window to "
        f"{scale[-1]:.0f} for the last; the network sees shapes, not levels, so one model serves series of any size. "
        "A global model pools the windows of every series in a collection (M3 monthly: tens of thousands); a "
        "local model such as ETS is fitted to each series alone.",
        "On one short series a network has few examples; §14.63 compares the two where global models have data.",
        "Hold-out MASE (last 12 months): " + ", ".join(f"{r.model} {r.mase:.3f}" for r in scores.itertuples()),
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        hist = df.assign(series="observed")[["ds", "y", "series"]]
        parts = [hist] + [fc[["ds", m]].rename(columns={m: "y"}).assign(series=m) for m in ("SeasonalNaive", "AutoETS", "GRU")]
        long = pd.concat(parts, ignore_index=True)
        gg, fig = line_pair(long, "ds", "y", "series", title="AirPassengers: the last year held out",
                            subtitle="History and hold-out in grey; each model forecasts the 12 held-out months",
                            xlab="Month", ylab="Passengers (thousands)",
                            colors={"observed": "#737373", "SeasonalNaive": "#D8433B", "AutoETS": "#7FB069",
                                    "GRU": "#3B7DD8"})
        figs = ctx.save("airpassengers_forecast", gg, fig)
    return {"windows": windows, "holdout_mase": scores, "forecasts": fc}, figs, notes
