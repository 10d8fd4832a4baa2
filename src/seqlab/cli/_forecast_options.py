"""The options of ``seqlab forecast``: their parsing, and their help, each with its default written one way,
``(default: ...)``, or ``(required)``."""
from __future__ import annotations

import argparse

from ..devices import DEVICES
from ._common import UsageError, float_in, int_at_least, positive_int

__all__ = ["parse_models", "parse_levels", "season_option", "shared_options", "data_options", "fit_options",
           "MAX_STEPS", "DEFAULT_MODELS"]

#: the most training steps --max-steps accepts for each N-BEATS member
MAX_STEPS = 1_000_000
DEFAULT_MODELS = "Naive,SeasonalNaive,Naive2,AutoETS,AutoTheta"


def parse_models(text: str) -> list[str]:
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


def parse_levels(text: str) -> list:
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


def season_option(v: str):
    """``--season``: ``auto`` (from the dates' frequency) or a whole number >= 1."""
    if v.strip().lower() == "auto":
        return "auto"
    try:
        return positive_int(v)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e}; or auto, the season of the dates' frequency") from None


def data_options(c, *, required: bool = True) -> None:
    """The series and how they are read: ``--csv``, ``--horizon``, ``--season``, ``--fill-gaps``; ``required``:
    whether --csv and --horizon must be given (``predict --model`` takes them from the stored fit)."""
    from ..forecast.gaps import FILL_RULES

    need = "(required)" if required else "(required without --model)"
    newer = "" if required else "; with --model, a newer history of the fitted series to forecast from"
    c.add_argument("--csv", required=required,
                   help=f"long (unique_id, ds, y) or wide (time column + one per series) CSV; rows in any order"
                        f"{newer} {need}")
    c.add_argument("--horizon", type=positive_int, required=required, metavar="H",
                   help="steps to forecast, refused before any fit beyond these bounds: at most the longest "
                        "series' length (further ahead the history is no basis for a forecast; evaluate also "
                        "needs every series to hold its windows and 2 points before them), predict's dates no "
                        "later than 2262-04-11 (pandas.Timestamp.max), and forecasts within half of this "
                        f"machine's memory {need}")
    c.add_argument("--season", type=season_option, default="auto", metavar="auto|N",
                   help="seasonal period in steps: auto takes it from the dates' frequency (monthly 12, quarterly 4, "
                        "weekly 52, daily 7, business-daily 5, hourly 24, yearly and whole-number steps 1) and says "
                        "so in a note; N (12: monthly data with a yearly season; 1: none) is at most the longest "
                        "series' length, which must hold one full season (default: auto)")
    rules = "; ".join(f"{k}: {v}" for k, v in FILL_RULES.items())
    c.add_argument("--fill-gaps", nargs="?", const="interpolate", choices=list(FILL_RULES), default=None,
                   metavar="RULE",
                   help=f"insert each series' missing dates, along the step most series follow, their values made "
                        f"by RULE ({rules}; --fill-gaps alone: interpolate), and say so in a note (default: none: "
                        "a series with a missing date is refused, its first break named)")


def fit_options(c) -> None:
    """The models and how they train: ``--models`` and the N-BEATS, device and cluster options."""
    c.add_argument("--models", default=DEFAULT_MODELS,
                   help="comma-separated model names; Combination is the mean of AutoETS, AutoTheta and Theta, "
                        "'N-BEATS + Combination' the mean of N-BEATS and that Combination (quote it), which "
                        f"trains the same N-BEATS as N-BEATS alone (default: {DEFAULT_MODELS})")
    c.add_argument("--engine", choices=["dask", "ray", "spark"], default=None,
                   help="run the statsforecast models on a cluster through statsforecast's fugue backend (a local "
                        "one unless --address is given) (default: none: everything in this process)")
    c.add_argument("--address", default=None, metavar="HOST:PORT",
                   help="the cluster's scheduler, with --engine (default: none: a local cluster)")
    c.add_argument("--connect-timeout", type=float_in(0, 3600, low_open=True), default=None, metavar="SECONDS",
                   help="how long to wait for the scheduler at --address to answer (default: 10)")
    c.add_argument("--max-steps", type=int_at_least(1, MAX_STEPS, "500 times the default: a bound on a mistyped "
                                                                   "count"), default=None, metavar="N",
                   help=f"training steps of each N-BEATS member, at most {MAX_STEPS:,} (default: 2000)")
    c.add_argument("--members", type=int_at_least(1, 60), default=None, metavar="N",
                   help="N-BEATS members, one seed each: interpretable, input 2h, short histories masked, bfloat16 "
                        "where the CPU or GPU multiplies it natively (default: 4; on M3 monthly's 1,428 series "
                        "55-65 CPU-seconds on one thread with native bfloat16, about 2.2 times that in float32; 183-196 in "
                        "float32 on a slower CPU without native bfloat16, where Combination took 195)")
    c.add_argument("--device", choices=DEVICES, default=None,
                   help="where the neural models (GRU, LSTM, Transformer, N-BEATS) train: auto is CUDA when "
                        "present, then MPS, else the CPU (default: auto)")
    c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show what is being fitted on stderr (default: when stderr is a terminal)")


def interval_options(c, level_help: str) -> None:
    c.add_argument("--level", default=None, metavar="L1,L2", help=f"{level_help} (default: none: no intervals)")
    c.add_argument("--intervals", choices=["conformal", "native"], default=None,
                   help="conformal: the same rolling-origin conformal intervals for every model; native: "
                        "statsforecast's own intervals where a model has them, conformal for the others; a note "
                        "names each model's kind (default: conformal)")
    c.add_argument("--calibration-windows", type=positive_int, default=None, metavar="N",
                   help="earlier origins a conformal interval calibrates on, at most as many as fit in the longest "
                        "series before its last forecast origin; too few for a level (one series at 95%% needs 19) "
                        "is refused before any fit. Each is one more fit of every model with conformal intervals: "
                        "with neural models, fewer windows are much faster (default: enough for the widest level, "
                        "at least 3)")
    c.add_argument("--calibration-step", type=positive_int, default=None, metavar="N",
                   help="periods between calibration origins; the calibration windows, this far apart, must fit in "
                        "the longest series (default: the horizon when 3 windows suffice, else 1)")


def shared_options(c, level_help: str, required: bool = True) -> None:
    """The data, models, intervals and fitting options ``evaluate``, ``predict`` and ``fit`` share."""
    data_options(c, required=required)
    fit_options(c)
    interval_options(c, level_help)


def parse_exog(text: str | None) -> list[str]:
    """``--exog promo,price``: column names, each once."""
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise UsageError(f"--exog expects comma-separated column names such as promo,price, got {text!r}")
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise UsageError(f"--exog lists {twice[0]!r} twice")
    keys = [n for n in names if n in ("unique_id", "ds", "y")]
    if keys:
        raise UsageError(f"--exog names {keys[0]!r}, a key column; name the extra columns only")
    return names


def exog_options(c, future: bool) -> None:
    """``--exog`` (and, where the command forecasts past the series' end, ``--future``)."""
    c.add_argument("--exog", default=None, metavar="COL1,COL2",
                   help="extra numeric columns of the long CSV to read as regressors known in advance: AutoARIMA "
                        "(a regression with ARIMA errors) and GRU, LSTM, Transformer (extra input channels) use "
                        "them, the other models forecast from y alone, as a note says"
                        + ("; their values over the horizon come from --future" if future else "; each window's "
                           "values after its cutoff come from the CSV") + " (default: none: an extra column is "
                        "named in a note and left out)")
    if future:
        c.add_argument("--future", default=None, metavar="CSV",
                       help="the regressors' values over the horizon, with --exog: a long CSV of unique_id, ds and "
                            "each --exog column, --horizon dates after each series' end (default: none)")
