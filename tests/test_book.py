"""Build a small page set of the rendered chapter and read it in headless Chromium, as a reader would.

The full build (every page) is `python -m seqlab.book.build`; CI builds the `attention` page,
which has equations, tables, static figures with interactive twins and 3D surfaces.
"""
import subprocess
import sys

import pytest
from conftest import REPO

pytest.importorskip("myst_nb")
pytest.importorskip("selenium")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("chapter")
    p = subprocess.run([sys.executable, "-m", "seqlab.book.build", "--pages", "attention", "--out", str(out)],
                       cwd=REPO, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "attention" in p.stdout and "s of section computation" in p.stdout
    return out


def test_build_outputs(site):
    assert (site / "index.html").is_file() and (site / "attention.html").is_file()
    assert (site / "notebooks" / "attention.ipynb").is_file()
    html = (site / "attention.html").read_text(encoding="utf-8")
    assert "cdn." not in html and "https://cdn" not in html  # MathJax and plotly are vendored
    assert "Erratum" in html  # the 14.50 saturation erratum is shown
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_pages_in_a_browser(site, tmp_path):
    from seqlab.book.browser import check_site, chromium_available

    if not chromium_available():
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    found = check_site(site, tmp_path / "shots")
    page = found["attention"]
    assert page["external_requests"] == []
    assert page["math"] > 5 and page["raw_math"] == 0
    assert page["plots"] >= 5 and page["plots_drawn"] == page["plots"]
    assert page["images"] >= 3 and page["broken_images"] == []
    assert all(f["external_requests"] == [] for f in found.values())
    assert (tmp_path / "shots" / "attention.png").stat().st_size > 10_000
