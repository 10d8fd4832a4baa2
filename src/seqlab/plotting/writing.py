"""Writing a figure pair to disk: the static PNG and its interactive HTML twin, each atomically."""
from __future__ import annotations

import warnings
from pathlib import Path

from ..errors import SeqlabError
from ..files import atomic_write

__all__ = ["write_pair", "write_plotly", "save_png", "FigureWriteError"]


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


def save_png(gg, path, dpi: int = 110):
    """Draw ``gg`` and save it as a PNG at ``path``; returns the drawn matplotlib figure (laid out as saved)."""
    from plotnine._utils.context import plot_context

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # plotnine notes its own saving parameters
        saved = gg.save_helper(filename=path, format="png", dpi=dpi, verbose=False)
        with plot_context(gg).rc_context:
            saved.figure.savefig(**saved.kwargs)
    return saved.figure


def write_pair(gg, fig, stem: Path, dpi: int = 110, check: bool = True) -> list[Path]:
    """Save the static PNG and the interactive HTML twin as ``stem.png`` and ``stem.html``, each atomically.

    With ``check`` (the default) the PNG's layout is then checked (:func:`seqlab.plotting.layout.static_problems`:
    text clipped by the canvas, text over text, fractional ticks on an integer axis), and
    :class:`~seqlab.plotting.layout.FigureLayoutError` is raised after both files are written, so the faulty PNG
    can be looked at.
    """
    import matplotlib.pyplot as plt

    from .layout import check_static

    stem = Path(stem)
    png = stem.with_suffix(".png")
    drawn = []
    paths = [_write_atomically(png, lambda tmp: drawn.append(save_png(gg, tmp, dpi))),
             write_plotly(fig, stem.with_suffix(".html"))]
    try:
        if check:
            check_static(drawn[0], gg, name=png.name)
    finally:
        plt.close(drawn[0])
    return paths
