"""``seqlab forecast evaluate``: rolling-origin scores of classical and neural forecasters on a user's CSV."""
from __future__ import annotations

import sys

from ._common import UsageError, positive_int

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


def _check_lengths(df, args, step: int) -> None:
    if args.min_train_length is not None:
        if args.min_train_length <= args.season:
            raise UsageError(f"--min-train-length must exceed --season ({args.season}): MASE's scale needs the "
                             "seasonal-naive errors of the training part")
        need = args.horizon + args.season + 1  # every series takes part in the last window
        what = f"the last window of horizon {args.horizon} with season {args.season} needs"
    else:
        need = args.horizon + (args.windows - 1) * step + args.season + 1
        what = f"{args.windows} window(s) of horizon {args.horizon} with season {args.season} need"
    sizes = df.groupby("unique_id").size()
    if (sizes < need).any():
        uid = sizes[sizes < need].index[0]
        raise UsageError(f"series {uid!r} has {sizes[uid]} observations; {what} at least {need}")


def _cmd_evaluate(args) -> int:
    import pandas as pd

    from ..forecast import Forecaster, evaluate, infer_freq, read_series_csv, summarize

    models = _parse_models(args.models)
    levels = _parse_levels(args.level) if args.level is not None else []
    if args.address is not None and args.engine is None:
        raise UsageError("--address needs --engine (dask, ray or spark)")
    if args.intervals is not None and not levels:
        raise UsageError("--intervals needs --level (such as --level 80,95)")
    for opt in ("calibration_windows", "calibration_step"):
        if getattr(args, opt) is not None and not levels:
            raise UsageError(f"--{opt.replace('_', '-')} needs --level (such as --level 80,95)")
    df = read_series_csv(args.csv)
    step = args.step or args.horizon
    _check_lengths(df, args, step)
    with Forecaster(models, freq=infer_freq(df), season_length=args.season, engine=args.engine,
                    address=args.address) as fc:
        cv = fc.cross_validation(df, args.horizon, n_windows=args.windows, step_size=args.step,
                                 min_train_length=args.min_train_length, level=levels or None,
                                 intervals=args.intervals or "conformal",
                                 calibration_windows=args.calibration_windows,
                                 calibration_step=args.calibration_step)
    errors = evaluate(cv, df, args.season, fc.names, level=levels)
    table = summarize(errors, naive2="Naive2" if "Naive2" in models else None)
    if levels:  # coverage and Winkler score beside MASE; the quantile scores stay in the Python API
        table = table.drop(columns=["spl", "scrps"])
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(table.to_string(index=False))
    for note in [*cv.attrs.get("notes", []), *table.attrs.get("notes", [])]:
        print(f"seqlab: note: {note}", file=sys.stderr)
    return 0


def add_commands(sub, parser_class) -> None:
    fp = sub.add_parser("forecast", help="evaluate forecasters").add_subparsers(dest="forecast_command",
                                                                                 parser_class=parser_class)
    e = fp.add_parser("evaluate", help="rolling-origin MASE table for a long or wide CSV")
    e.add_argument("--csv", required=True, help="long (unique_id, ds, y) or wide (time column + one per series)")
    e.add_argument("--horizon", type=positive_int, required=True)
    e.add_argument("--season", type=positive_int, default=1)
    e.add_argument("--windows", type=positive_int, default=1)
    e.add_argument("--step", type=positive_int, default=None, help="step between windows (default: horizon)")
    e.add_argument("--min-train-length", type=positive_int, default=None,
                   help="let series of unequal length share the evaluation: every series takes part in the last "
                        "window, and in each earlier one whose training part has at least this many observations "
                        "(default: every series needs every window)")
    e.add_argument("--models", default="Naive,SeasonalNaive,Naive2,AutoETS,AutoTheta",
                   help="comma-separated model names")
    e.add_argument("--level", default=None, metavar="L1,L2",
                   help="prediction intervals at these levels (such as 80,95): prints their coverage and Winkler "
                        "score (scaled like MASE) beside MASE")
    e.add_argument("--intervals", choices=["conformal", "native"], default=None,
                   help="conformal: the same rolling-origin conformal intervals for every model (default); native: "
                        "statsforecast's own intervals where a model has them")
    e.add_argument("--calibration-windows", type=positive_int, default=None, metavar="N",
                   help="earlier origins a conformal interval calibrates on (default: enough for the widest level, "
                        "at least 3; one series at 95%% needs 19). Each is one more fit of every model with "
                        "conformal intervals: with neural models, fewer windows are much faster")
    e.add_argument("--calibration-step", type=positive_int, default=None, metavar="N",
                   help="periods between calibration origins (default: the horizon when 3 windows suffice, else 1)")
    e.add_argument("--engine", choices=["dask", "ray", "spark"], default=None,
                   help="run the statsforecast models on a cluster through statsforecast's fugue backend (a local "
                        "one unless --address is given)")
    e.add_argument("--address", default=None, metavar="HOST:PORT", help="the cluster's scheduler (with --engine)")
    e.set_defaults(func=_cmd_evaluate)
