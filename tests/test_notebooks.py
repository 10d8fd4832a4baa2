"""Every page, exported as the notebook a reader downloads, runs top to bottom in a fresh kernel outside the checkout,
with one of its settings changed as the page invites ("you can change any of them and run the cell again").

The notebooks are exported exactly as the build exports them (jupytext, from the pages the package
ships) into a folder outside the checkout, and executed there with nbclient in a new kernel whose
environment has none of the build's variables: no figure folder, no result store, no execution
cache, no kernel profile. That is a reader who downloaded the page, changed a setting in a visible
cell (a shorter list of radii, another seed, other temperatures) and chose "Run all": every cell
after it must still run. On the attention page the sentence that interprets the changed numbers
must follow them too.
"""
import os

import pytest
from conftest import REPO, require, patient

require("myst_nb")
nbclient = require("nbclient")
nbformat = require("nbformat")

from seqlab.book.build import available_pages, export_notebooks


#: per page, the setting a reader changes: (the visible cell's text, what the reader writes instead)
READER_EDITS = {
    "recurrence": ("for rho in RHOS:", "for rho in (0.5, 0.95):"),
    "attention": ("seed = SPREAD_SEED", "seed = 7"),
    "transformer": ("block_gradients(norm_first, SEED))", "block_gradients(norm_first, 7))"),
    "text": ("for tau in TEMPERATURES:", "for tau in (0.5, 1.0, 2.0):"),
    "forecasting": ("for step in range(400):", "for step in range(200):"),
    "forecasting_record": ("for scope in (HO, ALL):", "for scope in (HO,):"),
    "summary": ("torch.manual_seed(s52.SEED)", "torch.manual_seed(7)"),
}
READER_PAGES = available_pages()


def test_every_page_has_a_reader_edit():
    assert sorted(READER_EDITS) == sorted(READER_PAGES)


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
    before, after = READER_EDITS[page]  # the reader changes a setting the page invites them to change
    edited = [c for c in code if before in c.source and "hide-input" not in c.metadata.get("tags", [])]
    assert len(edited) == 1, f"{page}: the setting {before!r} is in {len(edited)} visible cells"
    edited[0].source = edited[0].source.replace(before, after)
    client = nbclient.NotebookClient(nb, timeout=int(patient(900)), kernel_name="python3", resources={"metadata": {"path": str(reader)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first failure
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    if page == "attention":
        shown = next(c for c in code if "⟦s50_var_holds:" in c.source).outputs[-1]["data"]["text/markdown"]
        assert _spread_sentence(SPREAD_SEED_BY_READER) in shown  # the sentence follows the reader's numbers
        assert _spread_sentence(None) not in shown


SPREAD_SEED_BY_READER = 7  # as READER_EDITS writes it


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
