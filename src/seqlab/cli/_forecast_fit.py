"""``seqlab forecast fit`` and ``seqlab forecast predict --model``: fit once and store the forecaster, then forecast
from it with no training.

``fit`` takes ``predict``'s options and writes the fitted forecaster into ``--output``
(:meth:`seqlab.forecast.Forecaster.save`). ``predict --model MODEL`` forecasts from it: on the history it was
fitted on, the forecasts are bit for bit those of a one-shot ``predict`` with the same options; with ``--csv NEW``
(the same series, extended, or new ones) the neural models' stored weights forecast from each series' new last
window, the classical models are fitted again on the new history, and conformal bands are the stored quantiles
times each series' new scale (:mod:`seqlab.forecast.fitted`). The horizon, models, season and levels are the
fit's: giving them again is refused.
"""
from __future__ import annotations

import sys

from ._common import UsageError
from ._forecast_options import DEFAULT_MODELS, exog_options, shared_options
from ._forecast_output import command_line, write_forecasts
from ._forecast_report import interval_note
from ._forecast_setup import one_origin, read, setup

__all__ = ["add_fit_command", "predict_stored", "FIXED_BY_THE_FIT"]

#: the options a stored fit fixed, with the value each has when not given
FIXED_BY_THE_FIT = {"horizon": None, "season": "auto", "models": DEFAULT_MODELS, "level": None, "intervals": None,
                    "calibration_windows": None, "calibration_step": None, "engine": None, "address": None,
                    "connect_timeout": None, "max_steps": None, "members": None, "exog": None}


def _cmd_fit(args) -> int:

    got = setup(args)
    with one_origin(args, got) as (fc, progress):
        fc.fit(args.horizon, got.df, got.X_df, level=got.levels or None, intervals=args.intervals or "conformal",
               calibration_windows=args.calibration_windows, calibration_step=args.calibration_step,
               progress=progress, bounded=True)
    written = fc.save(args.output, command_line(args))
    notes = list(got.notes)
    if got.levels:
        notes.append(interval_note(got.levels, fc.fitted_.kinds, fc.names))
    notes.append(f"wrote {', '.join(p.name for p in written)} to {args.output}; forecast from it with: seqlab "
                 f"forecast predict --model {args.output}")
    for note in notes:
        print(f"seqlab: note: {note}", file=sys.stderr)
    return 0


def predict_stored(args) -> int:
    """``predict --model``: the stored forecaster's forecasts, for its own history or for ``--csv``'s."""
    from ..forecast import Forecaster

    given = [k for k, default in FIXED_BY_THE_FIT.items() if getattr(args, k, default) != default]
    if given:
        option = "--" + given[0].replace("_", "-")
        raise UsageError(f"{option} was fixed when the forecaster in {args.model} was fitted; leave it out with "
                         "--model (or fit again with forecast fit)")
    fc = Forecaster.load(args.model, device=args.device)
    state = fc.fitted_
    notes = [f"forecasts of the forecaster fitted in {args.model} (--horizon {state.h}, season "
             f"{fc.season_length}): no model was trained, the classical ones were fitted again"]
    df, X_df = None, None
    if args.future is not None:
        from ..forecast.reading import read_future_csv

        if not state.exog:
            raise UsageError(f"--future gives regressors, but the forecaster in {args.model} was fitted without any")
        X_df = read_future_csv(args.future, state.exog)
    if args.csv is not None:
        if state.exog and X_df is None:
            raise UsageError(f"the forecaster in {args.model} reads regressors ({', '.join(state.exog)}): give "
                             "their values after the new history with --future CSV")
        df, freq, read_notes = read(args, state.exog)
        if freq != fc.freq:
            raise UsageError(f"{args.csv} steps by {freq!r}, but the forecaster in {args.model} was fitted on "
                             f"series stepping by {fc.freq!r}")
        new = [u for u in df["unique_id"].unique() if u not in set(state.history["unique_id"])]
        notes = read_notes + notes
        if new:
            notes.append(f"{len(new)} series of {args.csv} (the first {new[0]!r}) were not in the fit: the neural "
                         "models forecast them with the weights trained on the others")
    frame = fc.predict(df, X_df)
    if args.plot:
        from ._forecast_plot import write_plots

        notes += write_plots(args.plot, state.history if df is None else df, frame, fc.names, state.levels,
                             command_line(args), args.plot_max, "the history and each model's forecast past its end")
    write_forecasts(args, frame, fc.names, state.levels, notes)
    return 0


def add_fit_command(fp, one_writer) -> None:
    f = fp.add_parser("fit", help="fit on all history and store the forecaster, for forecast predict --model")
    shared_options(f, "prediction intervals at these levels (such as 80,95), calibrated now and kept")
    f.add_argument("--output", required=True, metavar="DIR",
                   help="the folder to store the fitted forecaster in: forecaster.json, series.safetensors and, "
                        "with neural models, neural.safetensors, with a manifest of their sha256 (required)")
    exog_options(f, future=True)
    f.set_defaults(func=one_writer(_cmd_fit))
