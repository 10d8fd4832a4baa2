"""``seqlab lm train --nproc N``: start N ranks of the same command on this machine, as torchrun --standalone does.

Each rank is ``python -m seqlab lm train ...`` with torchrun's environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` on a free loopback port).
Rank 0's output is the run's output; the others print nothing. If a rank dies, the
others are stopped at once and one line names it. Ctrl-C reaches every rank (they share
the terminal's process group); they stop together at the same step, and rank 0 writes
the checkpoint.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from ..text.distributed import STOPPED

__all__ = ["launch", "free_port", "STOPPED"]


def free_port() -> int:
    """A loopback port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _last_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def launch(argv: list[str], nproc: int) -> int:
    """Run ``seqlab`` with ``argv`` on ``nproc`` ranks; returns rank 0's exit code (or the failing rank's)."""
    port = free_port()
    procs, logs = [], []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(nproc),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        if rank == 0:
            procs.append(subprocess.Popen([sys.executable, "-m", "seqlab", *argv], env=env))
            logs.append(None)
        else:
            fd, log = tempfile.mkstemp(prefix=f"seqlab-rank{rank}-", suffix=".log")
            with os.fdopen(fd, "w") as err:
                procs.append(subprocess.Popen([sys.executable, "-m", "seqlab", *argv], env=env,
                                              stdout=subprocess.DEVNULL, stderr=err))
            logs.append(log)
    previous = {sig: signal.signal(sig, lambda s, f: [p.send_signal(s) for p in procs if p.poll() is None])
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [r for r, c in enumerate(codes) if c not in (None, 0, 130)]
            if failed or all(c is not None for c in codes):
                break
            time.sleep(0.1)
        if failed:
            first = failed[0]
            if first != 0:  # rank 0 may be failing for the same reason: then its own line says it
                try:
                    codes[0] = procs[0].wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
                if codes[0] not in (None, 0, 130):
                    first = 0
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for p in procs:
                p.wait()
            if first == 0:  # rank 0 has already said why, in one line
                return codes[0]
            why = _last_line(logs[first]) if logs[first] else ""
            why = why.removeprefix("seqlab: error: ")
            print(f"seqlab: error: rank {first} of {nproc} exited with code {codes[first]}"
                  f"{': ' + why if why else ''}; {STOPPED}", file=sys.stderr)
            return 2 if codes[first] == 2 else 1
        return procs[0].returncode
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for log in logs:
            if log:
                try:
                    os.unlink(log)
                except OSError:
                    pass
