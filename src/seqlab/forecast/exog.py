"""Exogenous regressors: extra numeric columns of the history known in advance (a promotion, a price), and their
values over the horizon, ``X_df`` (statsforecast's name).

Which models use them: statsforecast's models whose ``uses_exog`` is true (of the wrapped ones, AutoARIMA: a
regression with ARIMA errors), and seqlab's recurrent and attention forecasters (GRU, LSTM, Transformer: the
regressors are extra input channels over the input window, and their future values enter the output layer).
The others (Naive, SeasonalNaive, AutoETS, the Theta family, Naive2, M4 Comb, N-BEATS, the combinations) forecast
from ``y`` alone: :func:`ignoring` names them, for a note.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .data import ForecastDataError
from .gaps import iso_date

__all__ = ["uses_exog", "ignoring", "exog_names", "future_array", "check_history_exog"]

_KEYS = ("unique_id", "ds", "y")


def uses_exog(model) -> bool:
    """Whether ``model`` reads regressors: a statsforecast model with ``uses_exog``, or a model that says
    ``accepts_exog`` (seqlab's recurrent and attention forecasters)."""
    spec = getattr(model, "spec", None)
    return bool(getattr(spec, "uses_exog", False) or getattr(model, "accepts_exog", False))


def ignoring(models) -> list[str]:
    """The names of the models that forecast from ``y`` alone."""
    return [m.name for m in models if not uses_exog(m)]


def exog_names(X_df: pd.DataFrame | None) -> list[str]:
    """The regressors ``X_df`` gives future values of: its columns other than ``unique_id`` and ``ds``.

    Examples:
        >>> exog_names(pd.DataFrame({"unique_id": ["a"], "ds": [5], "promo": [1.0], "price": [2.5]}))
        ['promo', 'price']
    """
    if X_df is None:
        return []
    if not isinstance(X_df, pd.DataFrame):
        raise InvalidParameterError(f"X_df must be a pandas DataFrame, got {type(X_df).__name__}")
    missing = {"unique_id", "ds"} - set(X_df.columns)
    if missing:
        raise ForecastDataError(f"X_df has no column {sorted(missing)[0]!r}; it needs unique_id, ds and one column "
                                "per regressor")
    names = [c for c in X_df.columns if c not in _KEYS]
    if "y" in X_df.columns:
        raise ForecastDataError("X_df holds a y column: it gives the regressors' future values, not the series'")
    if not names:
        raise ForecastDataError("X_df names no regressor: give one column per regressor beside unique_id and ds")
    return names


def check_history_exog(df: pd.DataFrame, exog) -> pd.DataFrame:
    """``df`` with each regressor present, numeric and finite in every row (as float)."""
    from .reading import check_exog

    return check_exog(df, exog, "df")


def future_array(X_df: pd.DataFrame, ids, last, h: int, freq, exog) -> np.ndarray:
    """The regressors' values over the horizon, ``(series, h, regressors)`` in the order of ``ids``: ``X_df`` must
    give each series exactly the ``h`` dates after its ``last`` one, each value a finite number."""
    from .dates import future_dates
    from .reading import check_exog

    X_df = check_exog(X_df, exog, "X_df")
    groups = {u: g for u, g in X_df.groupby("unique_id", sort=False)}
    out = np.empty((len(ids), h, len(exog)))
    for k, (uid, end) in enumerate(zip(ids, last)):
        g = groups.get(uid)
        want = future_dates(end, h, freq)
        if g is None:
            raise ForecastDataError(f"X_df has no future values for series {uid!r}: give its {h} dates from "
                                    f"{iso_date(want[0])}")
        got = g.set_index("ds").reindex(pd.Index(want)) if len(g) >= h else None
        if got is None or got[exog].isna().any().any() or len(g) != h:
            raise ForecastDataError(f"X_df must give series {uid!r} its {h} dates {iso_date(want[0])} to "
                                    f"{iso_date(want[-1])}, each once; it gives {len(g)} row(s) from "
                                    f"{iso_date(g['ds'].min())}")
        out[k] = got[exog].to_numpy(float)
    return out
