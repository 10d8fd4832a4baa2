"""Build the rendered chapter: ``seqlab chapter build [--pages a,b] [--out DIR] [--cache DIR]``.

The pages ship inside the package (``seqlab/book/pages``), so an installed wheel builds the
chapter from any folder. The build vendors plotly.js (from the plotly package) and MathJax 3
(from the npm registry, once per cache folder) so the site works with no network; runs Sphinx
with myst-nb, failing on any warning or cell error; keeps a separate execution cache per
HEAVY_EVAL setting and per version of seqlab's code; executes the pages the cache lacks two at a time on a
machine with two cores (:mod:`seqlab.book.lanes`); reports each page with its time and the
time left as it goes; and exports every page as a Jupyter notebook. Everything it writes is
under ``--out`` and ``--cache`` (Sphinx builds into the cache, the site is then copied into
``--out``); the package itself is only read.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import SeqlabError
from . import lanes
from .wheel import DOWNLOADS, write_wheel

PAGES = Path(__file__).resolve().parent / "pages"
#: relative to the current folder, for ``seqlab chapter build`` and ``python -m seqlab.book.build`` alike
DEFAULT_OUT = Path("build") / "chapter"

#: the kernels' IPython config: drop ipykernel's "running over TCP without encryption" warning, which every
#: page's kernel prints; the kernels listen on localhost and are gone when their page is executed
_KERNEL_CONFIG = '''import logging


class _QuietTransport(logging.Filter):
    def filter(self, record):
        return "without encryption" not in record.getMessage()


logging.getLogger("IPKernelApp").addFilter(_QuietTransport())
'''


_FAILED = "seqlab: error: chapter build failed (warnings count as errors; see the messages above)"


class BookError(SeqlabError, ValueError):
    """A chapter build that cannot start: an unknown page, an output path that is a file, a missing tool."""


def default_cache() -> Path:
    """``$SEQLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/seqlab``, else ``~/.cache/seqlab``."""
    if os.environ.get("SEQLAB_CACHE_DIR"):
        return Path(os.environ["SEQLAB_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "seqlab"


def vendor_assets(vendor: Path, npm_cache: Path) -> None:
    """plotly.min.js and MathJax 3 into ``vendor``, which the site's ``_static`` gets a copy of."""
    import plotly

    vendor.mkdir(parents=True, exist_ok=True)
    js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not (vendor / "plotly.min.js").is_file() or (vendor / "plotly.min.js").stat().st_size != js.stat().st_size:
        shutil.copyfile(js, vendor / "plotly.min.js")
    target = vendor / "mathjax"
    if not (target / "tex-chtml.js").is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise BookError("building the chapter needs npm (to vendor MathJax 3 for offline math)")
        npm_cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(npm_cache), "mathjax@3"],
                       check=True, stdout=subprocess.DEVNULL)
        shutil.copytree(npm_cache / "node_modules" / "mathjax" / "es5", target, dirs_exist_ok=True)


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


#: folders of pages built with the chapter that run no code (the guide and the API and command-line reference);
#: ``--pages guide`` builds that folder alone
FOLDERS = ("guide",)


def available_pages() -> list[str]:
    """The chapter's page names (``seqlab/book/pages/NAME.md``), index excluded."""
    return sorted(f.stem for f in PAGES.glob("*.md") if f.stem != "index")


def check_pages(pages: str | None) -> list[str]:
    """Parse ``--pages a,b`` (``None``: every page); an empty, unknown or repeated name is an error.

    A name of :data:`FOLDERS` stands for that folder's pages, which execute nothing."""
    known = available_pages()
    if pages is None:
        return known
    names = [p.strip() for p in pages.split(",")]
    choices = ", ".join(known + list(FOLDERS))
    if not any(names):
        raise BookError(f"--pages {pages!r} names no page; choose from {choices} (or leave it out for all)")
    if "" in names:
        raise BookError(f"--pages {pages!r} has an empty name between commas")
    unknown = [p for p in names if p not in known and p not in FOLDERS]
    if unknown:
        raise BookError(f"unknown page {unknown[0]!r}; choose from {choices}")
    repeated = sorted({p for p in names if names.count(p) > 1})
    if repeated:
        raise BookError(f"--pages names {repeated[0]!r} more than once")
    return names


def check_dir(path, option: str) -> Path:
    """``path`` names a folder we can create or write in, checked before any work starts (nothing is created)."""
    if not str(path).strip():
        raise BookError(f"{option} needs a folder name, got an empty one")
    folder = probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise BookError(f"{option} {folder}: {probe} exists and is not a directory")
    try:
        with tempfile.TemporaryFile(dir=probe):  # a real write: permission bits say nothing for root
            pass
    except OSError as e:
        raise BookError(f"{option} {folder}: cannot write in {probe} ({e.strerror or e})") from None
    return folder


def check_out(out, cache) -> tuple[Path, Path]:
    """``--out`` and ``--cache``: writable folders, the cache not inside the site (Sphinx refuses that)."""
    out, cache = check_dir(out, "--out"), check_dir(cache, "--cache")
    if cache.resolve().is_relative_to(out.resolve()):
        raise BookError(f"--cache {cache} is inside --out {out}; put it beside the site")
    if out.resolve().is_relative_to(PAGES):
        raise BookError(f"--out {out} is inside the pages' own folder {PAGES}")
    return out, cache


def page_times(cache: Path) -> dict[str, float]:
    """Seconds each page's cells took when the execution cache last ran them."""
    from jupyter_cache import get_cache

    if not cache.exists():
        return {}
    return {Path(r.uri).stem: float(r.data.get("execution_seconds", 0.0)) for r in get_cache(cache).list_cache_records()}


def _drop_old_caches(keep: Path, idle_s: float = 3600.0) -> None:
    """Caches keyed by an older code fingerprint can never be hit again; drop those unused for an hour."""
    for old in keep.parent.glob(keep.name.rsplit("-", 1)[0] + "-*"):
        if old != keep and old.is_dir() and time.time() - old.stat().st_mtime > idle_s:
            shutil.rmtree(old, ignore_errors=True)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def export_notebooks(site: Path, pages: list[str], executed: Path | None = None) -> None:
    """Write ``site/notebooks/PAGE.ipynb`` for each page: the notebook the build ran (``executed/PAGE.ipynb``, with
    its outputs and glued values), its Markdown resolved for Jupyter (:mod:`seqlab.book.notebooks`); a page the
    build did not run is converted from its source, without outputs."""
    import nbformat

    from .download import notebook_preface
    from .notebooks import equation_numbers, glue_texts, heading_titles, reader_notebook

    nb_dir = site / "notebooks"
    nb_dir.mkdir(parents=True, exist_ok=True)
    titles = heading_titles(sorted(PAGES.glob("*.md")))
    for page in pages:
        target = nb_dir / f"{page}.ipynb"
        ran = executed / f"{page}.ipynb" if executed is not None else None
        if ran is not None and ran.is_file():
            source, glue = nbformat.read(ran, as_version=4), glue_texts(executed / f"{page}.glue.json")
        else:
            subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--output", str(target),
                            str(PAGES / f"{page}.md")], check=True)
            source, glue = nbformat.read(target, as_version=4), {}
        nb = reader_notebook(source, glue, equation_numbers(site / f"{page}.html"), titles)
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(notebook_preface(page)))
        nbformat.write(nb, str(target))


def verify_all_artifacts() -> None:
    """Check every committed artifact set against its manifest before any page runs (cache warm or cold)."""
    from ..store import artifact_sets, verify_artifacts

    for name in artifact_sets():
        verify_artifacts(name)


def _environment(cache: Path, jupyter_cache: Path, heavy: bool, names: list[str], partial: bool) -> dict[str, str]:
    """What the Sphinx process (conf.py, the progress extension, the pages' kernels) reads from the build."""
    env = dict(os.environ)
    # one measurement, one value: results shared by pages live as long as the execution cache they belong to,
    # unless the caller names a store of its own (a test session shares one with every test)
    env["SEQLAB_RESULTS"] = os.environ.get("SEQLAB_RESULTS") or str(results_dir(jupyter_cache))
    env["SEQLAB_BOOK_VENDOR"] = str(cache / "vendor")
    env["SEQLAB_BOOK_FIGURES"] = str(cache / "figures")
    env["SEQLAB_BOOK_CACHE"] = str(jupyter_cache)
    ipython = cache / "ipython"
    (ipython / "profile_default").mkdir(parents=True, exist_ok=True)
    (ipython / "profile_default" / "ipython_kernel_config.py").write_text(_KERNEL_CONFIG)
    env["IPYTHONDIR"] = str(ipython)
    # the estimate of a page's time: its last time with this very cache (warm), else its last cold time
    cold = cache / f"page-seconds-heavy{int(heavy)}.json"
    warm = jupyter_cache / "seqlab-seconds.json"
    estimates = _read_json(cold) | (_read_json(warm) if jupyter_cache.exists() else {})
    env["SEQLAB_BOOK_ESTIMATES"] = json.dumps({p: s for p, s in estimates.items() if p in names or p == "index"})
    env["SEQLAB_BOOK_TIMINGS"] = str(warm if jupyter_cache.exists() else cold)
    env.pop("SEQLAB_BOOK_PAGES", None)
    if partial:
        env["SEQLAB_BOOK_PAGES"] = ",".join(names)
    return env


def results_dir(jupyter_cache: Path) -> Path:
    """The result store (:mod:`seqlab.results`) that belongs to one execution cache."""
    return jupyter_cache.parent / jupyter_cache.name.replace("jupyter-", "results-", 1)


def write_report(out: Path, stage: Path, names: list[str], heavy: bool, seconds: float, times: dict) -> list[str]:
    """``out/build_report.json``: the claims and glued numbers of every page; returns the one-value conflicts."""
    from .report import collect

    report = collect(stage.parent / "jupyter_execute", names, sources=PAGES)
    (out / "build_report.json").write_text(json.dumps({"heavy_eval": heavy, "seconds": seconds,
                                                       "page_execution_seconds": times, **report}, indent=1))
    return report["conflicts"]


def _stage(cache: Path, out: Path) -> Path:
    """Where Sphinx builds the site for ``out``: one folder per output folder, so each keeps its own pages."""
    import hashlib

    return cache / "sites" / hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:12] / "html"


def _make_folders(out: Path, cache: Path) -> None:
    for folder, option in ((out, "--out"), (cache, "--cache")):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise BookError(f"{option} {folder}: cannot create it ({e.strerror or e})") from None


def _run_sphinx(names: list[str], stage: Path, cache: Path, jupyter_cache: Path, env: dict) -> int:
    """Execute the pages (the slow ones in parallel lanes first, where there are cores for them) and build the
    site into ``stage``; returns Sphinx's exit code (1 when a lane failed)."""
    estimates = lanes.FIRST_ESTIMATES | json.loads(env["SEQLAB_BOOK_ESTIMATES"])
    plan = lanes.plan_lanes(lanes.uncached(lanes.lane_pages(names), PAGES, jupyter_cache), estimates,
                            lanes.lane_count())
    scratch = cache / "lanes"
    if len(plan) > 1:
        shutil.rmtree(scratch, ignore_errors=True)
        if not lanes.run_lanes(plan, PAGES, scratch, env):
            return 1
        lanes.merge_lane_times(scratch, Path(env["SEQLAB_BOOK_TIMINGS"]))
        # the lanes' pages are in the cache now: the full build below reads them and runs the summary
        env = dict(env, SEQLAB_BOOK_ESTIMATES="{}", SEQLAB_BOOK_TIMINGS=str(jupyter_cache / "seqlab-seconds.json"))
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(PAGES),
                        str(stage)], env=env)
    if len(plan) > 1:
        # the notebooks as the lanes' kernels ran them (the cache keeps outputs, not execution counts)
        lanes.keep_executed(scratch, stage.parent / "jupyter_execute")
        shutil.rmtree(scratch, ignore_errors=True)
    return p.returncode


def build(out=DEFAULT_OUT, pages: str | None = None, cache=None) -> int:
    """Build the chapter into ``out``; ``pages`` limits it to some pages. Bad input raises :class:`BookError`."""
    from ..files import folder_lock
    from ..store import heavy_eval

    heavy = heavy_eval()
    names = check_pages(pages)
    out, cache = check_out(out, default_cache() if cache is None else cache)
    out, cache = out.resolve(), cache.resolve()  # Sphinx and the kernels run in other folders
    if not heavy:
        verify_all_artifacts()
    _make_folders(out, cache)
    # --out is held for the whole build: a second build into it is refused at once, not after minutes of work
    with folder_lock(out, "seqlab chapter build" + (f" --pages {pages}" if pages else "")):
        return _build_into(out, cache, names, pages, heavy)


def _build_into(out: Path, cache: Path, names: list, pages: str | None, heavy: bool) -> int:
    from ..files import OutputSet

    vendor_assets(cache / "vendor", cache / "npm")
    # jupyter-cache keys on the cell source only; one cache per HEAVY_EVAL value and per version of seqlab's
    # code makes either change re-execute, while a prose-only edit reuses the outputs
    jupyter_cache = cache / f"jupyter-heavy{int(heavy)}-{code_fingerprint()}"
    _drop_old_caches(jupyter_cache)
    _drop_old_caches(results_dir(jupyter_cache))
    env = _environment(cache, jupyter_cache, heavy, names, partial=pages is not None)
    mode = "on: heavy parts recomputed" if heavy else "off: heavy parts loaded from verified artifacts"
    print(f"building {len(names)} page(s) into {out} (HEAVY_EVAL={mode}; cache {cache})", file=sys.stderr,
          flush=True)
    t0 = time.perf_counter()
    # Sphinx builds into the cache (myst-nb writes its executed notebooks beside the output folder, and the
    # doctrees are only for the next incremental build); the finished site is copied into --out
    stage = _stage(cache, out)
    names = [n for n in names if n not in FOLDERS]  # Sphinx builds the folders; the rest is the notebooks' work
    code = _run_sphinx(names, stage, cache, jupyter_cache, env)
    if code:
        print(_FAILED, file=sys.stderr)
        return code
    times = {page: secs for page, secs in page_times(jupyter_cache).items() if page in names}
    # the site, its notebooks and its report appear in --out together (an interrupted copy leaves the last site)
    with OutputSet(out, "seqlab chapter build" + (f" --pages {pages}" if pages else "")) as site:
        shutil.copytree(stage, site.staging, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".doctrees"))
        export_notebooks(site.staging, names, executed=stage.parent / "jupyter_execute")
        write_wheel(site.staging / DOWNLOADS)  # the seqlab each page's box offers, as a reader installs it
        clashes = write_report(site.staging, stage, names, heavy, time.perf_counter() - t0, times)
        site.commit()
    for clash in clashes:
        print(f"seqlab: error: {clash}", file=sys.stderr)
    if clashes:
        print(f"seqlab: error: chapter build failed: {len(clashes)} quantity(ies) shown with two values "
              f"(see {out / 'build_report.json'})", file=sys.stderr)
        return 1
    claims = json.loads((out / "build_report.json").read_text())["claims"]
    kinds = {k: sum(c.get("kind") == k for c in claims) for k in ("required", "lesson", "either way")}
    print(f"{len(claims)} claims evaluated ({kinds['required']} required and {kinds['lesson']} lesson claims, all "
          f"true; {kinds['either way']} reported either way): {out / 'build_report.json'}")
    print(f"built {out / 'index.html'} in {time.perf_counter() - t0:.1f} s (HEAVY_EVAL={mode})")
    for page, secs in times.items():
        print(f"  {page:<14} {secs:7.1f} s executing its cells")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The build's options, shared by ``seqlab chapter build`` and ``python -m seqlab.book.build``."""
    parser.add_argument("--out", default=str(DEFAULT_OUT), help=f"the site's folder (default: {DEFAULT_OUT})")
    parser.add_argument("--pages", default=None, help="comma-separated page names (default: every page): "
                        + ", ".join(available_pages()) + "; guide: the guide and the reference")
    parser.add_argument("--cache", default=None, help="execution cache and vendored MathJax (default: "
                        "$SEQLAB_CACHE_DIR, else $XDG_CACHE_HOME/seqlab, else ~/.cache/seqlab)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m seqlab.book.build")
    add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return build(args.out, args.pages, args.cache)
    except SeqlabError as e:
        print(f"seqlab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
