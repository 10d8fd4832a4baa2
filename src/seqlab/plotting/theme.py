"""One shared theme for every static and interactive figure."""
from __future__ import annotations

import textwrap

PALETTE = {"RNN": "#D8433B", "LSTM": "#3B7DD8", "GRU": "#7FB069", "accent": "steelblue", "grey": "#737373"}
FONT = "DejaVu Sans"
#: the static figure's size in inches (saved at 110 dpi: 748 x 462 px). The book's content column is 612 to 676 px
#: wide, so the image is shown at 82 to 90 percent of its drawn size and its smallest text (8.8 pt, 13 px drawn)
#: reads at 11 px or more; a wider drawing would be scaled down until its labels were hard to read.
FIGURE_SIZE = (6.8, 4.2)

#: characters per line before a title or subtitle wraps, at the static figure's width; the interactive one is
#: drawn in the book's content column (676 px in a 1280-px window).
#: ``layout.static_problems`` and the browser's layout probe check that the wrapped lines fit.
STATIC_TITLE_CHARS, STATIC_SUBTITLE_CHARS = 58, 83
PLOTLY_TITLE_CHARS, PLOTLY_SUBTITLE_CHARS = 58, 92
#: the toolbar (modebar) sits in the top 44 px of an interactive figure; the title starts below it
TOOLBAR_PX = 46


def wrap(text: str | None, width: int, sep: str = "\n") -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters, joined by ``sep``."""
    if not text:
        return text or ""
    return sep.join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


def static_labels(title: str, subtitle: str | None = None, width_in: float = FIGURE_SIZE[0]) -> dict:
    """``labs(**static_labels(title, subtitle))``: title and subtitle wrapped to a static figure ``width_in`` wide."""
    share = width_in / FIGURE_SIZE[0]
    out = dict(title=wrap(title, int(STATIC_TITLE_CHARS * share)))
    if subtitle:
        out["subtitle"] = wrap(subtitle, int(STATIC_SUBTITLE_CHARS * share))
    return out


def theme_seqlab(base_size: float = 11):
    """A quiet minimal theme: light grid, bold title, grey subtitle, legend at the bottom.

    Title and subtitle start at the left edge of the whole figure (not of the panel, which a fixed aspect ratio
    can push far to the right)."""
    from plotnine import element_blank, element_line, element_text, theme, theme_minimal

    return theme_minimal(base_size=base_size, base_family=FONT) + theme(
        plot_title=element_text(weight="bold", size=base_size + 2),
        plot_subtitle=element_text(color="#555555", size=base_size - 1),
        plot_title_position="plot",
        panel_grid_minor=element_blank(),
        panel_grid_major=element_line(color="#E5E5E5"),
        legend_position="bottom",
        figure_size=FIGURE_SIZE,
    )


def plotly_title(title: str, subtitle: str | None = None) -> tuple[dict, int]:
    """The interactive figure's title (bold, subtitle beneath in small grey), placed below the toolbar, and the top
    margin it needs in pixels."""
    lines = wrap(title, PLOTLY_TITLE_CHARS, "<br>").split("<br>")
    sub = wrap(subtitle, PLOTLY_SUBTITLE_CHARS, "<br>").split("<br>") if subtitle else []
    text = "<br>".join(f"<b>{t}</b>" for t in lines)
    if sub:
        text += "<br>" + "<br>".join(f"<span style='font-size:12px;color:#555555'>{s}</span>" for s in sub)
    top = TOOLBAR_PX + 22 * len(lines) + 16 * len(sub) + 24
    return dict(text=text, x=0.02, xanchor="left", xref="container", y=1, yanchor="top", yref="container",
                pad=dict(t=TOOLBAR_PX), font=dict(size=16)), top


def plotly_layout(title: str, subtitle: str | None = None) -> dict:
    title_spec, top = plotly_title(title, subtitle)
    return dict(title=title_spec, template="plotly_white", font=dict(family=FONT, size=13),
                legend=dict(orientation="h", x=0, xanchor="left", y=0, yanchor="bottom", yref="container"),
                margin=dict(l=60, r=30, t=top, b=110))
