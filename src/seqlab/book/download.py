"""A Sphinx extension: under each page's title, where to get seqlab, how to install it, and a link to the page as
a notebook.

The build exports every page to ``notebooks/PAGE.ipynb`` beside the HTML (``export_notebooks``) and
writes seqlab itself as a wheel into ``downloads/`` (:mod:`seqlab.book.wheel`), so both links are
relative and work offline. The box is added as the page is read; the page's
source, and so the notebook, does not contain it.
"""
from __future__ import annotations

import re

from .wheel import DOWNLOADS, wheel_name

__all__ = ["run_it_yourself", "notebook_preface", "install_lines", "setup"]


def install_lines() -> str:
    """The shell lines that install the CPU build of torch, then the seqlab wheel this chapter offers."""
    return ('python3 -m pip install torch==2.13.0 \\\n'
            '    --index-url https://download.pytorch.org/whl/cpu\n'
            'python3 -m pip install jupyterlab \\\n'
            f'    "./{wheel_name()}[book]"')


def notebook_preface(docname: str) -> str:
    """The first cell of the downloaded notebook: what to install, where seqlab comes from, what it writes."""
    return ("**Before you run this notebook.** It needs seqlab with its `book` extra, and Jupyter. seqlab comes "
            f"with the chapter: every page's \"Run this page yourself\" box links its wheel, `{wheel_name()}` "
            f"(in the chapter's site, `{DOWNLOADS}/{wheel_name()}`). Download it beside this notebook, install "
            "the CPU build of torch first, then seqlab:\n\n"
            f"```bash\n{install_lines()}\njupyter lab {docname}.ipynb\n```\n\n"
            "Run the cells from the top. The notebook writes only its figures, as PNG and HTML files in "
            "`_figures/figures/` under the folder Jupyter was started in. The collapsed cells show the page's "
            "paragraphs: run again after you change a setting, they give the sentences your numbers make.")


def run_it_yourself(docname: str) -> str:
    """The MyST box for ``docname``: the install lines and the notebook's download link."""
    return (f'\n:::{{admonition}} Run this page yourself\n:class: tip seqlab-run-yourself\n'
            f'<a class="seqlab-wheel" href="{DOWNLOADS}/{wheel_name()}" download>Download seqlab</a> '
            f'(`{wheel_name()}`, the code that computed this page) and install it, the CPU build of torch '
            f'first:\n\n```bash\n{install_lines()}\n```\n\n'
            f'<a class="seqlab-notebook" href="notebooks/{docname}.ipynb" download>Download this page as a '
            f'notebook</a> and open it in Jupyter: every cell runs top to bottom on its own, with the numbers '
            f'of this page.\n:::\n')


def _insert(app, docname: str, source: list[str]) -> None:
    if docname == "index" or "{code-cell}" not in source[0]:
        return
    # after the first top-level heading (the page's title)
    m = re.search(r"^# .*$", source[0], flags=re.M)
    if m:
        source[0] = source[0][:m.end()] + "\n" + run_it_yourself(docname) + source[0][m.end():]


def setup(app):
    app.connect("source-read", _insert)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
