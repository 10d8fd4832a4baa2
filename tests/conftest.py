from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


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
