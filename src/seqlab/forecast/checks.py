"""What :class:`~seqlab.forecast.Forecaster` checks before any model is fitted: the counts it is given, training
parts long enough for every model, and conformal intervals that can be finite at every level asked for."""
from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError, InvalidTypeError
from .bounds import check_memory, forecast_bytes
from .data import SeriesTooShortError
from .intervals import min_calibration_size
from .lengths import min_fit_length
from .panel import Panel

__all__ = ["UnboundedIntervalError", "check_h", "check_h_first", "check_optional_count", "check_size",
           "check_fit_lengths", "check_bounded", "widest_finite_level"]


class UnboundedIntervalError(InvalidParameterError):
    """Conformal intervals asked for at a level the calibration errors cannot bound (too few of them).

    Example:
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [float(t) for t in range(1, 13)]})
        >>> try:
        ...     Forecaster(["Naive"]).forecast(h=2, df=df, level=[99], intervals="conformal", bounded=True)
        ... except UnboundedIntervalError as e:
        ...     print(type(e).__name__)
        UnboundedIntervalError
    """


def check_h(h) -> int:
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Integral) or h < 1:
        raise InvalidParameterError(f"h must be a whole number >= 1, got {h!r}")
    return int(h)


def check_h_first(method: str, h, df) -> int:
    """``h``, checked; the arguments in the old order (a frame first) get a precise error, not a wrong run."""
    if isinstance(h, pd.DataFrame):
        raise InvalidTypeError(f"{method} takes h first and then df, in statsforecast's order: "
                               f"{method}(h, df), or {method}(h=12, df=df)")
    return check_h(h)


def check_optional_count(name: str, v):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1:
        raise InvalidParameterError(f"{name} must be a whole number >= 1, got {v!r}")
    return int(v)


def check_size(panel: Panel, pairs, targets: int, h: int, cols: int, top: int) -> None:
    """Refuse, before any fit, forecasts that would not fit in memory: every origin's values in every one of
    ``cols`` columns, the training parts stacked for the local models, and the (series, offset) index of the
    origins (``top``: the largest offset)."""
    training = int((panel.lengths[pairs[:, 0]] - pairs[:, 1]).sum())
    need = forecast_bytes(h * (len(pairs) * cols + targets * 4), training, 8 * len(panel.ids) * (top + 1))
    check_memory(need, f"{len(pairs):,} forecast origin(s) x {h} step(s) x {cols} column(s), with their "
                       f"{training:,} training observations,", "forecast fewer steps, or ask for fewer windows, "
                       "calibration windows, levels, models or series at a time")


def check_fit_lengths(models, panel: Panel, series, offsets, windows: bool) -> None:
    """Refuse, before any fit, a forecast origin with a training part too short for one of the models.

    ``windows``: the origins are a rolling evaluation's (fewer windows would help), not the series' ends.
    """
    cuts = panel.lengths[series] - offsets
    for m in models:
        need = min_fit_length(m)
        short = np.flatnonzero(cuts < need)
        if len(short):
            k = short[np.argmin(cuts[short])]
            uid, n = panel.ids[series[k]], int(cuts[k])
            where = "before a forecast origin" if windows else "of history"
            fix = "leave it out, use fewer windows, or drop the short series" if windows else \
                "leave it out or drop the short series"
            raise SeriesTooShortError(f"series {uid!r} has {n} observation(s) {where}; {m.name} needs at least "
                                      f"{need} to fit: {fix}", series=uid, length=n, model=m.name, need=need)


def widest_finite_level(scores: int) -> float:
    """The widest level (a percentage, one decimal, rounded down) a conformal band of ``scores`` errors bounds.

    Examples:
        >>> widest_finite_level(19), widest_finite_level(12), widest_finite_level(0)
        (95.0, 92.3, 0.0)
    """
    return math.floor(1000 * scores / (scores + 1) + 1e-9) / 10


def check_bounded(models, panel: Panel, plan, levels, min_cut: int) -> None:
    """Refuse, before any fit, a level whose conformal band would be unbounded at some forecast origin.

    With ``n`` calibration errors per step the band at level L is finite when ``ceil((n + 1) L / 100) <= n``. A
    model's errors come from the calibration origins whose training part it can be fitted on (the longer of
    ``min_cut`` and its own minimum); a global model that fails on an early origin can only lose more.
    """
    widest = max(levels)
    need = min_calibration_size(widest)
    for m in models:
        fit = max(min_cut, min_fit_length(m))
        n = min(int(sum((panel.lengths - oc >= fit).sum() for oc in offs)) for offs in plan.offsets.values())
        if n < need:
            raise UnboundedIntervalError(
                f"a {widest:g}% conformal interval needs at least {need} calibration errors per step, and {m.name} "
                f"has {n} (from {len(panel.ids)} series at {plan.windows} calibration origin(s) {plan.step} "
                f"period(s) apart, where at least {fit} observations precede them): its band would be unbounded; "
                f"ask for at most {widest_finite_level(n):g}%, more calibration windows (a longer history), or "
                "more series")
