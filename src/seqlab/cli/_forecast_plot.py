"""``--plot DIR``: one figure per series, its recent history and each model's forecast (with the widest band when
there are levels), as a static PNG and its interactive HTML twin, drawn and written like the chapter's figures
(:func:`seqlab.plotting.figures.line_pair`, :func:`seqlab.plotting.writing.write_pair`) into one complete set."""
from __future__ import annotations

import re

__all__ = ["plot_options", "write_plots", "HISTORY_SHOWN"]

#: the most observations of history a figure shows before the forecast (the rest would squeeze the forecast)
HISTORY_SHOWN = 120


def plot_options(c, what: str) -> None:
    from ._common import positive_int

    c.add_argument("--plot", default=None, metavar="DIR",
                   help=f"also draw one figure per series into DIR, as PNG and interactive HTML: {what} (default: "
                        "none: no figures)")
    c.add_argument("--plot-max", type=positive_int, default=24, metavar="N",
                   help="the most series --plot draws, the first N in the file's order; a note says when more were "
                        "left out (default: 24)")


def _stems(ids) -> list[str]:
    """A file name per series id: its letters, digits, dots, dashes and underscores, made unique."""
    seen: dict = {}
    out = []
    for uid in ids:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(uid)).strip("._") or "series"
        n = seen.get(stem, 0)
        seen[stem] = n + 1
        out.append(stem if n == 0 else f"{stem}-{n + 1}")
    return out


def _tidy(history, forecasts, names, level):
    """One series' figure data: ``ds, value, line`` (history first, then each model) and the band's ``lo, hi``."""
    import numpy as np
    import pandas as pd

    parts = [pd.DataFrame({"ds": history["ds"].to_numpy(), "value": history["y"].to_numpy(float),
                           "line": "history", "lo": np.nan, "hi": np.nan})]
    for name in names:
        lo = forecasts[f"{name}-lo-{level}"].to_numpy(float) if level is not None else np.nan
        hi = forecasts[f"{name}-hi-{level}"].to_numpy(float) if level is not None else np.nan
        parts.append(pd.DataFrame({"ds": forecasts["ds"].to_numpy(), "value": forecasts[name].to_numpy(float),
                                   "line": name, "lo": lo, "hi": hi}))
    out = pd.concat(parts, ignore_index=True)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(out["lo"]) & np.isfinite(out["hi"])
    out.loc[~finite, ["lo", "hi"]] = np.nan  # an unbounded band would stretch the axis to infinity
    out["line"] = pd.Categorical(out["line"], categories=["history", *names])
    return out


def write_plots(folder, history, forecasts, names, levels, command: str, limit: int, what: str) -> list[str]:
    """Draw each series of ``forecasts`` (long: ``unique_id, ds`` and the model columns) over its ``history`` into
    ``folder`` as one complete set; returns the notes (how many were drawn, and how many left out)."""
    import pandas as pd

    from ..files import OutputSet
    from ..plotting.figures import default_colors, line_pair
    from ..plotting.writing import write_pair

    ids = list(dict.fromkeys(forecasts["unique_id"]))
    shown = ids[:limit]
    level = max(levels) if levels else None
    past = {u: g.tail(HISTORY_SHOWN) for u, g in history.groupby("unique_id", sort=False)}
    colors = {"history": "#262626", **default_colors(pd.Series(pd.Categorical(names, categories=list(names))))}
    with OutputSet(folder, command) as out:
        for uid, stem in zip(shown, _stems(shown)):
            df = _tidy(past[uid], forecasts[forecasts["unique_id"] == uid], names, level)
            band = f", the {level:g}% band shaded" if level is not None else ""
            gg, fig = line_pair(df, "ds", "value", "line", title=f"Series {uid}",
                                subtitle=f"{what}{band}", xlab="", ylab="y", colors=colors,
                                band=("lo", "hi") if level is not None else None)
            write_pair(gg, fig, out.path(stem), check=False)
        written = out.commit()
    notes = [f"drew {len(shown)} figure(s) ({len([p for p in written if p.suffix == '.png'])} PNG and HTML pairs) "
             f"into {folder}"]
    if len(ids) > len(shown):
        notes.append(f"--plot drew the first {len(shown)} of {len(ids)} series; --plot-max N draws more")
    return notes

