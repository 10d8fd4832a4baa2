import contextlib
import importlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def pytest_configure(config):
    """One result store for the whole session, so the sections' shared results (the copy sweep, the head-count
    task) are computed once for every test, worker and ``seqlab`` subprocess, as a build computes them once for
    every page (``seqlab.results.once``). Set by the controller before xdist starts its workers, which inherit
    it; a test of a reader's notebook removes it."""
    # -m "not slow" gives a quick run of a file; CI runs every test
    config.addinivalue_line("markers", "slow: a test that takes minutes; -m 'not slow' leaves it out")
    if hasattr(config, "workerinput"):
        return
    # the suite runs one worker per core (-n 2): a process that also starts a thread per core (torch's default)
    # oversubscribes the machine, and torch's spinning threads then ran a small training 12x slower than alone.
    # Set before any worker or subprocess imports torch; a test that measures threads sets its own count.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if os.environ.get("SEQLAB_RESULTS"):
        return
    folder = tempfile.mkdtemp(prefix="seqlab-test-results-")
    os.environ["SEQLAB_RESULTS"] = folder
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def in_ci() -> bool:
    """``CI`` is set (to anything but 0/false): what a user may lack, CI has, so its absence is a failure."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def require(module: str):
    """Import an optional test dependency: missing, it skips the test on a user's machine and fails it under CI
    (which installs the test and book extras). Ray and Spark are not part of CI; their tests skip by name."""
    if not in_ci():
        return pytest.importorskip(module)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.fail(f"{module} is missing under CI, which installs every extra the tests use: {e}", pytrace=False)


def require_chromium() -> None:
    """The browser checks need Debian's chromium and its driver: missing, they skip on a user's machine and fail
    under CI (which installs them)."""
    require("selenium")
    from seqlab.book.browser import chromium_available

    if not chromium_available():
        message = "Debian's chromium and chromium-driver are not installed (.ci/run installs them)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)


def require_shared(path: Path) -> Path:
    """``path`` under ../shared: a user's clone without it skips the test, CI (where it is always present) fails."""
    if path.exists():
        return path
    message = f"{path} is not beside the checkout"
    if in_ci():
        pytest.fail(f"{message}, and CI always has ../shared")
    pytest.skip(message)


@pytest.fixture(scope="session")
def section_results():
    """Each chapter section run at most once per test session (tables only), on demand: through the session's
    result store (``run_section_once``), so a section that one xdist worker, or one ``seqlab run`` subprocess,
    ran is not run again."""
    from seqlab.chapter.base import run_section_once

    cache = {}

    def get(sid):
        if sid not in cache:
            cache[sid] = run_section_once(sid)
        return cache[sid]

    return get


def tiny_checkpoint(directory: Path, chars: int, options: list[str]) -> Path:
    """``directory/ckpt``: ``seqlab lm train`` with ``options`` on the first ``chars`` characters of tinyshakespeare."""
    from seqlab.cli import main
    from seqlab.text.corpus import load_tinyshakespeare

    text = directory / "t.txt"
    text.write_text(load_tinyshakespeare()[:chars], encoding="utf-8")
    assert main(["lm", "train", "--text", str(text), "--out", str(directory / "ckpt"), *options]) == 0
    return directory / "ckpt"


def page_functions(page: str, names, namespace: dict) -> dict:
    """The functions ``names`` as the page's visible cells define them, compiled from the page into ``namespace``.

    Fails unless every one of them is a visible cell of ``page`` (``forecasting``, ``text``, ...).
    """
    import ast

    from seqlab.book.build import PAGES
    from seqlab.book.cells import code_cells

    found = []
    for cell in code_cells(PAGES / f"{page}.md"):
        if not cell.visible:
            continue
        for node in ast.parse(cell.source).body:
            if isinstance(node, ast.FunctionDef) and node.name in names:
                exec(compile(ast.Module([node], []), f"{page}.md", "exec"), namespace)
                found.append(node.name)
    assert sorted(found) == sorted(names), f"every one of {sorted(names)} is a visible cell of {page}.md"
    return namespace


@contextlib.contextmanager
def held_by_another_process(folder, command: str = "seqlab test holder"):
    """``folder``'s writer lock (``seqlab.files.folder_lock``) held by another process while the block runs;
    yields that process's pid."""
    # Ctrl-C ends the holder: its handler is set here, as a shell that starts the suite in the background
    # leaves SIGINT ignored in every child, and Python then installs none
    code = ("import signal, sys, time\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from seqlab.files import folder_lock\n"
            "try:\n    with folder_lock(sys.argv[1], sys.argv[2]):\n        print('held', flush=True)\n"
            "        time.sleep(600)\nexcept KeyboardInterrupt:\n    pass\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(folder), command], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        yield p.pid
    finally:  # Ctrl-C: the holder leaves its block, and releases the lock, as a finished writer does
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=patient(60))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def patient(seconds: float) -> float:
    """A subprocess timeout that guards against a hang, never a speed check: ``seconds`` (ample on a quiet
    machine) stretched by the machine's load per core when the test starts, and by 3 for load that comes later
    (two test workers and another CPU-bound program on two cores run each process at a third of its speed)."""
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        load = 1.0
    return 3 * seconds * max(1.0, load)


def ranks_of(launcher: int) -> dict[int, int]:
    """rank -> pid of a launcher's children (``lm train --nproc``), read from each child's environment (Linux)."""
    path = Path(f"/proc/{launcher}/task/{launcher}/children")
    out = {}
    for pid in (int(c) for c in path.read_text().split()) if path.exists() else ():
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        out.update((int(e[5:]), pid) for e in env if e.startswith(b"RANK="))
    return out


#: the header that makes a MyST Markdown file a notebook myst-nb executes (for the tests' small pages)
MYST_NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
