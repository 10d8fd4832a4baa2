"""Data-parallel training across processes (torchrun): who this process is, and the few collectives the loop needs.

``torchrun --standalone --nproc_per_node=N`` starts N copies of the same command with
``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` set. Every rank draws the same global batch
from the same seeded generator and takes its own slice of it, so the batches, and with
them the training, are the same for any N; DistributedDataParallel averages the
gradients (gloo on the CPU, NCCL on CUDA). Only rank 0 writes checkpoints.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

import torch

from ..errors import InvalidParameterError, SeqlabError

__all__ = ["Rank", "DistributedError", "LostContact", "from_environment", "rank_from_environment",
           "rendezvous_address", "rendezvous_timeout", "rendezvous_stuck", "watch_launcher", "launcher_gone",
           "stop_with_launcher", "all_mean", "any_true", "lost_contact", "STOPPED"]

#: how every rank-failure message ends, whichever process reports it
STOPPED = "the run stopped (the last checkpoint is kept)"

#: how long a collective waits for a rank that died before the others give up
TIMEOUT = timedelta(seconds=120)


class DistributedError(SeqlabError, RuntimeError):
    """The process group could not start, or a rank stopped answering."""


class LostContact(DistributedError):
    """A collective failed because another rank died or stopped answering; ``what`` says so without the ending."""

    def __init__(self, what: str):
        super().__init__(f"{what}; {STOPPED}")
        self.what = what


@dataclass(frozen=True)
class Rank:
    """This process's place in the run: ``rank`` of ``world_size`` (0 of 1 without torchrun)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


#: the variables torchrun (and ``lm train --nproc``) sets, with their defaults outside a distributed run
_WHOLE_NUMBERS = (("WORLD_SIZE", 1), ("RANK", 0), ("LOCAL_RANK", 0))
#: how long the ranks wait for each other to form the process group, unless SEQLAB_RENDEZVOUS_TIMEOUT says
RENDEZVOUS_TIMEOUT_S = 60.0
#: how often a rank started by ``lm train --nproc`` checks that its launcher is alive, and how long it may take to
#: stop cleanly (finish the step, write the checkpoint) once the launcher is gone before it is killed
WATCH_INTERVAL_S, ORPHAN_GRACE_S = 0.5, 30.0


def _whole(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidParameterError(f"environment variable {name}={raw!r} is not a whole number "
                                    "(torchrun sets RANK, WORLD_SIZE and LOCAL_RANK)") from None


def rank_from_environment() -> Rank:
    """The ``Rank`` that ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` describe, checked; joins nothing."""
    world, rank, local = (_whole(name, default) for name, default in _WHOLE_NUMBERS)
    if world < 1:
        raise InvalidParameterError(f"environment variable WORLD_SIZE={world} must be at least 1")
    if not 0 <= rank < world:
        raise InvalidParameterError(f"environment variable RANK={rank} is not a place in a run of WORLD_SIZE={world} "
                                    f"(0 to {world - 1})")
    if local < 0:
        raise InvalidParameterError(f"environment variable LOCAL_RANK={local} must be at least 0")
    return Rank(rank, world, local)


def rendezvous_address() -> tuple[str, int]:
    """``MASTER_ADDR`` and ``MASTER_PORT``, checked: where rank 0 listens for the others."""
    addr = os.environ.get("MASTER_ADDR", "").strip()
    raw = os.environ.get("MASTER_PORT", "").strip()
    if not addr:
        raise InvalidParameterError("environment variable MASTER_ADDR is not set: a run of more than one process "
                                    "needs rank 0's address (torchrun and lm train --nproc set it)")
    try:
        port = int(raw)
    except ValueError:
        raise InvalidParameterError(f"environment variable MASTER_PORT={raw!r} is not a port number "
                                    "(a whole number from 1 to 65535)") from None
    if not 1 <= port <= 65535:
        raise InvalidParameterError(f"environment variable MASTER_PORT={port} is not a port number (1 to 65535)")
    return addr, port


def rendezvous_timeout() -> float:
    """Seconds the ranks wait for each other: ``SEQLAB_RENDEZVOUS_TIMEOUT`` or :data:`RENDEZVOUS_TIMEOUT_S`."""
    raw = os.environ.get("SEQLAB_RENDEZVOUS_TIMEOUT", "").strip()
    if not raw:
        return RENDEZVOUS_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= 86400):
        raise InvalidParameterError(f"environment variable SEQLAB_RENDEZVOUS_TIMEOUT={raw!r} must be a number of "
                                    "seconds in (0, 86400]")
    return seconds


@contextlib.contextmanager
def _quiet_stderr():
    """File descriptor 2 goes to /dev/null while the block runs (what Python itself writes there is flushed first)."""
    sys.stderr.flush()
    try:
        saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no descriptors to spare: the logs stay
        yield
        return
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


#: rendezvous helper threads given up on while still inside TCPStore's C++ (see :func:`_store`)
_STUCK: list[threading.Thread] = []


def rendezvous_stuck() -> bool:
    """Whether a rendezvous helper thread was left inside TCPStore's C++.

    The interpreter must then not finalize: once it has begun to, that thread, on
    coming back from C++, is ended mid-call (it may not take the GIL again), which
    aborts the process with a native stack dump. Leave with ``os._exit`` instead.
    """
    return any(t.is_alive() for t in _STUCK)


def _resolve(place: str, addr: str, port: int) -> None:
    # TCPStore retries a name that does not resolve for its whole timeout, twice, logging a C++ stack each time
    try:
        socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:  # gaierror, or a name the IDNA codec refuses
        why = getattr(e, "strerror", None) or " ".join(str(e).split()) or type(e).__name__
        raise DistributedError(f"{place}: MASTER_ADDR {addr} does not resolve to an address ({why}); "
                               "nothing was trained") from None


def _await_listener(place: str, addr: str, port: int, deadline: float) -> None:
    """Return once something accepts connections at ``addr:port``; a DistributedError if nothing does in time.

    TCPStore's client retries a refused connection for its timeout and then once
    more after a random delay, so it can outlive any deadline given to it; asking
    here first keeps it from starting when the answer is already known.
    """
    end = time.monotonic() + deadline
    while True:
        try:
            with socket.create_connection((addr, port), timeout=min(1.0, max(0.05, end - time.monotonic()))):
                return
        except OSError as e:
            last = e
        if time.monotonic() >= end:
            break
        time.sleep(min(0.1, max(0.0, end - time.monotonic())))
    if isinstance(last, ConnectionRefusedError):
        why = "the connection was refused: nothing listens there (rank 0, which hosts it, never came)"
    else:
        why = f"it cannot be reached ({last.strerror or ' '.join(str(last).split()) or type(last).__name__})"
    raise DistributedError(f"{place} within {deadline:g} s: {why}; nothing was trained")


def _store(where: Rank, addr: str, port: int, deadline: float):
    """The TCP store the process group forms through, or a DistributedError within about ``deadline`` seconds.

    The store's own timeout does not cover a port held by another program (a client
    then waits for an answer forever), so the connection runs in a helper thread and
    this one stops waiting at the deadline; see :func:`rendezvous_stuck`.
    """
    import torch.distributed as dist

    box: dict = {}
    # under torchrun its agent holds the store and every rank is a client (as torch's own env:// rendezvous does)
    hosts = where.is_main and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True"
    place = f"rank {where.rank} of {where.world_size}: no process group formed at {addr}:{port}"
    _resolve(place, addr, port)
    if not hosts:
        _await_listener(place, addr, port, deadline)

    def connect():
        try:
            box["store"] = dist.TCPStore(addr, port, where.world_size, hosts, timeout=timedelta(seconds=deadline),
                                         wait_for_workers=True, multi_tenant=hosts)
        except BaseException as e:  # handed to the waiting thread, which reports it
            box["error"] = e

    helper = threading.Thread(target=connect, name="seqlab-rendezvous", daemon=True)
    with _quiet_stderr():  # c10d logs each retry, and a failure's C++ stack, straight to the process's stderr
        helper.start()
        # the store's own timeout comes first unless a listener never answers, or rank 0 cannot reach its own store
        helper.join(deadline + 5.0)
    if "store" in box:
        return box["store"]
    if "error" not in box:
        _STUCK.append(helper)
        why = "is another program using the port?" if not hosts else \
            "its own store did not answer: is MASTER_ADDR an address of this machine?"
        raise DistributedError(f"{place} within {deadline:g} s ({why}); nothing was trained")
    detail = " ".join(str(box["error"]).split())
    if "EADDRINUSE" in detail or "address already in use" in detail:
        raise DistributedError(f"{place}: the port is in use by another program; nothing was trained")
    raise DistributedError(f"{place} within {deadline:g} s (a rank missing or unreachable: "
                           f"{detail[:120]}); nothing was trained")


def from_environment(device: torch.device) -> Rank:
    """The rank torchrun gave this process; joins (or reuses) the process group when there is more than one.

    The group must form within :func:`rendezvous_timeout` seconds, else
    :class:`DistributedError` says which rank waited where.
    """
    where = rank_from_environment()
    if not where.distributed:
        return where
    import torch.distributed as dist

    if not dist.is_initialized():
        rank, world, local = where.rank, where.world_size, where.local_rank
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            if local >= torch.cuda.device_count():  # NCCL takes one GPU per process; two ranks cannot share one
                raise DistributedError(f"rank {rank}: local rank {local} needs GPU {local}, but this machine has "
                                       f"{torch.cuda.device_count()}; start at most that many processes per machine")
            torch.cuda.set_device(local)
        addr, port = rendezvous_address()
        store = _store(where, addr, port, rendezvous_timeout())
        try:
            dist.init_process_group(backend=backend, store=store, rank=rank, world_size=world, timeout=TIMEOUT)
        except (RuntimeError, ValueError) as e:
            raise DistributedError(f"rank {rank}: could not join the {backend} process group "
                                   f"({' '.join(str(e).split())[:160]})") from None
    return where


#: the pid of this rank's launcher, once :func:`watch_launcher` has read it
_LAUNCHER: list[int] = []
#: set once a loop inside :func:`stop_with_launcher` has asked whether to stop
_POLLED = threading.Event()


def launcher_gone() -> int | None:
    """The pid of this rank's ``lm train --nproc`` launcher once it is gone (None while it lives, or under torchrun)."""
    return _LAUNCHER[0] if _LAUNCHER and os.getppid() != _LAUNCHER[0] else None


@contextlib.contextmanager
def stop_with_launcher(should_stop):
    """``should_stop``, also true once the launcher is gone, for a loop that asks it after every step.

    Once the loop has asked, a gone launcher stops it through this rather than
    through a signal: no handler then announces a stop the user never asked for, and
    the step ends with its checkpoint.
    """
    def asked() -> bool:
        _POLLED.set()
        return bool(should_stop()) or launcher_gone() is not None

    try:
        yield asked
    finally:
        if launcher_gone() is None:  # else the caller, which stopped for it, says so: no signal must cut in
            _POLLED.clear()


def _orphaned(signum, frame):
    raise KeyboardInterrupt


def watch_launcher() -> None:
    """In a rank that ``lm train --nproc`` started: stop with the launcher, never train on as an orphan.

    The launcher's pid comes in ``SEQLAB_LAUNCHER_PID``; :func:`launcher_gone` says
    once this process's parent is no longer that pid. A daemon thread watches: a
    loop inside :func:`stop_with_launcher` then stops by itself after the step, and
    anything else is interrupted with SIGUSR1, whose handler raises
    KeyboardInterrupt (SIGTERM's may only ask for a stop at a step that a rank waiting
    at the rendezvous never reaches). Should the process still be running
    :data:`ORPHAN_GRACE_S` later, the thread sends SIGKILL.
    """
    raw = os.environ.get("SEQLAB_LAUNCHER_PID", "").strip()
    if not raw:
        return
    try:
        launcher = int(raw)
    except ValueError:
        raise InvalidParameterError(f"environment variable SEQLAB_LAUNCHER_PID={raw!r} is not a process id") from None
    _LAUNCHER[:] = [launcher]
    main = threading.main_thread()
    interrupt = signal.SIGTERM
    if threading.current_thread() is main:
        signal.signal(signal.SIGUSR1, _orphaned)
        interrupt = signal.SIGUSR1

    def watch():
        while os.getppid() == launcher:
            time.sleep(WATCH_INTERVAL_S)
        if not _POLLED.is_set():
            signal.pthread_kill(main.ident, interrupt)  # the main thread's sleep or wait is cut short only there
        time.sleep(ORPHAN_GRACE_S)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="seqlab-launcher-watch", daemon=True).start()


def all_mean(x: torch.Tensor, where: Rank) -> torch.Tensor:
    """The mean of ``x`` over all ranks (``x`` itself in one process)."""
    if not where.distributed:
        return x
    import torch.distributed as dist

    y = x.detach().clone()
    dist.all_reduce(y, op=dist.ReduceOp.SUM)
    return y / where.world_size


def any_true(flags: list[bool], where: Rank, device: torch.device) -> list[bool]:
    """Element-wise OR of ``flags`` over all ranks, so every rank leaves the loop at the same step."""
    if not where.distributed:
        return flags
    import torch.distributed as dist

    t = torch.tensor([float(f) for f in flags], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return [bool(v) for v in t.tolist()]


def lost_contact(where: Rank, e: BaseException) -> LostContact:
    """The error for a collective that failed because another rank died or stopped answering."""
    text = str(e).lower()
    how = f"did not answer for {TIMEOUT.seconds} s (stalled?)" if "timed out" in text or "timeout" in text else \
        "closed its connection (it died or stopped)"
    return LostContact(f"rank {where.rank} of {where.world_size}: another rank {how}")
