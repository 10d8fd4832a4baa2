"""Classical baselines: statsforecast's models by name, and the M4 competition's Naive2.

Both are :class:`~seqlab.forecast.core.ForecastModel` objects (``name``, ``fit(df, h)``,
``predict(df, h) -> {unique_id: array}``). :class:`StatsForecastModel` also has
``forecast_many``: the Forecaster hands all of them to it at once, so that one
``StatsForecast`` call (or one cluster job) fits every statsforecast model.
"""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .fit_warnings import Witness

__all__ = ["CLASSICAL", "make_statsforecast_model", "naive2_forecast", "seasonality_test", "seasonal_adjustment",
           "StatsForecastModel", "Naive2", "M4Comb", "is_statsforecast_model"]

#: model name -> statsforecast class name (AutoARIMA is slow: keep it to few series)
CLASSICAL = {"Naive": "Naive", "SeasonalNaive": "SeasonalNaive", "RandomWalkWithDrift": "RandomWalkWithDrift",
             "AutoETS": "AutoETS", "Theta": "Theta", "AutoTheta": "AutoTheta", "AutoARIMA": "AutoARIMA"}
NEEDS_SEASON = {"SeasonalNaive", "AutoETS", "Theta", "AutoTheta", "AutoARIMA"}


def make_statsforecast_model(name: str, season_length: int):
    import statsforecast.models as sm

    cls = getattr(sm, CLASSICAL[name])
    kwargs = {"season_length": season_length} if name in NEEDS_SEASON else {}
    return cls(alias=name, **kwargs)


def seasonality_test(y: np.ndarray, m: int, critical: float = 1.645) -> bool:
    """M4's 90% test: |r_m| > c sqrt((1 + 2 sum_{k<m} r_k^2) / n) for the autocorrelations r_k (c = 1.645)."""
    y = np.asarray(y, float)
    n = len(y)
    if m <= 1 or n < 3 * m:
        return False
    z = y - y.mean()
    denom = (z * z).sum()
    if denom == 0:
        return False
    r = np.array([(z[k:] * z[:-k]).sum() / denom for k in range(1, m + 1)])
    limit = critical * np.sqrt((1 + 2 * (r[:-1] ** 2).sum()) / n)
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


def seasonal_adjustment(y, h: int, season_length: int) -> tuple[np.ndarray, np.ndarray]:
    """M4's adjustment: ``(y / s_t, s_{n+1..n+h})`` when the 90% test finds seasonality in a positive series, else
    ``(y, 1)``; the indices ``s`` are those of the classical multiplicative decomposition."""
    y = np.asarray(y, float)
    m = season_length
    if m > 1 and seasonality_test(y, m) and (y > 0).all():
        s = _seasonal_indices(y, m)
        n = len(y)
        return y / s[np.arange(n) % m], s[np.arange(n, n + h) % m]
    return y, np.ones(h)


def naive2_forecast(y, h: int, season_length: int) -> np.ndarray:
    """Naive forecast of the seasonally adjusted series, reseasonalized (M4's Naive2 benchmark)."""
    adjusted, future = seasonal_adjustment(y, h, season_length)
    return adjusted[-1] * future


def is_statsforecast_model(obj) -> bool:
    """An object from ``statsforecast.models`` (what ``StatsForecast(models=[...])`` takes)."""
    return type(obj).__module__.startswith("statsforecast.") and callable(getattr(obj, "forecast", None)) \
        and callable(getattr(obj, "new", None))


def _positional(df: pd.DataFrame, exog=()) -> tuple[pd.DataFrame, pd.Index]:
    """Series coded 0, 1, ... in order of appearance, ``ds`` counting 1, 2, ... within each: what statsforecast gets.

    The classical models use only the order of the values (and the regressors ``exog`` beside them), so integer
    periods with ``freq=1`` give the same fit whatever the calendar, and nothing about dates or id
    types can go wrong on the way to statsforecast or to a cluster.
    """
    codes, ids = pd.factorize(df["unique_id"], sort=False)
    order = np.argsort(codes, kind="stable")
    c = codes[order].astype(np.int64)
    pos = pd.Series(c).groupby(c).cumcount().to_numpy(np.int64) + 1
    return pd.DataFrame({"unique_id": c, "ds": pos, "y": df["y"].to_numpy(float)[order],
                         **{x: df[x].to_numpy(float)[order] for x in exog}}), pd.Index(ids)


def _values(pos: pd.DataFrame, ids: pd.Index):
    """``(id, values)`` for each series of a :func:`_positional` frame."""
    return ((ids[code], g.to_numpy()) for code, g in pos.groupby("unique_id", sort=False)["y"])


class _ManyAtOnce:
    """``fit``/``predict`` for a model whose ``forecast_many`` fits every series in one call."""

    def fit(self, df: pd.DataFrame, h: int):
        self._fitted = (h, self.forecast_many([self], df, h))
        return self

    def predict(self, df: pd.DataFrame, h: int) -> dict:
        if self._fitted is None or self._fitted[0] != h:
            raise RuntimeError("fit the model with this horizon first")
        fc = self._fitted[1].sort_values(["ds"], kind="stable")
        return {uid: g[self.name].to_numpy(float) for uid, g in fc.groupby("unique_id", sort=False)}


class StatsForecastModel(_ManyAtOnce):
    """A statsforecast model as a Forecaster model: by name (:data:`CLASSICAL`) or as a ``statsforecast.models`` object.

    ``name`` is statsforecast's name for it (its ``alias``, else its class name). Native
    prediction intervals (``level=``) are those statsforecast computes for the model.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 9), "y": [1.0, 2, 3, 4, 5, 6, 7, 8]})
        >>> m = StatsForecastModel("Naive")
        >>> m.name, m.fit(df, h=2).predict(df, h=2)["a"].tolist()
        ('Naive', [8.0, 8.0])
    """

    local = True  # each series is fitted on its own history

    def __init__(self, model, season_length: int = 1, alias: str | None = None):
        if isinstance(model, str):
            if model not in CLASSICAL:
                raise InvalidParameterError(f"unknown statsforecast model {model!r}; choose from "
                                            f"{', '.join(sorted(CLASSICAL))}")
            spec = make_statsforecast_model(model, season_length)
        elif is_statsforecast_model(model):
            spec = model
        else:
            raise InvalidParameterError(f"{model!r} is neither a model name nor a statsforecast model")
        if alias is not None:
            spec.alias = alias
        self.spec = spec
        self.name = repr(spec)
        self.native_intervals = "level" in inspect.signature(spec.forecast).parameters
        self._fitted = None

    def __repr__(self):
        return f"StatsForecastModel({self.name})"

    @staticmethod
    def forecast_many(models, df: pd.DataFrame, h: int, level=None, n_jobs: int = 1, engine=None,
                      X=None) -> pd.DataFrame:
        """Fit all ``models`` on every series of ``df`` in one StatsForecast call (on ``engine`` when given).

        Returns ``unique_id, ds`` (the caller's ids; ``ds`` counts periods past each
        series' end, 1 .. h) plus each model's column, and its ``-lo-``/``-hi-`` columns for
        ``level`` when it has native intervals. Rows are keyed, never ordered: statsforecast
        and the cluster return series in their own order. ``X`` (series in order of first appearance, h, k): the
        values over the horizon of the regressors, ``df``'s columns after ``y``, which statsforecast's models with
        ``uses_exog`` (AutoARIMA) read (statsforecast's ``X_df``); in this process only.
        """
        from statsforecast import StatsForecast

        exog = [c for c in df.columns if c not in ("unique_id", "ds", "y")] if X is not None else []
        pos, ids = _positional(df, exog)
        x_df = None
        if exog:
            if engine is not None:
                raise InvalidParameterError("regressors are fitted in this process: leave out the cluster engine")
            last = pos.groupby("unique_id", sort=False)["ds"].max().to_numpy()
            x_df = pd.DataFrame({"unique_id": np.repeat(np.arange(len(ids)), h),
                                 "ds": (last[:, None] + np.arange(1, h + 1)).reshape(-1),
                                 **{c: np.asarray(X, float)[:, :, j].reshape(-1) for j, c in enumerate(exog)}})
        with Witness() as witness:
            specs = [witness.wrap(m.spec) for m in models]
            if engine is None:
                fc = StatsForecast(models=specs, freq=1, n_jobs=n_jobs).forecast(df=pos, h=h, level=level or None,
                                                                                  X_df=x_df)
                fc = fc.reset_index() if "unique_id" not in fc.columns else fc
            else:
                from .engines import statsforecast_on_engine

                fc = statsforecast_on_engine(specs, pos, h, 1, level, engine)
            witness.report(lambda: _values(pos, ids), engine.fugue_engine if getattr(engine, "kind", None) == "dask"
                           else None)
        last = pos.groupby("unique_id", sort=False)["ds"].max()
        code = fc["unique_id"].to_numpy(np.int64)
        step = fc["ds"].to_numpy(np.int64) - last.reindex(code).to_numpy()
        out = pd.DataFrame({"unique_id": ids.take(code), "ds": step})
        cols = [c for c in fc.columns if c not in ("unique_id", "ds", "index")]
        return pd.concat([out, fc[cols].reset_index(drop=True).astype(float)], axis=1)



class Naive2:
    """M4's Naive2 (:func:`naive2_forecast`) as a Forecaster model; it has no native intervals.

    Example:
        >>> import pandas as pd
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [float(t) for t in range(1, 13)]})
        >>> Forecaster([Naive2(season_length=4)]).forecast(h=2, df=df)["Naive2"].tolist()
        [12.0, 12.0]
    """

    local = True
    native_intervals = False

    def __init__(self, season_length: int = 1, name: str = "Naive2"):
        self.season_length, self.name = season_length, name

    def __repr__(self):
        return f"Naive2(season_length={self.season_length})"

    def fit(self, df: pd.DataFrame, h: int):
        self.h = h
        return self

    def predict(self, df: pd.DataFrame, h: int) -> dict:
        return {uid: naive2_forecast(g["y"].to_numpy(float), h, self.season_length)
                for uid, g in df.groupby("unique_id", sort=False)}


#: M4 Comb's three members, as statsforecast's ETS forms: SES (A,N,N), Holt (A,A,N) and damped Holt (A,Ad,N), each
#: with the simpler model it falls back to on a series too short to fit it (n <= parameters + 4)
COMB_MEMBERS = {"SES": (dict(model="ANN"), "Naive"), "Holt": (dict(model="AAN", damped=False), "SES"),
                "Damped": (dict(model="AAN", damped=True), "SES")}


class M4Comb(_ManyAtOnce):
    """M4's Comb benchmark: the mean of SES, Holt and damped Holt fitted to the seasonally adjusted series
    (:func:`seasonal_adjustment`), reseasonalized. It has no native intervals.

    Example:
        >>> import pandas as pd
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [float(t) for t in range(1, 13)]})
        >>> Forecaster([M4Comb(season_length=4)]).forecast(h=2, df=df)["M4 Comb"].round(4).tolist()
        [12.6386, 13.2772]
    """

    local = True
    native_intervals = False

    def __init__(self, season_length: int = 1, name: str = "M4 Comb"):
        self.season_length, self.name = int(season_length), name
        self._fitted = None

    def __repr__(self):
        return f"M4Comb(season_length={self.season_length})"

    @staticmethod
    def forecast_many(models, df: pd.DataFrame, h: int, level=None, n_jobs: int = 1, engine=None) -> pd.DataFrame:
        """Every model's forecasts of every series of ``df``: one statsforecast call fits the three members."""
        from statsforecast import StatsForecast
        from statsforecast.models import AutoETS, Naive

        # ``engine`` is accepted for the Forecaster's sake; the three small ETS fits run here
        simple = {"Naive": lambda: Naive(), "SES": lambda: AutoETS(model="ANN", alias="SES")}
        out = None
        for m in models:
            adjusted, future = [], {}
            for uid, g in df.groupby("unique_id", sort=False):
                a, f = seasonal_adjustment(g["y"].to_numpy(float), h, m.season_length)
                adjusted.append(pd.DataFrame({"unique_id": uid, "ds": g["ds"].to_numpy(), "y": a}))
                future[uid] = f
            pos, ids = _positional(pd.concat(adjusted, ignore_index=True))
            parts = []
            with Witness() as witness:
                for name, (kw, fallback) in COMB_MEMBERS.items():
                    fc = StatsForecast(models=[witness.wrap(AutoETS(alias=name, **kw))], freq=1, n_jobs=n_jobs,
                                       fallback_model=simple[fallback]()).forecast(df=pos, h=h)
                    fc = fc.reset_index() if "unique_id" not in fc.columns else fc
                    parts.append(fc.set_index(["unique_id", "ds"])[name])
                witness.report(lambda: _values(pos, ids))
            fc = pd.concat(parts, axis=1).reset_index()
            last = pos.groupby("unique_id", sort=False)["ds"].max()
            code = fc["unique_id"].to_numpy(np.int64)
            step = fc["ds"].to_numpy(np.int64) - last.reindex(code).to_numpy()
            uid = ids.take(code)
            factor = np.array([future[u][k - 1] for u, k in zip(uid, step)])
            point = fc[list(COMB_MEMBERS)].mean(axis=1).to_numpy() * factor
            frame = pd.DataFrame({"unique_id": uid, "ds": step, m.name: point})
            out = frame if out is None else out.merge(frame, on=["unique_id", "ds"], how="left", validate="one_to_one")
        return out

