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

The :class:`Forecaster` is the front of four parts, each in its own module: where the windows start
(:mod:`~seqlab.forecast.origins`: :func:`~seqlab.forecast.origins.window_origins`), fitting the models
there (:class:`~seqlab.forecast.origins.OriginRunner`), the conformal calibration
(:mod:`~seqlab.forecast.calibration`), and the calendar of the dates after each series
(:mod:`~seqlab.forecast.dates`); :func:`~seqlab.forecast.lengths.min_fit_length` is the one rule for how
long a training part must be.
"""
from __future__ import annotations

import contextlib
import numbers
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError, InvalidTypeError
from ..devices import resolve_device
from .checks import check_h_first, check_optional_count
from .classical import CLASSICAL, M4Comb, Naive2, StatsForecastModel, is_statsforecast_model
from .combination import COMBINATIONS, Combination
from .data import validate_long
from .bounds import check_horizon
from .dates import check_calendar, check_future, future_dates
from .engines import make_engine
from .exog import check_history_exog, exog_names, future_array
from .fitted import FitState, predict_from
from .intervals import INTERVAL_KINDS, check_levels, interval_columns
from .nbeats import NBeatsForecaster
from .neural import NeuralForecaster
from .origins import window_origins
from .panel import Panel
from .running import forecast_origins

__all__ = ["Forecaster", "ForecastModel", "MODEL_NAMES", "NEURAL_ARCHITECTURES", "NEURAL_MODELS"]

#: the recurrent and attention forecasters by name, and the architecture each names
NEURAL_ARCHITECTURES = {"GRU": "gru", "LSTM": "lstm", "Transformer": "transformer"}
#: every model that trains a network (and so takes a device): the neural forecasters and the combinations of one
NEURAL_MODELS = (*NEURAL_ARCHITECTURES, "N-BEATS",
                 *(name for name, parts in COMBINATIONS.items() if "N-BEATS" in parts))
#: the models a Forecaster takes by name: statsforecast's classical ones, M4's benchmarks, the neural ones, combinations
MODEL_NAMES = sorted(CLASSICAL) + ["Naive2", "M4 Comb", *NEURAL_ARCHITECTURES, "N-BEATS", *COMBINATIONS]


@runtime_checkable
class ForecastModel(Protocol):
    """What :class:`Forecaster` needs of a model (see the module docstring for the optional extras).

    Example:
        >>> import numpy as np
        >>> class Mean:  # the mean of each series' history, h steps ahead
        ...     name = "Mean"
        ...     def fit(self, df, h):
        ...         return self
        ...     def predict(self, df, h):
        ...         return {u: np.full(h, g["y"].mean()) for u, g in df.groupby("unique_id")}
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 7), "y": [1.0, 2, 3, 4, 5, 6]})
        >>> isinstance(Mean(), ForecastModel), Forecaster([Mean()]).forecast(h=2, df=df)["Mean"].tolist()
        (True, [3.5, 3.5])
    """

    name: str

    def fit(self, df: pd.DataFrame, h: int) -> "ForecastModel": ...

    def predict(self, df: pd.DataFrame, h: int) -> dict: ...


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

    Example:
        >>> df = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2020-01-01", periods=12, freq="MS"),
        ...                    "y": [float(t) for t in range(1, 13)]})
        >>> Forecaster(["Naive", "SeasonalNaive"], freq="MS", season_length=4).forecast(h=2, df=df)
          unique_id         ds  Naive  SeasonalNaive
        0         a 2021-01-01   12.0            9.0
        1         a 2021-02-01   12.0           10.0
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
        self._built: dict = {}  # "N-BEATS" and "N-BEATS + Combination" share one ensemble, trained once
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
        self._progress = None

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
                if m not in self._built:
                    self._built[m] = NBeatsForecaster.default(self.season_length, device=self.device)
                return self._built[m]
            if m in COMBINATIONS:
                return Combination([self._as_model(part) for part in COMBINATIONS[m]], name=m)
            return NeuralForecaster(NEURAL_ARCHITECTURES[m], season_length=self.season_length, device=self.device)
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
        return (levels, check_optional_count("calibration_windows", calibration_windows),
                check_optional_count("calibration_step", calibration_step))

    def forecast(self, h: int, df: pd.DataFrame, X_df: pd.DataFrame | None = None, *, level=None,
                 intervals: str = "conformal", calibration_windows: int | None = None,
                 calibration_step: int | None = None, progress=None, bounded: bool = False) -> pd.DataFrame:
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
        conformal ones. ``result.attrs["intervals"]`` says which kind each model got. With too few calibration
        errors for a level the conformal band is unbounded (``-inf, inf``, with a note); ``bounded=True`` refuses
        such a request instead, with :class:`~seqlab.forecast.checks.UnboundedIntervalError`, before any fit.

        ``h`` is at most the longest series' length (further ahead the data hold no basis for a forecast), and its
        dates must end by ``pandas.Timestamp.max``: beyond either, :class:`~seqlab.forecast.bounds.TooLargeError`
        or :class:`~seqlab.forecast.dates.FutureDateError` before any fit (so too, here and in
        :meth:`cross_validation`, for forecasts that would take more than half of the machine's memory).

        ``X_df`` (``unique_id, ds`` and one column per regressor, statsforecast's name): the values over the
        horizon of regressors that ``df`` holds as columns of the same names; the models that read regressors use
        them (:mod:`~seqlab.forecast.exog`: AutoARIMA, GRU, LSTM, Transformer), the others forecast from ``y``.

        ``progress(event=..., **info)``, when given, is told of every fit as it starts: ``event="fit"`` with
        ``phase`` ("forecast" or "calibration"), ``models``, ``origins``, ``window`` and ``windows`` (``window``
        is None for local models, which fit every origin in one call), and ``event="member"`` with ``model``,
        ``member``, ``members``, ``step`` and ``steps`` as an N-BEATS ensemble trains. It changes no number.
        """
        return self._forecast(h, df, level, intervals, calibration_windows, calibration_step, progress, bounded,
                              X_df=X_df)

    def _forecast(self, h, df, level, intervals, calibration_windows, calibration_step, progress, bounded,
                  keep: dict | None = None, X_df=None) -> pd.DataFrame:
        with self._following(progress):
            h = check_h_first("forecast", h, df)
            levels, cw, cs = self._check_interval_args(level, intervals, calibration_windows, calibration_step)
            if not isinstance(df, pd.DataFrame):
                raise InvalidTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
            exog = exog_names(X_df)
            df = check_history_exog(validate_long(df), exog)
            check_calendar(df, self.freq)
            panel = Panel.from_frame(df, exog=exog)
            n = len(panel.ids)
            last = panel.frame["ds"].iloc[panel.starts + panel.lengths - 1]
            check_horizon(h, panel.lengths)  # further than all the history, or past the last date pandas holds:
            check_future(last, panel.ids, h, self.freq)  # refused before any fit
            future = future_array(X_df, panel.ids, last, h, self.freq, exog) if exog else None
            out, kinds, notes = forecast_origins(self, panel, np.arange(n), np.zeros(n, np.int64), h, levels,
                                                 intervals, cw, cs, max(2, self.season_length + 1), bounded,
                                                 keep=keep, exog=exog, future=future)
            if keep is not None:
                keep.update(history=df, exog=exog, future=future)
            frame = pd.concat([pd.DataFrame({"unique_id": uid, "ds": future_dates(ds, h, self.freq)})
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

    def fit(self, h: int, df: pd.DataFrame, X_df: pd.DataFrame | None = None, *, level=None,
            intervals: str = "conformal",
            calibration_windows: int | None = None, calibration_step: int | None = None, progress=None,
            bounded: bool = False) -> "Forecaster":
        """Fit as :meth:`forecast` does and keep the fit (:mod:`~seqlab.forecast.fitted`): :meth:`predict` then gives
        :meth:`forecast`'s frame bit for bit, and :meth:`save` writes it to a folder.

        Examples:
            >>> from seqlab.forecast import air_passengers
            >>> df = air_passengers()
            >>> fc = Forecaster(["Naive", "SeasonalNaive"], freq="ME", season_length=12).fit(3, df, level=[80])
            >>> fc.predict().equals(Forecaster(["Naive", "SeasonalNaive"], freq="ME", season_length=12).forecast(
            ...     3, df, level=[80]))
            True
        """
        keep: dict = {}
        frame = self._forecast(h, df, level, intervals, calibration_windows, calibration_step, progress, bounded,
                               keep, X_df)
        self.fitted_ = FitState(int(h), check_levels(level), intervals, dict(frame.attrs.get("intervals", {})),
                                keep["history"], {(n, lv): q for (n, lv, _), q in keep.get("quantiles", {}).items()},
                                keep["neural"], frame.attrs.get("calibration"), keep["exog"], keep["future"])
        return self

    def predict(self, df: pd.DataFrame | None = None, X_df: pd.DataFrame | None = None) -> pd.DataFrame:
        """The forecasts of the kept fit (:meth:`fit`, :meth:`load`) for the history ``df`` (default: the one fitted
        on), with no neural training: the stored weights read each series' last window, the classical models are
        fitted again (deterministic: the same history gives the same forecasts bit for bit), conformal bands are
        the calibrated quantiles times each series' own scale (:mod:`~seqlab.forecast.fitted`). With regressors,
        ``X_df`` gives their values over the horizon (default, for the history fitted on: those given to fit)."""
        if getattr(self, "fitted_", None) is None:
            raise InvalidParameterError("nothing is fitted: call fit(h, df) first, or Forecaster.load(folder)")
        if df is not None and not isinstance(df, pd.DataFrame):
            raise InvalidTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        return predict_from(self, self.fitted_, df, X_df)

    def save(self, path, command: str = "seqlab.forecast.Forecaster.save") -> list:
        """Write the kept fit into the folder ``path`` (:mod:`~seqlab.forecast.persist`: JSON and safetensors, one
        complete set with a manifest, no pickle); ``command`` is what the manifest records. Returns the files."""
        from .persist import save

        if getattr(self, "fitted_", None) is None:
            raise InvalidParameterError("nothing is fitted to save: call fit(h, df) first")
        return save(self, self.fitted_, path, command)

    @classmethod
    def load(cls, path, device: str | None = None) -> "Forecaster":
        """The fitted forecaster :meth:`save` wrote into ``path``, checked like a checkpoint; nothing is trained.
        ``device``: where the neural models forecast (default: the one they were fitted for).

        Examples:
            >>> import tempfile
            >>> from seqlab.forecast import air_passengers
            >>> fc = Forecaster(["Naive", "AutoETS"], freq="ME", season_length=12).fit(2, air_passengers())
            >>> folder = tempfile.mkdtemp()
            >>> [p.name for p in fc.save(folder)]
            ['forecaster.json', 'series.safetensors']
            >>> Forecaster.load(folder).predict().equals(fc.predict())
            True
        """
        from .persist import load

        return load(cls, path, device)

    def cross_validation(self, h: int, df: pd.DataFrame, n_windows: int = 1, step_size: int = 1,
                         test_df: pd.DataFrame | None = None, min_train_length: int | None = None, *, level=None,
                         intervals: str = "conformal", calibration_windows: int | None = None,
                         calibration_step: int | None = None, progress=None, bounded: bool = False,
                         exog=()) -> pd.DataFrame:
        """Rolling-origin evaluation: ``unique_id, ds, cutoff, y`` plus one forecast column per model.

        With ``test_df`` (an official hold-out) it is appended to ``df`` and is the last window.
        Windows are aligned at each series' end. By default every series must be long
        enough for all ``n_windows``. With ``min_train_length`` every series takes part in
        the last window (an official hold-out keeps all its series) and in each earlier
        window whose training part has at least ``min_train_length`` observations.

        ``level``, ``intervals``, ``calibration_windows`` and ``calibration_step`` add prediction intervals as in
        :meth:`forecast`; each window's conformal intervals calibrate on windows that end at or before its own
        cutoff, so no interval sees its own test values.

        ``progress`` and ``bounded``: as in :meth:`forecast`. ``exog``: columns of ``df`` to read as regressors
        (their values after each cutoff are in ``df``: known in advance, as a forecast's ``X_df`` is).
        """
        with self._following(progress):
            h = check_h_first("cross_validation", h, df)
            n_windows = check_optional_count("n_windows", n_windows)
            if n_windows is None:
                raise InvalidParameterError("n_windows must be a whole number >= 1, got None")
            step_size = check_optional_count("step_size", step_size)
            if step_size is None:
                raise InvalidParameterError("step_size must be a whole number >= 1, got None")
            min_train_length = check_optional_count("min_train_length", min_train_length)
            levels, cw, cs = self._check_interval_args(level, intervals, calibration_windows, calibration_step)
            for name, frame in (("df", df), ("test_df", test_df)):
                if frame is not None and not isinstance(frame, pd.DataFrame):
                    raise InvalidTypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
            df = validate_long(df if test_df is None else pd.concat([df, test_df]).sort_values(["unique_id", "ds"],
                                                                                             kind="stable"))
            exog = list(exog)
            df = check_history_exog(df, exog)
            panel = Panel.from_frame(df, exog=exog)
            series, offsets = window_origins(panel, h, n_windows, step_size, min_train_length)
            check_calendar(df, self.freq)
            out, kinds, notes = forecast_origins(self, panel, series, offsets, h, levels, intervals, cw, cs,
                                                 max(2, self.season_length + 1, min_train_length or 0),
                                                 bounded, windows=True, exog=exog)
            reached = len(np.unique(offsets))
            if reached < n_windows:
                notes = [*notes, f"only the last {reached} of the {n_windows} windows have a series with "
                                 f"{min_train_length} observations to train on; the earlier ones are empty"]
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
