"""Explorers: offline plotly figures with a slider whose every position is computed when the page is built.

No kernel is needed to move the slider: each step is a precomputed set of traces,
and the slider switches which traces are visible. ``tests/test_book.py`` moves each
slider in headless Chromium and checks that the drawn data changes.
"""
from __future__ import annotations

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
    fig.update_layout(**plotly_layout(title, subtitle))
    fig.update_layout(sliders=[dict(active=active, steps=buttons, currentvalue=dict(prefix=slider_label),
                                    pad=dict(t=50))], margin=dict(l=60, r=30, t=80, b=110))
    fig.update_xaxes(title_text=xlab, type="log" if log_x else None)
    fig.update_yaxes(title_text=ylab, type="log" if log_y else None)
    if yrange is not None:
        fig.update_yaxes(range=list(yrange))
    return fig
