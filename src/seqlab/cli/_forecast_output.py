"""What ``seqlab forecast`` writes: forecasts and tables as CSV at full precision with ISO dates, on stdout or as
one complete set in an output folder, and the notes after them."""
from __future__ import annotations

import sys

from ._forecast_report import interval_note

__all__ = ["command_line", "iso", "long_forecasts", "write_forecasts", "write_tables"]


def command_line(args) -> str:
    """The command line as the manifest of an output folder records it."""
    import shlex

    return shlex.join(["seqlab", *getattr(args, "argv", ["forecast", "evaluate"])])


def iso(frame):
    """Dates as ISO 8601: the date alone when every time is midnight."""
    import pandas as pd

    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[c]):
            midnight = (out[c].dropna() == out[c].dropna().dt.normalize()).all()
            out[c] = out[c].dt.strftime("%Y-%m-%d" if midnight else "%Y-%m-%dT%H:%M:%S")
    return out


def long_forecasts(frame, names, levels):
    """``unique_id, ds, model, forecast`` and ``lo-L, hi-L`` for each level: one row per series, model and date,
    the series sorted, the models in the order ``names`` gives them (the order of --models)."""
    import pandas as pd

    parts = []
    for name in names:
        cols = {name: "forecast", **{f"{name}-{side}-{lv}": f"{side}-{lv}" for lv in levels for side in ("lo", "hi")}}
        parts.append(frame[["unique_id", "ds", *cols]].rename(columns=cols).assign(model=name))
    out = pd.concat(parts, ignore_index=True)
    order = ["unique_id", "ds", "model", "forecast", *[f"{side}-{lv}" for lv in levels for side in ("lo", "hi")]]
    rank = out["model"].map({n: k for k, n in enumerate(names)})
    out = out.assign(_rank=rank).sort_values(["unique_id", "_rank", "ds"], kind="stable")
    return out[order].reset_index(drop=True)


def write_forecasts(args, frame, names, levels, notes: list) -> None:
    """The forecasts as CSV on stdout, or as forecasts.csv in --output (one complete set); then the notes."""
    from ..files import OutputSet

    text = iso(long_forecasts(frame, names, sorted(levels))).to_csv(index=False)  # floats: shortest round-trip
    notes = [*notes, *frame.attrs.get("notes", [])]
    if levels:
        notes.append(interval_note(levels, frame.attrs.get("intervals", {}), names))
    if args.output is None:
        sys.stdout.write(text)
    else:
        outputs = OutputSet(args.output, command_line(args))
        try:
            with outputs:
                outputs.path("forecasts.csv").write_text(text, encoding="utf-8")
                outputs.commit()
        except KeyboardInterrupt:
            raise KeyboardInterrupt(outputs.fate()) from None
        notes.append(f"wrote forecasts.csv to {args.output}")
    for note in notes:
        print(f"seqlab: note: {note}", file=sys.stderr)


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
                iso(frame).to_csv(outputs.path(name), index=False)  # floats in their shortest round-trip form
            return outputs.commit()
    except KeyboardInterrupt:
        raise KeyboardInterrupt(outputs.fate()) from None
