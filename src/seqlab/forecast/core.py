"""``Forecaster(models=[...], freq=...)``: classical and neural models side by side, statsforecast-style.

Every model follows one protocol (:class:`ForecastModel`): a ``name``, ``fit(df, h)`` on a
long frame and ``predict(df, h) -> {unique_id: array of h values}``. Two optional
attributes let the Forecaster run a model faster without asking what it is:

* ``local = True``: each series is fitted on its own history, so the training parts of
  several rolling origins can go to one call as if they were separate series;
* ``forecast_many(models, df, h, level=None, n_jobs=1, engine=None)`` (a static method):
  the models of one class that share it are fitted together in one call, which returns a
  long frame keyed by ``(unique_id, ds)`` (statsforecast's models use it: one
  ``StatsForecast`` call, or one cluster job, fits all of them), with native intervals
  ``Model-lo-80`` ... for ``level`` where ``native_intervals`` is true;
* ``accepts_engine = True``: ``fit(df, h, engine=...)`` takes the Forecaster's cluster and
  runs its independent jobs there (the N-BEATS ensemble's members).

Forecasts are attached by key, never by row order, so the order of the series never matters.
"""
from __future__ import annotations

import contextlib
import functools
import numbers
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError, InvalidTypeError, SeqlabError
from ..text.devices import resolve_device
from .classical import CLASSICAL, M4Comb, Naive2, StatsForecastModel, is_statsforecast_model
from .data import ForecastDataError, validate_long
from .engines import make_engine
from .intervals import (INTERVAL_KINDS, check_levels, conformal_band, conformal_scores, default_calibration,
                        interval_columns)
from .metrics import mase_scale
from .nbeats import NBeatsForecaster
from .neural import NeuralForecaster
from .panel import Panel

__all__ = ["Forecaster", "ForecastModel", "rolling_origin_splits", "check_calendar", "min_fit_length",
           "MODEL_NAMES"]

MODEL_NAMES = sorted(CLASSICAL) + ["Naive2", "M4 Comb", "GRU", "LSTM", "Transformer", "N-BEATS"]
_NEURAL = {"GRU": "gru", "LSTM": "lstm", "Transformer": "transformer"}


@runtime_checkable
class ForecastModel(Protocol):
    """What :class:`Forecaster` needs of a model (see the module docstring for the optional extras)."""

    name: str

    def fit(self, df: pd.DataFrame, h: int) -> "ForecastModel": ...

    def predict(self, df: pd.DataFrame, h: int) -> dict: ...


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



#: statsforecast refuses to fit these on fewer observations ("tiny datasets"); AutoETS's own rule is in _ets_min
_STATSFORECAST_MIN = {"Theta": 4, "OptimizedTheta": 4, "DynamicTheta": 4, "DynamicOptimizedTheta": 4,
                      "AutoTheta": 4, "AutoCES": 5}


def _ets_min(spec) -> int:
    """statsforecast's ETS fits n > npars + 4 points: alpha and l0, two per trend or season it must fit, one to damp."""
    model = str(getattr(spec, "model", "ZZZ")).upper()
    m = int(getattr(spec, "season_length", 1) or 1)
    damped = 1 if getattr(spec, "damped", None) is True else 0
    n = 1
    while True:
        season = model[2:3] in ("A", "M") and m > 1 and n > m  # shorter series get no season from ETS
        if n > 2 + 2 * (model[1:2] in ("A", "M")) + 2 * season + damped + 4:
            return n
        n += 1


def min_fit_length(model) -> int:
    """The fewest observations ``model`` can be fitted on: its ``min_train_length`` if it declares one, else what
    statsforecast needs for its models (AutoETS: 7, the Theta family: 4, SeasonalNaive: a season), else 1."""
    declared = getattr(model, "min_train_length", None)
    if isinstance(declared, numbers.Integral) and not isinstance(declared, bool):
        return max(1, int(declared))
    spec = getattr(model, "spec", None) if isinstance(model, StatsForecastModel) else None
    if spec is None:
        return 1
    kind = type(spec).__name__
    season = int(getattr(spec, "season_length", 1) or 1)
    if kind == "AutoETS":
        return _ets_min(spec)
    if kind == "SeasonalNaive":  # these return NaN, not an error, on shorter series
        return season
    if kind in ("WindowAverage", "SeasonalWindowAverage"):
        return int(getattr(spec, "window_size", 1)) * (season if kind.startswith("Seasonal") else 1)
    if kind == "RandomWalkWithDrift":
        return 2
    return _STATSFORECAST_MIN.get(kind, 1)


def _check_h(h) -> int:
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Integral) or h < 1:
        raise InvalidParameterError(f"h must be a whole number >= 1, got {h!r}")
    return int(h)


def _check_h_first(method: str, h, df) -> int:
    """``h``, checked; the arguments in the old order (a frame first) get a precise error, not a wrong run."""
    if isinstance(h, pd.DataFrame):
        raise InvalidTypeError(f"{method} takes h first and then df, in statsforecast's order: "
                               f"{method}(h, df), or {method}(h=12, df=df)")
    return _check_h(h)


def _check_optional_count(name: str, v):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1:
        raise InvalidParameterError(f"{name} must be a whole number >= 1, got {v!r}")
    return int(v)


class Forecaster:
    """Fit every model on each series' history and forecast ``h`` steps; classical models are local, neural global.

    ``models``: names from :data:`MODEL_NAMES`, ``statsforecast.models`` objects (``AutoETS(season_length=12,
    alias="ETS")``), or any object with the :class:`ForecastModel` protocol (a :class:`NeuralForecaster`). Two models
    may not share a name. ``engine``: None runs everything in this process; "dask", "ray" or "spark" (or an
    :class:`~seqlab.forecast.engines.Engine`) runs the statsforecast models through statsforecast's fugue backend on a
    cluster at ``address`` (HOST:PORT), or on a local one started on first use when no address is given; the numbers
    are those of the single-process run. The members of an N-BEATS ensemble (independent seeded jobs) run there
    too, with the same numbers as in local worker processes; the other neural models run here. :meth:`close` (or a
    ``with`` block) releases the cluster. ``device`` ("auto", the default: CUDA when present, then MPS, else the CPU;
    "cpu", "cuda", "mps") is where the neural models named by string train; a model object keeps its own.
    """

    def __init__(self, models, freq=1, season_length: int = 1, n_jobs: int = 1, *, engine=None, address=None,
                 device: str = "auto"):
        if isinstance(models, (str, bytes)) or not hasattr(models, "__iter__"):
            raise InvalidParameterError(f"models must be a list of models, got {models!r}")
        models = list(models)
        if not models:
            raise InvalidParameterError("give at least one model")
        if isinstance(season_length, (bool, np.bool_)) or not isinstance(season_length, numbers.Integral) \
                or season_length < 1:
            raise InvalidParameterError(f"season_length must be a whole number >= 1 (1: no season), got "
                                        f"{season_length!r}")
        if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral) or \
                not (n_jobs >= 1 or n_jobs == -1):
            raise InvalidParameterError(f"n_jobs must be a whole number >= 1 (or -1: every core), got {n_jobs!r}")
        season_length, n_jobs = int(season_length), int(n_jobs)
        resolve_device(device)  # an unknown or unavailable device is refused before any model is made
        self.freq, self.season_length, self.n_jobs, self.device = freq, season_length, n_jobs, device
        self.models = [self._as_model(m) for m in models]
        seen = set()
        for m in self.models:
            if m.name in ("unique_id", "ds", "cutoff", "y"):
                raise InvalidParameterError(f"a model may not be named {m.name!r}: that is a column of the results")
            if m.name in seen:
                raise InvalidParameterError(f"two models are named {m.name!r}; give each a distinct name (an alias "
                                            "for a statsforecast model, name= for a neural one)")
            seen.add(m.name)
        self.engine = make_engine(engine, address)
        self._progress, self._skipped = None, {}

    def _as_model(self, m):
        if isinstance(m, str):
            if m not in MODEL_NAMES:
                raise InvalidParameterError(f"unknown model {m!r}; choose from {', '.join(MODEL_NAMES)}")
            if m in CLASSICAL:
                return StatsForecastModel(m, self.season_length)
            if m == "Naive2":
                return Naive2(self.season_length)
            if m == "M4 Comb":
                return M4Comb(self.season_length)
            if m == "N-BEATS":
                return NBeatsForecaster.default(self.season_length, device=self.device)
            return NeuralForecaster(_NEURAL[m], season_length=self.season_length, device=self.device)
        if is_statsforecast_model(m):
            return StatsForecastModel(m)
        name = getattr(m, "name", None)
        if not isinstance(name, str) or not name or not callable(getattr(m, "fit", None)) \
                or not callable(getattr(m, "predict", None)):
            raise InvalidParameterError(f"{m!r} is not a model: give a name from {', '.join(MODEL_NAMES)}, a "
                                        "statsforecast model, or an object with name, fit(df, h) and predict(df, h)")
        return m

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.models]

    def close(self) -> None:
        """Release the cluster (a local one is shut down); the Forecaster starts it again if used after."""
        if self.engine is not None:
            self.engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------------- running the models
    def _report(self, **info) -> None:
        if self._progress is not None:
            self._progress(**info)

    def _run(self, models, panel: Panel, series, offsets, h: int, native_levels, store: dict,
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
        if local:
            idx = panel.rows(series, cuts)
            starts = np.repeat(np.cumsum(cuts) - cuts, cuts)
            stacked = pd.DataFrame({"unique_id": np.repeat(np.arange(K), cuts), "ds": np.arange(len(idx)) - starts + 1,
                                    "y": panel.y[idx]})
            groups: dict = {}
            for m in local:
                fn = getattr(type(m), "forecast_many", None)
                groups.setdefault(fn if callable(fn) else id(m), []).append(m)
            for fn, members in groups.items():
                self._report(event="fit", phase=phase, models=[m.name for m in members], origins=K, window=None,
                             windows=len(np.unique(offsets)))
                if callable(fn):
                    lv = native_levels if native_levels and any(getattr(m, "native_intervals", False)
                                                                for m in members) else None
                    fc = fn(members, stacked, h, level=lv, n_jobs=self.n_jobs, engine=self.engine)
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
        for m in (m for m in models if not getattr(m, "local", False)):
            for w, off in enumerate(windows):
                sel = np.flatnonzero(offsets == off)
                frame = panel.frame.iloc[panel.rows(series[sel], cuts[sel])].reset_index(drop=True)
                where = dict(phase=phase, window=w + 1, windows=len(windows))
                self._report(event="fit", models=[m.name], origins=len(sel), **where)
                kw = {"engine": self.engine} if self.engine is not None and getattr(m, "accepts_engine", False) else {}
                if self._progress is not None and getattr(m, "accepts_progress", False):
                    kw["progress"] = functools.partial(self._report, event="member", model=m.name, **where)
                try:
                    preds = m.fit(frame, h, **kw).predict(frame, h)
                except SeqlabError as e:  # a global model may not fit on the short series of an early origin
                    if phase != "calibration":
                        raise
                    count, _ = self._skipped.get(m.name, (0, e))
                    self._skipped[m.name] = (count + len(sel), e)
                    continue
                uids = panel.ids[series[sel]]
                missing = [u for u in uids if u not in preds]
                if missing:
                    raise InvalidParameterError(f"model {m.name!r} returned no forecast for series {missing[0]!r}")
                put(m.name, keys_global[series[sel], offsets[sel]], np.vstack([check(m, u, preds[u]) for u in uids]))

    def _forecast_origins(self, panel: Panel, series, offsets, h: int, levels, intervals: str,
                          calibration_windows, calibration_step, min_cut: int):
        """Forecasts (and intervals for ``levels``) at the target origins: ``({column: (K, h)}, kinds, notes)``."""
        series, offsets = np.asarray(series, np.int64), np.asarray(offsets, np.int64)
        kinds = {}
        if levels:
            for m in self.models:
                native = intervals == "native" and getattr(m, "native_intervals", False)
                kinds[m.name] = "native" if native else "conformal"
        conformal = [m for m in self.models if kinds.get(m.name) == "conformal"]
        native_levels = levels if any(k == "native" for k in kinds.values()) else None
        # calibration origins: each target offset o calibrates on the windows at o + h + j * step, j < windows
        cal_s, cal_o, plan, late_notes = [], [], {}, []
        if conformal:
            windows, step = default_calibration(levels, len(panel.ids), h)
            windows, step = calibration_windows or windows, calibration_step or step
            # calibration origin j of the last forecast origin trains on the longest series less offset + h + j step
            longest = int(panel.lengths.max())
            room = longest - int(offsets.min()) - h - min_cut
            fit = 0 if room < 0 else room // step + 1
            if windows > fit:
                where = (f"the longest series ({longest} observations) holds {fit} before its last forecast origin, "
                         f"each with at least {min_cut} observations to train on")
                if calibration_windows is not None or calibration_step is not None:
                    raise InvalidParameterError(
                        f"{windows} calibration window(s) {step} period(s) apart do not fit: {where}; ask for at most "
                        f"{fit}" + (" or a smaller calibration step" if fit < 2 else ""))
                late_notes.append(f"only {fit} of the {windows} calibration windows fit: {where}")
            kinds["_calibration"] = {"windows": int(windows), "step": int(step)}
            for o in np.unique(offsets):
                offs = o + h + step * np.arange(windows)
                plan[int(o)] = offs
                for oc in offs:
                    ok = np.flatnonzero(panel.lengths - oc >= min_cut)
                    cal_s.append(ok)
                    cal_o.append(np.full(len(ok), oc))
        cal_s = np.concatenate(cal_s) if cal_s else np.zeros(0, np.int64)
        cal_o = np.concatenate(cal_o) if cal_o else np.zeros(0, np.int64)
        all_s, all_o = np.r_[series, cal_s].astype(np.int64), np.r_[offsets, cal_o].astype(np.int64)
        pairs = np.unique(np.c_[all_s, all_o], axis=0)
        top = max([int(pairs[:, 1].max())] + [int(v.max()) for v in plan.values()])
        keys = np.full((len(panel.ids), top + 1), -1, np.int64)
        keys[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
        store = {"_size": len(pairs), "_keys": keys}
        target = np.zeros(len(pairs), bool)
        target[keys[series, offsets]] = True
        self._check_fit_lengths(panel, series, offsets)
        self._run(self.models, panel, series, offsets, h, native_levels, store)
        notes = self._run_calibration(conformal, panel, pairs[~target], h, store)
        out = {c: store[c][keys[series, offsets]] for c in store if not c.startswith("_")}
        if conformal:
            notes += self._conformal(panel, pairs, keys, store, series, offsets, plan, conformal, levels, h, out)
        return out, kinds, notes + late_notes

    def _check_fit_lengths(self, panel: Panel, series, offsets) -> None:
        """Refuse, before any fit, a forecast origin with a training part too short for one of the models."""
        cuts = panel.lengths[series] - offsets
        for m in self.models:
            need = min_fit_length(m)
            short = np.flatnonzero(cuts < need)
            if len(short):
                k = short[np.argmin(cuts[short])]
                raise ForecastDataError(f"series {panel.ids[series[k]]!r} has {int(cuts[k])} observation(s) before "
                                        f"a forecast origin; {m.name} needs at least {need} to fit: leave it out, "
                                        "use fewer windows, or drop the short series")

    def _run_calibration(self, models, panel: Panel, pairs, h: int, store: dict) -> list[str]:
        """Fit ``models`` at the calibration origins ``pairs``, each at those with a training part it can be fitted
        on; the others stay NaN and so add no score. Returns a note per model that lost origins."""
        cuts = panel.lengths[pairs[:, 0]] - pairs[:, 1]
        self._skipped = {}
        groups: dict = {}
        for m in models:
            groups.setdefault(int(min_fit_length(m)), []).append(m)
        low = int(cuts.min()) if len(cuts) else 0
        fits = [m for m in models if min_fit_length(m) <= low]  # at every origin: one call, as always
        self._run(fits, panel, pairs[:, 0], pairs[:, 1], h, None, store, "calibration")
        notes = []
        for need, ms in sorted(groups.items()):
            if need <= low:
                continue
            keep = cuts >= need
            self._run(ms, panel, pairs[keep, 0], pairs[keep, 1], h, None, store, "calibration")
            for m in ms:
                notes.append(f"{int((~keep).sum())} calibration origin(s) left out of {m.name}'s conformal intervals: "
                             f"their training part has fewer than the {need} observations {m.name} needs to fit")
        for name, (count, e) in self._skipped.items():
            notes.append(f"{count} calibration origin(s) left out of {name}'s conformal intervals: it could not be "
                         f"fitted on their training parts ({' '.join(str(e).split())[:160]})")
        return notes

    def _conformal(self, panel, pairs, keys, store, series, offsets, plan, models, levels, h, out) -> list[str]:
        """Split-conformal bounds at the target origins from the scaled absolute errors of the calibration origins."""
        cuts_all = panel.lengths[pairs[:, 0]] - pairs[:, 1]
        scale = np.array([mase_scale(panel.y[s : s + c], self.season_length)
                          for s, c in zip(panel.starts[pairs[:, 0]], cuts_all)])
        scale = np.where(scale > 0, scale, np.nan)
        # actual values after each origin where they are known (calibration origins always have them)
        actual = np.full((len(pairs), h), np.nan)
        for k, (s, c) in enumerate(zip(panel.starts[pairs[:, 0]], cuts_all)):
            end = panel.starts[pairs[k, 0]] + panel.lengths[pairs[k, 0]]
            v = panel.y[s + c : min(s + c + h, end)]
            actual[k, : len(v)] = v
        t_scale = scale[keys[series, offsets]]
        unbounded = 0
        for m in models:
            scores = conformal_scores(actual, store[m.name], scale)
            for lv in levels:
                lo = np.full((len(series), h), np.nan)
                hi = np.full((len(series), h), np.nan)
                for o, offs in plan.items():
                    rows = np.flatnonzero(offsets == o)
                    cal = keys[:, offs].ravel()
                    cal = cal[cal >= 0]
                    lo[rows], hi[rows], q = conformal_band(out[m.name][rows], t_scale[rows], scores[cal], lv)
                    unbounded += int(np.isinf(q).sum()) * len(rows)
                out[f"{m.name}-lo-{lv}"], out[f"{m.name}-hi-{lv}"] = lo, hi
        notes = []
        if unbounded:
            notes.append(f"{unbounded} conformal interval value(s) are unbounded: a {max(levels)}% interval needs at "
                         "least l/(1-l) calibration errors per step (19 at 95%); give more series, windows or "
                         "calibration_windows")
        if np.isnan(t_scale).any():
            notes.append("series whose training part never changes between seasons have no conformal interval "
                         "(their MASE scale, which sizes the interval, is 0)")
        return notes

    @staticmethod
    def _columns(names, levels):
        cols = []
        for n in names:
            cols += [n, *interval_columns(n, levels)] if levels else [n]
        return cols

    def _check_interval_args(self, level, intervals, calibration_windows, calibration_step):
        levels = check_levels(level)
        if intervals not in INTERVAL_KINDS:
            raise InvalidParameterError(f"intervals must be one of {', '.join(INTERVAL_KINDS)}, got {intervals!r}")
        return (levels, _check_optional_count("calibration_windows", calibration_windows),
                _check_optional_count("calibration_step", calibration_step))

    def forecast(self, h: int, df: pd.DataFrame, *, level=None, intervals: str = "conformal",
                 calibration_windows: int | None = None, calibration_step: int | None = None,
                 progress=None) -> pd.DataFrame:
        """Long frame ``unique_id, ds`` plus one column per model, in the order the series first appear.

        With ``level=[80, 95]`` each model also gets ``Model-lo-95, Model-lo-80, Model-hi-80, Model-hi-95``
        (statsforecast's columns). ``intervals="conformal"`` (the default) gives every model, classical or neural,
        the same split-conformal intervals (:mod:`seqlab.forecast.intervals`): the model is refitted at
        ``calibration_windows`` earlier origins, ``calibration_step`` periods apart, the last one a horizon before
        the end; its absolute errors there, divided by each training part's MASE scale and pooled over series, give
        per horizon step the finite-sample conformal quantile, which times the series' own scale is the half-width.
        By default there are enough windows for the widest level (at least 3): a horizon apart when three suffice
        (7 or more series at 95%), else one period apart (one series at 95% needs 19). ``intervals="native"`` gives
        the statsforecast models (Naive, SeasonalNaive, RandomWalkWithDrift, AutoETS, Theta, AutoTheta, AutoARIMA)
        the intervals of their own statistical model, and the models without any (Naive2, the neural ones) the
        conformal ones. ``result.attrs["intervals"]`` says which kind each model got.

        ``progress(event=..., **info)``, when given, is told of every fit as it starts: ``event="fit"`` with
        ``phase`` ("forecast" or "calibration"), ``models``, ``origins``, ``window`` and ``windows`` (``window``
        is None for local models, which fit every origin in one call), and ``event="member"`` with ``model``,
        ``member``, ``members``, ``step`` and ``steps`` as an N-BEATS ensemble trains. It changes no number.
        """
        with self._following(progress):
            h = _check_h_first("forecast", h, df)
            levels, cw, cs = self._check_interval_args(level, intervals, calibration_windows, calibration_step)
            if not isinstance(df, pd.DataFrame):
                raise InvalidTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
            df = validate_long(df)
            check_calendar(df, self.freq)
            panel = Panel.from_frame(df)
            n = len(panel.ids)
            out, kinds, notes = self._forecast_origins(panel, np.arange(n), np.zeros(n, np.int64), h, levels,
                                                       intervals, cw, cs, max(2, self.season_length + 1))
            last = panel.frame["ds"].iloc[panel.starts + panel.lengths - 1]
            frame = pd.concat([pd.DataFrame({"unique_id": uid, "ds": _future_ds(ds, h, self.freq)})
                               for uid, ds in zip(panel.ids, last)], ignore_index=True)
            cols = self._columns(self.names, levels)
            frame = pd.concat([frame, pd.DataFrame({c: out[c].reshape(-1) for c in cols})], axis=1)
            return self._annotate(frame, kinds, notes)

    @contextlib.contextmanager
    def _following(self, progress):
        if progress is not None and not callable(progress):
            raise InvalidTypeError(f"progress must be a function or None, got {type(progress).__name__}")
        self._progress = progress
        try:
            yield
        finally:
            self._progress = None

    @staticmethod
    def _annotate(frame, kinds, notes):
        if kinds:
            cal = kinds.pop("_calibration", None)
            frame.attrs["intervals"] = kinds
            if cal:
                frame.attrs["calibration"] = cal
        frame.attrs["notes"] = notes
        return frame

    def cross_validation(self, h: int, df: pd.DataFrame, n_windows: int = 1, step_size: int = 1,
                         test_df: pd.DataFrame | None = None, min_train_length: int | None = None, *, level=None,
                         intervals: str = "conformal", calibration_windows: int | None = None,
                         calibration_step: int | None = None, progress=None) -> pd.DataFrame:
        """Rolling-origin evaluation: ``unique_id, ds, cutoff, y`` plus one forecast column per model.

        With ``test_df`` (an official hold-out) it is appended to ``df`` and is the last window.
        Windows are aligned at each series' end. By default every series must be long
        enough for all ``n_windows``. With ``min_train_length`` every series takes part in
        the last window (an official hold-out keeps all its series) and in each earlier
        window whose training part has at least ``min_train_length`` observations.

        ``level``, ``intervals``, ``calibration_windows`` and ``calibration_step`` add prediction intervals as in
        :meth:`forecast`; each window's conformal intervals calibrate on windows that end at or before its own
        cutoff, so no interval sees its own test values.

        ``progress``: as in :meth:`forecast`.
        """
        with self._following(progress):
            h = _check_h_first("cross_validation", h, df)
            n_windows = _check_optional_count("n_windows", n_windows)
            if n_windows is None:
                raise InvalidParameterError("n_windows must be a whole number >= 1, got None")
            step_size = _check_optional_count("step_size", step_size)
            if step_size is None:
                raise InvalidParameterError("step_size must be a whole number >= 1, got None")
            min_train_length = _check_optional_count("min_train_length", min_train_length)
            levels, cw, cs = self._check_interval_args(level, intervals, calibration_windows, calibration_step)
            for name, frame in (("df", df), ("test_df", test_df)):
                if frame is not None and not isinstance(frame, pd.DataFrame):
                    raise InvalidTypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
            df = validate_long(df if test_df is None else pd.concat([df, test_df]).sort_values(["unique_id", "ds"],
                                                                                             kind="stable"))
            panel = Panel.from_frame(df)
            if min_train_length is None:
                cuts = [rolling_origin_splits(int(n), h, n_windows, step_size) for n in panel.lengths]
            else:
                if min_train_length < 2:
                    raise InvalidParameterError(f"min_train_length must be >= 2, got {min_train_length}")
                step = step_size
                cuts = []
                for n in panel.lengths:
                    earlier = max(0, min(n_windows - 1, (int(n) - h - min_train_length) // step))
                    cuts.append([None] * (n_windows - 1 - earlier)
                                + rolling_origin_splits(int(n), h, earlier + 1, step))
            check_calendar(df, self.freq)
            series, offsets = [], []
            for k in range(n_windows):
                for i, c in enumerate(cuts):
                    if c[k] is not None:
                        series.append(i)
                        offsets.append(int(panel.lengths[i]) - c[k])
            series, offsets = np.array(series, np.int64), np.array(offsets, np.int64)
            out, kinds, notes = self._forecast_origins(panel, series, offsets, h, levels, intervals, cw, cs,
                                                       max(2, self.season_length + 1, min_train_length or 0))
            first = panel.starts[series] + panel.lengths[series] - offsets  # row of each window's first test point
            rows = (first[:, None] + np.arange(h)).reshape(-1)
            ds = panel.frame["ds"]
            cv = pd.DataFrame({"unique_id": panel.frame["unique_id"].to_numpy()[rows],
                               "ds": ds.iloc[rows].to_numpy(),
                               "cutoff": ds.iloc[np.repeat(first - 1, h)].to_numpy(),
                               "y": panel.y[rows]})
            cols = self._columns(self.names, levels)
            cv = pd.concat([cv, pd.DataFrame({c: out[c].reshape(-1) for c in cols})], axis=1)
            cv = self._annotate(cv, kinds, notes)
            cv.attrs["season_length"] = self.season_length
            return cv
