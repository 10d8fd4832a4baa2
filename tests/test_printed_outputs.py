"""The chapter's printed outputs, checked by the shared tool against the installed CLI."""
import subprocess
import sys

from conftest import REPO, SHARED, require_shared, patient

TOOL = SHARED / "tools" / "check_printed_outputs.py"


def test_check_printed_outputs_passes():
    require_shared(TOOL)
    p = subprocess.run([sys.executable, str(TOOL), "--seqlab", f"{sys.executable} -m seqlab"], cwd=REPO,
                       capture_output=True, text=True, timeout=patient(600))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().splitlines()[-1] == "10 passed, 0 failed"
