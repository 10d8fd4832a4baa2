"""Forecast accuracy: MASE (Hyndman & Koehler, 2006), sMAPE and OWA as the M4 competition defines them.

These functions are the only implementation: :func:`seqlab.forecast.evaluate` builds its
per-step errors from :func:`scaled_errors` and :func:`smape_terms`, and :func:`mase` and
:func:`smape` are their means, so the utilsforecast parity test covers the chapter's numbers.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mase_scale", "scaled_errors", "smape_terms", "mase", "smape", "owa"]


def mase_scale(y_train, season_length: int) -> float:
    """In-sample MAE of the seasonal naive forecast y_t = y_{t-m} (m = 1: the naive forecast)."""
    y = np.asarray(y_train, float)
    m = season_length if len(y) > season_length else 1
    if len(y) <= m:
        return float("nan")
    return float(np.mean(np.abs(y[m:] - y[:-m])))


def scaled_errors(y_true, y_pred, scale: float) -> np.ndarray:
    """|y - yhat| / scale per step; NaN everywhere when the scale is 0 or undefined (MASE has no value then)."""
    err = np.abs(np.asarray(y_true, float) - np.asarray(y_pred, float))
    return err / scale if scale > 0 else np.full_like(err, np.nan)


def smape_terms(y_true, y_pred) -> np.ndarray:
    """200 |y - yhat| / (|y| + |yhat|) per step, on the 0-200 scale of M3/M4 (0 where both are 0)."""
    y, f = np.asarray(y_true, float), np.asarray(y_pred, float)
    denom = np.abs(y) + np.abs(f)
    return 200 * np.divide(np.abs(y - f), denom, out=np.zeros_like(y), where=denom > 0)


def mase(y_true, y_pred, y_train, season_length: int) -> float:
    """mean |y - yhat| / mean |y_t - y_{t-m}| over the training part."""
    return float(np.mean(scaled_errors(y_true, y_pred, mase_scale(y_train, season_length))))


def smape(y_true, y_pred) -> float:
    """200/h sum |y - yhat| / (|y| + |yhat|), on the 0-200 scale of M3/M4."""
    return float(np.mean(smape_terms(y_true, y_pred)))


def owa(smape_model, mase_model, smape_naive2, mase_naive2):
    """Overall weighted average: the mean of the sMAPE and MASE ratios to Naive2 (1 = as good as Naive2)."""
    return 0.5 * (smape_model / smape_naive2 + mase_model / mase_naive2)
