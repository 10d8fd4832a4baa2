"""The book's bookkeeping: the build report's one-value rule, timing references, and the pages' cells."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from seqlab.book.build import PAGES, available_pages
from seqlab.book.cells import code_cells, display_share, glue_share, undefined_names
from seqlab.book.download import run_it_yourself
from seqlab.book.report import collect, conflicts
from seqlab.experiments.timing import reference


def test_report_finds_one_quantity_with_two_values(tmp_path):
    def page(name, values):
        (tmp_path / f"{name}.glue.json").write_text(json.dumps({
            k: {"output_type": "display_data", "data": {"text/plain": repr(v)}} for k, v in values.items()}))

    page("transformer", {"kv_speedup": "22.4", "d_min": "32",
                         "seqlab-claim:early": json.dumps({"holds": True, "required": False, "text": "early",
                                                           "evidence": {"a": 1}})})
    page("summary", {"kv_speedup": "47", "d_min": "32"})
    report = collect(tmp_path, ["transformer", "summary"])
    assert report["conflicts"] == ["'kv_speedup' is one quantity shown with two values "
                                   "(transformer: '22.4'; summary: '47')"]
    assert report["claims"] == [{"page": "transformer", "name": "early", "holds": True, "required": False,
                                 "text": "early", "evidence": {"a": 1}, "kind": "not shown"}]
    assert conflicts({"a": {"x": "1"}, "b": {"x": "1"}}) == []


def test_report_takes_a_claims_sentence_from_its_page(tmp_path):
    record = {"holds": False, "required": False, "text": "", "evidence": {"gap": 0.0123}}
    (tmp_path / "text.glue.json").write_text(json.dumps({
        "seqlab-claim:s_gap": {"output_type": "display_data", "data": {"text/plain": repr(json.dumps(record))}}}))
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "text.md").write_text("So {claim}`s_gap: the gap of {gap:.2f} is real || a gap of\n{gap:.2f} is "
                                   "noise` here.\n")
    claim, = collect(tmp_path, ["text"], sources=pages)["claims"]
    assert (claim["text"], claim["text_from"], claim["evidence"]) == ("a gap of 0.01 is noise", "page", {"gap": 0.0123})
    assert claim["kind"] == "either way"
    assert collect(tmp_path, ["text"])["claims"][0]["text"] == ""  # without the page source: no sentence
    assert collect(tmp_path, ["text"])["claims"][0]["kind"] == "not shown"
    (pages / "text.md").write_text("So {claim}`s_gap: the gap of {gap:.2f} is real` here.\n")
    claim, = collect(tmp_path, ["text"], sources=pages)["claims"]
    assert claim["kind"] == "lesson" and claim["text"].startswith("[not borne out in this run: the gap of 0.01")


def test_timing_reference_is_stored_with_its_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("HEAVY_EVAL", "1")
    grid = pd.DataFrame({"T": [16, 32], "ms": [1 / 3, 2 / 3]})
    ref = reference("demo", lambda: {"grid": grid}, {"T": [16, 32]}, root=tmp_path)
    monkeypatch.setenv("HEAVY_EVAL", "0")
    again = reference("demo", lambda: pytest.fail("a stored reference is not measured again"), {"T": [16, 32]},
                      root=tmp_path)
    pd.testing.assert_frame_equal(again["grid"], grid)
    assert again.machine == ref.machine and again.machine["cores"] >= 1 and "torch" in again.machine_line()
    from seqlab.store import ArtifactError

    with pytest.raises(ArtifactError, match="stale"):
        reference("demo", lambda: {}, {"T": [16, 64]}, root=tmp_path)


def test_cells_analysis_on_a_hand_written_page():
    page = ("```{code-cell} ipython3\n:tags: [hide-input]\nimport numpy as np\n```\n\n"
            "```{code-cell} ipython3\nimport math\nx = np.zeros(3)\nglue('x', x)\n"
            "def f(a):\n    return math.sqrt(a) + len([b for b in range(a)])\n```\n")
    cells = code_cells(page)
    assert [c.visible for c in cells] == [False, True]
    assert undefined_names(cells) == [(1, "np"), (1, "glue")]
    assert glue_share(cells) == (1, 5)


def test_download_box_links_the_notebook():
    box = run_it_yourself("attention")
    assert 'href="notebooks/attention.ipynb"' in box and "pip install" in box
    assert 'href="downloads/seqlab-' in box and "-py3-none-any.whl[book]" in box  # where seqlab comes from


@pytest.mark.parametrize("page", available_pages())
def test_page_cells_are_self_contained(page):
    """Every name a visible cell uses is imported or defined in a visible cell: a downloaded notebook runs."""
    assert undefined_names(code_cells(PAGES / f"{page}.md")) == []


@pytest.mark.parametrize("page", available_pages())
def test_glue_is_at_most_a_tenth_of_what_a_reader_sees(page):
    glue, code = glue_share(code_cells(PAGES / f"{page}.md"))
    assert glue <= 0.10 * code, f"{page}: {glue} of {code} visible code lines are glue"


def test_say_only_keeps_the_named_claims_and_refuses_unknown_names():
    """A claim function that serves two pages: each page records only the claims its prose reads."""
    import json

    from seqlab.book import page
    from seqlab.claims import Claim

    made = [Claim("t_only_a", True, {"x": 1}), Claim("t_only_b", False, {"x": 2})]
    page.say(made, only="t_only_b")
    assert page.CLAIM_PREFIX + "t_only_a" not in page.KNOWN
    assert json.loads(page.KNOWN[page.CLAIM_PREFIX + "t_only_b"])["holds"] is False
    with pytest.raises(KeyError, match="t_only_c"):
        page.say(made, only=("t_only_a", "t_only_c"))
    assert page.CLAIM_PREFIX + "t_only_a" not in page.KNOWN  # a refused call records nothing


def test_table_takes_headings_and_formats_from_the_page_defaults(monkeypatch):
    """A reader's cell names the columns; the page's folded setup cell gave their headings and formats once."""
    import IPython.display
    import pandas as pd

    from seqlab.book import page

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj.data))
    monkeypatch.setattr(page, "HEADINGS", {})
    monkeypatch.setattr(page, "FORMATS", {})
    page.display_defaults({"mase": "MASE", "dataset": "data set"}, {"mase": ".2f"})
    df = pd.DataFrame({"dataset": ["M3"], "mase": [0.84567], "other": [1.23456789]})
    page.table(df, ["dataset", "mase"])
    assert "<th>data set</th><th>MASE</th>" in shown[-1] and "<td>0.85</td>" in shown[-1]
    assert "other" not in shown[-1]
    page.table(df, {"mase": "mean MASE"}, formats={"mase": ".3f"})  # a call's own heading and format win
    assert "<th>mean MASE</th>" in shown[-1] and "<td>0.846</td>" in shown[-1]
    page.table(df)  # every column; one without a default heading keeps its name and the .4g default
    assert "<th>other</th>" in shown[-1] and "<td>1.235</td>" in shown[-1]


@pytest.mark.parametrize("page", available_pages())
def test_display_dictionaries_stay_out_of_the_readers_cells(page):
    """Headings and formats live in the page's folded display_defaults cell; a visible table call keeps at most a
    one-entry override."""
    shown, code = display_share(code_cells(PAGES / f"{page}.md"))
    assert shown <= 0.03 * code, f"{page}: {shown} of {code} visible code lines are table headings or formats"
