"""§14.62 Evaluation: MASE and rolling-origin validation, computed.

Steps the page calls: :func:`window_spans`, :func:`cross_validate` and :func:`protocol`
(which windows of a competition set choose the neural settings and which one tests them).
"""
from __future__ import annotations

import pandas as pd

from ..forecast import Forecaster, air_passengers, competition, evaluate, per_horizon, rolling_origin_splits, summarize
from ..claims import claim_source, verdict
from .base import section

H, SEASON, WINDOWS = 12, 12, 4
MODELS = ["Naive", "SeasonalNaive", "Naive2", "AutoTheta", "AutoARIMA"]
#: the competition set whose windows illustrate the validation protocol of §14.63
PROTOCOL_SET = ("M3", "monthly")
#: the chapter's reference MASE for four 12-month windows of AirPassengers (§14.63's anchors list them)
REFERENCE = {"SeasonalNaive": 1.25, "AutoTheta": 0.80}
#: how close a reproduced value must be to its reference to be called a reproduction
REPRODUCED = 0.05
#: the labels of the protocol table by role: where a window's training ends, what it tests, what N-BEATS does there
ROLE_LABELS = {
    "validation": dict(training_ends="{periods} periods before the given history ends", tests="the next {h} periods",
                       nbeats="trained for every step count and member of the grid; chooses steps and members"),
    "official hold-out": dict(training_ends="where the given history ends (the forecast origin)",
                              tests="the {h} withheld periods",
                              nbeats="the chosen ensemble, retrained on everything up to the origin"),
}


def window_spans(df: pd.DataFrame, h: int = H, windows: int = WINDOWS) -> pd.DataFrame:
    """Training and test span of each expanding window (window 1 the earliest)."""
    cuts = rolling_origin_splits(len(df), h, windows)
    return pd.DataFrame([dict(window=k + 1, train_from=df.ds.iloc[0].date(), train_to=df.ds.iloc[c - 1].date(),
                              test_from=df.ds.iloc[c].date(), test_to=df.ds.iloc[c + h - 1].date(), train_length=c)
                         for k, c in enumerate(cuts)])


def cross_validate(df: pd.DataFrame, models=MODELS, h: int = H, windows: int = WINDOWS):
    """``(errors, summary)`` of a rolling-origin evaluation of ``models`` on ``df``."""
    cv = Forecaster(list(models), freq="ME", season_length=SEASON).cross_validation(h, df, n_windows=windows, step_size=h)
    err = evaluate(cv, df, SEASON, list(models))
    return err, summarize(err)


def protocol(name: str = PROTOCOL_SET[0], group: str = PROTOCOL_SET[1], windows: int = 3) -> pd.DataFrame:
    """The windows of a competition set and their roles in §14.63: validation windows, then the official hold-out.

    Window ``j`` (counted back from the last) trains on each series up to ``h * j``
    periods before its training end; a series takes part when that training part is
    at least ``max(2h, h + 2m)`` long (the official hold-out keeps every series).
    """
    from ..experiments.forecast import min_train_length

    train, _, season, h = competition(name, group)
    n = train.groupby("unique_id").size()
    need = min_train_length(h, season)
    rows = []
    for j in range(windows - 1, -1, -1):
        part = n - h * j
        role = "validation" if j else "official hold-out"
        words = {k: v.format(periods=h * j, h=h) for k, v in ROLE_LABELS[role].items()}
        rows.append(dict(window=windows - j, role=role, training_ends=words["training_ends"], tests=words["tests"],
                         series=int((part >= need).sum()) if j else len(n), nbeats=words["nbeats"]))
    return pd.DataFrame(rows)


def best_by_window(by_window: pd.DataFrame) -> pd.Series:
    """The model with the lowest MASE in each window (``by_window``: models as rows, windows as columns)."""
    return by_window.idxmin(axis=0)


@claim_source
def cv_claims(summary: pd.DataFrame, by_window: pd.DataFrame):
    """The four-window means against the chapter's references, the spread across windows, AutoARIMA's place."""
    s = summary.set_index("model").mase
    sn, th = float(s["SeasonalNaive"]), float(s["AutoTheta"])
    miss = max(abs(sn / REFERENCE["SeasonalNaive"] - 1), abs(th / REFERENCE["AutoTheta"] - 1))
    best = best_by_window(by_window)
    lo, hi = float(by_window.loc["AutoTheta"].min()), float(by_window.loc["AutoTheta"].max())
    arima = float(s["AutoARIMA"])
    return [
        verdict("s62_reproduced", miss < REPRODUCED, seasonal_naive=sn, autotheta=th, largest_relative_miss=miss,
                reference_seasonal_naive=REFERENCE["SeasonalNaive"], reference_autotheta=REFERENCE["AutoTheta"]),
        verdict("s62_best_moves", best.nunique() > 1, best=dict(best), autotheta_low=lo, autotheta_high=hi,
                best_by_window=[f"{w}: {m}" for w, m in best.items()], first_best=best.iloc[0]),
        verdict("s62_arima", arima > th, autoarima=arima, autotheta=th),
    ]


def windows_figure(df: pd.DataFrame, h: int = H, windows: int = WINDOWS):
    """One panel per window: the training part in grey, the test year in red."""
    from ..plotting import line_pair

    parts = []
    for k, c in enumerate(rolling_origin_splits(len(df), h, windows)):
        parts.append(df.iloc[:c].assign(role="training", window=f"window {k + 1}"))
        parts.append(df.iloc[c : c + h].assign(role="test", window=f"window {k + 1}"))
    return line_pair(pd.concat(parts), "ds", "y", "role", facet="window",
                     title="Rolling origin: four expanding windows",
                     subtitle="Each window trains on everything before its cut and tests on the next 12 months",
                     xlab="Month", ylab="Passengers (thousands)", colors={"training": "#737373", "test": "#D8433B"})


def horizon_figure(hz: pd.DataFrame):
    """MASE at each step ahead, one line per model."""
    from ..plotting import line_pair

    return line_pair(hz, "step", "mase", "model", points=True, title="MASE by forecast horizon",
                     subtitle="AirPassengers, mean over the four windows", xlab="Months ahead",
                     ylab="Mean scaled absolute error")


@section("14.62", "Evaluation: MASE and rolling-origin validation")
def run(ctx):
    df = air_passengers()
    spans = window_spans(df)
    err, summary = cross_validate(df)
    by_window = err.groupby(["model", "cutoff"]).scaled_error.mean().rename("mase").reset_index()
    wide = by_window.pivot(index="model", columns="cutoff", values="mase")
    wide.columns = [f"window_{i + 1}" for i in range(wide.shape[1])]
    wide = wide.reset_index()
    hz = per_horizon(err)
    roles = protocol()
    # the page's frame of cv_claims: models as rows, one column per window ("window 1", ...)
    by_window_page = wide.set_index("model").rename(columns=lambda c: c.replace("_", " "))
    notes = cv_claims(summary, by_window_page)
    figs = []
    if ctx.figures:
        figs = ctx.save("rolling_origin", *windows_figure(df))
        figs += ctx.save("mase_by_horizon", *horizon_figure(hz))
    return {"windows": spans, "mase_by_window": wide, "summary": summary, "mase_by_horizon": hz,
            "protocol": roles}, figs, notes
