"""What a page of the rendered chapter calls: run a section and display its tables, figures and notes.

Static figures appear as images; each has its interactive plotly twin in a
collapsed ``<details>`` block (one click away). 3D figures are interactive only.
Notes that start with "Erratum" become warning callouts. Nothing here computes
anything: it only shows what :func:`seqlab.chapter.run_section` returns.
"""
from __future__ import annotations

import html
import os
from pathlib import Path

__all__ = ["show", "FIGURE_DIR"]

#: where pages write figures; the build copies this folder into the site as ``figures/``
FIGURE_DIR = Path(os.environ.get("SEQLAB_BOOK_FIGURES", "_figures/figures"))


def _table_html(name: str, df, max_rows: int = 14) -> str:
    import pandas as pd

    shown = df if len(df) <= max_rows else pd.concat([df.head(max_rows // 2), df.tail(max_rows // 2)])
    body = shown.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0, classes="seqlab-table")
    more = f"<p class='seqlab-more'>{len(df) - len(shown)} more rows (seqlab run --json has all)</p>" \
        if len(df) > len(shown) else ""
    return f"<div class='seqlab-table-wrap'><p class='seqlab-table-name'><code>{html.escape(name)}</code></p>{body}{more}</div>"


def show(section: str, tables: list[str] | None = None, seed: int | None = None):
    """Run ``section`` and display it; ``tables`` picks which tables to print (default: all)."""
    from IPython.display import HTML, Image, display

    from ..chapter import run_section

    FIGURE_DIR.mkdir(parents=True, exist_ok=True)
    res = run_section(section, FIGURE_DIR, seed=seed)
    names = tables if tables is not None else list(res.tables)
    display(HTML("".join(_table_html(n, res.tables[n]) for n in names)))
    pngs = {p.stem: p for p in res.figures if p.suffix == ".png"}
    for name, fig in res.interactive.items():
        div = fig.to_html(full_html=False, include_plotlyjs=False, config={"responsive": True})
        if name in pngs:
            display(Image(filename=str(pngs[name])))
            display(HTML(f"<details class='seqlab-interactive'><summary>Interactive version</summary>{div}</details>"))
        else:
            display(HTML(f"<div class='seqlab-3d'>{div}</div>"))
    for note in res.notes:
        kind = "warning" if note.startswith("Erratum") else "note"
        title = "Erratum" if kind == "warning" else "Measured"
        display(HTML(f"<div class='admonition {kind}'><p class='admonition-title'>{title}</p>"
                     f"<p>{html.escape(note)}</p></div>"))
    display(HTML(f"<p class='seqlab-timing'>§{res.section} computed by seqlab in {res.seconds:.1f} s.</p>"))
    return None
