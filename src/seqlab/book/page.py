"""What a page of the rendered chapter calls to *display* results; nothing here computes anything.

A page is code-first: its cells build inputs and call seqlab's library step by
step, with the chapter's settings taken from the section module (one source for
the numbers, shared with ``seqlab run``). This module only turns those results
into reader-facing output:

- :func:`glue` binds a computed number to a name that the prose quotes with
  ``{glue:text}`name```, so no number in the text is typed by hand;
- :func:`table` shows a frame with reader headings and display rounding (the
  frame itself keeps full precision);
- :func:`figure` shows a static figure with its interactive twin one click away;
- :func:`say` records the verdicts of :mod:`seqlab.claims` that the page's ``{claim}`` roles
  read, and the build report lists;
- :func:`glue_all` binds a whole row of numbers in one call;
- :func:`prose` shows a paragraph of the page with the numbers of the kernel it runs in (the
  downloaded notebook's sentence cells).

The older :func:`show` (a whole section's tables at once) remains for pages not yet
rewritten in this style.
"""
from __future__ import annotations

import html
import os
from pathlib import Path

from ..claims import CLAIM_PREFIX, fmt  # numbers in sentences are formatted one way, in claims and glue alike

__all__ = ["glue", "glue_all", "say", "prose", "KNOWN", "table", "display_defaults", "HEADINGS", "FORMATS", "figure",
           "show", "FIGURE_DIR", "fmt", "CLAIM_PREFIX"]

#: where pages write figures; the build copies this folder into the site as ``figures/``
FIGURE_DIR = Path(os.environ.get("SEQLAB_BOOK_FIGURES", "_figures/figures"))


#: what this kernel glued and said (name -> text; a claim's record as JSON under CLAIM_PREFIX + name), so that
#: :func:`prose` in a downloaded notebook shows the page's sentences with the reader's own numbers
KNOWN: dict[str, str] = {}


def glue(name: str, value, spec: str = ".3g") -> None:
    """Bind ``value``, formatted by ``spec``, to ``name``; the prose quotes it as ``{glue:text}`name```.

    In a myst-nb build the value goes to the page; anywhere it is kept for :func:`prose`.
    """
    KNOWN[name] = fmt(value, spec)
    try:
        from myst_nb import glue as nb_glue
    except ImportError:  # pragma: no cover - the book extra is not installed
        return
    # a plain str: its text/plain form is a quoted literal, which myst-nb unquotes as it is ("1.000" stays
    # "1.000"; an unquoted 1.000 would be read back as the float 1.0)
    nb_glue(name, KNOWN[name], display=False)


def glue_all(values: dict, spec: str = ".3g") -> None:
    """:func:`glue` for each ``name: value`` (or ``name: (value, spec)``) in ``values``."""
    for name, value in values.items():
        if isinstance(value, tuple):
            glue(name, *value)
        else:
            glue(name, value, spec)




def say(*claims, only=None) -> None:
    """Record each claim's verdict and evidence under :data:`CLAIM_PREFIX` + its name, where the page's ``{claim}``
    roles read them and the build report lists them.

    Accepts :class:`~seqlab.claims.Claim` objects or lists of them. ``only``: the names this page reads, where
    one claim function serves two pages; each must be among the claims given.
    """
    import json

    flat = [c for item in claims for c in (item if isinstance(item, (list, tuple)) else [item])]
    if only is not None:
        only = {only} if isinstance(only, str) else set(only)
        missing = only - {c.name for c in flat}
        if missing:
            raise KeyError(f"no claim named {sorted(missing)} among {[c.name for c in flat]}")
        flat = [c for c in flat if c.name in only]
    records = {c.name: json.dumps({"holds": c.holds, "required": c.required, "evidence": c.evidence})
               for c in flat}
    for c in flat:
        KNOWN[CLAIM_PREFIX + c.name] = records[c.name]
    try:
        from myst_nb import glue as nb_glue
    except ImportError:  # pragma: no cover - the book extra is not installed
        return
    for c in flat:
        nb_glue(CLAIM_PREFIX + c.name, records[c.name], display=False)


def prose(markdown: str, built: dict[str, str] | None = None) -> None:
    """Show a paragraph of the page with this kernel's numbers (a downloaded notebook's sentence cells).

    ``markdown`` is the page's paragraph with its numbers and sentences marked as
    :func:`seqlab.book.notebooks.to_template` writes them; each is filled from what this
    kernel glued and said, or from ``built`` (the build's values) where this kernel has not
    computed it yet."""
    from IPython.display import Markdown, display

    from .notebooks import fill_template

    display(Markdown(fill_template(markdown, {**(built or {}), **KNOWN})))


#: a page's display defaults, set once in its folded setup cell with :func:`display_defaults`: the heading and
#: the format of each code name its tables show, so that a reader's cell names only the columns it shows
HEADINGS: dict[str, str] = {}
FORMATS: dict[str, str] = {}


def display_defaults(headings: dict[str, str] | None = None, formats: dict[str, str] | None = None) -> None:
    """Add to the page's default headings and formats (code name -> heading, code name -> format spec)."""
    HEADINGS.update(headings or {})
    FORMATS.update(formats or {})


def table(df, columns: dict[str, str] | list[str] | None = None, formats: dict[str, str] | str | None = None,
          max_rows: int = 16, caption: str | None = None):
    """Display ``df`` with reader headings and rounding.

    ``columns``: the code names to show, in order, as a list (each headed by the page's
    default, :data:`HEADINGS`, or its own name) or as a dict of code name -> heading; None:
    every column. ``formats`` maps a code name to a format spec over the page's defaults
    (:data:`FORMATS`; otherwise ``.4g`` for floats); one spec alone (``".0f"``) applies to
    every float column. The frame is not changed; rounding happens only in what is shown.
    """
    from IPython.display import HTML, display

    names = list(df.columns) if columns is None else list(columns)
    view = df[names]
    columns = {c: columns[c] if isinstance(columns, dict) else HEADINGS.get(c, str(c)) for c in names}
    if isinstance(formats, str):
        import pandas as pd

        formats = {c: formats for c in view.columns if pd.api.types.is_float_dtype(view[c])}
    formats = {**{c: f for c, f in FORMATS.items() if c in columns}, **(formats or {})}

    def cell(col, v):
        if isinstance(v, float) and v != v:  # NaN: nothing to show (a model without that score)
            return "\u2013"
        spec = formats.get(col)
        if spec is not None:
            return fmt(v, spec)
        if isinstance(v, float):
            return fmt(v, ".4g")
        return str(v)

    rows = view if len(view) <= max_rows else view.head(max_rows)

    def is_prose(v) -> bool:
        return isinstance(v, str) and len(v) > 40

    # a column of sentences reads from the left, its heading included
    prose_cols = {c for c in view.columns if any(is_prose(v) for v in rows[c])}
    head = "".join(f"<th class='seqlab-text'>{html.escape((columns or {}).get(c, str(c)))}</th>" if c in prose_cols
                   else f"<th>{html.escape((columns or {}).get(c, str(c)))}</th>" for c in view.columns)
    def td(c, v):
        # sentences read from the left; numbers and short labels stay right-aligned, so digits line up
        if is_prose(v):
            return f"<td class='seqlab-text'>{html.escape(cell(c, v))}</td>"
        shown = cell(c, v)
        if " " not in shown:
            return f"<td>{html.escape(shown)}</td>"
        # a label of several words may wrap between its words (a narrow column keeps every column in view),
        # never inside one: "min-p" or "−0.0194," stays whole
        words = " ".join(f"<span class='seqlab-word'>{html.escape(w)}</span>" for w in shown.split(" "))
        return f"<td class='seqlab-words'>{words}</td>"

    body = "".join("<tr>" + "".join(td(c, v) for c, v in zip(view.columns, r)) + "</tr>"
                   for r in rows.itertuples(index=False, name=None))
    more = f"<p class='seqlab-more'>{len(view) - max_rows} more rows</p>" if len(view) > max_rows else ""
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    display(HTML(f"<div class='seqlab-table-wrap'><table class='seqlab-table'>{cap}<thead><tr>{head}</tr></thead>"
                 f"<tbody>{body}</tbody></table>{more}</div>"))


def figure(name: str, gg=None, fig=None, folded: bool = False):
    """Show a figure: the static image (if ``gg``) with its interactive ``fig`` folded beneath; 3D: ``fig`` only;
    ``folded``: an explorer (``fig`` alone) folded under "Explore it yourself", for a reader who wants to play."""
    from IPython.display import HTML, Image, display

    FIGURE_DIR.mkdir(parents=True, exist_ok=True)
    div = fig.to_html(full_html=False, include_plotlyjs=False, config={"responsive": True}) if fig is not None else ""
    if gg is None:
        shown = f"<div class='seqlab-interactive-figure'>{div}</div>"
        display(HTML(f"<details class='seqlab-interactive'><summary>Explore it yourself</summary>{shown}</details>"
                     if folded else shown))
        return
    from ..plotting import write_pair

    from .figure_alt import alt_text

    paths = write_pair(gg, fig, FIGURE_DIR / name)
    png = next(p for p in paths if p.suffix == ".png")
    display(Image(filename=str(png), alt=alt_text(gg, name)))
    if div:
        display(HTML(f"<details class='seqlab-interactive'><summary>Interactive version</summary>{div}</details>"))


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
