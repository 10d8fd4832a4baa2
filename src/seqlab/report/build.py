"""Build the rendered chapter: ``python -m seqlab.report.build [--pages a,b] [--out DIR]``.

Vendors plotly.js (from the plotly package) and MathJax 3 (from the npm registry, once) so the
site works with no network; runs Sphinx with myst-nb, failing on any warning or cell error;
keeps a separate execution cache per HEAVY_EVAL setting; prints each page's compute time; and
exports every page as a Jupyter notebook.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
BOOK = REPO / "book"
STATIC = BOOK / "_static"


def vendor_assets(cache: Path) -> None:
    import plotly

    js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not (STATIC / "plotly.min.js").is_file() or (STATIC / "plotly.min.js").stat().st_size != js.stat().st_size:
        shutil.copyfile(js, STATIC / "plotly.min.js")
    target = STATIC / "mathjax"
    if not (target / "tex-chtml.js").is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("building the chapter needs npm (to vendor MathJax 3 for offline math)")
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), "mathjax@3"], check=True,
                       stdout=subprocess.DEVNULL)
        shutil.copytree(cache / "node_modules" / "mathjax" / "es5", target, dirs_exist_ok=True)


def code_fingerprint() -> str:
    """sha256 over seqlab's source and artifact manifests: a code change re-executes every page, prose edits do not."""
    import hashlib

    pkg = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(list(pkg.rglob("*.py")) + list(pkg.rglob("manifest.json"))):
        h.update(str(f.relative_to(pkg)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def page_times(site: Path) -> dict[str, float]:
    out = {}
    for html in sorted(site.glob("*.html")):
        secs = [float(s) for s in re.findall(r"computed by seqlab in ([0-9.]+) s", html.read_text(encoding="utf-8"))]
        if secs:
            out[html.stem] = sum(secs)
    return out


def export_notebooks(site: Path, pages: list[str]) -> None:
    nb_dir = site / "notebooks"
    nb_dir.mkdir(parents=True, exist_ok=True)
    for page in pages:
        subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--output",
                        str(nb_dir / f"{page}.ipynb"), str(BOOK / f"{page}.md")], check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m seqlab.report.build")
    ap.add_argument("--out", default=str(REPO / "build" / "chapter"))
    ap.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    args = ap.parse_args(argv)
    from .artifacts import heavy_eval

    heavy = heavy_eval()
    out = Path(args.out)
    vendor_assets(REPO / "build" / "npm")
    env = dict(os.environ)
    env["SEQLAB_BOOK_FIGURES"] = str(BOOK / "_figures" / "figures")
    # jupyter-cache keys on the cell source only; one cache per HEAVY_EVAL value and per version of seqlab's
    # code makes either change re-execute, while a prose-only edit reuses the outputs
    env["SEQLAB_BOOK_CACHE"] = str(REPO / "build" / f".jupyter_cache-heavy{int(heavy)}-{code_fingerprint()}")
    if args.pages:
        env["SEQLAB_BOOK_PAGES"] = args.pages
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(BOOK), str(out)],
                       env=env)
    if p.returncode != 0:
        print("chapter build failed (warnings count as errors)", file=sys.stderr)
        return p.returncode
    pages = [f.stem for f in BOOK.glob("*.md") if f.stem != "index" and (not args.pages or f.stem in args.pages.split(","))]
    export_notebooks(out, pages)
    print(f"built {out / 'index.html'} in {time.perf_counter() - t0:.1f} s "
          f"(HEAVY_EVAL={'on: heavy parts recomputed' if heavy else 'off: heavy parts loaded from verified artifacts'})")
    for page, secs in page_times(out).items():
        if page not in pages:
            continue
        print(f"  {page:<14} {secs:7.1f} s of section computation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
