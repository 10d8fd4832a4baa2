"""Figure builders. Each 2D builder returns (ggplot, plotly Figure) drawn from the same tidy frame."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .theme import plotly_layout, static_labels, theme_seqlab, wrap

__all__ = ["line_pair", "heatmap_pair", "surface_figure"]


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(v: float) -> str:
    """``v`` as m×10ᵏ (10ᵏ alone where m is one)."""
    k = int(np.floor(np.log10(abs(v))))
    m = float(f"{v / 10.0 ** k:.3g}")
    power = "10" + str(k).translate(_SUPERSCRIPT)
    return power if m == 1 else f"{m:g}×{power}"


def _plain_numbers(values) -> list[str]:
    """Tick labels on a log axis as plain numbers with thousands separators (700,000, not 7e5); where some tick
    would need scientific notation, every tick is written as a power of ten (10¹, 10⁻², 10⁻⁵), so one axis does
    not mix two styles."""
    # a log scale's breaks come back as 699999.9999...: round (to significant digits, so 1e-8 stays 1e-8) before
    # asking whether a value is whole
    values = [float(f"{float(v):.6g}") for v in values]
    plain = [f"{v:,.0f}" if abs(v) >= 1 and v.is_integer() else f"{v:g}" for v in values]
    if any("e" in t for t in plain):
        return [_power_of_ten(v) if v else "0" for v in values]
    return plain


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


def integer_valued(values) -> bool:
    """Whether ``values`` are numbers that are all whole (a count, a step, a position): such an axis gets whole
    ticks only."""
    v = pd.Series(values).dropna()
    return bool(len(v) and pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v)
                and np.all(np.mod(v.to_numpy(dtype=float), 1) == 0))


def integer_breaks(lo: float, hi: float, n: int = 6) -> list[int]:
    """At most about ``n`` whole-number ticks between ``lo`` and ``hi`` at a step of 1, 2 or 5 times a power of ten."""
    span = max(hi - lo, 1)
    step = 1
    for power in range(0, 12):
        for m in (1, 2, 5):
            step = m * 10 ** power
            if span / step <= n:
                break
        else:
            continue
        break
    first = int(np.ceil(lo / step) * step)
    return list(range(first, int(np.floor(hi)) + 1, step))


def date_breaks(values, n: int = 5) -> tuple[list, str]:
    """January ticks every 1, 2, 5, 10 ... years so that at most about ``n`` fit, labelled by the year alone."""
    v = pd.to_datetime(pd.Series(values)).dropna()
    first, last = v.min().year, v.max().year
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100) if (last - first) / s <= n)
    years = range(int(np.ceil(first / step) * step), last + 1, step)
    return [pd.Timestamp(year=y, month=1, day=1) for y in years], "%Y"


def log_ratio_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Ticks for a ratio drawn as log10: the ratios 1, 2, 5 x 10^k (and 1 itself) between 10^lo and 10^hi,
    returned as (log10 values, labels such as "0.5", "1", "2")."""
    ratios = sorted({m * 10.0 ** k for k in range(int(np.floor(lo)) - 1, int(np.ceil(hi)) + 2) for m in (1, 2, 5)}
                    | {1.0})
    kept = [r for r in ratios if lo - 1e-9 <= np.log10(r) <= hi + 1e-9]
    if len(kept) < 2:  # less than a factor of two: the two ends, to two figures
        kept = sorted({float(f"{10 ** lo:.2g}"), float(f"{10 ** hi:.2g}"), *kept})
    return [float(np.log10(r)) for r in kept], [f"{r:g}" for r in kept]


#: the stretch of matplotlib's plasma map a default palette samples: beyond 0.62 its orange and yellow stand out
#: from a white page by less than the 3:1 contrast that lines and markers need
PLASMA_SPAN = (0.0, 0.62)


def default_colors(values) -> dict:
    """One colour per level of ``values`` (a categorical's own order, else sorted), from plasma's darker span,
    so that a figure's static image and its interactive version colour each line alike."""
    import matplotlib
    from matplotlib.colors import to_hex

    levels = list(values.cat.categories if isinstance(values.dtype, pd.CategoricalDtype)
                  else sorted(values.dropna().unique()))
    cmap = matplotlib.colormaps["plasma"]
    stops = np.linspace(*PLASMA_SPAN, num=len(levels)) if len(levels) > 1 else [PLASMA_SPAN[0]]
    return {level: to_hex(cmap(float(t))) for level, t in zip(levels, stops)}


def legend_rows(labels, width_px: float | None = None) -> int:
    """Rows a bottom legend of ``labels`` needs to fit the static figure's width: each entry takes its key (about
    30 px) and about 8 px per character of its label at the theme's legend size."""
    from .theme import FIGURE_SIZE

    width_px = FIGURE_SIZE[0] * 110 * 0.92 if width_px is None else width_px
    need = sum(30 + 8 * len(str(v)) for v in labels)
    return max(1, int(np.ceil(need / width_px)))


def line_pair(df: pd.DataFrame, x: str, y: str, color: str | None, *, title: str, subtitle: str = "",
              xlab: str = "", ylab: str = "", log_y: bool = False, log_x: bool = False, reverse_x: bool = False,
              colors: dict | None = None, points: bool = False, hline: float | None = None, facet: str | None = None,
              x_breaks: list | None = None, hline_label: str | None = None, band: tuple[str, str] | None = None,
              free_x: bool = False):
    """Lines of ``y`` against ``x`` per ``color`` group. An integer ``x`` gets whole-number ticks (``x_breaks``
    sets them), a date ``x`` January ticks spaced by the panel's width, a log axis the data's own values.
    ``hline`` draws a dashed reference line, named on the plot by ``hline_label``. ``band`` names two columns,
    the low and high edge of a shaded range drawn under each line in its colour (rows without one get none).
    ``free_x`` gives each facet panel its own x range (whole-number ticks fitted to it)."""
    if color and not colors:
        colors = default_colors(df[color])
    panels = df[facet].nunique() if facet else 1
    columns = int(np.ceil(np.sqrt(panels)))  # facet_wrap's layout
    if x_breaks is None and integer_valued(df[x]) and not log_x:
        x_breaks = integer_breaks(df[x].min(), df[x].max(), n=max(3, 7 - columns))
    axes = dict(x_breaks=x_breaks, columns=columns, panels=panels,
                x_dates=pd.api.types.is_datetime64_any_dtype(df[x]),
                y_int=integer_valued(df[y]) and not facet and not log_y,
                log_breaks=spaced_log_breaks(df[x].unique(), 0.06 if columns == 1 else 0.08 * columns)
                if log_x else None)
    opts = dict(title=title, subtitle=subtitle, xlab=xlab, ylab=ylab, log_y=log_y, log_x=log_x,
                reverse_x=reverse_x, colors=colors, points=points, hline=hline, facet=facet,
                hline_label=hline_label, band=band, free_x=free_x)
    return _line_static(df, x, y, color, axes, **opts), _line_interactive(df, x, y, color, axes, **opts)


def _line_static(df, x, y, color, axes, *, title, subtitle, xlab, ylab, log_y, log_x, reverse_x, colors, points,
                 hline, facet, hline_label, band, free_x):
    """:func:`line_pair`'s plotnine figure."""
    from plotnine import (annotate, aes, facet_wrap, geom_hline, geom_line, geom_point, geom_ribbon, ggplot,
                          guide_legend, guides, labs, scale_fill_manual, scale_color_manual, scale_x_continuous, scale_x_datetime, scale_x_log10, scale_x_reverse,
                          scale_y_continuous, scale_y_log10)

    g = ggplot(df, aes(x, y, color=color) if color else aes(x, y))
    if hline is not None:
        g += geom_hline(yintercept=hline, linetype="dashed", color="#737373")
        if hline_label:
            g += annotate("text", x=df[x].min(), y=hline, label=hline_label, ha="left", va="top", size=9,
                          color="#525252")
    if band:
        fill = dict(fill=color, group=color) if color else {}
        g += geom_ribbon(aes(ymin=band[0], ymax=band[1], **fill), data=df.dropna(subset=list(band)), alpha=0.22,
                         color="none", show_legend=False)
    g += geom_line(size=0.9)
    if points:
        g += geom_point(size=2.4)
    g += labs(**static_labels(title, subtitle), x=xlab, y=wrap(ylab, 40), color="")
    if color:
        g += scale_color_manual(values=colors)
        if band:
            g += scale_fill_manual(values=colors)
        g += guides(color=guide_legend(nrow=legend_rows(df[color].unique())))
    x_breaks = axes["x_breaks"]
    if log_y:
        g += scale_y_log10(labels=_plain_numbers)
    elif axes["y_int"]:
        g += scale_y_continuous(breaks=integer_breaks(df[y].min(), df[y].max()))
    if log_x:
        g += scale_x_log10(breaks=axes["log_breaks"], labels=_plain_numbers)
    elif reverse_x:
        g += scale_x_reverse(breaks=x_breaks) if x_breaks else scale_x_reverse()
    elif x_breaks and free_x:  # each panel's own whole-number ticks
        g += scale_x_continuous(breaks=lambda lims: integer_breaks(lims[0], lims[1], n=5))
    elif x_breaks:
        g += scale_x_continuous(breaks=x_breaks)
    elif axes["x_dates"]:
        breaks, label = date_breaks(df[x], n=max(2, 6 - 2 * (axes["columns"] - 1)))
        g += scale_x_datetime(breaks=breaks, date_labels=label)
    if facet:
        g += facet_wrap(facet, scales="free" if free_x else "free_y")
    return g + theme_seqlab()


def _line_interactive(df, x, y, color, axes, *, title, subtitle, xlab, ylab, log_y, log_x, reverse_x, colors,
                      points, hline, facet, hline_label, band, free_x):
    """:func:`line_pair`'s plotly figure, with the static figure's ticks."""
    import plotly.express as px

    fig = px.line(df, x=x, y=y, color=color, markers=points, log_y=log_y, log_x=log_x, facet_col=facet,
                  facet_col_wrap=axes["columns"] if facet else 0, facet_row_spacing=0.16 if facet else None,
                  facet_col_spacing=0.08 if facet else None, color_discrete_map=colors or {},
                  labels={x: xlab, y: ylab}, error_y=_band_offsets(df, y, band, "hi"),
                  error_y_minus=_band_offsets(df, y, band, "lo"))
    fig.update_layout(legend_title_text="")
    if hline is not None:
        label = dict(annotation_text=hline_label, annotation_position="bottom left") if hline_label else {}
        fig.add_hline(y=hline, line_dash="dash", line_color="#737373", **label)
    if reverse_x:
        fig.update_xaxes(autorange="reversed")
    x_breaks = axes["x_breaks"]
    if free_x:
        fig.update_xaxes(matches=None, showticklabels=True)
    elif x_breaks:
        fig.update_xaxes(tick0=x_breaks[0], dtick=x_breaks[1] - x_breaks[0] if len(x_breaks) > 1 else 1)
    if log_x:
        fig.update_xaxes(tickmode="array", tickvals=axes["log_breaks"], ticktext=_plain_numbers(axes["log_breaks"]))
    if log_y:
        _log_y_ticks(fig, df[y])
    if axes["x_dates"]:
        fig.update_xaxes(tickformat="%Y", dtick=f"M{12 * _year_step(date_breaks(df[x])[0])}")
    if axes["y_int"]:
        ticks = integer_breaks(df[y].min(), df[y].max())
        fig.update_yaxes(tick0=ticks[0], dtick=ticks[1] - ticks[0] if len(ticks) > 1 else 1)
    fig.update_layout(**plotly_layout(title, subtitle))
    if facet:
        _facet_titles(fig, xlab, ylab, axes["panels"], axes["columns"])
    else:
        fig.update_yaxes(title_text=wrap(ylab, 40, "<br>"))
    return fig


def _band_offsets(df, y: str, band, side: str):
    """The plotly twin shows ``band`` as error bars: each edge's distance from the line (0 where there is none)."""
    if not band:
        return None
    edge = df[band[1] if side == "hi" else band[0]]
    return ((edge - df[y]) if side == "hi" else (df[y] - edge)).fillna(0.0).to_numpy()


def _log_y_ticks(fig, values: pd.Series) -> None:
    """Log-axis ticks written out in full. Plotly labels a short log range by its digits alone ("2 5" within each
    decade, so 0.5 and 50 both read "5"): below three decades the ticks are 1, 2 and 5 times powers of ten,
    labelled as plain numbers; over more, a tick every k decades, about six in all, written as powers of ten."""
    positive = values[values > 0]
    if not len(positive):
        return
    lo, hi = float(positive.min()), float(positive.max())
    decades = np.log10(hi / lo)
    if decades > 3:
        fig.update_yaxes(dtick=int(np.ceil(decades / 6)), exponentformat="power")
        return
    steps = (1, 2, 5) if decades > 0.7 else (1, 1.5, 2, 3, 5, 7)
    ticks = [m * 10.0 ** k for k in range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1)
             for m in steps]
    ticks = [float(f"{t:.3g}") for t in ticks if lo / 3 <= t <= hi * 3]  # margin: a band or padding past the data
    fig.update_yaxes(tickmode="array", tickvals=ticks, ticktext=_plain_numbers(ticks))


def _facet_titles(fig, xlab: str, ylab: str, panels: int, columns: int) -> None:
    """Panels titled by their value ("window 1", not "window=window 1") and one axis title per figure, as in the
    static figure, not one per panel."""
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.for_each_xaxis(lambda ax: ax.update(title_text=""))
    fig.for_each_yaxis(lambda ax: ax.update(title_text=""))
    fig.add_annotation(text=xlab, x=0.5, xref="paper", y=0, yref="paper", yshift=-34, yanchor="top",
                       showarrow=False, font=dict(size=14))
    if ylab:
        fig.add_annotation(text=wrap(ylab, 40, "<br>"), x=0, xref="paper", y=0.5, yref="paper", xshift=-58,
                           xanchor="right", textangle=-90, showarrow=False, font=dict(size=14))
    fig.update_layout(margin=dict(l=90, b=110), height=320 + 170 * int(np.ceil(panels / columns)))


def _year_step(breaks) -> int:
    return breaks[1].year - breaks[0].year if len(breaks) > 1 else 1


def heatmap_pair(df: pd.DataFrame, x: str, y: str, fill: str, *, title: str, subtitle: str = "", xlab: str = "",
                 ylab: str = "", facet: str | None = None, cmap: str = "inferno", diverging: bool = False,
                 antidiagonal: int | None = None, fill_title: str | None = None):
    """A raster of ``fill`` over (``x``, ``y``), y reversed so row 1 is on top (matrix orientation); the colour bar
    is titled ``fill_title`` (default: the column's name)."""
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
        theme,
    )

    def few(col, most: int = 16):
        # every value as a tick where at most ``most`` fit; up to 16 values thinned to every other (or third ...)
        u = sorted(df[col].unique())
        if len(u) <= most:
            return u
        return u[::int(np.ceil(len(u) / most))] if len(u) <= 16 else None

    # side-by-side panels share the width: their source axes get half the ticks, so two-digit labels stay apart
    x_most = 8 if facet and df[facet].nunique() > 1 else 16

    # one square matrix: a figure about as wide as it is tall, so the title is not pushed off to the right
    # (the square panel is centred, and the title starts at its axis labels: about 1.2 in from the left edge)
    square = not facet and not diverging
    size = (6.0, 5.4) if square else None
    labels = static_labels(title, subtitle, size[0] - 1.2) if square else static_labels(title, subtitle)
    g = ggplot(df, aes(x, y, fill=fill)) + geom_tile() + labs(**labels, x=xlab, y=ylab, fill=fill_title or fill)
    g += scale_y_reverse(breaks=few(y)) if few(y) else scale_y_reverse()
    if few(x, x_most):
        g += scale_x_continuous(breaks=few(x, x_most))
    g += scale_fill_gradient2(low="#3B7DD8", mid="white", high="#D8433B") if diverging else scale_fill_cmap(cmap)
    if antidiagonal is not None:
        # drawn in the reversed-y scale's space, where y is stored as -y: -y = x - (n + 1)
        g += geom_abline(slope=1, intercept=-(antidiagonal + 1), color="white", linetype="dashed", size=0.6)
    if facet:
        g += facet_wrap(facet, nrow=1)
    if not diverging:
        g += coord_fixed()
    g += theme_seqlab()
    if size:
        g += theme(figure_size=size)
    return g, _heatmap_interactive(df, x, y, fill, title=title, subtitle=subtitle, facet=facet, cmap=cmap,
                                   diverging=diverging, xlab=xlab, ylab=ylab, antidiagonal=antidiagonal,
                                   fill_title=fill_title or fill)


def _heatmap_interactive(df, x, y, fill, *, title, subtitle, facet, cmap, diverging, xlab="", ylab="",
                         antidiagonal=None, fill_title=""):
    """:func:`heatmap_pair`'s plotly figure: one heatmap per panel, row 1 on top."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    groups = list(df[facet].unique()) if facet else [None]
    fig = make_subplots(rows=1, cols=len(groups), subplot_titles=[str(gr) for gr in groups] if facet else None)
    scale = "RdBu_r" if diverging else cmap.capitalize()
    # one colour scale for every panel, as in the static figure: one colour bar then reads all of them
    reach = float(df[fill].abs().max())
    zmin, zmax = (-reach, reach) if diverging else (float(df[fill].min()), float(df[fill].max()))
    for i, gr in enumerate(groups, start=1):
        part = df if gr is None else df[df[facet] == gr]
        wide = part.pivot(index=y, columns=x, values=fill)
        fig.add_trace(go.Heatmap(z=wide.values, x=wide.columns, y=wide.index, colorscale=scale, zmin=zmin,
                                 zmax=zmax, showscale=i == len(groups),
                                 colorbar=dict(title=dict(text=fill_title, side="right"))),
                      row=1, col=i)
        fig.update_yaxes(autorange="reversed", row=1, col=i)
        if antidiagonal is not None:  # the static figure's dashed line x + y = n + 1, in every panel
            n = antidiagonal
            fig.add_trace(go.Scatter(x=[0.5, n + 0.5], y=[n + 0.5, 0.5], mode="lines", showlegend=False,
                                     hoverinfo="skip", line=dict(color="white", dash="dash", width=1.5)),
                          row=1, col=i)
            fig.update_xaxes(range=[0.5, n + 0.5], row=1, col=i)  # the line's ends stay on the matrix's edges
            fig.update_yaxes(range=[n + 0.5, 0.5], autorange=False, row=1, col=i)
    fig.update_xaxes(title_text=xlab)
    fig.update_yaxes(title_text=ylab, col=1)
    fig.update_layout(**plotly_layout(title, subtitle))
    return fig


def surface_figure(surfaces: list[dict], *, title: str, xlab: str, ylab: str, zlab: str, log_x: bool = False,
                   log_y: bool = False, lines: list[dict] | None = None, subtitle: str = ""):
    """An interactive 3D figure: each surface is a dict(x=, y=, z=, name=, colorscale=), optionally with ``cmid``
    (the value the colour scale centres on, e.g. 0 for a diverging scale) and ``colorbar_ticks`` (values, labels)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for s in surfaces:
        colorbar = dict(title=dict(text=s.get("colorbar", zlab), side="right"))
        if "colorbar_ticks" in s:
            values, labels = s["colorbar_ticks"]
            colorbar.update(tickmode="array", tickvals=list(values), ticktext=list(labels))
        fig.add_trace(go.Surface(x=np.asarray(s["x"]), y=np.asarray(s["y"]), z=np.asarray(s["z"]), name=s.get("name"),
                                 colorscale=s.get("colorscale", "Viridis"), opacity=s.get("opacity", 0.95),
                                 showscale=s.get("showscale", len(surfaces) == 1), cmid=s.get("cmid"),
                                 colorbar=colorbar))
    for ln in lines or []:
        fig.add_trace(go.Scatter3d(x=ln["x"], y=ln["y"], z=ln["z"], mode="lines", name=ln.get("name"),
                                   line=dict(width=8, color=ln.get("color", "red"))))
    def axis(label, log, values):
        spec = dict(title=label, type="log" if log else "linear")
        if log:  # the grid's own values as ticks, not plotly's 2 3 4 5 ... between decades
            ticks = spaced_log_breaks(np.unique(np.concatenate([np.ravel(np.asarray(v)) for v in values])), 0.1)
            spec.update(tickmode="array", tickvals=ticks, ticktext=_plain_numbers(ticks))
        return spec

    # the camera stands back far enough that the axis titles stay inside the frame at the book's width
    fig.update_layout(**plotly_layout(title, subtitle), scene=dict(
        xaxis=axis(xlab, log_x, [s["x"] for s in surfaces]), yaxis=axis(ylab, log_y, [s["y"] for s in surfaces]),
        zaxis=dict(title=zlab), camera=dict(eye=dict(x=1.75, y=-1.75, z=1.0))), height=620)
    fig.update_layout(margin=dict(l=10, r=10, b=10))  # no legend below a 3D scene: its room goes to the scene
    return fig
