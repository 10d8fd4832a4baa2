"""How long a series must be before a model can be fitted on it: the one rule the CLI, :class:`~seqlab.forecast.Forecaster`
and the experiments share."""
from __future__ import annotations

import numbers

from .classical import StatsForecastModel

__all__ = ["min_fit_length"]


#: statsforecast refuses to fit these on fewer observations ("tiny datasets"); AutoETS's own rule is in _ets_min
_STATSFORECAST_MIN = {"Theta": 4, "OptimizedTheta": 4, "DynamicTheta": 4, "DynamicOptimizedTheta": 4,
                      "AutoTheta": 4, "AutoCES": 5}


def _ets_min(spec) -> int:
    """statsforecast's ETS fits n > npars + 4 points: alpha and l0, two per trend or season it must fit, one to damp."""
    model = str(getattr(spec, "model", "ZZZ")).upper()
    m = int(getattr(spec, "season_length", 1) or 1)
    damped = 1 if getattr(spec, "damped", None) is True else 0
    n = 1
    while True:
        season = model[2:3] in ("A", "M") and m > 1 and n > m  # shorter series get no season from ETS
        if n > 2 + 2 * (model[1:2] in ("A", "M")) + 2 * season + damped + 4:
            return n
        n += 1


def min_fit_length(model) -> int:
    """The fewest observations ``model`` can be fitted on: its ``min_train_length`` if it declares one, else what
    statsforecast needs for its models (AutoETS: 7, the Theta family: 4, SeasonalNaive: a season), else 1.

    Example:
        >>> from seqlab.forecast import Naive2, StatsForecastModel
        >>> min_fit_length(StatsForecastModel("SeasonalNaive", season_length=12)), min_fit_length(Naive2())
        (12, 1)
    """
    declared = getattr(model, "min_train_length", None)
    if isinstance(declared, numbers.Integral) and not isinstance(declared, bool):
        return max(1, int(declared))
    spec = getattr(model, "spec", None) if isinstance(model, StatsForecastModel) else None
    if spec is None:
        return 1
    kind = type(spec).__name__
    season = int(getattr(spec, "season_length", 1) or 1)
    if kind == "AutoETS":
        return _ets_min(spec)
    if kind == "SeasonalNaive":  # these return NaN, not an error, on shorter series
        return season
    if kind in ("WindowAverage", "SeasonalWindowAverage"):
        return int(getattr(spec, "window_size", 1)) * (season if kind.startswith("Seasonal") else 1)
    if kind == "RandomWalkWithDrift":
        return 2
    return _STATSFORECAST_MIN.get(kind, 1)
