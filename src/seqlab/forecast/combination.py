"""Forecast combinations: the pointwise mean of several models' forecasts, as one model.

Averaging forecasts is the oldest robust gain in forecasting (Bates and Granger, 1969; the M
competitions' "Comb"). The chapter's two combinations are named here so that a user can ask for
them like any model: ``"Combination"``, the mean of AutoETS, AutoTheta and Theta (the classical
side's strongest entry), and ``"N-BEATS + Combination"``, the mean of N-BEATS and that
Combination (so N-BEATS carries half the weight and each classical model a sixth).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .lengths import min_fit_length

__all__ = ["Combination", "COMBINATIONS", "combine_columns"]

#: the named combinations and their members, by name (a member may itself be a combination)
COMBINATIONS = {"Combination": ("AutoETS", "AutoTheta", "Theta"), "N-BEATS + Combination": ("N-BEATS", "Combination")}


def combine_columns(frame: pd.DataFrame, combinations: dict | None = None) -> pd.DataFrame:
    """A copy of ``frame`` (forecasts, one column per model) with a column per combination: its members' pointwise mean.

    ``combinations`` (default :data:`COMBINATIONS`) maps a name to its members, in order, so a
    combination may name one defined before it; it is the mean a :class:`Combination` of the
    same members predicts, for forecasts already made (a cross-validation frame, stored forecasts).
    """
    out = frame.copy()
    for name, members in (COMBINATIONS if combinations is None else combinations).items():
        missing = [m for m in members if m not in out.columns]
        if missing:
            raise InvalidParameterError(f"combination {name!r} needs the column {missing[0]!r}")
        out[name] = out[list(members)].mean(axis=1)
    return out


class Combination:
    """The equal-weight mean of ``members``' point forecasts (:class:`~seqlab.forecast.core.ForecastModel` objects).

    It is local (fitted series by series, so rolling origins batch) when every member is;
    it hands a cluster (``engine``) and a progress report to the members that take them.
    Prediction intervals are the Forecaster's conformal ones, from the combination's own
    errors: a mean of the members' native intervals would not be an interval of the mean.

    Example:
        >>> import pandas as pd
        >>> from seqlab.forecast import Forecaster, StatsForecastModel
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [float(t) for t in range(1, 13)]})
        >>> mix = Combination([StatsForecastModel("Naive"), StatsForecastModel("RandomWalkWithDrift")], name="mix")
        >>> Forecaster([mix]).forecast(h=2, df=df)["mix"].tolist()
        [12.5, 13.0]
    """

    native_intervals = False

    def __init__(self, members, name: str | None = None):
        members = list(members) if not isinstance(members, (str, bytes)) and hasattr(members, "__iter__") else None
        if not members or len(members) < 2:
            raise InvalidParameterError("a combination needs a list of at least two models")
        for m in members:
            if not (isinstance(getattr(m, "name", None), str) and callable(getattr(m, "fit", None))
                    and callable(getattr(m, "predict", None))):
                raise InvalidParameterError(f"{m!r} is not a model (name, fit(df, h), predict(df, h))")
        names = [m.name for m in members]
        if len(set(names)) != len(names):
            raise InvalidParameterError(f"a combination's members need distinct names, got {names}")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InvalidParameterError(f"name must be a non-empty string, got {name!r}")
        self.members, self.name = members, name or f"mean({', '.join(names)})"
        self.local = all(getattr(m, "local", False) for m in members)
        self.accepts_engine = any(getattr(m, "accepts_engine", False) for m in members)
        self.accepts_progress = any(getattr(m, "accepts_progress", False) for m in members)
        self.min_train_length = max(min_fit_length(m) for m in members)
        self._preds = None

    def __repr__(self):
        return f"Combination({self.name!r}, members={[m.name for m in self.members]})"

    def fit(self, df: pd.DataFrame, h: int, engine=None, progress=None):
        """Fit every member on ``df``; the members that fit many series in one call (statsforecast's) share it."""
        preds: dict = {}
        batched: dict = {}
        for m in self.members:
            fn = getattr(type(m), "forecast_many", None)
            if callable(fn) and getattr(m, "local", False):
                batched.setdefault(fn, []).append(m)
        for fn, group in batched.items():
            fc = fn(group, df, h)
            fc = fc.sort_values("ds", kind="stable")
            for m in group:
                preds[m.name] = {u: g[m.name].to_numpy(float) for u, g in fc.groupby("unique_id", sort=False)}
        for m in self.members:
            if m.name in preds:
                continue
            kw = {}
            if engine is not None and getattr(m, "accepts_engine", False):
                kw["engine"] = engine
            if progress is not None and getattr(m, "accepts_progress", False):
                kw["progress"] = progress
            preds[m.name] = m.fit(df, h, **kw).predict(df, h)
        self._preds = (h, preds)
        return self

    def predict(self, df: pd.DataFrame, h: int) -> dict:
        if self._preds is None or self._preds[0] != h:
            raise RuntimeError("fit the combination with this horizon first")
        preds = self._preds[1]
        out = {}
        for uid in df["unique_id"].unique():
            parts = []
            for m in self.members:
                if uid not in preds[m.name]:
                    raise InvalidParameterError(f"member {m.name!r} of {self.name!r} gave no forecast for series "
                                                f"{uid!r}")
                v = np.asarray(preds[m.name][uid], float).reshape(-1)
                if len(v) != h:
                    raise InvalidParameterError(f"member {m.name!r} of {self.name!r} returned {len(v)} values for "
                                                f"series {uid!r}; expected h = {h}")
                parts.append(v)
            out[uid] = np.mean(parts, axis=0)
        return out
