"""A downloaded notebook reads in Jupyter as the page reads: MyST roles resolved against the build, outputs kept."""
import json

import pytest
from conftest import require

from seqlab.book.notebooks import equation_numbers, glue_texts, heading_titles, reader_notebook, resolve_markdown

PAGE = """(s14-57)=
## A language model (§14.57)

The loss,

$$
\\mathcal L = -\\frac1T\\sum_t \\log p(x_t)
$$ (eq-lm-loss)

is {glue:text}`lm_loss` nats, {glue:text}`lm_winner`. See {eq}`eq-lm-loss`, {ref}`the first page <recurrence>`
and {ref}`s14-57`; {glue:text}`missing` stays visible.

:::{admonition} Answer 1
:class: dropdown
The bound holds: {glue:text}`lm_loss` < 2.
:::
"""


def test_a_cell_reads_as_the_page_does():
    glue = {"lm_loss": "1.6216", "lm_winner": "at this budget the recurrent baseline wins, by 0.0554 nats"}
    out = resolve_markdown(PAGE, glue, {"eq-lm-loss": "(4.2)"}, {"s14-57": "A language model (§14.57)"})
    assert "(s14-57)=" not in out and out.startswith("## A language model")
    assert "\\tag{4.2}\n$$" in out and "$$ (eq-lm-loss)" not in out
    assert "is 1.6216 nats, at this budget the recurrent baseline wins, by 0.0554 nats." in out
    assert "See (4.2), the first page\nand A language model (§14.57);" in out
    assert "{glue:text}`missing` stays visible" in out  # a gap shows, it is not silently blank
    assert "<details><summary>Answer 1</summary>\n\nThe bound holds: 1.6216 < 2.\n\n</details>" in out
    assert ":::" not in out and ":class:" not in out


def test_an_erratum_reads_as_a_quoted_block():
    box = (":::{erratum} The gradient explodes.\nIt stays below {glue:text}`top`,\nas printed.\n\n"
           "Saturation damps it.\n:::\n")
    out = resolve_markdown(box, {"top": "1.9"}, {}, {})
    assert out == ("> **Erratum.** The printed chapter says: The gradient explodes.\n>\n> **Measured here:** It stays below "
                   "1.9,\n> as printed.\n>\n> Saturation damps it.")


def test_a_conditional_erratum_reads_as_the_chapter_beside_the_measurement():
    """A box drawn only when its claim fails: in the notebook its measured sentence says which way it went, so the
    quote does not call it an erratum, and the ``:unless:`` line is not shown."""
    box = ":::{erratum} It is monotone.\n:unless: s_x\nIt is {glue:text}`how` here.\n:::\n"
    out = resolve_markdown(box, {"how": "monotone"}, {}, {})
    assert out == "> **The printed chapter says:** It is monotone.\n>\n> **Measured here:** It is monotone here."


def test_glue_texts_unquote_strings_and_keep_other_values(tmp_path):
    f = tmp_path / "p.glue.json"
    f.write_text(json.dumps({
        "a": {"data": {"text/plain": "'1.000'"}}, "b": {"data": {"text/plain": ["'two ", "parts'"]}},
        "c": {"data": {"text/plain": "<Figure size 640x480>"}}, "d": {"data": {"image/png": "..."}}}))
    assert glue_texts(f) == {"a": "1.000", "b": "two parts", "c": "<Figure size 640x480>"}
    assert glue_texts(tmp_path / "none.json") == {}


def test_equation_numbers_and_headings_come_from_the_build_and_the_sources(tmp_path):
    page = tmp_path / "p.html"
    page.write_text('<div class="math" id="equation-eq-a">\n<span class="eqno">(2.1)<a class="headerlink"></a>'
                    '</span></div><div id="equation-eq-b"><span class="eqno">(2.2)</span></div>')
    assert equation_numbers(page) == {"eq-a": "(2.1)", "eq-b": "(2.2)"}
    src = tmp_path / "p.md"
    src.write_text("(top)=\n# Title\n\n(sec)=\n\n## Section two\n\n(loose)=\ntext\n")
    assert heading_titles([src]) == {"top": "Title", "sec": "Section two"}


RECORD = json.dumps({"holds": True, "required": False, "text": "", "evidence": {"gap": 0.0554, "runs": [1, 2]}})
KNOWN = {"lm_loss": "1.6216", "runs": "2", "seqlab-claim:lm_winner": RECORD}
PARAGRAPH = ("The loss is {glue:text}`lm_loss` nats: {claim}`lm_winner: the LSTM wins,\nby {gap:.4f} ||"
             " the GPT wins, by {gap:.4f}` over {glue:text}`runs` runs.")


def test_a_paragraph_becomes_a_template_a_reader_can_read():
    from seqlab.book.notebooks import fill_template, template_names, to_template

    t = to_template(PARAGRAPH)
    assert t == ("The loss is ⟦lm_loss⟧ nats: ⟦lm_winner: the LSTM wins, by {gap:.4f} || the GPT wins, by "
                 "{gap:.4f}⟧ over ⟦runs⟧ runs.")
    assert "{glue" not in t and "{claim}" not in t
    assert template_names(t) == ["lm_loss", "seqlab-claim:lm_winner", "runs"]
    assert fill_template(t, KNOWN) == "The loss is 1.6216 nats: the LSTM wins, by 0.0554 over 2 runs."
    lost = json.dumps({"holds": False, "required": False, "evidence": {"gap": 0.01, "runs": [3]}})
    assert fill_template(t, {**KNOWN, "seqlab-claim:lm_winner": lost}) == (
        "The loss is 1.6216 nats: the GPT wins, by 0.0100 over 2 runs.")
    assert fill_template(t, {}) == t  # nothing known: every gap shows


def test_a_sentence_cell_shows_the_build_and_follows_the_kernel(monkeypatch):
    nbformat = require("nbformat")
    from seqlab.book import page
    from seqlab.book.notebooks import reader_cells
    from seqlab.claims import verdict

    md, cell, md2 = reader_cells("## A section\n\n" + PARAGRAPH + "\n\nPlain text.", KNOWN, {}, {})
    assert md.cell_type == "markdown" and md.source == "## A section" and md2.source == "Plain text."
    assert cell.cell_type == "code" and cell.metadata["jupyter"]["source_hidden"] is True
    assert cell.outputs[0]["data"]["text/markdown"] == ("The loss is 1.6216 nats: the LSTM wins, by 0.0554 over "
                                                        "2 runs.")
    nbformat.validate(nbformat.v4.new_notebook(cells=[md, cell, md2]))
    shown = []
    # myst-nb's glue displays raw data too: only prose()'s Markdown is kept
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: None if kw.get("raw") else shown.append(obj.data))
    monkeypatch.setattr(page, "KNOWN", {})
    namespace = {"prose": page.prose}
    exec(cell.source, namespace)  # the kernel has computed nothing yet: the build's numbers
    page.glue("lm_loss", 1.5, ".4f")  # the reader reran with other settings
    page.glue("runs", 7, "d")
    page.say(verdict("lm_winner", False, gap=0.2))
    exec(cell.source, namespace)
    assert shown == ["The loss is 1.6216 nats: the LSTM wins, by 0.0554 over 2 runs.",
                     "The loss is 1.5000 nats: the GPT wins, by 0.2000 over 7 runs."]


def test_an_evidence_box_is_ordinary_cells_headed_how_we_know():
    require("nbformat")
    from seqlab.book.notebooks import reader_cells

    md = ("The loss falls to {glue:text}`lm_loss`.\n\n::::{admonition} How we know\n:class: dropdown evidence\n"
          "Three seeds.\n\nThe spread is {glue:text}`lm_loss` wide.\n\n:::{erratum} It is 2.\n1.\n:::\n::::\n\n"
          "Take-away.")
    cells = reader_cells(md, {"lm_loss": "1.6"}, {}, {})
    kinds = [(c.cell_type, c.source.splitlines()[0]) for c in cells]
    assert kinds[0][0] == "code" and cells[0].outputs[0]["data"]["text/markdown"] == "The loss falls to 1.6."
    assert kinds[1] == ("markdown", "#### How we know") and "Three seeds." in cells[1].source
    assert cells[2].outputs[0]["data"]["text/markdown"] == "The spread is 1.6 wide."
    assert cells[3].source.startswith("> **Erratum.** The printed chapter says: It is 2.")
    assert kinds[-1] == ("markdown", "Take-away.")  # the lesson goes on in a cell of its own
    assert not any(":::" in c.source or ":class:" in c.source for c in cells)


def test_a_lesson_claim_a_rerun_does_not_bear_out_is_marked_in_the_notebook():
    from seqlab.book.notebooks import fill_template, to_template

    t = to_template("Here {claim}`lm_fast: the GPT learns faster, by {gap:.2f}` nats.")
    held = json.dumps({"holds": True, "required": False, "evidence": {"gap": 0.25}})
    lost = json.dumps({"holds": False, "required": False, "evidence": {"gap": -0.25}})
    assert fill_template(t, {"seqlab-claim:lm_fast": held}) == "Here the GPT learns faster, by 0.25 nats."
    assert fill_template(t, {"seqlab-claim:lm_fast": lost}) == (
        "Here [not borne out in this run: the GPT learns faster, by -0.25 (evidence: gap = -0.25)] nats.")


def test_the_executed_notebook_keeps_its_outputs_and_collapses_hidden_cells():
    nbformat = require("nbformat")
    nb = nbformat.v4.new_notebook(metadata={"source_map": [1, 2]})
    shown = nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output("stream", text="1\n")],
                                      metadata={"execution": {"iopub.execute_input": "2026-12-05T03:00:00Z"}})
    hidden = nbformat.v4.new_code_cell("glue_all({})", metadata={"tags": ["hide-input"]})
    nb.cells = [nbformat.v4.new_markdown_cell("(lab)="), nbformat.v4.new_markdown_cell("x = {glue:text}`v`"),
                shown, hidden]
    out = reader_notebook(nb, {"v": "3"}, {}, {})
    # the target-only cell is gone; the glued sentence is a sentence cell, after the one import prose() needs
    assert [c.cell_type for c in out.cells] == ["code"] * 4
    assert out.cells[0].source.startswith("from seqlab.book.page import prose")
    assert out.cells[1].outputs[0]["data"]["text/markdown"] == "x = 3" and out.cells[2].outputs[0].text == "1\n"
    assert "execution" not in out.cells[2].metadata and "source_map" not in out.metadata
    assert out.cells[3].metadata["jupyter"]["source_hidden"] is True
    assert nb.cells[1].source == "x = {glue:text}`v`"  # the build's notebook is not changed
    nbformat.validate(out)


@pytest.mark.parametrize("page", ["recurrence", "attention", "transformer", "text", "forecasting", "summary"])
def test_every_role_on_the_pages_is_one_the_export_resolves(page):
    """A new MyST role or directive on a page would reach the reader raw: every one in use must be handled."""
    from seqlab.book.build import PAGES

    text = (PAGES / f"{page}.md").read_text(encoding="utf-8")
    import re

    roles = set(re.findall(r"\{([a-z:]+)\}`", text))
    assert roles <= {"glue:text", "eq", "ref", "claim"}, roles
    directives = set(re.findall(r"^(?:```|:::)\{([a-z-]+)\}", text, re.M))
    assert directives <= {"code-cell", "admonition", "erratum"}, directives
