"""§14.64: the first page lists the chapter's objectives and links each to its sections and its verdict;
the summary's errata index finds every Erratum box; exercise 1's bound is required to hold."""
import re

import pytest
from conftest import REPO

from seqlab.chapter import s14_64
from seqlab.claims import ClaimError

PAGES = REPO / "src" / "seqlab" / "book" / "pages"
SPEC = REPO.parent / "shared" / "seed" / "000_fdb5355aeee653b5.txt"


def _labels() -> dict[str, str]:
    """Every MyST label ``(name)=`` of the pages, with its page; each page's own name is a label too."""
    found = {}
    for page in PAGES.glob("*.md"):
        for name in re.findall(r"^\((\S+)\)=\s*$", page.read_text(encoding="utf-8"), re.M):
            found[name] = page.stem
    return found


def test_objectives_are_the_chapters_ten():
    """The first page is the objectives' one home; the summary's table reads them from it."""
    got = s14_64.objectives()
    assert list(got.objective) == list(range(1, 11)) and "$" not in "".join(got.text)
    if SPEC.exists():  # the chapter's own list, word for word (its LaTeX written out)
        spec = SPEC.read_text(encoding="utf-8")
        block = spec[spec.index("After completing Part 3"):spec.index("Estimated time")]
        plain = lambda s: re.sub(r"[^a-z]", "", s.lower())
        for text in got.text:
            first = plain(text.split(",")[0])
            assert first in plain(block), text


def test_index_lists_every_objective_with_resolving_links():
    index = (PAGES / "index.md").read_text(encoding="utf-8")
    labels = _labels()
    assert "(objectives)=" in index
    items = re.findall(r"^\s*(\d+)\. (.+?)\n\s+Taught in (.+?); summed up in the \{ref\}`summary <([\w-]+)>`\.$", index, re.M)
    assert [int(i[0]) for i in items] == list(range(1, 11))
    for (_, text, links, verdict), row in zip(items, s14_64.objectives().itertuples()):
        assert verdict == f"summary-{row.name}" and labels.get(verdict) == "summary"
        refs = re.findall(r"\{ref\}`§([\d.]+) <([\w-]+)>`", links)
        assert ", ".join(f"§{s}" for s, _ in refs) == row.sections
        for _, label in refs:
            assert label in labels, f"index links {label!r}, which no page defines"


def test_summary_objective_labels_exist_once():
    summary = (PAGES / "summary.md").read_text(encoding="utf-8")
    for name in s14_64.objectives().name:
        assert summary.count(f"(summary-{name})=") == 1


def test_errata_index_reads_every_erratum_box(tmp_path):
    (tmp_path / "one.md").write_text(
        "## First (§14.46.1)\n\n:::{erratum} It is below 1e-8.\n{glue:text}`x` at lag 40.\n:::\n\n"
        "### Sub (§14.47)\n\n:::{erratum} A B.\n:unless: s_ab\n{claim}`s_ab: A B || not A B`\n:::\n\n"
        "## Third (§14.48)\n\n:::{erratum} It copies every length.\n"
        "{glue:text}`acc` at T = 32.\n\nWhy.\n:::\n", encoding="utf-8")
    (tmp_path / "summary.md").write_text(":::{erratum} no\nno\n:::\n", encoding="utf-8")
    got = s14_64.errata_index(tmp_path)
    assert got.to_dict("records") == [
        {"section": "14.46.1", "page": "one", "chapter_says": "It is below 1e-8.", "conditional": False},
        {"section": "14.47", "page": "one", "chapter_says": "A B.", "conditional": True},
        {"section": "14.48", "page": "one", "chapter_says": "It copies every length.", "conditional": False}]
    # a box drawn only when its claim fails is listed only when the build draws it
    assert list(s14_64.errata_index(tmp_path, shown={"14.47": False}).chapter_says) == [
        "It is below 1e-8.", "It copies every length."]
    assert len(s14_64.errata_index(tmp_path, shown={"14.47": True})) == 3
    with pytest.raises(ValueError, match="14.47"):
        s14_64.errata_index(tmp_path, shown={})


def test_errata_index_marks_the_conditional_top_p_box():
    """§14.59's box says either way whether its reading of top-p holds: the index knows it is conditional."""
    got = s14_64.errata_index()
    assert set(got.section[got.conditional]) == {"14.59"}


def test_a_box_drawn_unless_its_claim_holds_is_conditional(tmp_path):
    """A box with ``:unless: claim`` is an erratum only where the claim fails; one that quotes a claim without it
    is an erratum on every build."""
    (tmp_path / "one.md").write_text(
        "## First (§14.59)\n\n:::{erratum} It holds.\n:unless: x\n{claim}`x: it holds ||\nit does not`\n\nWhy.\n"
        ":::\n\n## Second (§14.60)\n\n:::{erratum} It is fast.\n{claim}`y: fast || slow`\n:::\n",
        encoding="utf-8")
    assert list(s14_64.errata_index(tmp_path).conditional) == [True, False]
    assert list(s14_64.errata_index(tmp_path, shown={"14.59": False}).section) == ["14.60"]


def test_exercise_bound_is_required():
    ok = s14_64.exercise_bound_claims({"sym": {"bound": 0.0291, "gradient": 0.00646}})
    assert ok[0].holds and ok[0].required
    with pytest.raises(ClaimError, match="s64_ex1_bound"):  # the old page's 0.00515 "bound" under 0.00646
        s14_64.exercise_bound_claims({"sym": {"bound": 0.00515, "gradient": 0.00646}})


def test_exercise_one_bound_bounds():
    """The solution's arithmetic: ||(W^T)^k g0|| <= ||W||_2^k ||g0|| for the page's two matrices."""
    import torch

    torch.manual_seed(1)
    A = torch.randn(32, 32, dtype=torch.float64)
    for W in (A + A.T, A):
        W = W * 0.9 / torch.linalg.eigvals(W).abs().max()
        g0 = torch.ones(32, dtype=torch.float64)
        g = torch.linalg.matrix_power(W.T, 50) @ g0
        assert g.norm() <= torch.linalg.matrix_norm(W, 2) ** 50 * g0.norm()


@pytest.fixture(scope="module")
def in_view():
    """The summary's visible cells up to the exercises, and its hidden rerun of §14.50.2's leak test (it shows
    only its printout), run in order in one namespace (a few library calls each)."""
    from seqlab.book.cells import code_cells

    namespace: dict = {}
    for cell in code_cells(PAGES / "summary.md"):
        if "# Solution" in cell.source:
            break
        if cell.visible or cell.source.startswith("from seqlab.nn import scaled_dot_product_attention as attend"):
            exec(compile(cell.source, "summary.md", "exec"), namespace)
    assert "moved" in namespace, "the summary no longer reruns the leak test"
    return namespace


def test_the_cells_in_view_give_the_sections_numbers(in_view):
    """What the summary computes in view equals what the sections' own functions give: the decay per step
    (§14.46.1), the input-gradient reach (§14.47), the spread and saturation tables (§14.50), the parameter
    counts (§14.51), the order check (§14.52) and the future leak (§14.50.2)."""
    import numpy as np
    import pandas as pd

    from seqlab.chapter import s14_46_1, s14_47, s14_50, s14_50_2, s14_51, s14_52

    vg = s14_46_1.gradient_frame()
    for rho in s14_46_1.RHOS:
        assert np.isclose(in_view["factor"][rho], s14_46_1.decay_per_step(vg, rho), rtol=1e-9)
        assert np.isclose(in_view["extremes"][rho][0], vg[vg.rho == rho].g.min(), rtol=1e-9)
    ratios = s14_47.reach_ratios(seeds=(s14_47.SEED,), widths=(s14_47.REACH_WIDTH,)).iloc[0]
    reach = in_view["reach"]
    assert np.isclose(reach["lstm"] / reach["rnn"], ratios.lstm_over_rnn, rtol=1e-6)
    assert np.isclose(reach["gru"] / reach["rnn"], ratios.gru_over_rnn, rtol=1e-6)
    spread = s14_50.spread_table()
    assert list(in_view["raw"]) == list(spread.sd_unscaled) and list(in_view["scaled"]) == list(spread.sd_scaled)
    sat = s14_50.saturation_table()
    pd.testing.assert_frame_equal(in_view["sat"][sat.columns], sat, check_dtype=False)
    p = s14_51.head_parameter_table()
    assert in_view["by_heads"] == dict(zip(p.n_heads, p.parameters))
    order = s14_52.order_check().max_abs_difference
    assert (in_view["gap"], in_view["gap_pe"]) == (order[0], order[1])
    leak = s14_50_2.future_leak(s14_50_2.causal_inputs()).max_change_before
    assert (in_view["moved"][True], in_view["moved"][False]) == (leak[0], leak[1])
