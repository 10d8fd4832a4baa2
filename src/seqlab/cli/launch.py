"""``seqlab lm train --nproc N``: start N ranks of the same command on this machine, as torchrun --standalone does.

Each rank is ``python -m seqlab lm train ...`` with torchrun's environment (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` on a free loopback port).
Rank 0's output is the run's output; the others print nothing. The run fails and
stops like one process:

- the ranks live in a process group of their own, so a Ctrl-C at the terminal reaches
  the launcher alone, which passes each signal on to every rank exactly once: one
  Ctrl-C finishes the step and writes a checkpoint, a second stops at once;
- if a rank dies, the others are stopped at once and one line names the rank, its
  exit code or signal, and the last intact checkpoint: a rank that notices a peer
  gone does not say so itself, but hands its message to the launcher (a file it
  names in ``SEQLAB_LAUNCHER_REPORT_FD``) and leaves with :data:`HANDED_OVER`; the
  launcher, which sees every rank end, prints the one line;
- the ranks watch the launcher (``SEQLAB_LAUNCHER_PID``) and stop with it, so none
  trains on as an orphan, and say that it is gone.
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

from ..text.distributed import STOPPED, LostContact, launcher_gone, rendezvous_stuck

__all__ = ["launch", "free_port", "last_intact_checkpoint", "leave_for", "orphan_note", "HANDED_OVER", "STOPPED"]

#: the exit code of a rank that handed its lost-contact message to the launcher (seqlab itself uses 0, 1, 2, 130)
HANDED_OVER = 3
#: where a rank finds the descriptor of the file that takes that message
REPORT_FD = "SEQLAB_LAUNCHER_REPORT_FD"
#: once a rank has failed, how long the launcher lets the others end on their own (a rank that lost contact hands
#: its message over; a dead one is reaped) before it kills them; the one line comes after either way
_PEER_GRACE_S = 5.0
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


def _spawn(argv: list[str], env: dict, log, report):
    # a process group of their own: the terminal's Ctrl-C reaches the launcher only, which passes it on once
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    quiet = {} if log is None else {"stdout": subprocess.DEVNULL, "stderr": log}
    env = dict(env, **{REPORT_FD: str(report.fileno())})
    return subprocess.Popen([sys.executable, "-m", "seqlab", *argv], env=env, pass_fds=(report.fileno(),), **quiet,
                            **group)


def _report(f) -> str:
    """What a rank handed over (read where it lies: the rank's writes moved the shared offset)."""
    try:
        return " ".join(os.pread(f.fileno(), 4096, 0).decode("utf-8", "replace").split())
    except (OSError, ValueError):
        return ""


def leave_for(e: BaseException) -> None:
    """In a rank about to report ``e`` as ``seqlab: error``: leave here instead where that would be wrong.

    - Under this launcher a lost contact is the launcher's to report (it knows which
      rank died, and how): the message goes to its file, and the rank leaves with
      :data:`HANDED_OVER` without a word. Should the launcher be gone, the rank says it.
    - After a rendezvous left its helper thread inside TCPStore's C++, the line is
      printed here and the process leaves at once (:func:`rendezvous_stuck`).
    Otherwise returns.
    """
    fd, launcher = os.environ.get(REPORT_FD, ""), os.environ.get("SEQLAB_LAUNCHER_PID", "")
    if isinstance(e, LostContact) and fd.isdigit() and launcher == str(os.getppid()):
        try:
            os.write(int(fd), e.what.encode("utf-8"))
        except OSError:
            return
        _flush_and_exit(HANDED_OVER)
    if rendezvous_stuck():
        print(f"seqlab: error: {' '.join(str(e).split())}", file=sys.stderr)
        _flush_and_exit(2)


def _flush_and_exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def orphan_note(out: Path | None) -> str | None:
    """What a rank whose launcher is gone says on stopping (None while the launcher lives, or under torchrun)."""
    gone = launcher_gone()
    return None if gone is None else f"the launcher (pid {gone}) is gone; {last_intact_checkpoint(out)}"


def launch(argv: list[str], nproc: int, out: Path | None = None) -> int:
    """Run ``seqlab`` with ``argv`` on ``nproc`` ranks; returns rank 0's exit code (or the failing rank's).

    ``out`` is the run's checkpoint folder, named in the line that reports a dead rank.
    """
    port = free_port()
    procs, logs, reports, stops = [], [], [], []

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
            reports.append(tempfile.TemporaryFile("w+b"))
            procs.append(_spawn(argv, env, log, reports[-1]))
        return _wait(procs, logs, reports, nproc, out, stops)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in (*logs, *reports):
            if f is not None:
                f.close()


def _failed(code) -> bool:
    return code not in (None, 0, 130)


def _wait(procs, logs, reports, nproc: int, out: Path | None, stops: list) -> int:
    while True:
        codes = [p.poll() for p in procs]
        if any(_failed(c) for c in codes) or all(c is not None for c in codes):
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
    if not any(_failed(c) for c in codes):
        return procs[0].returncode
    return _one_line(procs, logs, reports, nproc, out)


def _one_line(procs, logs, reports, nproc: int, out: Path | None) -> int:
    """A rank failed: once rank 0 can print nothing more, say in one line which rank failed (the lowest that failed
    on its own, rather than for want of a peer), and how."""

    def culprit(r: int, code) -> bool:  # ended on its own, and not for want of a peer
        return _failed(code) and not (code == HANDED_OVER and _report(reports[r]))

    end = time.monotonic() + _PEER_GRACE_S
    while time.monotonic() < end:
        codes = [p.poll() for p in procs]
        if codes[0] is not None and (all(c is not None for c in codes) or
                                     any(culprit(r, c) for r, c in enumerate(codes))):
            break
        time.sleep(0.1)
    killed = {r for r, p in enumerate(procs) if p.poll() is None}
    for r in killed:
        procs[r].kill()
    codes = [p.wait() for p in procs]
    # the codes the ranks ended with by themselves (one may have ended just before the kill)
    own = {r: c for r, c in enumerate(codes) if r not in killed or c != -signal.SIGKILL}
    if 0 in own and culprit(0, own[0]) and own[0] > 0:  # rank 0 ended on an error of its own, and said why
        return own[0]
    culprits = [r for r, c in own.items() if culprit(r, c)]
    if culprits:
        first, code = culprits[0], codes[culprits[0]]
        why = _last_line(logs[first]).removeprefix("seqlab: error: ")
        print(f"seqlab: error: rank {first} of {nproc} {_how(code)}{': ' + why if why else ''}; "
              f"{last_intact_checkpoint(out)}", file=sys.stderr)
        return 2 if code == 2 else 1
    # every failure was a lost contact: a stall, or a peer that ended cleanly too early; the lowest rank says which
    what = next((_report(reports[r]) for r in sorted(own) if own[r] == HANDED_OVER), "") or \
        f"the ranks lost contact ({', '.join(f'rank {r} {_how(c)}' for r, c in enumerate(codes))})"
    print(f"seqlab: error: {what}; {last_intact_checkpoint(out)}", file=sys.stderr)
    return 2
