import importlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


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


def require_shared(path: Path) -> Path:
    """``path`` under ../shared: a user's clone without it skips the test, CI (where it is always present) fails."""
    if path.exists():
        return path
    message = f"{path} is not beside the checkout"
    if in_ci():
        pytest.fail(f"{message}, and CI always has ../shared")
    pytest.skip(message)


@pytest.fixture(scope="session")
def section_results(tmp_path_factory):
    """Run each chapter section at most once per test session (tables only), on demand."""
    from seqlab.chapter import run_section

    cache = {}
    out = tmp_path_factory.mktemp("sections")

    def get(sid):
        if sid not in cache:
            cache[sid] = run_section(sid, out, figures=False)
        return cache[sid]

    return get
