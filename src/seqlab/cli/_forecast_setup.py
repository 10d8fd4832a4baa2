"""What ``seqlab forecast`` settles before any fit: every option checked, the series read (sorted, gaps named or
filled), the season, the models, and the notes that say how the data were read."""
from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, field

from ._common import UsageError, check_output_dir
from ._forecast_options import parse_levels, parse_models

__all__ = ["Setup", "setup", "models", "device", "engine", "fitting", "read_as", "check_nbeats_options"]


@dataclass
class Setup:
    """A command's request, checked: the model names and objects, levels, device, output folder, the series, their
    frequency and season, and the notes on how they were read (said after the output)."""

    names: list
    levels: list
    device: str
    models: list
    out_dir: object
    df: object
    freq: object
    season: int
    notes: list = field(default_factory=list)
    exog: list = field(default_factory=list)
    X_df: object = None


def device(args, names: list[str]) -> str:
    """``--device`` (default auto), checked before any data is read: an unavailable device is one line, exit 2."""
    from ..devices import resolve_device
    from ..forecast.core import NEURAL_MODELS

    if args.device is None:
        return "auto"
    if not any(n in NEURAL_MODELS for n in names):
        raise UsageError(f"--device is an option of the neural models; add one of {', '.join(NEURAL_MODELS)} to "
                         "--models")
    resolve_device(args.device)
    return args.device


def check_nbeats_options(args, names: list[str]) -> dict:
    options = {"max_steps": args.max_steps, "members": args.members}
    given = [f"--{k.replace('_', '-')}" for k, v in options.items() if v is not None]
    if given and not any("N-BEATS" in n for n in names):
        raise UsageError(f"{given[0]} is an N-BEATS option; add N-BEATS (or N-BEATS + Combination) to --models")
    return options


def models(args, names: list[str], device: str = "auto") -> list:
    """The model objects for ``names`` with ``args.season`` (a number by now); N-BEATS alone and inside
    ``N-BEATS + Combination`` are one ensemble, which therefore trains once."""
    from ..forecast import Combination, StatsForecastModel
    from ..forecast.combination import COMBINATIONS
    from ..forecast.nbeats import NBeatsForecaster

    options = check_nbeats_options(args, names)
    shared = []

    def nbeats():
        if not shared:
            shared.append(NBeatsForecaster.default(args.season, device=device, **options))
        return shared[0]

    def build(n):
        if n == "N-BEATS":
            return nbeats()
        if n == "N-BEATS + Combination":  # its N-BEATS takes the N-BEATS options
            classical = Combination([StatsForecastModel(p, args.season) for p in COMBINATIONS["Combination"]],
                                    name="Combination")
            return Combination([nbeats(), classical], name=n)
        return n

    return [build(n) for n in names]


def engine(args):
    from ..forecast.engines import Engine

    if args.connect_timeout is not None and args.address is None:
        raise UsageError("--connect-timeout needs --address (and --engine)")
    if args.engine is None:
        return None
    return Engine(args.engine, args.address, timeout=10.0 if args.connect_timeout is None else args.connect_timeout)


def _check_options(args) -> tuple[list, list, str]:
    names = parse_models(args.models)
    levels = parse_levels(args.level) if args.level is not None else []
    if args.address is not None and args.engine is None:
        raise UsageError("--address needs --engine (dask, ray or spark)")
    if args.intervals is not None and not levels:
        raise UsageError("--intervals needs --level (such as --level 80,95)")
    for opt in ("calibration_windows", "calibration_step"):
        if getattr(args, opt) is not None and not levels:
            raise UsageError(f"--{opt.replace('_', '-')} needs --level (such as --level 80,95)")
    dev = device(args, names)
    check_nbeats_options(args, names)
    return names, levels, dev


def read(args, exog=()) -> tuple:
    """``(series, frequency, notes)``: the CSV read as ``--fill-gaps`` says, with a note for every row it sorted,
    every value it made and every column it leaves out."""
    from ..forecast import infer_freq, read_series_csv
    from ..forecast.gaps import FILL_RULES

    df = read_series_csv(args.csv, exog=exog, fill=args.fill_gaps)
    freq = infer_freq(df)
    notes = [read_as(freq)]
    moved = df.attrs.get("sorted", [])
    if moved:
        more = f" and {len(moved) - 1} more" if len(moved) > 1 else ""
        notes.append(f"the rows of series {moved[0]!r}{more} were not in time order; they were sorted")
    filled = df.attrs.get("filled", {})
    if filled:
        shown = ", ".join(f"{uid!r}: {n}" for uid, n in list(filled.items())[:3]) + (", ..." if len(filled) > 3 else "")
        notes.append(f"--fill-gaps {args.fill_gaps}: {sum(filled.values())} missing date(s) or value(s) filled in "
                     f"{len(filled)} series ({shown}), {FILL_RULES[args.fill_gaps]}")
    unused = df.attrs.get("unused", [])
    if unused:
        notes.append(f"column(s) {', '.join(map(str, unused))} of {args.csv} are not used: the models read "
                     "unique_id, ds and y" + ("; name numeric regressors with --exog" if hasattr(args, "exog")
                                              else ""))
    return df, freq, notes


def season(args, df, freq) -> tuple[int, list]:
    """``--season`` as a number: ``auto`` takes the frequency's (:func:`~seqlab.forecast.dates.season_of`), one
    the series cannot hold a full cycle of falls back to 1; each with its note."""
    from ..forecast.dates import season_of

    longest = int(df.groupby("unique_id", sort=False).size().max())
    if args.season != "auto":
        if args.season > longest:
            raise UsageError(f"--season {args.season} is longer than the longest series ({longest} observations): "
                             "not one full season is in the data for the seasonal models or MASE's seasonal scale; "
                             f"use at most {longest}")
        return args.season, []
    period, words = season_of(freq)
    if period > longest:
        return 1, [f"season 1: the longest series ({longest} observations) holds no full {words} season of "
                   f"{period} (--season auto); give --season N for another"]
    return period, [f"season {period} from the {words} dates (--season auto); give --season N for another"]


def _exog(args) -> tuple[list, object]:
    """``--exog`` and ``--future``, checked against each other and the engine, before the data is read."""
    from ._forecast_options import parse_exog

    exog = parse_exog(getattr(args, "exog", None))
    future = getattr(args, "future", None)
    if exog and args.engine is not None:
        raise UsageError("--exog fits its models in this process: leave out --engine")
    if future is not None and not exog:
        raise UsageError("--future gives the values of --exog's regressors: name them with --exog")
    if exog and hasattr(args, "future") and future is None and getattr(args, "model", None) is None:
        raise UsageError("--exog needs --future CSV: the regressors' values over the horizon (unique_id, ds, "
                         f"{', '.join(exog)})")
    return exog, future


def exog_note(exog, models) -> str:
    """Which models read the regressors and which forecast from y alone."""
    from ..forecast.exog import ignoring

    alone = ignoring(models)
    used = [m.name for m in models if m.name not in alone]
    return (f"regressors {', '.join(exog)}: " + (f"read by {', '.join(used)}" if used else "read by no model listed")
            + (f"; {', '.join(alone)} forecast from y alone" if alone else ""))


def setup(args) -> Setup:
    """Every option checked before the data is read, and those the data bound as soon as it is: all of it
    before any fit starts."""
    from ..forecast.reading import read_future_csv

    names, levels, dev = _check_options(args)
    exog, future = _exog(args)
    out_dir = check_output_dir(args.output, "--output") if getattr(args, "output", None) is not None else None
    if getattr(args, "plot", None) is not None:
        check_output_dir(args.plot, "--plot")
    df, freq, notes = read(args, exog)
    args.season, more = season(args, df, freq)
    check_against_data(args, df, freq)
    built = models(args, names, dev)
    if exog:
        more.append(exog_note(exog, [m if not isinstance(m, str) else _named(m, args.season) for m in built]))
    X_df = read_future_csv(future, exog) if future is not None else None
    return Setup(names, levels, dev, built, out_dir, df, freq, args.season, notes + more, exog, X_df)


def _named(name: str, season: int):
    """The model a name stands for, to ask whether it reads regressors."""
    from ..forecast import Forecaster

    return Forecaster([name], season_length=season, device="cpu").models[0]


def check_against_data(args, df, freq) -> None:
    """The bounds the series set: a training part no longer than the longest series, and for ``predict`` and
    ``fit`` a horizon no longer than it, with dates pandas can hold (the library's own checks, named for the
    options). --windows, --step and the calibration options are bounded where the windows are laid out."""
    from ..forecast.bounds import check_horizon
    from ..forecast.dates import check_future

    last = df.groupby("unique_id", sort=False)["ds"].agg(["size", "max"])
    longest, h = int(last["size"].max()), args.horizon
    mtl = getattr(args, "min_train_length", None)
    if mtl is not None and longest - h >= 2 and mtl > longest - h:  # a shorter series is refused as too short
        raise UsageError(f"--min-train-length {mtl} is longer than any window's training part: the longest series "
                         f"({longest} observations) less --horizon {h} leaves {longest - h}; use at most that")
    if getattr(args, "forecast_command", None) in ("predict", "fit"):
        check_horizon(h, last["size"].to_numpy(), f"--horizon {h}")
        check_future(last["max"], last.index, h, freq, f"--horizon {h}")


def read_as(freq) -> str:
    return "the dates were read as " + ("whole-number time steps" if freq == 1 else f"pandas frequency {freq!r}")


def _too_short(e, command: str, season: int) -> str:
    """A series too short for a model, with the advice that fits the command."""
    from ..forecast.classical import NEEDS_SEASON

    seasonal = e.model in NEEDS_SEASON and season > 1 and e.need >= season
    if command == "evaluate":
        return (f"series {e.series!r} has {e.length} observation(s) before a forecast origin; {e.model} needs at "
                f"least {e.need} to fit: leave it out of --models, ask less of every series (fewer --windows, a "
                "smaller --step or --horizon), or let a short series join only the windows it can fill "
                "(--min-train-length N)")
    return (f"series {e.series!r} has {e.length} observation(s); {e.model} needs at least {e.need} to fit"
            + (f" with --season {season}" if seasonal else "") + f": leave {e.model} out of --models, "
            + ("give a smaller --season, " if seasonal else "") + "or drop the short series from the file")


@contextlib.contextmanager
def fitting(progress, command: str, season: int):
    """Ctrl-C says where the fits were; a series too short for the request, or a level its calibration cannot
    bound, is one line that names the options that change it."""
    from ..forecast import SeriesTooShortError
    from ..forecast.checks import UnboundedIntervalError

    try:
        yield
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"stopped while fitting {progress.where} after {time.monotonic() - progress.t0:.0f} "
                                "s; the forecasts made so far are lost and nothing was written") from None
    except SeriesTooShortError as e:
        if e.model is not None:
            raise UsageError(_too_short(e, command, season)) from None
        if command == "evaluate":
            raise UsageError(f"{e} (options that ask less of every series: fewer --windows, a smaller --step or "
                             "--horizon, or --min-train-length N, with which a series joins only the windows it "
                             "can fill)") from None
        raise UsageError(str(e)) from None
    except UnboundedIntervalError as e:
        raise UsageError(f"--level: {e}") from None
    finally:
        progress.close()


@contextlib.contextmanager
def one_origin(args, got):
    """``(forecaster, progress)`` for a command that fits at one origin (fit, predict): the Forecaster of ``got``'s
    models under its progress display and :func:`fitting`."""
    from ..forecast import Forecaster
    from ._forecast_report import Progress, work_notes

    history = [int(n) for n in got.df.groupby("unique_id", sort=False).size()]
    progress = Progress(sys.stderr.isatty() if args.progress is None else args.progress,
                        work_notes(got.models, history, args.horizon, 1, got.levels, got.season))
    with fitting(progress, "predict", got.season), Forecaster(got.models, freq=got.freq, season_length=got.season,
                                                              engine=engine(args), device=got.device) as fc:
        yield fc, progress
