"""Every code cell a reader sees fits the page's code column without scrolling sideways.

At the browser check's 1200-px window a code box holds 68 characters (66 inside a folded
``hide-cell`` or ``hide-input`` cell: a reader unfolds a ``hide-input`` cell's source with
"Show code cell source", and it must fit then too). Cells whose source a reader never sees
(``remove-input``, ``remove-cell``) do not count. This reads the Markdown only, so it runs
without a browser; the browser check (``seqlab.book.browser``) measures the rendered boxes
and the outputs too.
"""
import json

import pytest
from conftest import REPO, require_chromium

from seqlab.book.cells import CODE_COLUMN, FOLDED_COLUMN, code_cells, long_lines

PAGES = sorted(p.stem for p in (REPO / "src" / "seqlab" / "book" / "pages").glob("*.md") if p.stem != "index")


@pytest.mark.parametrize("page", PAGES)
def test_visible_code_fits_the_column(page):
    cells = code_cells(REPO / "src" / "seqlab" / "book" / "pages" / f"{page}.md")
    assert cells, f"{page}: no code cells found"
    found = [f"{page}.md line {line}, cell {n}: {len(text)} > {cells[n - 1].column} characters: {text.strip()[:60]}"
             for n, line, text in long_lines(cells)]
    assert not found, "\n".join(found)


def test_the_width_check_can_fail():
    long = "x = " + "1 + " * 20 + "1"
    assert len(long) > CODE_COLUMN
    folded = "y = " + "2" * (FOLDED_COLUMN + 1 - 4)
    assert FOLDED_COLUMN < len(folded) <= CODE_COLUMN
    fits = "z = " + "3" * (FOLDED_COLUMN - 4)
    assert len(fits) == FOLDED_COLUMN
    page = ("# A page\n\n```{code-cell} ipython3\nshort = 1\n" + long + "\n```\n\n"
            "```{code-cell} ipython3\n:tags: [hide-input]\n" + folded + "\n" + fits + "\n```\n\n"
            "```{code-cell} ipython3\n:tags: [remove-cell]\n" + long + "\n```\n\n"
            "```{code-cell} ipython3\n:tags: [remove-input]\n" + long + "\n```\n\n"
            "```{code-cell} ipython3\n:tags: [hide-cell]\n" + folded + "\n```\n")
    # the folded hide-input line is reported at FOLDED_COLUMN; the removed cells' lines are not
    assert long_lines(code_cells(page)) == [(1, 5, long), (2, 10, folded), (5, 26, folded)]


def test_the_install_lines_fit_their_box():
    """The run-it-yourself box sits inside an admonition's padding: its code holds 60 characters at 1200 px
    (and the page's CSS wraps the lines where it holds fewer)."""
    from seqlab.book.download import install_lines

    lines = install_lines()
    assert max(len(line) for line in lines.splitlines()) <= 60, lines


def test_the_browser_probe_reports_code_that_scrolls(tmp_path):
    """The fit probe names a scrolling code box and a scrolling output box by page and line; a folded
    (hide-input) source and boxes that fit are not reported."""
    require_chromium()
    from seqlab.book.browser import _FIT_PROBE, FIT_WINDOW, _driver
    wide = "x = " + "1 + " * 30 + "1"
    box = lambda text: f"<div class='highlight'><pre>{text}\n</pre></div>"
    cell = lambda tags, src, out: (f"<div class='cell {tags}'><div class='cell_input'>{box(src)}</div>"
                                   f"<div class='cell_output'>{box(out)}</div></div>")
    page = tmp_path / "probe page.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><style>main { width: 400px }"
                    " pre { overflow: auto; padding: 16px; font: 14px monospace; white-space: pre }</style></head>"
                    "<body><main>" + cell("", "short = 1\n" + wide, "fits")
                    + cell("tag_hide-input", wide, "fits too") + cell("tag_hide-input", "y = 2", wide)
                    + cell("", "z = 3", "ok") + "</main></body></html>", encoding="utf-8")
    drv = _driver(width=FIT_WINDOW, height=800)
    try:
        drv.get(page.as_uri())
        found = json.loads(drv.execute_script(_FIT_PROBE))
    finally:
        drv.quit()
    assert len(found["code_scrolled"]) == 1 and len(found["outputs_scrolled"]) == 1, found
    assert found["code_scrolled"][0].startswith(f'probe page: "{wide[:60]}" ({len(wide)} characters) scrolls')
    assert found["outputs_scrolled"][0].startswith(f'probe page: "{wide[:60]}"')
