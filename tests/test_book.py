"""Build the whole rendered chapter and read it in headless Chromium, as a reader would.

README's first command (`seqlab chapter build`) is what this runs. Every page is checked in the
browser (no external request, math typeset, figures drawn, images loaded, every explorer's slider
clicked and redrawn), and numbers the prose quotes are compared with `seqlab run`.
"""
import json
import subprocess
import sys

import pytest
from conftest import REPO, require

require("myst_nb")
require("selenium")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("chapter")
    p = subprocess.run([sys.executable, "-m", "seqlab", "chapter", "build", "--out", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=1500)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "executing its cells" in p.stdout or "built" in p.stdout
    return out


def test_build_outputs(site):
    pages = ["recurrence", "attention", "transformer", "text", "forecasting", "summary"]
    for page in pages:
        assert (site / f"{page}.html").is_file() and (site / "notebooks" / f"{page}.ipynb").is_file()
        html = (site / f"{page}.html").read_text(encoding="utf-8")
        assert "https://cdn" not in html  # MathJax and plotly are vendored
        assert "computed by seqlab in" not in html or page in ("text", "forecasting", "summary")
    report = json.loads((site / "build_report.json").read_text())
    assert set(report["page_execution_seconds"]) >= {"recurrence", "attention", "transformer"}
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert "Erratum" in (site / "recurrence.html").read_text(encoding="utf-8")


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
    assert quoted(fixed.heldout_free_running[32], ".3f") in html
    rev = section_results("14.49").tables["reversal"].iloc[0]
    assert quoted(rev.heldout_free_running, ".3f") in html
    fb = section_results("14.47").tables["forget_bias"]
    assert quoted(fb.grad_at_lag_70.iloc[-1] / fb.grad_at_lag_70.iloc[0], ".3g") in html


def test_pages_in_a_browser(site, tmp_path):
    from seqlab.book.browser import check_site, chromium_available

    if not chromium_available():
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    shots = REPO / "build" / "screenshots"
    found = check_site(site, shots)
    for name, page in found.items():
        assert page["external_requests"] == [], name
        assert page["raw_math"] == 0 and page["broken_images"] == [], name
        assert page["plots_drawn"] == page["plots"], name
        assert all(s["moved"] and s["changed"] for s in page["sliders"]), (name, page["sliders"])
    sliders = sum(len(p["sliders"]) for p in found.values())
    assert sliders >= 3, f"only {sliders} explorers in the chapter"
    assert found["recurrence"]["math"] > 20 and found["attention"]["math"] > 5
    assert (shots / "recurrence.png").stat().st_size > 10_000
