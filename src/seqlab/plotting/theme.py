"""One shared theme for every static and interactive figure."""
from __future__ import annotations

PALETTE = {"RNN": "#D8433B", "LSTM": "#3B7DD8", "GRU": "#7FB069", "accent": "steelblue", "grey": "#737373"}
FONT = "DejaVu Sans"


def theme_seqlab(base_size: float = 11):
    """A quiet minimal theme: light grid, bold title, grey subtitle, legend at the bottom."""
    from plotnine import element_blank, element_line, element_text, theme, theme_minimal

    return theme_minimal(base_size=base_size, base_family=FONT) + theme(
        plot_title=element_text(weight="bold", size=base_size + 2),
        plot_subtitle=element_text(color="#555555", size=base_size - 1),
        panel_grid_minor=element_blank(),
        panel_grid_major=element_line(color="#E5E5E5"),
        legend_position="bottom",
        figure_size=(7.5, 4.6),
    )


def plotly_layout(title: str, subtitle: str | None = None) -> dict:
    text = f"<b>{title}</b>" + (f"<br><sup>{subtitle}</sup>" if subtitle else "")
    return dict(title=dict(text=text, x=0.02), template="plotly_white", font=dict(family=FONT, size=13),
                legend=dict(orientation="h", y=-0.2), margin=dict(l=60, r=30, t=80, b=60))
