"""``Forecaster(models=[...], freq=...)``: classical and neural models side by side, statsforecast-style."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .classical import CLASSICAL, make_statsforecast_model, naive2_forecast
from .data import ForecastDataError, validate_long
from .neural import NeuralForecaster

__all__ = ["Forecaster", "rolling_origin_splits", "MODEL_NAMES"]

MODEL_NAMES = sorted(CLASSICAL) + ["Naive2", "GRU", "LSTM", "Transformer"]


def rolling_origin_splits(n: int, h: int, n_windows: int, step_size: int | None = None):
    """Expanding-window cut points: window k trains on y[:cut_k] and tests on y[cut_k : cut_k + h].

    The last window ends at the series' end (the official hold-out when the
    test part is appended); earlier ones step back by ``step_size`` (default h).
    """
    step = h if step_size is None else step_size
    if h < 1 or n_windows < 1 or step < 1:
        raise ValueError("h, n_windows and step_size must be >= 1")
    cuts = [n - h - (n_windows - 1 - k) * step for k in range(n_windows)]
    if cuts[0] < 2:
        raise ForecastDataError(f"a series of length {n} is too short for {n_windows} windows of horizon {h}")
    return cuts


def _future_ds(last, h: int, freq):
    if isinstance(last, (pd.Timestamp, np.datetime64)):
        return pd.date_range(last, periods=h + 1, freq=freq)[1:]
    return np.arange(last + 1, last + h + 1)


class Forecaster:
    """Fit every model on each series' history and forecast ``h`` steps; classical models are local, neural global.

    ``models``: names from :data:`MODEL_NAMES` or :class:`NeuralForecaster` objects.
    """

    def __init__(self, models, freq=1, season_length: int = 1, n_jobs: int = 1):
        if not models:
            raise ValueError("give at least one model")
        self.models = []
        for m in models:
            if isinstance(m, str):
                if m not in MODEL_NAMES:
                    raise ValueError(f"unknown model {m!r}; choose from {', '.join(MODEL_NAMES)}")
                if m in ("GRU", "LSTM", "Transformer"):
                    m = NeuralForecaster(m.lower(), season_length=season_length)
            self.models.append(m)
        self.freq, self.season_length, self.n_jobs = freq, season_length, n_jobs

    @property
    def names(self) -> list[str]:
        return [m if isinstance(m, str) else m.name for m in self.models]

    def forecast(self, df: pd.DataFrame, h: int) -> pd.DataFrame:
        """Long frame ``unique_id, ds`` plus one column per model."""
        df = validate_long(df)
        last = df.groupby("unique_id", sort=False)["ds"].last()
        out = pd.concat([pd.DataFrame({"unique_id": uid, "ds": _future_ds(ds, h, self.freq)}) for uid, ds in last.items()],
                        ignore_index=True)
        stats = [m for m in self.models if isinstance(m, str) and m in CLASSICAL]
        if stats:
            from statsforecast import StatsForecast

            sf = StatsForecast(models=[make_statsforecast_model(m, self.season_length) for m in stats], freq=self.freq,
                               n_jobs=self.n_jobs)
            fc = sf.forecast(df=df, h=h)
            fc = fc.reset_index() if "unique_id" not in fc.columns else fc
            for m in stats:
                out[m] = fc[m].to_numpy()
        for m in self.models:
            if m == "Naive2":
                out["Naive2"] = np.concatenate([naive2_forecast(g["y"].to_numpy(), h, self.season_length)
                                                for _, g in df.groupby("unique_id", sort=False)])
            elif isinstance(m, NeuralForecaster):
                preds = m.fit(df, h).predict(df, h)
                out[m.name] = np.concatenate([preds[uid] for uid in last.index])
        return out

    def cross_validation(self, df: pd.DataFrame, h: int, n_windows: int = 1, step_size: int | None = None,
                         test_df: pd.DataFrame | None = None, min_train_length: int | None = None) -> pd.DataFrame:
        """Rolling-origin evaluation: ``unique_id, ds, cutoff, y`` plus one forecast column per model.

        With ``test_df`` (an official hold-out) it is appended to ``df`` and is the last window.
        Windows are aligned at each series' end. By default every series must be long
        enough for all ``n_windows``. With ``min_train_length`` every series takes part in
        the last window (an official hold-out keeps all its series) and in each earlier
        window whose training part has at least ``min_train_length`` observations.
        """
        df = validate_long(df if test_df is None else pd.concat([df, test_df]).sort_values(["unique_id", "ds"],
                                                                                         kind="stable"))
        groups = {uid: g.reset_index(drop=True) for uid, g in df.groupby("unique_id", sort=False)}
        if min_train_length is None:
            cuts = {uid: rolling_origin_splits(len(g), h, n_windows, step_size) for uid, g in groups.items()}
        else:
            if min_train_length < 2:
                raise ValueError(f"min_train_length must be >= 2, got {min_train_length}")
            step = h if step_size is None else step_size
            cuts = {}
            for uid, g in groups.items():
                earlier = max(0, min(n_windows - 1, (len(g) - h - min_train_length) // step))
                cuts[uid] = [None] * (n_windows - 1 - earlier) + rolling_origin_splits(len(g), h, earlier + 1, step)
        parts = []
        for k in range(n_windows):
            members = {uid: g for uid, g in groups.items() if cuts[uid][k] is not None}
            if not members:
                continue
            train = pd.concat([g.iloc[: cuts[uid][k]] for uid, g in members.items()], ignore_index=True)
            test = pd.concat([g.iloc[cuts[uid][k] : cuts[uid][k] + h].assign(cutoff=g["ds"].iloc[cuts[uid][k] - 1])
                              for uid, g in members.items()], ignore_index=True)
            fc = self.forecast(train, h)
            test = test.reset_index(drop=True)
            for name in self.names:
                test[name] = fc[name].to_numpy()
            parts.append(test)
        cv = pd.concat(parts, ignore_index=True)
        return cv[["unique_id", "ds", "cutoff", "y", *self.names]]
