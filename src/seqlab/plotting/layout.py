"""Layout checks for the static figures: no text outside the canvas, no text over other text, integer ticks.

A plotnine figure lays itself out when it is drawn; a title or subtitle longer than the canvas is
then cut at the edge of the PNG without any warning, and tick labels that are too dense print over
each other. :func:`static_problems` looks at every text artist of the drawn matplotlib figure
(titles, subtitles, axis titles, tick labels, strip labels, legend entries, colourbar labels) and
reports

- text whose extent leaves the figure canvas (clipped in the PNG);
- two texts whose extents overlap (unreadable: dense date ticks, a legend over an axis title);
- a tick label with a fractional value on an axis whose data are all integers (``2.5`` members).

:func:`write_pair <seqlab.plotting.writing.write_pair>` runs it on every figure it saves and raises
:class:`FigureLayoutError` after writing the files, so that the faulty PNG can be looked at.
"""
from __future__ import annotations

import numpy as np

from ..errors import SeqlabError

__all__ = ["FigureLayoutError", "static_problems", "text_boxes"]

#: pixels a text may reach past the canvas or into another text before it counts
TOLERANCE_PX = 1.0


class FigureLayoutError(SeqlabError, ValueError):
    """A figure's text is clipped by its frame, overlaps other text, or an integer axis has fractional ticks."""


def _drawn_tick_labels(ax) -> list:
    """The tick labels matplotlib actually draws on ``ax`` (ticks outside the view are left out)."""
    labels = []
    for axis in (ax.xaxis, ax.yaxis):
        if not axis.get_visible():
            continue
        try:
            ticks = axis._update_ticks()  # the ticks inside the view interval, as drawn
        except Exception:  # pragma: no cover - a matplotlib without the private helper
            ticks = axis.get_major_ticks()
        for tick in ticks:
            for label, on in ((tick.label1, tick.label1.get_visible()), (tick.label2, tick.label2.get_visible())):
                if on:
                    labels.append((axis.axis_name, label))
    return labels


def _all_tick_labels(fig) -> set[int]:
    ids = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.majorTicks + axis.minorTicks:
                ids.update((id(tick.label1), id(tick.label2)))
    return ids


def text_boxes(fig) -> list[dict]:
    """Every visible, non-empty text of a drawn matplotlib figure: ``dict(text, kind, box=(x0, y0, x1, y1))``
    in display pixels (origin bottom left)."""
    from matplotlib.text import Text

    renderer = fig._get_renderer()
    ticks = _all_tick_labels(fig)
    found = []
    for t in fig.findobj(Text):
        if id(t) in ticks or not t.get_visible() or not t.get_text().strip():
            continue
        found.append(("text", t))
    for i, ax in enumerate(fig.axes):
        found.extend((f"{name}-tick@{i}", t) for name, t in _drawn_tick_labels(ax) if t.get_text().strip())
    boxes = []
    for kind, t in found:
        bb = t.get_window_extent(renderer)
        if not np.all(np.isfinite([bb.x0, bb.y0, bb.x1, bb.y1])) or bb.width <= 0 or bb.height <= 0:
            continue
        boxes.append(dict(text=t.get_text(), kind=kind, box=(bb.x0, bb.y0, bb.x1, bb.y1)))
    return boxes


def _overlap(a, b, tol: float = TOLERANCE_PX) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > tol


def _short(text: str, n: int = 50) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[: n - 1] + "…")


def _number(label: str):
    s = label.replace(",", "").replace("\u2212", "-").strip()
    try:
        return float(s)
    except ValueError:
        return None


def _integer_columns(gg) -> dict[str, bool]:
    """For the x and y aesthetics of a ggplot: whether every value of the mapped data column is an integer."""
    import pandas as pd

    out = {}
    layers = [(gg.data, gg.mapping)] + [(layer._data if isinstance(getattr(layer, "_data", None), pd.DataFrame) else gg.data,
                                         {**dict(gg.mapping), **dict(layer.mapping)} if layer.inherit_aes
                                         else dict(layer.mapping)) for layer in gg.layers]
    for data, mapping in layers:
        if not isinstance(data, pd.DataFrame):
            continue
        for aesthetic in ("x", "y"):
            col = dict(mapping).get(aesthetic)
            if not isinstance(col, str) or col not in data.columns:
                continue
            v = data[col]
            is_int = bool(pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v)
                          and len(v.dropna()) and np.all(np.mod(v.dropna().to_numpy(dtype=float), 1) == 0))
            out[aesthetic] = out.get(aesthetic, True) and is_int
    return out


def static_problems(fig, gg=None) -> list[str]:
    """What is wrong with the layout of the drawn matplotlib figure ``fig`` (of ggplot ``gg``, if given)."""
    canvas = fig.bbox
    W, H = canvas.width, canvas.height
    boxes = text_boxes(fig)
    problems = []
    for b in boxes:
        x0, y0, x1, y1 = b["box"]
        cut = [side for side, past in (("left", -x0), ("right", x1 - W), ("bottom", -y0), ("top", y1 - H))
               if past > TOLERANCE_PX]
        if cut:
            problems.append(f"text {_short(b['text'])} is clipped at the {' and '.join(cut)} of the canvas "
                            f"({x0:.0f}..{x1:.0f} x {y0:.0f}..{y1:.0f} px on {W:.0f} x {H:.0f})")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if _overlap(a["box"], b["box"]):
                problems.append(f"text {_short(a['text'])} overlaps {_short(b['text'])}")
    if gg is not None:
        integer = _integer_columns(gg)
        for b in boxes:
            axis = b["kind"].split("-")[0]
            if b["kind"].endswith(tuple(f"@{i}" for i in range(len(fig.axes)))) and integer.get(axis):
                value = _number(b["text"])
                if value is not None and not float(value).is_integer():
                    problems.append(f"{axis} axis holds integers but has the fractional tick {b['text']!r}")
    return list(dict.fromkeys(problems))


def check_static(fig, gg=None, name: str = "figure") -> None:
    """Raise :class:`FigureLayoutError` listing every problem :func:`static_problems` finds."""
    problems = static_problems(fig, gg)
    if problems:
        raise FigureLayoutError(f"{name}: " + "; ".join(problems))

