"""Build the whole rendered chapter and read it in headless Chromium, as a reader would.

README's first command (`seqlab chapter build`) is what this runs, from a folder outside the checkout, writing
only under the test's temporary folders (site, cache, screenshots). Every page is checked in the
browser (no external request, math typeset, figures drawn, images loaded, every explorer's slider
clicked and redrawn, no figure text clipped by its frame or covered, no equation, table, code cell or
printed output wider than its column), and numbers the prose quotes are compared with `seqlab run`.
"""
import re
import json
import subprocess
import sys

import pytest
from conftest import REPO, require, require_chromium, patient

require("myst_nb")
require("selenium")


PAGES = sorted(f.stem for f in (REPO / "src" / "seqlab" / "book" / "pages").glob("*.md") if f.stem != "index")


@pytest.fixture(scope="module")
def build_run(tmp_path_factory):
    out, cache = tmp_path_factory.mktemp("chapter") / "site", tmp_path_factory.mktemp("cache")
    p = subprocess.run([sys.executable, "-m", "seqlab", "chapter", "build", "--out", str(out), "--cache", str(cache)],
                       cwd=tmp_path_factory.mktemp("elsewhere"), capture_output=True, text=True, timeout=patient(2400))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    return out, p, cache


@pytest.fixture(scope="module")
def site(build_run):
    return build_run[0]


def test_build_reports_as_it_goes(build_run):
    out, p, _ = build_run
    assert f"built {out / 'index.html'} in " in p.stdout
    docs = len(PAGES) + 1  # and the index
    progress = [line for line in p.stderr.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] + "]" for line in progress] == [f"[{i}/{docs}]" for i in range(1, docs + 1)]
    assert all(" s (elapsed " in line for line in progress), progress
    assert "without encryption" not in p.stderr  # ipykernel's transport warning, once per page, is silenced


def test_build_outputs(site):
    for page in PAGES:
        assert (site / f"{page}.html").is_file() and (site / "notebooks" / f"{page}.ipynb").is_file()
        html = (site / f"{page}.html").read_text(encoding="utf-8")
        assert "https://cdn" not in html  # MathJax and plotly are vendored
        assert "computed by seqlab in" not in html  # every page is code-first: no whole-section show()
    report = json.loads((site / "build_report.json").read_text())
    assert set(report["page_execution_seconds"]) == set(PAGES)  # every page has cells; the index has none
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert "Erratum" in (site / "recurrence.html").read_text(encoding="utf-8")


def test_the_build_ran_every_downloadable_notebook_top_to_bottom_in_a_fresh_kernel_outside_the_checkout(build_run):
    """What the reader downloads is what the build executed: the same code cells, in order, each page in its own
    kernel whose working folder is a temporary one (``nb_execution_in_temp``), with no error. The build's kernels
    differ from a reader's only in where figures go and in the result store; ``tests/test_notebooks.py`` runs a
    page without either."""
    import runpy

    import nbformat

    from seqlab.book.build import PAGES as PAGE_DIR
    from seqlab.book.build import _stage
    from seqlab.book.notebooks import is_sentence_cell

    out, _, cache = build_run
    conf = runpy.run_path(str(PAGE_DIR / "conf.py"))
    assert conf["nb_execution_in_temp"] is True and conf["nb_execution_raise_on_error"] is True
    executed_dir = _stage(cache, out).parent / "jupyter_execute"
    for page in PAGES:
        executed = nbformat.read(executed_dir / f"{page}.ipynb", as_version=4)
        download = nbformat.read(out / "notebooks" / f"{page}.ipynb", as_version=4)
        ran = [c for c in executed.cells if c.cell_type == "code"]
        offered = [c for c in download.cells if c.cell_type == "code" and not is_sentence_cell(c)]
        assert [c.source.strip() for c in ran] == [c.source.strip() for c in offered], page
        assert [c.execution_count for c in ran] == list(range(1, len(ran) + 1)), page  # one kernel, top to bottom
        assert not [o for c in ran for o in c.get("outputs", []) if o.get("output_type") == "error"], page


def test_downloaded_notebooks_read_without_myst_and_carry_the_pages_sentences(site):
    """Read as text, no exported notebook holds a MyST role or label; each page's sentences are in sentence cells
    whose saved output is the paragraph as the page shows it."""
    import re

    import nbformat

    from seqlab.book.notebooks import is_sentence_cell

    for page in PAGES:
        raw = (site / "notebooks" / f"{page}.ipynb").read_text(encoding="utf-8")
        assert not re.findall(r"\{(?:glue:text|claim|fact|eq|ref)\}`", raw), page
        nb = nbformat.reads(raw, as_version=4)
        first = nb.cells[0].source  # what to install, where seqlab comes from, what the notebook writes
        assert nb.cells[0].cell_type == "markdown" and "jupyterlab" in first and "_figures/figures/" in first, page
        labels = [m for c in nb.cells for m in re.findall(r"^\([\w.-]+\)=\s*$", c.source, re.M)]
        assert not labels, (page, labels[:5])
        sentences = [c for c in nb.cells if is_sentence_cell(c) and c.outputs]
        assert sentences, page
        assert all("⟦" not in c.outputs[0]["data"]["text/markdown"] for c in sentences), page  # every mark filled


def test_build_report_lists_every_claim_and_one_value_per_quantity(build_run):
    out, p, _ = build_run
    report = json.loads((out / "build_report.json").read_text())
    assert report["conflicts"] == []
    claims = report["claims"]
    assert {c["page"] for c in claims} == set(PAGES)  # every page interprets some number through a claim
    assert all(c["holds"] for c in claims if c["required"])
    # every sentence a reader reads comes from a page source: a claim's wordings in the page's Markdown
    assert all(c.get("text_from") == "page" and c["text"] for c in claims if not c["required"]), [
        c["name"] for c in claims if not c["required"] and c.get("text_from") != "page"]
    # and no claim, required or not, carries a sentence from anywhere else (Python writes none)
    assert all(c.get("text_from") == "page" for c in claims if c.get("text")), [
        c["name"] for c in claims if c.get("text") and c.get("text_from") != "page"]
    assert f"{len(claims)} claims evaluated" in p.stdout
    from seqlab.book.wheel import DOWNLOADS, wheel_name
    assert (out / DOWNLOADS / wheel_name()).stat().st_size > 0  # the seqlab every page offers
    for page in PAGES:  # the run-it-yourself box links the exported notebook and seqlab itself
        shown = (out / f"{page}.html").read_text(encoding="utf-8")
        assert f'href="notebooks/{page}.ipynb"' in shown and f'href="{DOWNLOADS}/{wheel_name()}"' in shown


def test_prose_numbers_match_seqlab_run(site, section_results):
    """The page and `seqlab run` compute through the same code: the numbers the prose quotes agree."""
    from seqlab.book.page import fmt

    html = (site / "recurrence.html").read_text(encoding="utf-8")
    from seqlab.chapter.s14_46_1 import decay_per_step

    vg = section_results("14.46.1").tables["grad_by_lag"]
    quoted = lambda value, spec: f'<span class="pasted-text">{fmt(value, spec)}</span>'
    assert quoted(decay_per_step(vg, 0.7), ".3f") in html
    copy = section_results("14.48").tables["copy_comparison"]
    fixed = copy[copy.attention == "none"].set_index("sequence_length")
    assert quoted(fixed.heldout_free_running[32], ".3f") in html  # the sweep's free-running score, in the prose
    rev = section_results("14.49").tables["reversal"].iloc[0]
    shown = re.sub(r"<[^>]+>", "", html)  # §14.49's held-out, free-running accuracy, in the prose
    assert f"right {fmt(rev.heldout_free_running, '.3f')} of the time" in shown
    fb = section_results("14.47").tables["forget_bias"]
    at_zero = fb.set_index("forget_bias").grad_at_lag_70[0.0]  # the gain is read from a bias of 0
    assert f"factor of {fmt(fb.grad_at_lag_70.iloc[-1] / at_zero, '.3g')}" in html


def test_pages_in_a_browser(site, tmp_path):
    require_chromium()
    from seqlab.book.browser import check_site
    shots = tmp_path / "screenshots"
    found = check_site(site, shots)
    for name, page in found.items():
        assert page["external_requests"] == [], name
        assert page["raw_math"] == 0 and page["broken_images"] == [], name
        assert page["plots_drawn"] == page["plots"], name
        assert page["figure_layout"] == {}, (name, page["figure_layout"])  # no figure text clipped or covered
        assert page["equations_cut"] == [], (name, page["equations_cut"])  # every equation whole, clear of its number
        assert page["tables_scrolled"] == [], (name, page["tables_scrolled"])  # every column in view
        assert page["code_scrolled"] == [], page["code_scrolled"]  # every visible code line in its box
        assert page["outputs_scrolled"] == [], page["outputs_scrolled"]  # every printed line in its box
        assert page["problems"] == [], (name, page["problems"])  # and nothing else a reader would notice
        assert all(s["moved"] and s["changed"] for s in page["sliders"]), (name, page["sliders"])
    sliders = sum(len(p["sliders"]) for p in found.values())
    assert sliders >= 3, f"only {sliders} explorers in the chapter"
    assert found["recurrence"]["math"] > 20 and found["attention"]["math"] > 5
    assert (shots / "recurrence.png").stat().st_size > 10_000
