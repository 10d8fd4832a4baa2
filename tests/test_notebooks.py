"""Every page, exported as the notebook a reader downloads, runs top to bottom in a fresh kernel.

The notebooks are exported exactly as the build exports them (jupytext, from the pages the package
ships) into a folder outside the checkout, and executed there with nbclient in a new kernel whose
environment has none of the build's variables: no figure folder, no execution cache, no kernel
profile. That is a reader who downloaded the page and ran it, with one difference: the test
session's result store (``SEQLAB_RESULTS``) stays, so a result that ``seqlab.results.once`` shares
(the copy sweep, the summary's quotes) is computed once for the whole session rather than once
more here. Every cell still runs; what the store skips is the body of a library function that the
build and the section tests have run, and ``tests/test_results.py`` runs ``once`` without a store.
"""
import os

import pytest
from conftest import REPO, require

require("myst_nb")
nbclient = require("nbclient")
nbformat = require("nbformat")

from seqlab.book.build import available_pages, export_notebooks


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    site = tmp_path_factory.mktemp("download")
    export_notebooks(site, available_pages())
    return site / "notebooks"


@pytest.mark.parametrize("page", available_pages())
def test_downloaded_notebook_runs_in_a_fresh_kernel(page, notebooks, tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("SEQLAB_BOOK_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("IPYTHONDIR", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    reader = tmp_path / "reader"
    reader.mkdir()
    assert not reader.resolve().is_relative_to(REPO)
    nb = nbformat.read(notebooks / f"{page}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{page}.ipynb has no code cells"
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(reader)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first failure
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
