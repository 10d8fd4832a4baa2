"""Forecast accuracy: MASE (Hyndman & Koehler, 2006), sMAPE and OWA as the M4 competition defines them,
and the scores of prediction intervals and quantiles: coverage, the Winkler (interval) score,
the pinball (quantile) loss, and the CRPS approximated from quantiles.

These functions are the only implementation: :func:`seqlab.forecast.evaluate` builds its
per-step errors from :func:`scaled_errors`, :func:`smape_terms`, :func:`winkler_terms` and
:func:`pinball_terms`, and the scalar metrics are their means, so the utilsforecast parity
tests cover the chapter's numbers.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["mase_scale", "mase_scales", "mase_by_row", "scaled_errors", "smape_terms", "mase", "smape", "owa", "coverage", "winkler_terms",
           "winkler_score", "pinball_terms", "pinball_loss", "scaled_pinball_loss", "crps_terms", "scaled_crps"]


def mase_scales(y, season_length: int) -> np.ndarray:
    """The MASE scale of every prefix: ``q[t]`` for t = 0..n is the in-sample MAE of the seasonal naive forecast
    on ``y[:t]``, lag m = ``season_length`` when t > m, else lag 1 (NaN when t < 2). Prefix sums make it O(n).

    The one MASE scale: :func:`mase_scale` is its last entry, and N-BEATS weighs every training window by it.
    """
    y = np.asarray(y, float)
    n, m = len(y), int(season_length)
    q = np.full(n + 1, np.nan)
    t = np.arange(n + 1)
    c1 = np.r_[0.0, 0.0, np.cumsum(np.abs(np.diff(y)))][: n + 1]  # c1[t] = sum_{1 <= j < t} |y_j - y_{j-1}|
    ok1 = t >= 2
    q[ok1] = c1[ok1] / (t[ok1] - 1)
    if m > 1 and n > m:
        cm = np.r_[np.zeros(m + 1), np.cumsum(np.abs(y[m:] - y[:-m]))]  # cm[t] = sum_{m <= j < t} |y_j - y_{j-m}|
        okm = t > m
        q[okm] = cm[okm] / (t[okm] - m)
    return q


def mase_scale(y_train, season_length: int) -> float:
    """In-sample MAE of the seasonal naive forecast y_t = y_{t-m} (m = 1: the naive forecast, also for a series
    no longer than a season); NaN for fewer than two observations."""
    return float(mase_scales(y_train, season_length)[-1])


def mase_by_row(y_true, y_pred, scale) -> np.ndarray:
    """MASE of each row (an origin's h steps) with its own scale; NaN where the scale is 0 or undefined."""
    scale = np.asarray(scale, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(scale > 0, np.abs(np.asarray(y_pred, float) - np.asarray(y_true, float)).mean(axis=1) / scale,
                        np.nan)


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
    """mean |y - yhat| / mean |y_t - y_{t-m}| over the training part.

    Example:
        >>> round(mase([7, 8], [7.5, 8.5], y_train=[1, 2, 3, 4, 5, 6], season_length=1), 4)
        0.5
    """
    return float(np.mean(scaled_errors(y_true, y_pred, mase_scale(y_train, season_length))))


def smape(y_true, y_pred) -> float:
    """200/h sum |y - yhat| / (|y| + |yhat|), on the 0-200 scale of M3/M4.

    Example:
        >>> round(smape([100, 110], [90, 110]), 4)
        5.2632
    """
    return float(np.mean(smape_terms(y_true, y_pred)))


def owa(smape_model, mase_model, smape_naive2, mase_naive2):
    """Overall weighted average: the mean of the sMAPE and MASE ratios to Naive2 (1 = as good as Naive2).

    Example:
        >>> round(owa(smape_model=10.0, mase_model=1.2, smape_naive2=12.0, mase_naive2=1.5), 4)
        0.8167
    """
    return 0.5 * (smape_model / smape_naive2 + mase_model / mase_naive2)


def coverage(y_true, lo, hi) -> float:
    """Share of the values inside their interval, bounds included (nominal: the interval's level).

    Example:
        >>> round(coverage([1, 5, 9], lo=[0, 0, 0], hi=[4, 6, 8]), 4)
        0.6667
    """
    y, lo, hi = (np.asarray(a, float) for a in (y_true, lo, hi))
    return float(np.mean((y >= lo) & (y <= hi)))


def _alpha(level) -> float:
    if not 0 < level < 100:
        raise InvalidParameterError(f"level must lie strictly between 0 and 100, got {level}")
    return 1 - level / 100


def winkler_terms(y_true, lo, hi, level) -> np.ndarray:
    """Winkler's interval score per step: width hi - lo, plus 2/a times the distance to the interval when y is outside.

    ``a = 1 - level/100``; lower is better (FPP3 §5.9). Divided by the MASE scale and averaged, it is M4's MSIS.
    """
    y, lo, hi = (np.asarray(a, float) for a in (y_true, lo, hi))
    a = _alpha(level)
    with np.errstate(invalid="ignore"):
        return (hi - lo) + (2 / a) * np.where(y < lo, lo - y, 0.0) + (2 / a) * np.where(y > hi, y - hi, 0.0)


def winkler_score(y_true, lo, hi, level) -> float:
    """Mean Winkler score of an interval at ``level`` over the steps.

    Example:
        >>> round(winkler_score([1, 5, 9], lo=[0, 0, 0], hi=[4, 6, 8], level=80), 4)
        9.3333
    """
    return float(np.mean(winkler_terms(y_true, lo, hi, level)))


def pinball_terms(y_true, y_quantile, q: float) -> np.ndarray:
    """Pinball (quantile) loss per step: q (y - f) when y >= f, else (1 - q) (f - y)."""
    d = np.asarray(y_true, float) - np.asarray(y_quantile, float)
    return np.maximum(q * d, (q - 1) * d)


def pinball_loss(y_true, y_quantile, q: float) -> float:
    """Mean pinball loss of the quantile-``q`` forecast over the steps.

    Example:
        >>> round(pinball_loss([10, 12], [11, 11], q=0.9), 4)
        0.5
    """
    return float(np.mean(pinball_terms(y_true, y_quantile, q)))


def crps_terms(y_true, quantile_preds: dict) -> np.ndarray:
    """CRPS per step approximated from quantiles: twice the mean pinball loss over ``{q: forecast}``.

    The CRPS is 2 times the integral of the pinball loss over q in (0, 1); the mean over
    the given quantiles is that integral's Riemann approximation.
    """
    return 2 * np.mean([pinball_terms(y_true, f, q) for q, f in quantile_preds.items()], axis=0)


def scaled_pinball_loss(y_true, quantile_preds: dict, y_train, season_length: int) -> float:
    """Mean pinball loss over the quantiles ``{q: forecast}`` and steps, divided by MASE's scale (M5's scaled MQL).

    Example:
        >>> round(scaled_pinball_loss([7, 8], {0.1: [6, 7], 0.9: [8, 9]}, y_train=[1, 2, 3, 4, 5, 6], season_length=1), 4)
        0.1
    """
    scale = mase_scale(y_train, season_length)
    loss = float(np.mean([pinball_terms(y_true, f, q) for q, f in quantile_preds.items()]))
    return loss / scale if scale > 0 else float("nan")


def scaled_crps(y_true, quantile_preds: dict) -> float:
    """Scaled CRPS (Rangapuram et al., 2021): sum over steps of the quantile CRPS over the sum of |y|.

    Example:
        >>> round(scaled_crps([10, 12], {0.1: [9, 10], 0.5: [10, 12], 0.9: [11, 14]}), 4)
        0.0182
    """
    y = np.asarray(y_true, float)
    return float(crps_terms(y, quantile_preds).sum() / (np.abs(y).sum() + np.finfo(np.float64).eps))
