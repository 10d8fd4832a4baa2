"""``seqlab forecast evaluate``: rolling-origin scores of classical and neural forecasters on a user's CSV."""
from __future__ import annotations

import argparse
import contextlib
import sys
import time

from ..devices import DEVICES
from ._forecast_report import Progress, work_notes
from ._common import UsageError, check_output_dir, float_in, int_at_least, positive_int

__all__ = ["add_commands"]


def _parse_models(text: str) -> list[str]:
    from ..forecast.core import MODEL_NAMES

    models = [m.strip() for m in text.split(",") if m.strip()]
    if not models:
        raise UsageError("--models lists no model")
    unknown = [m for m in models if m not in MODEL_NAMES]
    if unknown:
        raise UsageError(f"unknown model {unknown[0]!r}; choose from {', '.join(MODEL_NAMES)}")
    twice = [m for i, m in enumerate(models) if m in models[:i]]
    if twice:
        raise UsageError(f"--models lists {twice[0]!r} twice")
    return models


def _parse_levels(text: str) -> list:
    """``--level 80,95``: numbers strictly between 0 and 100, each once."""
    from ..errors import InvalidParameterError
    from ..forecast.intervals import check_levels

    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise UsageError(f"--level expects comma-separated percentages such as 80,95, got {text!r}")
    values = []
    for p in parts:
        try:
            x = float(p)
            values.append(int(x) if x.is_integer() else x)
        except ValueError:
            raise UsageError(f"--level expects comma-separated percentages such as 80,95, got {p!r}") from None
    try:
        return check_levels(values)
    except InvalidParameterError as e:
        raise UsageError(f"--level: {e}") from None


#: the most training steps --max-steps accepts for each N-BEATS member
MAX_STEPS = 1_000_000
#: the models that train a network, and so take --device
NEURAL_MODELS = ("GRU", "LSTM", "Transformer", "N-BEATS", "N-BEATS + Combination")


def _device(args, names: list[str]) -> str:
    """``--device`` (default auto), checked before any data is read: an unavailable device is one line, exit 2."""
    from ..devices import resolve_device

    if args.device is None:
        return "auto"
    if not any(n in NEURAL_MODELS for n in names):
        raise UsageError(f"--device is an option of the neural models; add one of {', '.join(NEURAL_MODELS)} to "
                         "--models")
    resolve_device(args.device)
    return args.device


def _models(args, names: list[str], device: str = "auto") -> list:
    from ..forecast import Combination, StatsForecastModel
    from ..forecast.combination import COMBINATIONS
    from ..forecast.nbeats import NBeatsForecaster

    nbeats_options = {"max_steps": args.max_steps, "members": args.members}
    given = [f"--{k.replace('_', '-')}" for k, v in nbeats_options.items() if v is not None]
    if given and not any("N-BEATS" in n for n in names):
        raise UsageError(f"{given[0]} is an N-BEATS option; add N-BEATS (or N-BEATS + Combination) to --models")

    def nbeats():
        return NBeatsForecaster.default(args.season, device=device, **nbeats_options)

    def build(n):
        if n == "N-BEATS":
            return nbeats()
        if n == "N-BEATS + Combination":  # its N-BEATS takes the N-BEATS options
            classical = Combination([StatsForecastModel(p, args.season) for p in COMBINATIONS["Combination"]],
                                    name="Combination")
            return Combination([nbeats(), classical], name=n)
        return n

    return [build(n) for n in names]


def _engine(args):
    from ..forecast.engines import Engine

    if args.connect_timeout is not None and args.address is None:
        raise UsageError("--connect-timeout needs --address (and --engine)")
    if args.engine is None:
        return None
    return Engine(args.engine, args.address, timeout=10.0 if args.connect_timeout is None else args.connect_timeout)


def _setup(args):
    """``(names, levels, device, models, output folder, series, frequency)``: every option checked before the
    data is read, and those the data bound as soon as it is: all of it before any fit starts."""
    from ..forecast import infer_freq, read_series_csv

    names = _parse_models(args.models)
    levels = _parse_levels(args.level) if args.level is not None else []
    if args.address is not None and args.engine is None:
        raise UsageError("--address needs --engine (dask, ray or spark)")
    if args.intervals is not None and not levels:
        raise UsageError("--intervals needs --level (such as --level 80,95)")
    for opt in ("calibration_windows", "calibration_step"):
        if getattr(args, opt) is not None and not levels:
            raise UsageError(f"--{opt.replace('_', '-')} needs --level (such as --level 80,95)")
    device = _device(args, names)
    models = _models(args, names, device)
    out_dir = check_output_dir(args.output, "--output") if args.output is not None else None
    df = read_series_csv(args.csv)
    freq = infer_freq(df)
    _check_against_data(args, df, freq)
    return names, levels, device, models, out_dir, df, freq


def _check_against_data(args, df, freq) -> None:
    """The bounds the series set: a season and a training part no longer than the longest series, and for
    ``predict`` a horizon no longer than it, with dates pandas can hold (the library's own checks, named for the
    options). --windows, --step and the calibration options are bounded where the windows are laid out."""
    from ..forecast.bounds import check_horizon
    from ..forecast.dates import check_future

    last = df.groupby("unique_id", sort=False)["ds"].agg(["size", "max"])
    longest, h = int(last["size"].max()), args.horizon
    if args.season > longest:
        raise UsageError(f"--season {args.season} is longer than the longest series ({longest} observations): not "
                         "one full season is in the data for the seasonal models or MASE's seasonal scale; use at "
                         f"most {longest}")
    mtl = getattr(args, "min_train_length", None)
    if mtl is not None and longest - h >= 2 and mtl > longest - h:  # a shorter series is refused as too short
        raise UsageError(f"--min-train-length {mtl} is longer than any window's training part: the longest series "
                         f"({longest} observations) less --horizon {h} leaves {longest - h}; use at most that")
    if getattr(args, "forecast_command", None) == "predict":
        check_horizon(h, last["size"].to_numpy(), f"--horizon {h}")
        check_future(last["max"], last.index, h, freq, f"--horizon {h}")


def _read_as(freq) -> str:
    return "the dates were read as " + ("whole-number time steps" if freq == 1 else f"pandas frequency {freq!r}")


@contextlib.contextmanager
def _fitting(progress, hint: str):
    """Ctrl-C says where the fits were; a series too short for the request names the options that change it."""
    from ..forecast import SeriesTooShortError

    try:
        yield
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"stopped while fitting {progress.where} after {time.monotonic() - progress.t0:.0f} "
                                "s; the forecasts made so far are lost and nothing was written") from None
    except SeriesTooShortError as e:
        raise UsageError(f"{e} ({hint})") from None
    finally:
        progress.close()


def _cmd_evaluate(args) -> int:
    import pandas as pd

    from ..forecast import Forecaster, evaluate, summarize

    names, levels, device, models, out_dir, df, freq = _setup(args)
    step, h, mtl = args.step or args.horizon, args.horizon, args.min_train_length
    sizes = [int(n) for n in df.groupby("unique_id", sort=False).size()]
    # the windows each series takes part in, by window_origins' rule: with --min-train-length, only those it can
    # fill, so that a --windows far beyond the data says neither a count of steps nor a history it will not have
    taken = [args.windows if mtl is None else min(args.windows, max(0, (n - h - mtl) // step) + 1) for n in sizes]
    before = [n - h - (k - 1) * step for n, k in zip(sizes, taken)]
    progress = Progress(sys.stderr.isatty() if args.progress is None else args.progress,
                        work_notes(models, before, h, max(taken), levels, args.season))
    hint = ("options that ask less of every series: fewer --windows, a smaller --step or --horizon, or "
            "--min-train-length N, with which a series joins only the windows it can fill")
    with _fitting(progress, hint), Forecaster(models, freq=freq, season_length=args.season, engine=_engine(args),
                                              device=device) as fc:
        cv = fc.cross_validation(args.horizon, df, n_windows=args.windows, step_size=step,
                                 min_train_length=args.min_train_length, level=levels or None,
                                 intervals=args.intervals or "conformal", calibration_windows=args.calibration_windows,
                                 calibration_step=args.calibration_step, progress=progress)
    errors = evaluate(cv, df, args.season, fc.names, level=levels)
    table = summarize(errors, naive2="Naive2" if "Naive2" in names else None)
    if levels:  # coverage and Winkler score beside MASE; the quantile scores stay in the Python API
        table = table.drop(columns=["spl", "scrps"])
    if out_dir is not None:
        written = write_tables(out_dir, cv, errors, table, _command(args))
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(table.to_string(index=False))
    notes = [_read_as(freq), *cv.attrs.get("notes", []), *table.attrs.get("notes", []),
             "sMAPE is in percent on M3/M4's scale, from 0 (exact) to 200"]
    if "Naive2" not in names:
        notes.append("OWA (sMAPE and MASE relative to Naive2, the M4 score) is not shown: add Naive2 to --models")
    if out_dir is not None:
        notes.append(f"wrote {', '.join(p.name for p in written)} to {out_dir}")
    for note in notes:
        print(f"seqlab: note: {note}", file=sys.stderr)
    return 0


def _long(frame, names, levels):
    """``unique_id, ds, model, forecast`` and ``lo-L, hi-L`` for each level: one row per series, date and model."""
    import pandas as pd

    parts = []
    for name in names:
        cols = {name: "forecast", **{f"{name}-{side}-{lv}": f"{side}-{lv}" for lv in levels for side in ("lo", "hi")}}
        parts.append(frame[["unique_id", "ds", *cols]].rename(columns=cols).assign(model=name))
    out = pd.concat(parts, ignore_index=True)
    order = ["unique_id", "ds", "model", "forecast", *[f"{side}-{lv}" for lv in levels for side in ("lo", "hi")]]
    return out[order].sort_values(["unique_id", "model", "ds"], kind="stable").reset_index(drop=True)


def _cmd_predict(args) -> int:
    from ..files import OutputSet
    from ..forecast import Forecaster

    names, levels, device, models, out_dir, df, freq = _setup(args)
    history = [int(n) for n in df.groupby("unique_id", sort=False).size()]
    progress = Progress(sys.stderr.isatty() if args.progress is None else args.progress,
                        work_notes(models, history, args.horizon, 1, levels, args.season))
    hint = "a shorter --horizon or fewer --calibration-windows, or leave out the model or the short series"
    with _fitting(progress, hint), Forecaster(models, freq=freq, season_length=args.season, engine=_engine(args),
                                              device=device) as fc:
        frame = fc.forecast(args.horizon, df, level=levels or None, intervals=args.intervals or "conformal",
                            calibration_windows=args.calibration_windows, calibration_step=args.calibration_step,
                            progress=progress)
    text = _iso(_long(frame, fc.names, sorted(levels))).to_csv(index=False)  # floats: shortest round-trip form
    notes = [_read_as(freq), *frame.attrs.get("notes", [])]
    if levels:
        kinds = sorted(set(frame.attrs.get("intervals", {}).values()))
        notes.append(f"intervals at {', '.join(f'{lv:g}%' for lv in sorted(levels))}: {', '.join(kinds)}")
    if out_dir is None:
        sys.stdout.write(text)
    else:
        outputs = OutputSet(out_dir, _command(args))
        try:
            with outputs:
                outputs.path("forecasts.csv").write_text(text, encoding="utf-8")
                outputs.commit()
        except KeyboardInterrupt:
            raise KeyboardInterrupt(outputs.fate()) from None
        notes.append(f"wrote forecasts.csv to {out_dir}")
    for note in notes:
        print(f"seqlab: note: {note}", file=sys.stderr)
    return 0


def _one_writer(command):
    """``command`` holding its --output folder from the start: a second writer is refused at once, not after
    its models are fitted (:func:`seqlab.files.folder_lock`)."""
    def run(args) -> int:
        from ..files import folder_lock

        if args.output is None:
            return command(args)
        with folder_lock(check_output_dir(args.output, "--output"), _command(args)):
            return command(args)
    return run


def _command(args) -> str:
    """The command line as the manifest of an output folder records it."""
    import shlex

    return shlex.join(["seqlab", *getattr(args, "argv", ["forecast", "evaluate"])])


def _iso(frame):
    """Dates as ISO 8601: the date alone when every time is midnight."""
    import pandas as pd

    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[c]):
            midnight = (out[c].dropna() == out[c].dropna().dt.normalize()).all()
            out[c] = out[c].dt.strftime("%Y-%m-%d" if midnight else "%Y-%m-%dT%H:%M:%S")
    return out


def write_tables(out_dir, cv, errors, table, command: str = "seqlab forecast evaluate") -> list:
    """The cross-validation frame, per-series and per-horizon errors and the summary as CSV: one complete set.

    The four files appear together (see :class:`seqlab.files.OutputSet`): an interrupted
    write leaves the folder's previous set, and its manifest names the command.
    """
    from ..files import OutputSet

    keys = {"series_errors.csv": ["model", "unique_id"], "horizon_errors.csv": ["model", "step"]}
    metrics = {"scaled_error": "mase", "smape_term": "smape",
               **{c: c for c in errors.columns if c.startswith(("coverage_", "winkler_"))}}
    frames = {"cross_validation.csv": cv, "summary.csv": table}
    for name, by in keys.items():
        g = errors.groupby(by, sort=False)
        frames[name] = g[list(metrics)].mean().rename(columns=metrics).join(
            g["cutoff"].nunique().rename("windows") if "unique_id" in by else g.size().rename("points")).reset_index()
    outputs = OutputSet(out_dir, command)
    try:
        with outputs:
            for name, frame in frames.items():
                _iso(frame).to_csv(outputs.path(name), index=False)  # floats in their shortest round-trip form
            return outputs.commit()
    except KeyboardInterrupt:
        raise KeyboardInterrupt(outputs.fate()) from None


def _shared_options(c, level_help: str) -> None:
    """The data, models, intervals and fitting options ``evaluate`` and ``predict`` share."""
    c.add_argument("--csv", required=True, help="long (unique_id, ds, y) or wide (time column + one per series)")
    c.add_argument("--horizon", type=positive_int, required=True,
                   help="steps to forecast, refused before any fit beyond these bounds: at most the longest "
                        "series' length (further ahead the history is no basis for a forecast; evaluate also needs "
                        "every series to hold its windows and 2 points before them), predict's dates no later than "
                        "2262-04-11 (pandas.Timestamp.max), and forecasts within half of this machine's memory")
    c.add_argument("--season", type=positive_int, default=1,
                   help="seasonal period in steps (12: monthly data with a yearly season; 1: none); at most the "
                        "longest series' length, which must hold one full season")
    c.add_argument("--models", default="Naive,SeasonalNaive,Naive2,AutoETS,AutoTheta",
                   help="comma-separated model names; Combination is the mean of AutoETS, AutoTheta and Theta, "
                        "'N-BEATS + Combination' the mean of N-BEATS and that Combination (quote it)")
    c.add_argument("--level", default=None, metavar="L1,L2", help=level_help)
    c.add_argument("--intervals", choices=["conformal", "native"], default=None,
                   help="conformal: the same rolling-origin conformal intervals for every model (default); native: "
                        "statsforecast's own intervals where a model has them")
    c.add_argument("--calibration-windows", type=positive_int, default=None, metavar="N",
                   help="earlier origins a conformal interval calibrates on (default: enough for the widest level, "
                        "at least 3; one series at 95%% needs 19; at most as many as fit in the longest series "
                        "before its last forecast origin). Each is one more fit of every model with conformal "
                        "intervals: with neural models, fewer windows are much faster")
    c.add_argument("--calibration-step", type=positive_int, default=None, metavar="N",
                   help="periods between calibration origins (default: the horizon when 3 windows suffice, else 1); "
                        "the calibration windows, this far apart, must fit in the longest series")
    c.add_argument("--engine", choices=["dask", "ray", "spark"], default=None,
                   help="run the statsforecast models on a cluster through statsforecast's fugue backend (a local "
                        "one unless --address is given)")
    c.add_argument("--address", default=None, metavar="HOST:PORT", help="the cluster's scheduler (with --engine)")
    c.add_argument("--connect-timeout", type=float_in(0, 3600, low_open=True), default=None, metavar="SECONDS",
                   help="how long to wait for the scheduler at --address to answer (default 10)")
    c.add_argument("--max-steps", type=int_at_least(1, MAX_STEPS, "400 times the default: a bound on a mistyped "
                                                                   "count"), default=None, metavar="N",
                   help=f"training steps of each N-BEATS member (default 2500, at most {MAX_STEPS:,})")
    c.add_argument("--members", type=int_at_least(1, 60), default=None, metavar="N",
                   help="N-BEATS members (default 6: generic and interpretable, inputs 2h, 3h, 4h; fewer keep the "
                        "first N of that order, more add seeds)")
    c.add_argument("--device", choices=DEVICES, default=None,
                   help="where the neural models (GRU, LSTM, Transformer, N-BEATS) train: auto (the default) is "
                        "CUDA when present, then MPS, else the CPU")
    c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show what is being fitted on stderr (default: when stderr is a terminal)")


def add_commands(sub, parser_class) -> None:
    fp = sub.add_parser("forecast", help="evaluate forecasters, and forecast the future").add_subparsers(
        dest="forecast_command", parser_class=parser_class)
    e = fp.add_parser("evaluate", help="rolling-origin MASE table for a long or wide CSV")
    _shared_options(e, "prediction intervals at these levels (such as 80,95): prints their coverage and Winkler "
                       "score (scaled like MASE) beside MASE")
    e.add_argument("--windows", type=positive_int, default=1,
                   help="rolling origins, --step apart: at most what the series hold (each window needs --horizon "
                        "test points after a training part; with --min-train-length the windows no series reaches "
                        "stay empty)")
    e.add_argument("--step", type=positive_int, default=None,
                   help="step between windows (default: horizon); the windows must fit in the series as --windows "
                        "says")
    e.add_argument("--min-train-length", type=positive_int, default=None,
                   help="let series of unequal length share the evaluation: every series takes part in the last "
                        "window, and in each earlier one whose training part has at least this many observations "
                        "(default: every series needs every window); at most the longest series' length less "
                        "--horizon")
    e.add_argument("--output", default=None, metavar="DIR",
                   help="also write cross_validation.csv, series_errors.csv, horizon_errors.csv and summary.csv there "
                        "(full precision, ISO dates)")
    e.set_defaults(func=_one_writer(_cmd_evaluate))
    p = fp.add_parser("predict", help="fit on all history and forecast --horizon steps past each series' end")
    _shared_options(p, "prediction intervals at these levels (such as 80,95): lo-L and hi-L columns")
    p.add_argument("--output", default=None, metavar="DIR",
                   help="write forecasts.csv there (default: the CSV on stdout): unique_id, ds, model, forecast, "
                        "then lo-L, hi-L per level; ISO dates, numbers in their shortest exact form")
    p.set_defaults(func=_one_writer(_cmd_predict))
