"""A page, exported as the notebook a reader downloads, runs top to bottom in a fresh kernel outside the checkout.

The notebooks are exported exactly as the build exports them (jupytext, from the pages the package
ships) into a folder outside the checkout, and executed there with nbclient in a new kernel whose
environment has none of the build's variables: no figure folder, no result store, no execution
cache, no kernel profile. That is a reader who downloaded the page and ran it.

The build itself executes every page's notebook top to bottom in its own kernel in a temporary
folder, and ``tests/test_book.py`` checks that those are the very cells the reader downloads, so
here one page (attention: figures, and a result handed on with ``share``) stands for the reader's
side of the difference. There the reader also changes a setting (a seed), and the page's sentence
that interprets the numbers it makes must follow them. ``SEQLAB_TEST_ALL_NOTEBOOKS=1`` runs every page this way (about 4.5 minutes
on two cores).
"""
import os

import pytest
from conftest import REPO, require

require("myst_nb")
nbclient = require("nbclient")
nbformat = require("nbformat")

from seqlab.book.build import available_pages, export_notebooks


READER_PAGES = available_pages() if os.environ.get("SEQLAB_TEST_ALL_NOTEBOOKS") == "1" else ["attention"]


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    site = tmp_path_factory.mktemp("download")
    export_notebooks(site, READER_PAGES)
    return site / "notebooks"


@pytest.mark.parametrize("page", READER_PAGES)
def test_downloaded_notebook_runs_in_a_fresh_kernel(page, notebooks, tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("SEQLAB_BOOK_") or k == "SEQLAB_RESULTS"]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("IPYTHONDIR", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    reader = tmp_path / "reader"
    reader.mkdir()
    assert not reader.resolve().is_relative_to(REPO)
    nb = nbformat.read(notebooks / f"{page}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{page}.ipynb has no code cells"
    if page == "attention":  # the reader changes a setting the page invites them to change
        cell = next(c for c in code if "seed=s14_50.SPREAD_SEED)" in c.source)
        cell.source = cell.source.replace("seed=s14_50.SPREAD_SEED)", f"seed={SPREAD_SEED_BY_READER})")
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(reader)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first failure
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    if page == "attention":
        shown = next(c for c in code if "⟦s50_var_holds:" in c.source).outputs[-1]["data"]["text/markdown"]
        assert _spread_sentence(SPREAD_SEED_BY_READER) in shown  # the sentence follows the reader's numbers
        assert _spread_sentence(None) not in shown


SPREAD_SEED_BY_READER = 7


def _spread_sentence(seed) -> str:
    """§14.50's spread sentence as the page words it, for the chapter's seed (None) or another."""
    from seqlab.book.build import PAGES
    from seqlab.book.sentences import render, templates
    from seqlab.chapter import s14_50

    spread = s14_50.spread_table(s14_50.D_GRID, n=s14_50.N_PAIRS,
                                 seed=s14_50.SPREAD_SEED if seed is None else seed)
    said, = s14_50.spread_claims(spread, n=s14_50.N_PAIRS)
    wording = {t.name: t for t in templates((PAGES / "attention.md").read_text(encoding="utf-8"))}[said.name]
    return render(wording, {"holds": said.holds, "evidence": said.evidence})
