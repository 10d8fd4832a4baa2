import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def require_shared(path: Path) -> Path:
    """``path`` under ../shared: a user's clone without it skips the test, CI (where it is always present) fails."""
    if path.exists():
        return path
    message = f"{path} is not beside the checkout"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
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
