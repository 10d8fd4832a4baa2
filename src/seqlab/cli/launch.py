"""``seqlab lm train --nproc N``: start N ranks of the same command on this machine, as torchrun --standalone does.

Each rank is ``python -m seqlab lm train ...`` with torchrun's environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` on a free loopback port).
Rank 0's output is the run's output; the others print nothing. The run fails and
stops like one process:

- the ranks live in a process group of their own, so a Ctrl-C at the terminal reaches
  the launcher alone, which passes each signal on to every rank exactly once: one
  Ctrl-C finishes the step and writes a checkpoint, a second stops at once;
- if a rank dies, the others are stopped at once and one line names the rank, its
  exit code or signal, and the last intact checkpoint;
- the ranks watch the launcher (``SEQLAB_LAUNCHER_PID``) and stop with it, so none
  trains on as an orphan.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..text.distributed import STOPPED

__all__ = ["launch", "free_port", "STOPPED"]

#: how long the launcher waits for rank 0 to report a failure it shares with the rank that failed first
_RANK0_GRACE_S = 5.0
#: after a second Ctrl-C, how long the ranks have to stop before the launcher kills them (a rank blocked in a
#: collective with a stalled peer cannot see the signal until the collective times out)
_SECOND_STOP_GRACE_S = 5.0


def free_port() -> int:
    """A loopback port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _last_line(log) -> str:
    if log is None:
        return ""
    try:
        log.seek(0)
        lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1] if lines else ""


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def last_intact_checkpoint(out: Path | None) -> str:
    """What a stopped run keeps in ``out``: the iteration of its checkpoint, checked against its checksums."""
    if out is None:
        return STOPPED
    from ..text.checkpoint import CHECKPOINT_FILE, CheckpointError, load_checkpoint

    if not (Path(out) / CHECKPOINT_FILE).is_file():
        return f"the run stopped; {out} holds no checkpoint yet"
    try:
        _, _, state = load_checkpoint(out)
    except CheckpointError as e:
        return f"the run stopped; the checkpoint in {out} does not load ({e})"
    return (f"the run stopped; the last intact checkpoint is iteration {state['iteration']:,} in {out} "
            "(run the same command to resume)")


def _spawn(argv: list[str], env: dict, log):
    # a process group of their own: the terminal's Ctrl-C reaches the launcher only, which passes it on once
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    quiet = {} if log is None else {"stdout": subprocess.DEVNULL, "stderr": log}
    return subprocess.Popen([sys.executable, "-m", "seqlab", *argv], env=env, **quiet, **group)


def launch(argv: list[str], nproc: int, out: Path | None = None) -> int:
    """Run ``seqlab`` with ``argv`` on ``nproc`` ranks; returns rank 0's exit code (or the failing rank's).

    ``out`` is the run's checkpoint folder, named in the line that reports a dead rank.
    """
    port = free_port()
    procs, logs, stops = [], [], []

    def forward(signum, frame):
        stops.append(time.monotonic())
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for rank in range(nproc):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), LOCAL_RANK=str(rank),
                       LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       SEQLAB_LAUNCHER_PID=str(os.getpid()))
            # the other ranks' stderr: a file with no name, so a killed launcher leaves nothing behind
            log = None if rank == 0 else tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            logs.append(log)
            procs.append(_spawn(argv, env, log))
        return _wait(procs, logs, nproc, out, stops)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for log in logs:
            if log is not None:
                log.close()


def _wait(procs, logs, nproc: int, out: Path | None, stops: list) -> int:
    while True:
        codes = [p.poll() for p in procs]
        failed = [r for r, c in enumerate(codes) if c not in (None, 0, 130)]
        if failed or all(c is not None for c in codes):
            break
        if len(stops) >= 2 and time.monotonic() - stops[1] > _SECOND_STOP_GRACE_S:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for p in procs:
                p.wait()
            print(f"seqlab: interrupted: the ranks did not stop within {_SECOND_STOP_GRACE_S:g} s of the second "
                  f"Ctrl-C (one may be stalled) and were killed; {last_intact_checkpoint(out)}", file=sys.stderr)
            return 130
        time.sleep(0.1)
    if not failed:
        return procs[0].returncode
    first = failed[0]
    if first != 0:  # rank 0 may be failing for the same reason: then its own line says it
        try:
            codes[0] = procs[0].wait(timeout=_RANK0_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        if codes[0] not in (None, 0, 130):
            first = 0
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()
    code = codes[first]
    if first == 0 and code > 0:  # rank 0 ended on an error of its own, and has said why in one line
        return code
    why = _last_line(logs[first]).removeprefix("seqlab: error: ")
    print(f"seqlab: error: rank {first} of {nproc} {_how(code)}{': ' + why if why else ''}; "
          f"{last_intact_checkpoint(out)}", file=sys.stderr)
    return 2 if code == 2 else 1
