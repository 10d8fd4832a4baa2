"""Build the rendered chapter: ``python -m seqlab.book.build [--pages a,b] [--out DIR]``.

Vendors plotly.js (from the plotly package) and MathJax 3 (from the npm registry, once) so the
site works with no network; runs Sphinx with myst-nb, failing on any warning or cell error;
keeps a separate execution cache per HEAVY_EVAL setting; prints each page's compute time; and
exports every page as a Jupyter notebook.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..errors import SeqlabError

REPO = Path(__file__).resolve().parents[3]
BOOK = REPO / "book"
STATIC = BOOK / "_static"


class BookError(SeqlabError):
    """A chapter build that cannot start: an unknown page, an output path that is a file, a missing tool."""


def vendor_assets(cache: Path) -> None:
    import plotly

    js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not (STATIC / "plotly.min.js").is_file() or (STATIC / "plotly.min.js").stat().st_size != js.stat().st_size:
        shutil.copyfile(js, STATIC / "plotly.min.js")
    target = STATIC / "mathjax"
    if not (target / "tex-chtml.js").is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise BookError("building the chapter needs npm (to vendor MathJax 3 for offline math)")
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), "mathjax@3"], check=True,
                       stdout=subprocess.DEVNULL)
        shutil.copytree(cache / "node_modules" / "mathjax" / "es5", target, dirs_exist_ok=True)


def code_fingerprint(pkg: Path | None = None) -> str:
    """sha256 over seqlab's source and every artifact file's bytes.

    A code or artifact change re-executes every page; a prose edit does not. The
    artifact bytes are in the key (not only their manifests) so that a tampered
    artifact can never be served from a warm cache.
    """
    import hashlib

    pkg = Path(__file__).resolve().parents[1] if pkg is None else Path(pkg)
    h = hashlib.sha256()
    files = list(pkg.rglob("*.py")) + [f for f in (pkg / "artifacts").rglob("*") if f.is_file()]
    for f in sorted(files):
        h.update(str(f.relative_to(pkg)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def available_pages() -> list[str]:
    """The chapter's page names (``book/NAME.md``), index excluded."""
    return sorted(f.stem for f in BOOK.glob("*.md") if f.stem != "index")


def check_pages(pages: str) -> list[str]:
    """Parse ``--pages a,b``; an unknown name is an error that lists the valid ones."""
    names = [p.strip() for p in pages.split(",") if p.strip()]
    known = available_pages()
    unknown = [p for p in names if p not in known]
    if unknown:
        raise BookError(f"unknown page {unknown[0]!r}; choose from {', '.join(known)}")
    return names or known


def check_out(out: Path) -> None:
    """``--out`` must be a folder we may write (or create): never a file."""
    probe = out
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise BookError(f"--out {out}: {probe} exists and is not a directory")
    if not os.access(probe, os.W_OK):
        raise BookError(f"--out {out}: {probe} is not writable")


def page_times(cache: Path) -> dict[str, float]:
    """Seconds each page's cells took to execute, from the execution cache (0 when served from it unchanged)."""
    from jupyter_cache import get_cache

    if not cache.exists():
        return {}
    return {Path(r.uri).stem: float(r.data.get("execution_seconds", 0.0)) for r in get_cache(cache).list_cache_records()}


def _drop_old_caches(keep: Path, idle_s: float = 3600.0) -> None:
    """Caches keyed by an older code fingerprint can never be hit again; drop those unused for an hour."""
    for old in keep.parent.glob(keep.name.rsplit("-", 1)[0] + "-*"):
        if old != keep and old.is_dir() and time.time() - old.stat().st_mtime > idle_s:
            shutil.rmtree(old, ignore_errors=True)


def export_notebooks(site: Path, pages: list[str]) -> None:
    nb_dir = site / "notebooks"
    nb_dir.mkdir(parents=True, exist_ok=True)
    for page in pages:
        subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--output",
                        str(nb_dir / f"{page}.ipynb"), str(BOOK / f"{page}.md")], check=True)


def verify_all_artifacts() -> None:
    """Check every committed artifact set against its manifest before any page runs (cache warm or cold)."""
    from ..store import artifact_sets, verify_artifacts

    for name in artifact_sets():
        verify_artifacts(name)


def build(out: Path, pages: str = "") -> int:
    """Build the chapter into ``out``; ``pages`` limits it to some pages. Bad input raises :class:`BookError`."""
    from ..store import heavy_eval

    heavy = heavy_eval()
    out = Path(out)
    check_out(out)
    names = check_pages(pages)
    if not heavy:
        verify_all_artifacts()
    vendor_assets(REPO / "build" / "npm")
    env = dict(os.environ)
    env["SEQLAB_BOOK_FIGURES"] = str(BOOK / "_figures" / "figures")
    # jupyter-cache keys on the cell source only; one cache per HEAVY_EVAL value and per version of seqlab's
    # code makes either change re-execute, while a prose-only edit reuses the outputs
    cache = REPO / "build" / f".jupyter_cache-heavy{int(heavy)}-{code_fingerprint()}"
    _drop_old_caches(cache)
    env["SEQLAB_BOOK_CACHE"] = str(cache)
    if pages:
        env["SEQLAB_BOOK_PAGES"] = ",".join(names)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(BOOK), str(out)],
                       env=env)
    if p.returncode != 0:
        print("seqlab: error: chapter build failed (warnings count as errors; see the messages above)", file=sys.stderr)
        return p.returncode
    export_notebooks(out, names)
    times = {page: secs for page, secs in page_times(cache).items() if page in names}
    (out / "build_report.json").write_text(json.dumps({"heavy_eval": heavy, "seconds": time.perf_counter() - t0,
                                                       "page_execution_seconds": times}, indent=1))
    print(f"built {out / 'index.html'} in {time.perf_counter() - t0:.1f} s "
          f"(HEAVY_EVAL={'on: heavy parts recomputed' if heavy else 'off: heavy parts loaded from verified artifacts'})")
    for page, secs in times.items():
        print(f"  {page:<14} {secs:7.1f} s executing its cells")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m seqlab.book.build")
    ap.add_argument("--out", default=str(REPO / "build" / "chapter"))
    ap.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    args = ap.parse_args(argv)
    try:
        return build(Path(args.out), args.pages)
    except SeqlabError as e:
        print(f"seqlab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
