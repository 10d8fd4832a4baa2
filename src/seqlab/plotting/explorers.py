"""Explorers: offline plotly figures with a slider whose every position is computed when the page is built.

No kernel is needed to move the slider: each step is a precomputed set of traces,
and the slider switches which traces are visible. ``tests/test_book.py`` moves each
slider in headless Chromium and checks that the drawn data changes.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["slider_figure"]


def slider_figure(steps: list[tuple[str, list]], *, title: str, subtitle: str = "", xlab: str = "", ylab: str = "",
                  slider_label: str = "", log_y: bool = False, log_x: bool = False, active: int = 0,
                  yrange: tuple[float, float] | None = None):
    """A figure with one slider: ``steps`` is ``[(label, [plotly traces]), ...]``, all steps with the same trace count.

    Returns a ``plotly.graph_objects.Figure`` whose slider shows one step's traces at a time.
    """
    import plotly.graph_objects as go

    from .theme import plotly_layout

    if not steps:
        raise InvalidParameterError("an explorer needs at least one step")
    per = len(steps[0][1])
    if any(len(traces) != per for _, traces in steps):
        raise InvalidParameterError("every step of an explorer must have the same number of traces")
    fig = go.Figure()
    for i, (_, traces) in enumerate(steps):
        for tr in traces:
            tr.visible = i == active
            fig.add_trace(tr)
    buttons = []
    for i, (label, _) in enumerate(steps):
        visible = [j // per == i for j in range(per * len(steps))]
        buttons.append(dict(method="update", label=label, args=[{"visible": visible}]))
    # top to bottom: title (below the toolbar), the legend in one row, the plot, the x-axis title, the slider with
    # its current value: nothing is placed over anything else, whatever the figure's height
    layout = plotly_layout(title, subtitle)
    legend_row = 28
    layout["margin"].update(t=layout["margin"]["t"] + legend_row, b=150)
    layout["legend"] = dict(orientation="h", x=0, xanchor="left", y=1, yanchor="bottom", yref="paper")
    fig.update_layout(**layout, height=520)
    # the step labels are centred on their ticks: inset the rail by half the longest so the end labels fit
    inset = 10 + 4 * max(len(label) for label, _ in steps)
    fig.update_layout(sliders=[dict(active=active, steps=buttons, currentvalue=dict(prefix=slider_label),
                                    y=0, yanchor="top", pad=dict(t=56, l=inset, r=inset))])
    fig.update_xaxes(title_text=xlab, type="log" if log_x else None)
    fig.update_yaxes(title_text=ylab, type="log" if log_y else None)
    if yrange is not None:
        fig.update_yaxes(range=list(yrange))
        if log_y and yrange[1] - yrange[0] > 3:  # a tick every k decades, about six, written as powers of ten
            fig.update_yaxes(dtick=int(np.ceil((yrange[1] - yrange[0]) / 6)), exponentformat="power")
    return fig
