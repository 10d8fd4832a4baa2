"""Prediction intervals: levels, statsforecast's column names, and split-conformal quantiles.

Conventions (FPP3 §5.9; statsforecast): a ``level`` of 80 names the central 80% interval,
whose columns are ``Model-lo-80`` and ``Model-hi-80``; per model the columns run
``Model, Model-lo-95, Model-lo-80, Model-hi-80, Model-hi-95`` (lower bounds from the widest
interval in, then upper bounds out). As quantiles, ``lo-80`` is the 0.10 quantile, ``hi-80``
the 0.90 quantile, and the point forecast stands for the median.

Conformal intervals (split conformal on rolling origins): the score of a calibration
forecast is its absolute error divided by the MASE scale of its own training part (the
in-sample seasonal-naive MAE), so the errors of series at different levels can be pooled.
For each horizon step the scores of all series in the calibration windows are pooled and
the interval's half-width is the ``ceil((n + 1) l) / n`` empirical quantile of the ``n``
scores (the finite-sample correction: the interval covers a new exchangeable score with
probability at least ``l``), times the scale of the series being forecast. With fewer than
``l / (1 - l)`` scores (19 for 95%) that quantile does not exist and the interval is
unbounded: ``-inf, inf``.
"""
from __future__ import annotations

import math
import numbers
import re

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .metrics import mase_scale

__all__ = ["INTERVAL_KINDS", "check_levels", "level_label", "interval_columns", "quantile_columns",
           "levels_in", "min_calibration_size", "conformal_quantile", "default_calibration", "window_index",
           "conformal_scores", "conformal_band", "quantile_band", "conformal_from_windows"]

#: how :class:`~seqlab.forecast.Forecaster` may make intervals
INTERVAL_KINDS = ("conformal", "native")


def check_levels(level) -> list:
    """``level`` (a number or a list of numbers strictly between 0 and 100) as a sorted list without repeats.

    Whole numbers come back as ``int`` (so that 80.0 names the column ``-lo-80``, as statsforecast's 80 does).
    ``None`` gives an empty list.

    Example:
        >>> check_levels([95, 80.0])
        [80, 95]
        >>> check_levels(None)
        []
    """
    if level is None:
        return []
    items = [level] if isinstance(level, (numbers.Number, str, bytes)) else level
    try:
        items = list(items)
    except TypeError:
        raise InvalidParameterError(f"level must be a number or a list of numbers, got {level!r}") from None
    if not items:
        raise InvalidParameterError("level lists no interval; give levels such as [80, 95]")
    out = []
    for v in items:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise InvalidParameterError(f"level must be numbers between 0 and 100 (such as 80, 95), got {v!r}")
        x = float(v)
        if not math.isfinite(x) or not 0 < x < 100:
            raise InvalidParameterError(f"level must lie strictly between 0 and 100 (a percentage such as 80 or "
                                        f"95), got {v!r}")
        out.append(int(x) if x == int(x) else x)
    if len(set(out)) < len(out):
        twice = next(x for i, x in enumerate(out) if x in out[:i])
        raise InvalidParameterError(f"level {twice} is given twice")
    return sorted(out)


def level_label(level) -> str:
    return str(level)


def interval_columns(name: str, levels) -> list[str]:
    """statsforecast's order: ``name-lo-95, name-lo-80, name-hi-80, name-hi-95`` for levels [80, 95]."""
    levels = sorted(levels)
    return [f"{name}-lo-{level_label(v)}" for v in reversed(levels)] + [f"{name}-hi-{level_label(v)}" for v in levels]


def quantile_columns(name: str, levels) -> dict[float, str]:
    """Quantile -> column: the bounds of each interval, and the point forecast as the median."""
    out = {0.5: name}
    for v in levels:
        a = (1 - v / 100) / 2
        out[round(a, 10)] = f"{name}-lo-{level_label(v)}"
        out[round(1 - a, 10)] = f"{name}-hi-{level_label(v)}"
    return dict(sorted(out.items()))


def levels_in(columns, models) -> list:
    """The levels whose ``-lo-``/``-hi-`` columns every model in ``models`` has."""
    columns = set(columns)
    common = None
    for m in models:
        found = set()
        for c in columns:
            hit = re.fullmatch(re.escape(m) + r"-lo-(\d+(?:\.\d+)?)", str(c))
            if hit and f"{m}-hi-{hit.group(1)}" in columns:
                v = float(hit.group(1))
                found.add(int(v) if v == int(v) else v)
        common = found if common is None else common & found
    return sorted(common or [])


def min_calibration_size(level) -> int:
    """The fewest scores for which the finite-sample conformal quantile at ``level`` exists: ceil(l / (1 - l))."""
    x = level / 100
    n = max(1, math.ceil(x / (1 - x) - 1e-9))
    while math.ceil((n + 1) * x - 1e-9) > n:  # guard the float edge
        n += 1
    return n


def conformal_quantile(scores, level) -> float:
    """The ``ceil((n + 1) l)``-th smallest of the ``n`` finite scores; ``inf`` when that rank exceeds ``n``.

    NaN scores (a window whose scale is undefined) are left out.

    Example:
        >>> conformal_quantile([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5], 80)
        4.0
        >>> conformal_quantile([0.5, 1.0], 80)
        inf
    """
    s = np.asarray(scores, float)
    s = np.sort(s[np.isfinite(s)])
    n = len(s)
    k = math.ceil((n + 1) * level / 100 - 1e-9)
    if n == 0 or k > n:
        return math.inf
    return float(s[max(k, 1) - 1])


def conformal_scores(actual, forecast, scale) -> np.ndarray:
    """s = |y - f| / scale per step (rows: origins, columns: steps); NaN where the origin's scale is 0 or undefined."""
    scale = np.asarray(scale, float)
    with np.errstate(invalid="ignore"):
        scale = np.where(scale > 0, scale, np.nan)
    return np.abs(np.asarray(actual, float) - np.asarray(forecast, float)) / scale[:, None]


def conformal_band(point, scale, scores, level) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split conformal at one level: ``point ± q_s · scale``, q_s the :func:`conformal_quantile` of step s's scores.

    ``point`` (n, h): the forecasts to bound; ``scale`` (n,): each one's MASE scale (0 or NaN: no interval, NaN);
    ``scores`` (m, h): the calibration scores of :func:`conformal_scores`. Returns ``lo, hi`` (n, h) and ``q`` (h,);
    a step with too few scores for the level has ``q = inf`` and unbounded bounds. The one implementation behind
    :meth:`~seqlab.forecast.Forecaster.forecast`'s conformal intervals and :func:`conformal_from_windows`.
    """
    point = np.asarray(point, float)
    scores = np.asarray(scores, float).reshape(-1, point.shape[1])
    q = np.array([conformal_quantile(scores[:, step], level) for step in range(point.shape[1])])
    lo, hi = quantile_band(point, scale, q)
    return lo, hi, q


def quantile_band(point, scale, q) -> tuple[np.ndarray, np.ndarray]:
    """``point ± q · scale``: the band of :func:`conformal_band` from quantiles already found (one per step), as a
    stored forecaster applies the quantiles of its calibration to a history's own scale."""
    point, scale = np.asarray(point, float), np.asarray(scale, float)
    with np.errstate(invalid="ignore"):
        half = np.asarray(q, float)[None, :] * np.where(scale > 0, scale, np.nan)[:, None]  # inf stays; NaN: none
    return point - half, point + half


def default_calibration(levels, n_series: int, h: int) -> tuple[int, int]:
    """``(windows, step)``: enough calibration windows for the widest level, at least 3.

    With many series three windows a horizon apart give enough pooled scores (19 for 95%:
    7 series suffice); with few series (AirPassengers alone needs 19 windows at 95%) the
    windows are one period apart, so that a short history still holds them.
    """
    need = max(min_calibration_size(v) for v in levels)
    windows = max(3, math.ceil(need / max(n_series, 1)))
    return windows, (h if windows == 3 else 1)


def window_index(cv: pd.DataFrame) -> np.ndarray:
    """Each row's window counted back from its series' last: 0 for the last window, 1 for the one before, ...

    :meth:`~seqlab.forecast.Forecaster.cross_validation` aligns windows at each series' end,
    so the same number means the same place in every series, even when short series skip
    the earliest windows.
    """
    cut = cv["cutoff"].infer_objects()
    return cut.groupby(cv["unique_id"].to_numpy()).rank(method="dense", ascending=False).to_numpy().astype(int) - 1


def conformal_from_windows(cv: pd.DataFrame, history: pd.DataFrame, season_length: int, models,
                           level, groups=None, fallback: bool = True) -> pd.DataFrame:
    """Split-conformal intervals for every window of a cross-validation frame, calibrated on the windows before it.

    No model is refitted: the forecasts already in ``cv`` at earlier windows are the
    calibration set. Window ``j`` (counted back from each series' end, see
    :func:`window_index`) pools, per horizon step, the scaled absolute errors
    ``|y - f| / scale`` of every series in windows ``j + 1, j + 2, ...``; the half-width is
    their finite-sample conformal quantile (:func:`conformal_quantile`) times the series'
    own MASE scale (that of its training part, up to the cutoff). The earliest window has
    nothing before it, and a window with fewer scores than the level needs, gets ``-inf,
    inf``. Returns a copy of ``cv`` with ``Model-lo-l, Model-hi-l`` for each model and level
    (existing ones replaced); ``attrs["calibration_scores"]`` maps each window to the number
    of scores per step behind it (the smallest over steps, and over groups).

    ``groups`` (a mapping or Series from ``unique_id`` to a label) makes the calibration
    Mondrian: a series' interval pools only the scores of series in its own group, so that
    a group whose errors run larger than the rest gets wider intervals (Vovk et al., 2005).
    Every series of ``cv`` needs a group. A group with fewer earlier scores than the level
    needs (:func:`min_calibration_size`) at some step would get an unbounded band, which
    covers everything and says nothing; with ``fallback`` (the default) it is calibrated on
    the wider group, all series, instead, and ``attrs["fallbacks"]`` lists each such
    (window, group, level) with the scores its own group had. ``attrs["borrowed"]`` maps each
    window to the number of its series that have no earlier window of their own: their band
    comes wholly from other series' errors.
    """
    levels = check_levels(level)
    if not levels:
        raise InvalidParameterError("give the interval levels, such as level=[80, 95]")
    missing = [m for m in ["unique_id", "ds", "cutoff", "y", *models] if m not in cv.columns]
    if missing:
        raise InvalidParameterError(f"the cross-validation frame has no column {missing[0]!r}")
    out = cv.drop(columns=[c for m in models for c in interval_columns(m, levels) if c in cv.columns]).copy()
    # one row per (series, window) and one column per step: every window of a cross-validation frame has h rows
    unit = out.groupby(["unique_id", "cutoff"], sort=False).ngroup().to_numpy()
    step = out.groupby(["unique_id", "cutoff"], sort=False).cumcount().to_numpy()
    n_units, h = (int(unit.max()) + 1, int(step.max()) + 1) if len(out) else (0, 0)
    if len(out) != n_units * h:
        raise InvalidParameterError("every window of the cross-validation frame must hold the same number of steps")
    units = out[["unique_id", "cutoff"]].drop_duplicates()  # in ngroup order: first appearance
    hist = {uid: g for uid, g in history.groupby("unique_id", sort=False)}
    scale = np.array([mase_scale(hist[u].loc[hist[u]["ds"] <= c, "y"].to_numpy(float), season_length)
                      for u, c in zip(units.unique_id, units.cutoff)], float)
    j = np.zeros(n_units, int)
    j[unit] = window_index(out)
    if groups is None:
        group, labels = np.zeros(n_units, int), [None]
    else:
        label = pd.Series(units["unique_id"].to_numpy()).map(pd.Series(groups) if not isinstance(groups, pd.Series)
                                                               else groups)
        if label.isna().any():
            raise InvalidParameterError(f"series {units['unique_id'].iloc[int(np.flatnonzero(label.isna())[0])]!r} "
                                        "has no group")
        group, labels = pd.factorize(label)

    def wide(values):
        w = np.full((n_units, h), np.nan)
        w[unit, step] = values
        return w

    y = wide(out["y"].to_numpy(float))
    counts, fell = {}, {}
    new = {}
    for m in models:
        f = wide(out[m].to_numpy(float))
        score = conformal_scores(y, f, scale)
        for lv in levels:
            lo, hi = np.full((n_units, h), np.nan), np.full((n_units, h), np.nan)
            for w in np.unique(j):
                for g in np.unique(group[j == w]):
                    rows, earlier = (j == w) & (group == g), (j > w) & (group == g)
                    own = _fewest(score[earlier])
                    if groups is not None and fallback and own < min_calibration_size(lv):
                        earlier = j > w  # the wider group: every series
                        fell.setdefault((int(w), _plain(labels[g]), lv), own)
                    lo[rows], hi[rows], _ = conformal_band(f[rows], scale[rows], score[earlier], lv)
                    counts[int(w)] = min(counts.get(int(w), np.inf), _fewest(score[earlier]))
            new[f"{m}-lo-{lv}"], new[f"{m}-hi-{lv}"] = lo[unit, step], hi[unit, step]
    cols = list(out.columns)
    for m in models:  # statsforecast's order: each model's bounds right after it
        i = cols.index(m) + 1
        cols[i:i] = interval_columns(m, levels)
    out = pd.concat([out, pd.DataFrame(new, index=out.index)], axis=1)[cols]
    out.attrs["calibration_scores"] = {w: int(c) for w, c in sorted(counts.items())}
    out.attrs["fallbacks"] = [dict(window=w, group=g, level=lv, own_scores=int(n))
                              for (w, g, lv), n in sorted(fell.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))]
    first = pd.Series(j).groupby(units["unique_id"].to_numpy()).transform("max").to_numpy()
    out.attrs["borrowed"] = {int(w): int(((j == w) & (first == w)).sum()) for w in np.unique(j)}
    return out


def _plain(value):
    """A group label as a plain Python value (numpy scalars do not go into JSON)."""
    return value.item() if isinstance(value, np.generic) else value


def _fewest(scores: np.ndarray) -> int:
    """The smallest number of finite scores over the steps (columns) of a calibration set."""
    return int(np.isfinite(scores).sum(axis=0).min()) if scores.size else 0
