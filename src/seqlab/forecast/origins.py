"""Forecast origins and the fits made at them: where each rolling window starts, and every model run there.

An origin is a pair (series ``i``, offset ``o``): the model is fitted on the series less its last ``o``
observations and forecasts the ``h`` after them. :func:`window_origins` lays out the origins of a
rolling-origin evaluation; :class:`OriginRunner` fits models at a batch of origins and writes their
forecasts into one store, keyed by origin, so that the forecasts and the conformal calibration that
:class:`~seqlab.forecast.Forecaster` builds from them never depend on the order of the series.
"""
from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError, SeqlabError
from .data import ForecastDataError, SeriesTooShortError
from .exog import uses_exog
from .fit_warnings import ModelWarning
from .intervals import window_index
from .lengths import min_fit_length
from .metrics import mase_scale
from .panel import Panel

__all__ = ["rolling_origin_splits", "window_origins", "OriginRunner", "TrainingWindow", "training_windows"]


def rolling_origin_splits(n: int, h: int, n_windows: int, step_size: int | None = None):
    """Expanding-window cut points: window k trains on y[:cut_k] and tests on y[cut_k : cut_k + h].

    The last window ends at the series' end (the official hold-out when the
    test part is appended); earlier ones step back by ``step_size`` (default h).

    Example:
        >>> rolling_origin_splits(12, h=2, n_windows=3)
        [6, 8, 10]
        >>> try:
        ...     rolling_origin_splits(5, h=2, n_windows=3)
        ... except SeriesTooShortError as e:
        ...     print(type(e).__name__)
        SeriesTooShortError
    """
    step = h if step_size is None else step_size
    if h < 1 or n_windows < 1 or step < 1:
        raise InvalidParameterError("h, n_windows and step_size must be >= 1")
    if n - h - (n_windows - 1) * step < 2:  # before any list is built: a count may be astronomically large
        raise SeriesTooShortError(f"a series of length {n} is too short for {n_windows} windows of horizon {h}")
    return [n - h - (n_windows - 1 - k) * step for k in range(n_windows)]


def window_origins(panel: Panel, h: int, n_windows: int, step_size: int,
                   min_train_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(series, offsets)`` of every window of a rolling-origin evaluation, the earliest window first.

    Windows are aligned at each series' end. Without ``min_train_length`` every series must be long enough
    for all ``n_windows``; with it every series takes part in the last window and in each earlier one whose
    training part has at least ``min_train_length`` observations.
    """
    # each series' cuts cover its last len(cuts) windows; the windows no series reaches are never built
    if min_train_length is None:
        cuts = [rolling_origin_splits(int(n), h, n_windows, step_size) for n in panel.lengths]
    else:
        if min_train_length < 2:
            raise InvalidParameterError(f"min_train_length must be >= 2, got {min_train_length}")
        cuts = []
        for n in panel.lengths:
            earlier = max(0, min(n_windows - 1, (int(n) - h - min_train_length) // step_size))
            cuts.append(rolling_origin_splits(int(n), h, earlier + 1, step_size))
    series, offsets = [], []
    for k in range(n_windows - max(map(len, cuts), default=0), n_windows):
        for i, c in enumerate(cuts):
            j = k - (n_windows - len(c))
            if j >= 0:
                series.append(i)
                offsets.append(int(panel.lengths[i]) - c[j])
    return np.array(series, np.int64), np.array(offsets, np.int64)


class OriginRunner:
    """Fits models at origins and stores their forecasts: ``store[column]`` is an (origins, h) array whose row
    for origin (i, o) is ``store["_keys"][i, o]``.

    ``n_jobs`` and ``engine`` go to the models that fit many series in one call; ``report(**info)`` is told of
    every fit as it starts. ``skipped`` collects, per model, the calibration origins a global model could not
    be fitted at (``(count, error)``).
    """

    def __init__(self, n_jobs: int = 1, engine=None, report=None, exog=(), future=None):
        self.n_jobs, self.engine = n_jobs, engine
        # regressors: their values after an origin come from the panel, or for an origin at a series' end from
        # ``future`` (series, h, k), the values given for the horizon
        self.exog, self.future = list(exog), future
        self.report = report or (lambda **info: None)
        self.progress_enabled = report is not None
        self.skipped: dict = {}

    def run(self, models, panel: Panel, series, offsets, h: int, native_levels, store: dict,
            phase: str = "forecast") -> None:
        """Forecast ``h`` steps from origins (``series[k]``, ``offsets[k]``); write into ``store[column][k]``.

        A training part is a series less its last ``offsets[k]`` observations. Local models
        get all origins at once, each as a series of its own (``unique_id`` = k); global
        models are fitted once per distinct offset on every series that has that origin.
        """
        series, offsets = np.asarray(series, np.int64), np.asarray(offsets, np.int64)
        K = len(series)
        if K == 0 or not models:
            return
        cuts = panel.lengths[series] - offsets

        def put(col, keys, values):
            arr = store.setdefault(col, np.full((store["_size"], h), np.nan))
            arr[keys] = values

        def check(m, uid, v):
            v = np.asarray(v, float).reshape(-1)
            if len(v) != h:
                raise InvalidParameterError(f"model {m.name!r} returned {len(v)} values for series {uid!r}; "
                                            f"expected h = {h}")
            return v

        keys_global = store["_keys"]
        local = [m for m in models if getattr(m, "local", False)]
        ahead = self._ahead(panel, series, offsets, h) if self.exog else None
        if local:
            idx = panel.rows(series, cuts)
            starts = np.repeat(np.cumsum(cuts) - cuts, cuts)
            stacked = pd.DataFrame({"unique_id": np.repeat(np.arange(K), cuts), "ds": np.arange(len(idx)) - starts + 1,
                                    "y": panel.y[idx]})
            groups: dict = {}
            for m in local:
                fn = getattr(type(m), "forecast_many", None)
                key = (fn, bool(self.exog) and uses_exog(m)) if callable(fn) else (id(m), False)
                groups.setdefault(key, []).append(m)
            for (fn, with_exog), members in groups.items():
                self.report(event="fit", phase=phase, models=[m.name for m in members], origins=K, window=None,
                            windows=len(np.unique(offsets)))
                if callable(fn):
                    lv = native_levels if native_levels and any(getattr(m, "native_intervals", False)
                                                                for m in members) else None
                    kw, part = {}, stacked
                    if with_exog and self.exog:  # only the models that read regressors are given them
                        part = stacked.assign(**{c: panel.x[idx, j] for j, c in enumerate(self.exog)})
                        kw = {"X": ahead}
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        fc = fn(members, part, h, level=lv, n_jobs=self.n_jobs, engine=self.engine, **kw)
                    pass_on(caught, panel.ids[series])
                    key = fc["unique_id"].to_numpy(np.int64)
                    step = fc["ds"].to_numpy(np.int64) - 1
                    if len(fc) != K * h or ((step < 0) | (step >= h)).any() or \
                            len(np.unique(key * h + step)) != K * h:
                        raise ForecastDataError(f"the forecasts of {', '.join(m.name for m in members)} do not line "
                                                "up with the series they were asked for")
                    for col in fc.columns.drop(["unique_id", "ds"]):
                        block = np.full((K, h), np.nan)
                        block[key, step] = fc[col].to_numpy(float)
                        put(col, keys_global[series, offsets], block)
                else:
                    (m,) = members
                    preds = m.fit(stacked, h).predict(stacked, h)
                    block = np.vstack([check(m, k, preds[k]) for k in range(K)])
                    put(m.name, keys_global[series, offsets], block)
        windows = np.unique(offsets)[::-1]  # the earliest window first
        # window by window, each global model in turn: a model shared by two entries (N-BEATS alone and in the
        # hybrid) then meets the same training part twice in a row, and trains once (it keeps its last fit)
        for w, off in enumerate(windows):
            sel = np.flatnonzero(offsets == off)
            frame = panel.frame.iloc[panel.rows(series[sel], cuts[sel])].reset_index(drop=True)
            plain = frame[["unique_id", "ds", "y"]]
            for m in (m for m in models if not getattr(m, "local", False)):
                where = dict(phase=phase, window=w + 1, windows=len(windows))
                self.report(event="fit", models=[m.name], origins=len(sel), **where)
                kw = {"engine": self.engine} if self.engine is not None and getattr(m, "accepts_engine", False) else {}
                if self.progress_enabled and getattr(m, "accepts_progress", False):
                    kw["progress"] = functools.partial(self.report, event="member", model=m.name, **where)
                try:
                    if self.exog and getattr(m, "accepts_exog", False):
                        preds = m.fit(frame, h, exog=self.exog, **kw).predict(frame, h, X=ahead[sel])
                    else:
                        preds = m.fit(plain, h, **kw).predict(plain, h)
                except SeqlabError as e:  # a global model may not fit on the short series of an early origin
                    if phase != "calibration":
                        raise
                    count, _ = self.skipped.get(m.name, (0, e))
                    self.skipped[m.name] = (count + len(sel), e)
                    continue
                uids = panel.ids[series[sel]]
                missing = [u for u in uids if u not in preds]
                if missing:
                    raise InvalidParameterError(f"model {m.name!r} returned no forecast for series {missing[0]!r}")
                put(m.name, keys_global[series[sel], offsets[sel]], np.vstack([check(m, u, preds[u]) for u in uids]))

    def _ahead(self, panel: Panel, series, offsets, h: int) -> np.ndarray:
        """The regressors over the ``h`` steps after each origin, (origins, h, k): from the panel where the origin
        lies a horizon or more before the series' end, from ``future`` at the end itself."""
        out = np.empty((len(series), h, len(self.exog)))
        for j, (i, o) in enumerate(zip(series, offsets)):
            if o == 0:
                out[j] = self.future[i]
            elif o >= h:
                first = panel.starts[i] + panel.lengths[i] - o
                out[j] = panel.x[first : first + h]
            else:
                raise InvalidParameterError(f"an origin {o} step(s) before a series' end holds only part of the "
                                            f"regressors' values for a horizon of {h}")
        return out

    def run_calibration(self, models, panel: Panel, pairs, h: int, store: dict) -> list[str]:
        """Fit ``models`` at the calibration origins ``pairs``, each at those with a training part it can be fitted
        on; the others stay NaN and so add no score. Returns a note per model that lost origins."""
        cuts = panel.lengths[pairs[:, 0]] - pairs[:, 1]
        self.skipped = {}
        groups: dict = {}
        for m in models:
            groups.setdefault(int(min_fit_length(m)), []).append(m)
        low = int(cuts.min()) if len(cuts) else 0
        fits = [m for m in models if min_fit_length(m) <= low]  # at every origin: one call, as always
        self.run(fits, panel, pairs[:, 0], pairs[:, 1], h, None, store, "calibration")
        notes = []
        for need, ms in sorted(groups.items()):
            if need <= low:
                continue
            keep = cuts >= need
            self.run(ms, panel, pairs[keep, 0], pairs[keep, 1], h, None, store, "calibration")
            for m in ms:
                notes.append(f"{int((~keep).sum())} calibration origin(s) left out of {m.name}'s conformal intervals: "
                             f"their training part has fewer than the {need} observations {m.name} needs to fit")
        for name, (count, e) in self.skipped.items():
            notes.append(f"{count} calibration origin(s) left out of {name}'s conformal intervals: it could not be "
                         f"fitted on their training parts ({' '.join(str(e).split())[:160]})")
        return notes


def pass_on(caught, names) -> None:
    """Warn again what a fit of stacked origins raised, a :class:`ModelWarning` 's origins (0, 1, ...) named by
    their series, ``names[k]``."""
    for w in caught:
        m = w.message
        if isinstance(m, ModelWarning):
            series = dict.fromkeys(names[k] if isinstance(k, (int, np.integer)) else k for k in m.series)
            warnings.warn(ModelWarning(m.model, m.message, m.category, list(series)), stacklevel=2)
        else:
            warnings.warn_explicit(m, w.category, w.filename, w.lineno)


@dataclass
class TrainingWindow:
    """One window of a cross-validation frame, as a model that trains on it sees it: ``j`` windows before the last,
    the series ``ids`` (sorted, the order :class:`~seqlab.forecast.nbeats.NBeatsForecaster` puts them in), their
    training parts (``series`` as arrays, ``frame`` long), the ``test`` values after the cutoff, (N, h), and each
    training part's MASE ``scale``."""

    j: int
    ids: list
    series: list
    frame: pd.DataFrame
    test: np.ndarray
    scale: np.ndarray


def training_windows(cv: pd.DataFrame, df: pd.DataFrame, season_length: int | None = None) -> list[TrainingWindow]:
    """The windows of :meth:`~seqlab.forecast.Forecaster.cross_validation`'s frame ``cv``, cut from the history
    ``df`` (the training part with any hold-out after it), the last window first: a model of one's own trains on
    exactly the Forecaster's windows and is scored on the same test values and MASE scales.

    ``season_length`` defaults to the one the cross-validation frame carries (``cv.attrs``).
    """
    season = cv.attrs.get("season_length") if season_length is None else season_length
    if season is None:
        raise InvalidParameterError("give season_length: this cross-validation frame does not carry one")
    h = int(cv.groupby(["unique_id", "cutoff"], sort=False).size().max())
    keys = cv.drop_duplicates(["unique_id", "cutoff"])[["unique_id", "cutoff"]].copy()
    keys["j"] = window_index(keys)
    hist = {uid: g for uid, g in df.groupby("unique_id", sort=False)}
    out = []
    for j, kj in keys.groupby("j", sort=True):
        kj = kj.sort_values("unique_id", kind="stable")
        ids, series, frames, tests, scales = [], [], [], [], []
        for uid, cutoff in zip(kj.unique_id, kj.cutoff):
            g = hist[uid]
            part = g[g.ds <= cutoff]
            y = part.y.to_numpy(float)
            ids.append(uid)
            series.append(y)
            frames.append(part)
            tests.append(g[g.ds > cutoff].y.to_numpy(float)[:h])
            scales.append(mase_scale(y, season))
        out.append(TrainingWindow(int(j), ids, series, pd.concat(frames, ignore_index=True), np.array(tests),
                                  np.array(scales)))
    return out
