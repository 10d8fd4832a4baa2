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
    df = read_series_csv(args.csv)
    step = args.step or args.horizon
    _check_lengths(df, args, step)
    fc = Forecaster(models, freq=infer_freq(df), season_length=args.season)
    cv = fc.cross_validation(df, args.horizon, n_windows=args.windows, step_size=args.step,
                             min_train_length=args.min_train_length)
    errors = evaluate(cv, df, args.season, fc.names)
    table = summarize(errors, naive2="Naive2" if "Naive2" in models else None)
    with pd.option_context("display.width", 140):
        print(table.to_string(index=False))
    for note in table.attrs.get("notes", []):
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
    e.set_defaults(func=_cmd_evaluate)
