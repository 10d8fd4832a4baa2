"""``seqlab forecast evaluate`` and ``predict``: rolling-origin scores of classical and neural forecasters on a
user's CSV, and their forecasts past each series' end."""
from __future__ import annotations

import sys

from ._forecast_options import exog_options, shared_options
from ._forecast_output import command_line, write_forecasts, write_tables
from ._forecast_report import Progress, interval_note, work_notes
from ._forecast_setup import fitting, one_origin, setup
from ._forecast_setup import models as _models  # noqa: F401  (the hybrid's N-BEATS options are tested through it)
from ._common import UsageError, check_output_dir, positive_int
from ._forecast_fit import add_fit_command, predict_stored
from ._forecast_plot import plot_options, write_plots

__all__ = ["add_commands"]


def _cmd_evaluate(args) -> int:
    import pandas as pd

    from ..forecast import Forecaster, evaluate, summarize
    from ._forecast_setup import engine

    got = setup(args)
    names, levels, df = got.names, got.levels, got.df
    step, h, mtl = args.step or args.horizon, args.horizon, args.min_train_length
    sizes = [int(n) for n in df.groupby("unique_id", sort=False).size()]
    # the windows each series takes part in, by window_origins' rule: with --min-train-length, only those it can
    # fill, so that a --windows far beyond the data says neither a count of steps nor a history it will not have
    taken = [args.windows if mtl is None else min(args.windows, max(0, (n - h - mtl) // step) + 1) for n in sizes]
    before = [n - h - (k - 1) * step for n, k in zip(sizes, taken)]
    progress = Progress(sys.stderr.isatty() if args.progress is None else args.progress,
                        work_notes(got.models, before, h, max(taken), levels, got.season))
    with fitting(progress, "evaluate", got.season), Forecaster(got.models, freq=got.freq, season_length=got.season,
                                                               engine=engine(args), device=got.device) as fc:
        cv = fc.cross_validation(args.horizon, df, n_windows=args.windows, step_size=step,
                                 min_train_length=args.min_train_length, level=levels or None,
                                 intervals=args.intervals or "conformal", calibration_windows=args.calibration_windows,
                                 calibration_step=args.calibration_step, progress=progress, bounded=True,
                                 exog=got.exog)
    errors = evaluate(cv, df, got.season, fc.names, level=levels)
    table = summarize(errors, naive2="Naive2" if "Naive2" in names else None)
    if levels:  # coverage and Winkler score beside MASE; the quantile scores stay in the Python API
        table = table.drop(columns=["spl", "scrps"])
    if got.out_dir is not None:
        written = write_tables(got.out_dir, cv, errors, table, command_line(args))
    if args.plot:
        last = cv[cv["cutoff"] == cv.groupby("unique_id")["cutoff"].transform("max")]
        end = last.groupby("unique_id")["ds"].max()
        shown = df[df["ds"] <= df["unique_id"].map(end)]
        plots = write_plots(args.plot, shown, last, fc.names, levels, command_line(args), args.plot_max,
                            "each model's forecast in the last window, over the actual values")
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(table.to_string(index=False))
    notes = [*got.notes, *cv.attrs.get("notes", []), *table.attrs.get("notes", []),
             "sMAPE is in percent on M3/M4's scale, from 0 (exact) to 200"]
    if levels:
        notes.append(interval_note(levels, cv.attrs.get("intervals", {}), fc.names))
    if "Naive2" not in names:
        notes.append("OWA (sMAPE and MASE relative to Naive2, the M4 score) is not shown: add Naive2 to --models")
    if got.out_dir is not None:
        notes.append(f"wrote {', '.join(p.name for p in written)} to {got.out_dir}")
    if args.plot:
        notes += plots
    for note in notes:
        print(f"seqlab: note: {note}", file=sys.stderr)
    return 0


def _cmd_predict(args) -> int:

    if args.model is not None:
        return predict_stored(args)
    missing = [o for o in ("csv", "horizon") if getattr(args, o) is None]
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join('--' + o for o in missing)} (or --model "
                         "DIR: a forecaster stored by forecast fit)")
    got = setup(args)
    with one_origin(args, got) as (fc, progress):
        frame = fc.forecast(args.horizon, got.df, got.X_df, level=got.levels or None,
                            intervals=args.intervals or "conformal",
                            calibration_windows=args.calibration_windows, calibration_step=args.calibration_step,
                            progress=progress, bounded=True)
    plots = write_plots(args.plot, got.df, frame, fc.names, got.levels, command_line(args), args.plot_max,
                        "the history and each model's forecast past its end") if args.plot else []
    write_forecasts(args, frame, fc.names, got.levels, got.notes + plots)
    return 0


def _one_writer(command):
    """``command`` holding its --output folder from the start: a second writer is refused at once, not after
    its models are fitted (:func:`seqlab.files.folder_lock`)."""
    def run(args) -> int:
        from ..files import folder_lock

        if args.output is None:
            return command(args)
        with folder_lock(check_output_dir(args.output, "--output"), command_line(args)):
            return command(args)
    return run


def add_commands(sub, parser_class) -> None:
    fp = sub.add_parser("forecast", help="evaluate forecasters, and forecast the future").add_subparsers(
        dest="forecast_command", parser_class=parser_class)
    e = fp.add_parser("evaluate", help="rolling-origin MASE table for a long or wide CSV")
    shared_options(e, "prediction intervals at these levels (such as 80,95): prints their coverage and Winkler "
                      "score (scaled like MASE) beside MASE")
    e.add_argument("--windows", type=positive_int, default=1, metavar="N",
                   help="rolling origins, --step apart: at most what the series hold (each window needs --horizon "
                        "test points after a training part; with --min-train-length the windows no series reaches "
                        "stay empty) (default: 1)")
    e.add_argument("--step", type=positive_int, default=None, metavar="N",
                   help="periods between windows; the windows must fit in the series as --windows says (default: "
                        "the horizon)")
    e.add_argument("--min-train-length", type=positive_int, default=None, metavar="N",
                   help="let series of unequal length share the evaluation: every series takes part in the last "
                        "window, and in each earlier one whose training part has at least N observations; at most "
                        "the longest series' length less --horizon (default: none: every series needs every "
                        "window)")
    e.add_argument("--output", default=None, metavar="DIR",
                   help="also write cross_validation.csv, series_errors.csv, horizon_errors.csv and summary.csv there "
                        "(full precision, ISO dates) (default: none: the table on stdout only)")
    exog_options(e, future=False)
    plot_options(e, "each model's forecast in the last window over the actual values")
    e.set_defaults(func=_one_writer(_cmd_evaluate))
    p = fp.add_parser("predict", help="fit on all history and forecast --horizon steps past each series' end")
    shared_options(p, "prediction intervals at these levels (such as 80,95): lo-L and hi-L columns", required=False)
    p.add_argument("--model", default=None, metavar="DIR",
                   help="forecast from the forecaster forecast fit stored in DIR, with no training: its horizon, "
                        "models, season and levels; --csv gives a newer history (default: none: fit here)")
    p.add_argument("--output", default=None, metavar="DIR",
                   help="write forecasts.csv there: unique_id, ds, model, forecast, then lo-L, hi-L per level; ISO "
                        "dates, numbers in their shortest exact form (default: none: the CSV on stdout)")
    exog_options(p, future=True)
    plot_options(p, "the recent history and each model's forecast past its end")
    p.set_defaults(func=_one_writer(_cmd_predict))
    add_fit_command(fp, _one_writer)
