"""``seqlab forecast evaluate``: rolling-origin scores of classical and neural forecasters on a user's CSV."""
from __future__ import annotations

import argparse
import sys
import time

from ..text.devices import DEVICES
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


class _Progress:
    """What ``forecast evaluate`` is fitting, on stderr: a line per fit, and a bar with an ETA over an N-BEATS
    ensemble's training steps. Silent unless shown; it always remembers where the run is, for an interrupt."""

    def __init__(self, show: bool):
        self.show, self.bar, self.where, self.t0 = show, None, "before the first fit", time.monotonic()
        self.done = {}

    def _place(self, info) -> str:
        window = f"window {info['window']}/{info['windows']}" if info.get("window") else \
            f"all {info['windows']} window(s) at once"
        return f"{info['phase']} origins, {window}"

    def __call__(self, event, **info):
        if event == "fit":
            self.close()
            self.where = f"{', '.join(info['models'])} at {self._place(info)}"
            if self.show:
                from tqdm import tqdm

                tqdm.write(f"seqlab: fitting {self.where} ({info['origins']} origin(s))", file=sys.stderr)
        elif event == "member":
            key = (info["model"], info["phase"], info["window"])
            if self.bar is None or self.bar.key != key:
                self.close()
                self.bar = self._new_bar(info, key)
            finished = info["step"] == info["steps"] and self.done.get(info["member"]) != info["steps"]
            self.done[info["member"]] = info["step"]
            self.bar.update(sum(self.done.values()) - self.bar.n)
            if finished and self.show:  # a line that stays, also where the bar cannot redraw (a log file)
                self.bar.write(f"seqlab: {info['model']} member {info['member']}/{info['members']} trained "
                               f"({info['steps']} steps) at {self._place(info)}", file=sys.stderr)
            running = [k for k, v in sorted(self.done.items()) if v < info["steps"]] or [info["member"]]
            self.bar.set_postfix_str(f"member {running[0]}/{info['members']} step {self.done[running[0]]}/"
                                     f"{info['steps']}", refresh=False)
            self.where = f"{info['model']} member {info['member']}/{info['members']} at {self._place(info)}"

    def _new_bar(self, info, key):
        from tqdm import tqdm

        self.done = {}
        bar = tqdm(total=info["members"] * info["steps"], unit="step", file=sys.stderr, leave=False,
                   disable=not self.show, desc=f"{info['model']} {self._place(info)}", dynamic_ncols=True)
        bar.key = key
        return bar

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


#: the models that train a network, and so take --device
NEURAL_MODELS = ("GRU", "LSTM", "Transformer", "N-BEATS")


def _device(args, names: list[str]) -> str:
    """``--device`` (default auto), checked before any data is read: an unavailable device is one line, exit 2."""
    from ..text.devices import resolve_device

    if args.device is None:
        return "auto"
    if not any(n in NEURAL_MODELS for n in names):
        raise UsageError(f"--device is an option of the neural models; add one of {', '.join(NEURAL_MODELS)} to "
                         "--models")
    resolve_device(args.device)
    return args.device


def _models(args, names: list[str], device: str = "auto") -> list:
    from ..forecast.nbeats import NBeatsForecaster

    nbeats_options = {"max_steps": args.max_steps, "members": args.members}
    given = [f"--{k.replace('_', '-')}" for k, v in nbeats_options.items() if v is not None]
    if given and "N-BEATS" not in names:
        raise UsageError(f"{given[0]} is an N-BEATS option; add N-BEATS to --models")
    return [NBeatsForecaster.default(args.season, device=device, **nbeats_options) if n == "N-BEATS" else n for n in names]


def _work_notes(models, df, h: int, windows: int, step: int, levels, season: int) -> list[str]:
    """What the neural models will train, said before they start: steps per window, and the input windows that
    reach past the shortest history at the first origin (padded or masked, as the model does)."""
    from ..forecast.core import NEURAL_ARCHITECTURES
    from ..forecast.nbeats import NBeatsForecaster
    from ..forecast.neural import NeuralForecaster

    # observations before the first origin, per series, in Python's integers: a count may be astronomically large
    history = [int(n) - h - (windows - 1) * step for n in df.groupby("unique_id", sort=False).size()]
    again = " and again at each calibration origin's window" if levels else ""
    notes = []
    for m in models:
        if isinstance(m, NBeatsForecaster):
            configs = m.member_configs()
            steps, widest = sum(c.max_steps for c in configs), max(c.input_size(h) for c in configs)
            what = f"{len(configs)} member(s), {steps:,} steps in all,"
            pad = all(c.short == "pad" for c in configs)
        elif m in NEURAL_ARCHITECTURES:
            net = NeuralForecaster(NEURAL_ARCHITECTURES[m], season_length=season, device="cpu")
            steps, widest, pad = net.config.max_steps, net._input_size(h), True
            what = f"for up to {steps:,} steps (fewer if its validation loss stops improving)"
        else:
            continue
        notes.append(f"{m if isinstance(m, str) else m.name} trains {what} at each of {windows} window(s){again}: "
                     f"{steps * windows:,} steps before the first forecast")
        short = sum(n < widest for n in history)
        if short:
            how = "padded with each series' first value" if pad else "masked (left out of the network's input)"
            notes.append(f"{m if isinstance(m, str) else m.name}'s input windows reach {widest} points; at the "
                         f"first origin {short} of {len(history)} series have fewer (the shortest {min(history)}): "
                         f"the missing points are {how}")
    return notes


def _engine(args):
    from ..forecast.engines import Engine

    if args.connect_timeout is not None and args.address is None:
        raise UsageError("--connect-timeout needs --address (and --engine)")
    if args.engine is None:
        return None
    return Engine(args.engine, args.address, timeout=10.0 if args.connect_timeout is None else args.connect_timeout)


def _cmd_evaluate(args) -> int:
    import pandas as pd

    from ..forecast import Forecaster, evaluate, infer_freq, read_series_csv, summarize

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
    # how long a series must be is the library's one rule (Forecaster.cross_validation): its error is the CLI's
    step = args.step or args.horizon
    for note in _work_notes(models, df, args.horizon, args.windows, step, levels, args.season):
        print(f"seqlab: note: {note}", file=sys.stderr, flush=True)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    progress = _Progress(show)
    try:
        with Forecaster(models, freq=infer_freq(df), season_length=args.season, engine=_engine(args),
                        device=device) as fc:
            cv = fc.cross_validation(args.horizon, df, n_windows=args.windows, step_size=step,
                                     min_train_length=args.min_train_length, level=levels or None,
                                     intervals=args.intervals or "conformal",
                                     calibration_windows=args.calibration_windows,
                                     calibration_step=args.calibration_step, progress=progress)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"stopped while fitting {progress.where} after {time.monotonic() - progress.t0:.0f} "
                                "s; the forecasts made so far are lost and nothing was written") from None
    finally:
        progress.close()
    errors = evaluate(cv, df, args.season, fc.names, level=levels)
    table = summarize(errors, naive2="Naive2" if "Naive2" in names else None)
    if levels:  # coverage and Winkler score beside MASE; the quantile scores stay in the Python API
        table = table.drop(columns=["spl", "scrps"])
    if out_dir is not None:
        written = write_tables(out_dir, cv, errors, table, _command(args))
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(table.to_string(index=False))
    notes = [*cv.attrs.get("notes", []), *table.attrs.get("notes", []),
             "sMAPE is in percent on M3/M4's scale, from 0 (exact) to 200"]
    if out_dir is not None:
        notes.append(f"wrote {', '.join(p.name for p in written)} to {out_dir}")
    for note in notes:
        print(f"seqlab: note: {note}", file=sys.stderr)
    return 0


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
    with OutputSet(out_dir, command) as outputs:
        for name, frame in frames.items():
            _iso(frame).to_csv(outputs.path(name), index=False, float_format="%.17g")
        return outputs.commit()


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
    e.add_argument("--connect-timeout", type=float_in(0, 3600, low_open=True), default=None, metavar="SECONDS",
                   help="how long to wait for the scheduler at --address to answer (default 10)")
    e.add_argument("--max-steps", type=positive_int, default=None, metavar="N",
                   help="training steps of each N-BEATS member (default 2500)")
    e.add_argument("--members", type=int_at_least(1, 60), default=None, metavar="N",
                   help="N-BEATS members (default 6: generic and interpretable, inputs 2h, 3h, 4h; fewer keep the "
                        "first N of that order, more add seeds)")
    e.add_argument("--device", choices=DEVICES, default=None,
                   help="where the neural models (GRU, LSTM, Transformer, N-BEATS) train: auto (the default) is "
                        "CUDA when present, then MPS, else the CPU")
    e.add_argument("--output", default=None, metavar="DIR",
                   help="also write cross_validation.csv, series_errors.csv, horizon_errors.csv and summary.csv there "
                        "(full precision, ISO dates)")
    e.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show what is being fitted on stderr (default: when stderr is a terminal)")
    e.set_defaults(func=_cmd_evaluate)
