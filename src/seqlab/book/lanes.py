"""Execute the chapter's pages two at a time before Sphinx reads them all.

Each page runs in its own kernel, and a page spends most of its time in one thread, so on a
machine with two cores two pages can run side by side. Sphinx's own ``-j`` splits the pages
into fixed chunks of three, which leaves one core idle while the longest chunk runs; here the
pages are dealt into *lanes* by their expected time (longest first, each to the lane with
the least work so far), and each lane is a Sphinx build of its pages only that fills the
shared execution cache. The full build that follows finds those pages in the cache and executes
only the summary, which quotes the others' results and so runs fastest once they are stored.

Nothing a page shows depends on the lanes: pages share measurements through the result store
(:mod:`seqlab.results`), whose file locks make a second page wait for the first instead of
measuring again, and each page's numbers come from its own kernel.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .progress import clock

#: pages that quote the other pages' results (through the result store): they run after the lanes, in the full
#: build, where every result they read is already stored
QUOTES_OTHERS = ("summary",)

#: expected seconds per page, each run beside another on a 2-core machine (the recurrence page slows the most), used
#: only to deal the pages into lanes when the cache folder has no times of its own yet (a first build); a page
#: missing here counts as the mean
FIRST_ESTIMATES = {"recurrence": 117.0, "forecasting": 66.0, "text": 62.0, "attention": 40.0, "transformer": 36.0}


def plan_lanes(pages: list[str], estimates: dict[str, float], lanes: int) -> list[list[str]]:
    """Pages dealt into at most ``lanes`` lists: longest expected time first, each to the least loaded lane."""
    if lanes < 1:
        raise ValueError(f"lanes must be >= 1, got {lanes}")
    known = [estimates[p] for p in pages if estimates.get(p, 0) > 0]
    typical = sum(known) / len(known) if known else 1.0
    cost = {p: estimates.get(p) or typical for p in pages}
    plan: list[list[str]] = [[] for _ in range(min(lanes, len(pages)))]
    load = [0.0] * len(plan)
    for page in sorted(pages, key=lambda p: (-cost[p], p)):
        i = load.index(min(load))
        plan[i].append(page)
        load[i] += cost[page]
    return [lane for lane in plan if lane]


def lane_pages(pages: list[str]) -> list[str]:
    """The pages to execute in lanes: all but those that quote the others."""
    return [p for p in pages if p not in QUOTES_OTHERS]


def uncached(pages: list[str], page_dir: Path, jupyter_cache: Path) -> list[str]:
    """The pages whose code cells the execution cache does not hold yet (a page it cannot judge counts as one)."""
    if not jupyter_cache.exists():
        return list(pages)
    try:
        from jupyter_cache import get_cache
        from myst_nb.core.read import read_myst_markdown_notebook
    except ImportError:
        return list(pages)
    cache = get_cache(jupyter_cache)
    todo = []
    for page in pages:
        try:
            nb = read_myst_markdown_notebook((page_dir / f"{page}.md").read_text(encoding="utf-8"))
            cache.match_cache_notebook(nb)
        except Exception:  # no match (KeyError) or a page the reader cannot judge: let a lane run it
            todo.append(page)
    return todo


def run_lanes(plan: list[list[str]], page_dir: Path, scratch: Path, env: dict[str, str], stream=None) -> bool:
    """One Sphinx build per lane, side by side, each executing its pages into the shared cache; ``True`` if all
    succeeded. Each lane reports a whole line per page (two lanes write to one terminal)."""
    from jupyter_cache import get_cache

    stream = stream or sys.stderr
    get_cache(env["SEQLAB_BOOK_CACHE"]).db  # the property creates the cache's database before two builds open it
    stream.write(f"executing {sum(map(len, plan))} page(s) in {len(plan)} lanes: "
                 + " | ".join(", ".join(sorted(lane)) for lane in plan) + "\n")  # Sphinx reads a lane in name order
    stream.flush()
    procs = []
    for i, lane in enumerate(plan):
        lane_env = dict(env, SEQLAB_BOOK_PAGES=",".join(lane), SEQLAB_BOOK_LANE=str(i + 1),
                        SEQLAB_BOOK_TIMINGS=str(scratch / f"lane{i + 1}-seconds.json"))
        out = scratch / f"lane{i + 1}" / "html"
        procs.append(subprocess.Popen([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                                       str(page_dir), str(out)], env=lane_env))
    t0 = time.perf_counter()
    try:
        while any(p.poll() is None for p in procs):
            if any(p.returncode not in (None, 0) for p in procs):
                break  # one lane failed: its message is out, the chapter cannot build, stop the others
            time.sleep(0.2)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            p.wait()
    ok = all(p.returncode == 0 for p in procs)
    if ok:
        stream.write(f"every page executed in {clock(time.perf_counter() - t0)}\n")
        stream.flush()
    return ok


def merge_lane_times(scratch: Path, record: Path) -> None:
    """Fold each lane's page times into ``record``, the estimates for the next build."""
    seen = {}
    try:
        seen = json.loads(record.read_text()) if record.is_file() else {}
    except (OSError, ValueError):
        pass
    for f in sorted(scratch.glob("lane*-seconds.json")):
        try:
            seen.update({k: v for k, v in json.loads(f.read_text()).items() if k != "index"})
        except (OSError, ValueError):
            continue
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(seen, indent=1))
    except OSError:  # an estimate for next time is not worth failing the build over
        pass


def keep_executed(scratch: Path, executed: Path) -> None:
    """Copy the notebooks each lane executed (with their execution counts) over the full build's copies, which it
    read back from the cache; only pages a lane ran are replaced."""
    import shutil

    executed.mkdir(parents=True, exist_ok=True)
    for lane in sorted(scratch.glob("lane*/")):
        for nb in (lane / "jupyter_execute").glob("*.ipynb"):
            shutil.copyfile(nb, executed / nb.name)


def lane_count() -> int:
    """Two lanes where the machine has two cores to give them, else one (the build runs as before)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1
