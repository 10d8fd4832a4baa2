"""Forecast accuracy: MASE (Hyndman & Koehler, 2006), sMAPE and OWA as the M4 competition defines them."""
from __future__ import annotations

import numpy as np

__all__ = ["mase_scale", "mase", "smape", "owa"]


def mase_scale(y_train, season_length: int) -> float:
    """In-sample MAE of the seasonal naive forecast y_t = y_{t-m} (m = 1: the naive forecast)."""
    y = np.asarray(y_train, float)
    m = season_length if len(y) > season_length else 1
    if len(y) <= m:
        return float("nan")
    return float(np.mean(np.abs(y[m:] - y[:-m])))


def mase(y_true, y_pred, y_train, season_length: int) -> float:
    """mean |y - yhat| / mean |y_t - y_{t-m}| over the training part."""
    scale = mase_scale(y_train, season_length)
    err = np.mean(np.abs(np.asarray(y_true, float) - np.asarray(y_pred, float)))
    return float(err / scale) if scale > 0 else float("nan")


def smape(y_true, y_pred) -> float:
    """200/h sum |y - yhat| / (|y| + |yhat|), on the 0-200 scale of M3/M4."""
    y, f = np.asarray(y_true, float), np.asarray(y_pred, float)
    denom = np.abs(y) + np.abs(f)
    ratio = np.divide(np.abs(y - f), denom, out=np.zeros_like(y), where=denom > 0)
    return float(200 * ratio.mean())


def owa(smape_model: float, mase_model: float, smape_naive2: float, mase_naive2: float) -> float:
    """Overall weighted average: the mean of the sMAPE and MASE ratios to Naive2 (1 = as good as Naive2)."""
    return 0.5 * (smape_model / smape_naive2 + mase_model / mase_naive2)
