"""Run independent, seeded trainings in worker processes.

Small recurrent models spend their time in per-op overhead, which threads do not
help; separate processes do. Every call runs with one torch thread, in the
parent or in a worker, so its numbers do not depend on the worker count.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from .errors import InvalidParameterError
from .threads import single_threaded

__all__ = ["default_workers", "call_single_threaded", "run_calls"]


def default_workers() -> int:
    env = os.environ.get("SEQLAB_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise InvalidParameterError(f"SEQLAB_WORKERS must be a whole number, got {env!r}") from None
    return max(1, min(2, os.cpu_count() or 1))


def call_single_threaded(fn, args):
    """``fn(*args)`` with one torch thread: how every seeded job runs, here, in a worker process or on a cluster."""
    with single_threaded():
        return fn(*args)


def run_calls(calls: list[tuple], workers: int | None = None, cost=None) -> list:
    """Results of ``fn(*args)`` for each ``(fn, args)`` in ``calls``, in the order given.

    ``cost(fn, args)`` estimates a call's run time; the most expensive calls are
    started first (longest-processing-time scheduling), which keeps both workers
    busy until the end.
    """
    workers = default_workers() if workers is None else workers
    if workers <= 1 or len(calls) <= 1:
        return [call_single_threaded(fn, a) for fn, a in calls]
    order = sorted(range(len(calls)), key=lambda i: -cost(*calls[i])) if cost else list(range(len(calls)))
    results = [None] * len(calls)
    ex = ProcessPoolExecutor(max_workers=min(workers, len(calls)), mp_context=get_context("spawn"),
                             initializer=_ignore_interrupts)
    try:
        futures = {i: ex.submit(call_single_threaded, *calls[i]) for i in order}
        for i, fut in futures.items():
            results[i] = fut.result()
    except BaseException:  # Ctrl-C or a failed call: the other workers' jobs are lost anyway, so stop them now
        _stop(ex)
        raise
    ex.shutdown(wait=True)
    return results


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops them; else each prints its own traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(ex: ProcessPoolExecutor) -> None:
    processes = list((getattr(ex, "_processes", None) or {}).values())  # the executor cannot kill its workers itself
    ex.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    for p in processes:
        p.join(timeout=5)
