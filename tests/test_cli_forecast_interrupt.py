"""Ctrl-C during ``forecast evaluate`` stops the N-BEATS worker processes at once and says what was lost."""
import os
import select
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from conftest import patient

psutil = pytest.importorskip("psutil")


def live(pgid: int) -> list[int]:
    """Processes of the group that still run (an exited child waiting to be reaped does not)."""
    out = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(p.info["pid"]) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(p.info["pid"])
        except (ProcessLookupError, psutil.Error):
            pass
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_ctrl_c_stops_the_workers_and_says_what_was_lost(tmp_path):
    t = np.arange(40)
    pd.DataFrame({"ds": t + 1, "a": 50 + np.sin(t), "b": 80 + np.cos(t)}).to_csv(tmp_path / "s.csv", index=False)
    cmd = [sys.executable, "-m", "seqlab", "forecast", "evaluate", "--csv", str(tmp_path / "s.csv"), "--horizon", "4",
           "--models", "N-BEATS", "--max-steps", "1000000", "--members", "2", "--progress", "--output",
           str(tmp_path / "out")]
    # a terminal's foreground command starts with Ctrl-C at its default; a test runner started in the background
    # by a non-interactive shell hands its children SIGINT ignored, and Python then never raises KeyboardInterrupt
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         env={**os.environ, "SEQLAB_WORKERS": "2"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    err, rest, t0 = b"", b"", time.monotonic()
    try:
        while b"member " not in err and time.monotonic() - t0 < 120:  # a member has reported training steps
            if select.select([p.stderr], [], [], 0.5)[0]:
                err += os.read(p.stderr.fileno(), 1 << 16)
        assert b"member " in err, err.decode()[-2000:]
        assert len(live(p.pid)) >= 3  # the command and its two workers at least
        os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
        sent = time.monotonic()
        _, rest = p.communicate(timeout=patient(30))
        waited = time.monotonic() - sent
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    text = (err + rest).decode()
    assert p.returncode == 130, text[-2000:]
    assert waited < 10
    last = text.strip().splitlines()[-1].split("\r")[-1].strip()
    assert last.startswith("seqlab: interrupted: stopped while fitting N-BEATS member"), text[-2000:]
    assert "nothing was written" in last and "Traceback" not in text
    deadline = time.monotonic() + 5
    while live(p.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert live(p.pid) == []
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
