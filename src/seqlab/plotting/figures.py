"""Figure builders. Each 2D builder returns (ggplot, plotly Figure) drawn from the same tidy frame."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import SeqlabError
from ..store import atomic_write
from .theme import plotly_layout, theme_seqlab

__all__ = ["line_pair", "heatmap_pair", "surface_figure", "write_pair", "write_plotly", "FigureWriteError"]


def _plain_numbers(values) -> list[str]:
    """Tick labels on a log axis as plain numbers with thousands separators (700,000, not 7e5)."""
    return [f"{v:,.0f}" if abs(v) >= 1 and float(v).is_integer() else f"{v:g}" for v in values]


def spaced_log_breaks(values, min_gap: float = 0.06) -> list:
    """The data's own x values as log-scale ticks, leaving out any closer than ``min_gap`` of the axis (in log10
    units, as a share of the whole range) to the last one kept, so that neighbours such as 2,048 and 2,118 do not
    print over each other. The smallest and the largest value are always kept."""
    v = sorted(float(x) for x in values if x > 0)
    if len(v) < 3:
        return v
    span = max(np.log10(v[-1] / v[0]), 1e-12)
    kept = [v[0]]
    for x in v[1:-1]:
        if np.log10(x / kept[-1]) / span >= min_gap and np.log10(v[-1] / x) / span >= min_gap:
            kept.append(x)
    return kept + [v[-1]]


def line_pair(df: pd.DataFrame, x: str, y: str, color: str | None, *, title: str, subtitle: str = "",
              xlab: str = "", ylab: str = "", log_y: bool = False, log_x: bool = False, reverse_x: bool = False,
              colors: dict | None = None, points: bool = False, hline: float | None = None, facet: str | None = None):
    """Lines of ``y`` against ``x`` per ``color`` group."""
    import plotly.express as px
    from plotnine import (
        aes,
        facet_wrap,
        geom_hline,
        geom_line,
        geom_point,
        ggplot,
        labs,
        scale_color_cmap_d,
        scale_color_manual,
        scale_x_log10,
        scale_x_reverse,
        scale_y_log10,
    )

    g = ggplot(df, aes(x, y, color=color) if color else aes(x, y))
    if hline is not None:
        g += geom_hline(yintercept=hline, linetype="dashed", color="#737373")
    g += geom_line(size=0.9)
    if points:
        g += geom_point(size=2.4)
    g += labs(title=title, subtitle=subtitle, x=xlab, y=ylab, color="")
    if color:
        g += scale_color_manual(values=colors) if colors else scale_color_cmap_d("plasma")
    if log_y:
        g += scale_y_log10(labels=_plain_numbers)
    if log_x:
        g += scale_x_log10(breaks=spaced_log_breaks(df[x].unique()), labels=_plain_numbers)
    if reverse_x:
        g += scale_x_reverse()
    if facet:
        g += facet_wrap(facet, scales="free_y")
    g += theme_seqlab()

    fig = px.line(df, x=x, y=y, color=color, markers=points, log_y=log_y, log_x=log_x, facet_col=facet,
                  color_discrete_map=colors or {}, labels={x: xlab, y: ylab})
    if hline is not None:
        fig.add_hline(y=hline, line_dash="dash", line_color="#737373")
    if reverse_x:
        fig.update_xaxes(autorange="reversed")
    if facet:
        fig.update_yaxes(matches=None, showticklabels=True)
    fig.update_layout(**plotly_layout(title, subtitle))
    return g, fig


def heatmap_pair(df: pd.DataFrame, x: str, y: str, fill: str, *, title: str, subtitle: str = "", xlab: str = "",
                 ylab: str = "", facet: str | None = None, cmap: str = "inferno", diverging: bool = False,
                 antidiagonal: int | None = None):
    """A raster of ``fill`` over (``x``, ``y``), y reversed so row 1 is on top (matrix orientation)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    from plotnine import (
        aes,
        coord_fixed,
        facet_wrap,
        geom_abline,
        geom_tile,
        ggplot,
        labs,
        scale_fill_cmap,
        scale_fill_gradient2,
        scale_x_continuous,
        scale_y_reverse,
    )

    def few(col):
        u = sorted(df[col].unique())
        return u if len(u) <= 16 else None

    g = ggplot(df, aes(x, y, fill=fill)) + geom_tile() + labs(title=title, subtitle=subtitle, x=xlab, y=ylab, fill="")
    g += scale_y_reverse(breaks=few(y)) if few(y) else scale_y_reverse()
    if few(x):
        g += scale_x_continuous(breaks=few(x))
    g += scale_fill_gradient2(low="#3B7DD8", mid="white", high="#D8433B") if diverging else scale_fill_cmap(cmap)
    if antidiagonal is not None:
        # drawn in the reversed-y scale's space, where y is stored as -y: -y = x - (n + 1)
        g += geom_abline(slope=1, intercept=-(antidiagonal + 1), color="white", linetype="dashed", size=0.6)
    if facet:
        g += facet_wrap(facet, nrow=1)
    if not diverging:
        g += coord_fixed()
    g += theme_seqlab()

    groups = list(df[facet].unique()) if facet else [None]
    fig = make_subplots(rows=1, cols=len(groups), subplot_titles=[str(gr) for gr in groups] if facet else None)
    scale = "RdBu_r" if diverging else cmap.capitalize()
    for i, gr in enumerate(groups, start=1):
        part = df if gr is None else df[df[facet] == gr]
        wide = part.pivot(index=y, columns=x, values=fill)
        fig.add_trace(go.Heatmap(z=wide.values, x=wide.columns, y=wide.index, colorscale=scale,
                                 showscale=i == len(groups), zmid=0 if diverging else None), row=1, col=i)
        fig.update_yaxes(autorange="reversed", row=1, col=i)
    fig.update_layout(**plotly_layout(title, subtitle))
    return g, fig


def surface_figure(surfaces: list[dict], *, title: str, xlab: str, ylab: str, zlab: str, log_x: bool = False,
                   log_y: bool = False, lines: list[dict] | None = None):
    """An interactive 3D figure: each surface is a dict(x=, y=, z=, name=, colorscale=)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for s in surfaces:
        fig.add_trace(go.Surface(x=np.asarray(s["x"]), y=np.asarray(s["y"]), z=np.asarray(s["z"]), name=s.get("name"),
                                 colorscale=s.get("colorscale", "Viridis"), opacity=s.get("opacity", 0.95),
                                 showscale=s.get("showscale", len(surfaces) == 1),
                                 colorbar=dict(title=s.get("colorbar", zlab))))
    for ln in lines or []:
        fig.add_trace(go.Scatter3d(x=ln["x"], y=ln["y"], z=ln["z"], mode="lines", name=ln.get("name"),
                                   line=dict(width=8, color=ln.get("color", "red"))))
    fig.update_layout(**plotly_layout(title), scene=dict(
        xaxis=dict(title=xlab, type="log" if log_x else "linear"),
        yaxis=dict(title=ylab, type="log" if log_y else "linear"), zaxis=dict(title=zlab)), height=620)
    return fig


class FigureWriteError(SeqlabError, OSError):
    """A figure file could not be written (disk full, read-only folder); any older file of that name is intact."""


def _write_atomically(path: Path, write) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write(path, write)
    except OSError as e:
        raise FigureWriteError(f"could not write {path} ({e.strerror or e}); an older file of that name is left "
                               "as it was") from None


def write_plotly(fig, path: Path) -> Path:
    """Write a self-contained-offline HTML file atomically; plotly.min.js is written once beside it."""
    path = Path(path)
    return _write_atomically(path, lambda tmp: fig.write_html(tmp, include_plotlyjs="directory", full_html=True))


def write_pair(gg, fig, stem: Path, dpi: int = 110) -> list[Path]:
    """Save the static PNG and the interactive HTML twin as ``stem.png`` and ``stem.html``, each atomically."""
    stem = Path(stem)
    png = stem.with_suffix(".png")

    def save_png(tmp):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # plotnine notes its own saving parameters
            gg.save(tmp, format="png", dpi=dpi, verbose=False)

    return [_write_atomically(png, save_png), write_plotly(fig, stem.with_suffix(".html"))]
