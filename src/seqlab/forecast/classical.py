"""Classical baselines: statsforecast's models by name, and the M4 competition's Naive2."""
from __future__ import annotations

import numpy as np

__all__ = ["CLASSICAL", "make_statsforecast_model", "naive2_forecast", "seasonality_test"]

#: model name -> statsforecast class name (AutoARIMA is slow: keep it to few series)
CLASSICAL = {"Naive": "Naive", "SeasonalNaive": "SeasonalNaive", "RandomWalkWithDrift": "RandomWalkWithDrift",
             "AutoETS": "AutoETS", "Theta": "Theta", "AutoTheta": "AutoTheta", "AutoARIMA": "AutoARIMA"}
NEEDS_SEASON = {"SeasonalNaive", "AutoETS", "Theta", "AutoTheta", "AutoARIMA"}


def make_statsforecast_model(name: str, season_length: int):
    import statsforecast.models as sm

    cls = getattr(sm, CLASSICAL[name])
    kwargs = {"season_length": season_length} if name in NEEDS_SEASON else {}
    return cls(alias=name, **kwargs)


def seasonality_test(y: np.ndarray, m: int) -> bool:
    """M4's 90% test: |r_m| > 1.645 sqrt((1 + 2 sum_{k<m} r_k^2) / n) for the autocorrelations r_k."""
    y = np.asarray(y, float)
    n = len(y)
    if m <= 1 or n < 3 * m:
        return False
    z = y - y.mean()
    denom = (z * z).sum()
    if denom == 0:
        return False
    r = np.array([(z[k:] * z[:-k]).sum() / denom for k in range(1, m + 1)])
    limit = 1.645 * np.sqrt((1 + 2 * (r[:-1] ** 2).sum()) / n)
    return bool(abs(r[-1]) > limit)


def _seasonal_indices(y: np.ndarray, m: int) -> np.ndarray:
    """Classical multiplicative decomposition: y / centred moving average, averaged per season, mean 1."""
    n = len(y)
    if m % 2 == 0:
        w = np.r_[0.5, np.ones(m - 1), 0.5] / m
    else:
        w = np.ones(m) / m
    trend = np.convolve(y, w, mode="valid")
    offset = (len(w) - 1) // 2
    ratios = np.full(n, np.nan)
    ratios[offset : offset + len(trend)] = y[offset : offset + len(trend)] / trend
    idx = np.array([np.nanmean(ratios[k::m]) for k in range(m)])
    return idx / idx.mean()


def naive2_forecast(y, h: int, season_length: int) -> np.ndarray:
    """Naive forecast of the seasonally adjusted series, reseasonalized (M4's Naive2 benchmark)."""
    y = np.asarray(y, float)
    m = season_length
    if m > 1 and seasonality_test(y, m) and (y > 0).all():
        s = _seasonal_indices(y, m)
        n = len(y)
        season_of = lambda t: s[t % m]  # noqa: E731
        level = y[-1] / season_of(n - 1)
        return np.array([level * season_of(n + i) for i in range(h)])
    return np.full(h, y[-1])
