"""A fitted :class:`~seqlab.forecast.Forecaster`: what :meth:`~seqlab.forecast.Forecaster.fit` keeps, and the
forecasts :meth:`~seqlab.forecast.Forecaster.predict` makes from it without training a network again.

What is kept: the training history, each neural model's weights as they were right after its fit at the
series' ends (before any calibration fit), the conformal quantiles of each model, level and step that the
calibration found, and which kind of interval each model got. Predicting from that state:

* the neural models read each series' last input window with the kept weights (a global model forecasts any
  history, so a longer or a new series is forecast with no training either);
* the classical models are fitted again on the history (they are cheap, and statsforecast's fits are
  deterministic, so on the same history the forecasts are the same bit for bit), as are native intervals;
* conformal bands are the kept quantiles times each series' own MASE scale (that of the history given).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .intervals import quantile_band
from .metrics import mase_scale
from .origins import OriginRunner
from .panel import Panel
from .specs import frozen, neural_models, neural_state, restore_neural

__all__ = ["FitState", "capture_neural", "predict_from"]


@dataclass
class FitState:
    """What a fit keeps (see the module docstring). ``quantiles[(name, level)]``: the (h,) conformal quantiles;
    ``neural``: ``(spec, tensors)`` of each neural model, in the order of
    :func:`~seqlab.forecast.specs.neural_models`."""

    h: int
    levels: list
    intervals: str
    kinds: dict
    history: pd.DataFrame
    quantiles: dict = field(default_factory=dict)
    neural: list = field(default_factory=list)
    calibration: dict | None = None
    exog: list = field(default_factory=list)
    #: the regressors over the horizon after the history fitted on, (series, h, k); None without regressors
    future: np.ndarray | None = None


def capture_neural(models) -> list:
    """Each neural model's settings and weights now: called right after the fits at the series' ends."""
    return [neural_state(m) for m in neural_models(models)]


def predict_from(fc, state: FitState, df: pd.DataFrame | None = None, X_df: pd.DataFrame | None = None,
                 device: str | None = None) -> pd.DataFrame:
    """Forecasts of ``state`` for the history ``df`` (default: the one fitted on): see the module docstring.
    ``X_df``: the regressors over the horizon (default, for the history fitted on: those of the fit)."""
    from .data import validate_long
    from .dates import check_calendar, check_future, future_dates
    from .exog import check_history_exog, exog_names, future_array

    exog = state.exog
    if X_df is not None and sorted(exog_names(X_df)) != sorted(exog):
        raise InvalidParameterError(f"X_df gives the regressors {exog_names(X_df)}, but the fit used {exog}")
    history = state.history if df is None else check_history_exog(validate_long(df), exog)
    if df is not None:
        check_calendar(history, fc.freq)
    panel = Panel.from_frame(history, exog=exog)
    n, h, levels = len(panel.ids), state.h, state.levels
    last = panel.frame["ds"].iloc[panel.starts + panel.lengths - 1]
    check_future(last, panel.ids, h, fc.freq)
    future = None
    if exog:
        if X_df is None and df is not None:
            raise InvalidParameterError(f"the fit used regressors {', '.join(exog)}: give X_df, their values over "
                                        "the horizon after the new history")
        future = state.future if X_df is None else future_array(X_df, panel.ids, last, h, fc.freq, exog)
    originals = neural_models(fc.models)
    if len(originals) != len(state.neural):
        raise InvalidParameterError("the forecaster's neural models are not those its fit kept")
    device = device or fc.device
    swap = {id(m): restore_neural(spec, tensors, device) for m, (spec, tensors) in zip(originals, state.neural)}
    models = frozen(fc.models, swap)
    keys = np.arange(n, dtype=np.int64)[:, None]
    store = {"_size": n, "_keys": keys}
    native = levels if any(k == "native" for k in state.kinds.values()) else None
    series, offsets = np.arange(n, dtype=np.int64), np.zeros(n, np.int64)
    OriginRunner(fc.n_jobs, fc.engine, None, exog, future).run(models, panel, series, offsets, h, native, store)
    out = {c: store[c] for c in store if not c.startswith("_")}
    conformal = [name for name, kind in state.kinds.items() if kind == "conformal"]
    if conformal:
        scale = np.array([mase_scale(panel.series(i), fc.season_length) for i in range(n)])
        scale = np.where(scale > 0, scale, np.nan)
        for name in conformal:
            for lv in levels:
                out[f"{name}-lo-{lv}"], out[f"{name}-hi-{lv}"] = quantile_band(out[name], scale,
                                                                               state.quantiles[(name, lv)])
    frame = pd.concat([pd.DataFrame({"unique_id": uid, "ds": future_dates(ds, h, fc.freq)})
                       for uid, ds in zip(panel.ids, last)], ignore_index=True)
    cols = fc._columns(fc.names, levels)
    frame = pd.concat([frame, pd.DataFrame({c: out[c].reshape(-1) for c in cols})], axis=1)
    if state.kinds:
        frame.attrs["intervals"] = dict(state.kinds)
        if state.calibration:
            frame.attrs["calibration"] = dict(state.calibration)
    frame.attrs["notes"] = ["conformal bands from the quantiles calibrated at fit time, times each series' own "
                            "scale"] if conformal else []
    return frame
