"""``Forecaster(models=[...], freq=...)``: classical and neural models side by side, statsforecast-style."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .classical import CLASSICAL, make_statsforecast_model, naive2_forecast
from .data import ForecastDataError, validate_long
from .neural import NeuralForecaster

__all__ = ["Forecaster", "rolling_origin_splits", "check_calendar", "MODEL_NAMES"]

MODEL_NAMES = sorted(CLASSICAL) + ["Naive2", "GRU", "LSTM", "Transformer"]


def rolling_origin_splits(n: int, h: int, n_windows: int, step_size: int | None = None):
    """Expanding-window cut points: window k trains on y[:cut_k] and tests on y[cut_k : cut_k + h].

    The last window ends at the series' end (the official hold-out when the
    test part is appended); earlier ones step back by ``step_size`` (default h).
    """
    step = h if step_size is None else step_size
    if h < 1 or n_windows < 1 or step < 1:
        raise InvalidParameterError("h, n_windows and step_size must be >= 1")
    cuts = [n - h - (n_windows - 1 - k) * step for k in range(n_windows)]
    if cuts[0] < 2:
        raise ForecastDataError(f"a series of length {n} is too short for {n_windows} windows of horizon {h}")
    return cuts


def _future_ds(last, h: int, freq):
    if isinstance(last, (pd.Timestamp, np.datetime64)):
        offset = pd.tseries.frequencies.to_offset(freq)
        return pd.DatetimeIndex([pd.Timestamp(last) + k * offset for k in range(1, h + 1)])
    return np.arange(last + freq, last + h * freq + 1, freq)


def check_calendar(df: pd.DataFrame, freq) -> None:
    """Every series must step by exactly ``freq``: integer periods by that number, dates along that calendar.

    Month-end dates under ``freq="MS"`` would otherwise have their future dates
    moved to month starts, one step out of line with the history.
    """
    ds = df["ds"]
    if pd.api.types.is_datetime64_any_dtype(ds):
        try:
            offset = pd.tseries.frequencies.to_offset(freq)
        except (ValueError, TypeError):
            raise ForecastDataError(f"freq {freq!r} is not a pandas frequency (such as 'MS', 'ME', 'D')") from None
        off = ds[~ds.map(offset.is_on_offset)]
        if len(off):
            raise ForecastDataError(f"ds {off.iloc[0].date()} is not on the calendar of freq {freq!r}; pass the "
                                    "frequency the dates follow (month-end dates: 'ME', month starts: 'MS')")
        expected = df.groupby("unique_id", sort=False)["ds"].shift(1) + offset
    else:
        if not isinstance(freq, (int, np.integer)) or freq < 1:
            raise ForecastDataError(f"integer ds needs an integer freq (the step between periods), got {freq!r}")
        expected = df.groupby("unique_id", sort=False)["ds"].shift(1) + freq
    gap = expected.notna() & (ds != expected)
    if gap.any():
        row = df[gap].iloc[0]
        raise ForecastDataError(f"series {row['unique_id']!r} does not step by freq {freq!r} at {row['ds']}; "
                                "fill the gaps or pass the frequency the data follow")


class Forecaster:
    """Fit every model on each series' history and forecast ``h`` steps; classical models are local, neural global.

    ``models``: names from :data:`MODEL_NAMES` or :class:`NeuralForecaster` objects.
    """

    def __init__(self, models, freq=1, season_length: int = 1, n_jobs: int = 1):
        if not models:
            raise InvalidParameterError("give at least one model")
        self.models = []
        for m in models:
            if isinstance(m, str):
                if m not in MODEL_NAMES:
                    raise InvalidParameterError(f"unknown model {m!r}; choose from {', '.join(MODEL_NAMES)}")
                if m in ("GRU", "LSTM", "Transformer"):
                    m = NeuralForecaster(m.lower(), season_length=season_length)
            self.models.append(m)
        self.freq, self.season_length, self.n_jobs = freq, season_length, n_jobs

    @property
    def names(self) -> list[str]:
        return [m if isinstance(m, str) else m.name for m in self.models]

    def forecast(self, df: pd.DataFrame, h: int) -> pd.DataFrame:
        """Long frame ``unique_id, ds`` plus one column per model, in the order the series first appear."""
        df = validate_long(df)
        check_calendar(df, self.freq)
        last = df.groupby("unique_id", sort=False)["ds"].last()
        out = pd.concat([pd.DataFrame({"unique_id": uid, "ds": _future_ds(ds, h, self.freq)}) for uid, ds in last.items()],
                        ignore_index=True)
        stats = [m for m in self.models if isinstance(m, str) and m in CLASSICAL]
        if stats:
            out = self._join(out, self._statsforecast(df, h, stats), stats)
        for m in self.models:
            if m == "Naive2":
                out["Naive2"] = np.concatenate([naive2_forecast(g["y"].to_numpy(), h, self.season_length)
                                                for _, g in df.groupby("unique_id", sort=False)])
            elif isinstance(m, NeuralForecaster):
                preds = m.fit(df, h).predict(df, h)
                out[m.name] = np.concatenate([preds[uid] for uid in last.index])
        return out

    def _statsforecast(self, df: pd.DataFrame, h: int, names: list[str]) -> pd.DataFrame:
        from statsforecast import StatsForecast

        sf = StatsForecast(models=[make_statsforecast_model(m, self.season_length) for m in names], freq=self.freq,
                           n_jobs=self.n_jobs)
        fc = sf.forecast(df=df, h=h)
        return fc.reset_index() if "unique_id" not in fc.columns else fc

    @staticmethod
    def _join(out: pd.DataFrame, fc: pd.DataFrame, names: list[str]) -> pd.DataFrame:
        """Attach forecasts by (unique_id, ds): statsforecast returns series sorted by id, not in the caller's order."""
        merged = out.merge(fc[["unique_id", "ds", *names]], on=["unique_id", "ds"], how="left", validate="one_to_one")
        if merged[names].isna().any().any():
            raise ForecastDataError("the classical models' forecast dates do not line up with the series' own "
                                    "calendar; check freq")
        return merged

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
                raise InvalidParameterError(f"min_train_length must be >= 2, got {min_train_length}")
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
            parts.append(test.merge(fc, on=["unique_id", "ds"], how="left", validate="one_to_one"))
        cv = pd.concat(parts, ignore_index=True)
        return cv[["unique_id", "ds", "cutoff", "y", *self.names]]
