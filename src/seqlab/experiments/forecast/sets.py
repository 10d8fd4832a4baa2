"""The experiment's data: each collection loaded with its windows, the official hold-out and validation windows, and
the series-length groups."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...forecast.data import air_passengers, competition
from ...forecast.intervals import window_index as series_window_index
from ...forecast.origins import training_windows


def official_holdout(err: pd.DataFrame) -> pd.DataFrame:
    """Each series' last window (the official hold-out of a competition set): window 0 of :func:`window_index`."""
    return err[window_index(err).to_numpy() == 0]


def window_index(frame: pd.DataFrame) -> pd.Series:
    """How many windows before its series' last each row's window is: 0 for the last (the official hold-out).

    Series are told apart by ``unique_id`` within each ``dataset`` when the frame has that column.
    """
    out = np.zeros(len(frame), dtype=int)
    sets = frame.groupby("dataset", sort=False).indices if "dataset" in frame.columns else {"": np.arange(len(frame))}
    for pos in sets.values():  # cutoffs are dates in one set and period numbers in another
        out[pos] = series_window_index(frame.iloc[pos])
    return pd.Series(out, index=frame.index)


def validation_units(units: pd.DataFrame) -> pd.DataFrame:
    """The (series, window) units of the validation windows: every window before each series' last."""
    return units[window_index(units) > 0]


@dataclass(frozen=True)
class Source:
    """One data set as loaded: training part, official hold-out (None: rolling windows only), season, horizon, and
    the calendar the classical models see."""

    train: pd.DataFrame
    test: pd.DataFrame | None
    season: int
    h: int
    freq: object

    @property
    def history(self) -> pd.DataFrame:
        """Everything observed: the training part with the hold-out after it."""
        if self.test is None:
            return self.train
        return pd.concat([self.train, self.test]).sort_values(["unique_id", "ds"], kind="stable")


def _load(key: str) -> Source:
    if key == "air":  # one series with a date index and no official hold-out: the rolling windows are the design
        return Source(air_passengers(), None, 12, 12, "ME")
    name, group = key.split("/")
    train, test, season, h = competition(name, group)
    return Source(train, test, season, h, 1)


@dataclass
class DataSet:
    """One data set of the comparison, as the steps of the run pass it on: where its series come from, its rolling
    origins, the classical models' forecasts there (``cv``), the windows cut from them (``win``) and the seconds
    each step took."""

    label: str
    key: str
    windows: int
    season: int
    h: int
    history: pd.DataFrame
    cv: pd.DataFrame
    win: list
    series: int
    official: bool  # an official hold-out (a competition's test period) is the last window
    seconds: dict = field(default_factory=dict)


#: the length groups of :func:`length_groups`, shortest first
LENGTH_GROUPS = ("short", "medium", "long")


def length_groups(d: "DataSet") -> pd.Series:
    """Each series' third of its set by the length of its training part at the last origin (ties: set order)."""
    last = d.win[0]
    lengths = pd.Series([len(y) for y in last.series], index=last.ids)
    return pd.qcut(lengths.rank(method="first"), len(LENGTH_GROUPS), labels=list(LENGTH_GROUPS)).astype(str)


def _sets_from_forecasts(forecasts: pd.DataFrame, datasets: dict) -> dict:
    """What scoring needs of each data set: its history, season, horizon and windows (from the stored forecasts)."""
    sets = {}
    for label, (key, windows) in datasets.items():
        src = _load(key)
        ids = {str(u): u for u in src.history.unique_id.unique()}  # the ids were written as text
        rows = forecasts.dataset == label
        forecasts.loc[rows, "unique_id"] = forecasts.loc[rows, "unique_id"].map(ids)
        cv = forecasts[rows]
        sets[label] = DataSet(label, key, windows, src.season, src.h, src.history, cv,
                              training_windows(cv, src.history, src.season), src.train.unique_id.nunique(),
                              official=src.test is not None)
    return sets
