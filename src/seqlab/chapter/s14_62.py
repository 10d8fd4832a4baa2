"""§14.62 Evaluation: MASE and rolling-origin validation, computed."""
from __future__ import annotations

import pandas as pd

from ..forecast import Forecaster, air_passengers, evaluate, per_horizon, rolling_origin_splits, summarize
from .base import section

H, SEASON, WINDOWS = 12, 12, 4
MODELS = ["Naive", "SeasonalNaive", "Naive2", "AutoTheta", "AutoARIMA"]


@section("14.62", "Evaluation: MASE and rolling-origin validation")
def run(ctx):
    df = air_passengers()
    cuts = rolling_origin_splits(len(df), H, WINDOWS)
    spans = pd.DataFrame([dict(window=k + 1, train_from=df.ds.iloc[0].date(), train_to=df.ds.iloc[c - 1].date(),
                               test_from=df.ds.iloc[c].date(), test_to=df.ds.iloc[c + H - 1].date(), train_length=c)
                          for k, c in enumerate(cuts)])
    cv = Forecaster(MODELS, freq="ME", season_length=SEASON).cross_validation(df, H, n_windows=WINDOWS)
    err = evaluate(cv, df, SEASON, MODELS)
    by_window = err.groupby(["model", "cutoff"]).scaled_error.mean().rename("mase").reset_index()
    wide = by_window.pivot(index="model", columns="cutoff", values="mase")
    wide.columns = [f"window_{i + 1}" for i in range(wide.shape[1])]
    wide = wide.reset_index()
    summary = summarize(err)
    hz = per_horizon(err)
    s = summary.set_index("model")
    notes = [
        "MASE divides each window's mean absolute error by the in-sample MAE of the seasonal naive forecast "
        "(y_t = y_{t-12}) on that window's own training part: below 1 beats seasonal naive in-sample, and it is "
        "comparable across series of any scale.",
        f"Four expanding windows of 12 months: mean MASE SeasonalNaive {s.mase['SeasonalNaive']:.3f}, AutoTheta "
        f"{s.mase['AutoTheta']:.3f} (the anchors this reproduces: about 1.25 and 0.80).",
        f"AutoARIMA scores {s.mase['AutoARIMA']:.3f} here; it is fitted on this one series only, as its search over "
        "orders is too slow for the thousands of series in §14.63's comparison.",
        "A single hold-out is one draw; the spread across windows (table `mase_by_window`) shows how much a "
        "one-split ranking can move.",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        parts = []
        for k, c in enumerate(cuts):
            parts.append(df.iloc[:c].assign(role="training", window=f"window {k + 1}"))
            parts.append(df.iloc[c : c + H].assign(role="test", window=f"window {k + 1}"))
        spans_long = pd.concat(parts)
        gg, fig = line_pair(spans_long, "ds", "y", "role", facet="window", title="Rolling origin: four expanding windows",
                            subtitle="Each window trains on everything before its cut and tests on the next 12 months",
                            xlab="Month", ylab="Passengers", colors={"training": "#737373", "test": "#D8433B"})
        figs = ctx.save("rolling_origin", gg, fig)
        gg2, fig2 = line_pair(hz, "step", "mase", "model", points=True, title="MASE by forecast horizon",
                              subtitle="AirPassengers, mean over the four windows", xlab="Months ahead",
                              ylab="Mean scaled absolute error")
        figs += ctx.save("mase_by_horizon", gg2, fig2)
    return {"windows": spans, "mase_by_window": wide, "summary": summary, "mase_by_horizon": hz}, figs, notes
