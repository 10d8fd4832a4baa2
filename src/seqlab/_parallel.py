"""Run independent, seeded trainings in worker processes.

Small recurrent models spend their time in per-op overhead, which threads do not
help; separate processes do. Every task runs with one torch thread, in the
parent or in a worker, so its numbers do not depend on the worker count.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch


def default_workers() -> int:
    env = os.environ.get("SEQLAB_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"SEQLAB_WORKERS must be a whole number, got {env!r}") from None
    return max(1, min(2, os.cpu_count() or 1))


def _single_threaded(fn, args):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return fn(*args)
    finally:
        torch.set_num_threads(before)


def pmap(fn, arg_tuples: list[tuple], workers: int | None = None) -> list:
    """``[fn(*a) for a in arg_tuples]``, in order, spread over worker processes."""
    workers = default_workers() if workers is None else workers
    if workers <= 1 or len(arg_tuples) <= 1:
        return [_single_threaded(fn, a) for a in arg_tuples]
    with ProcessPoolExecutor(max_workers=min(workers, len(arg_tuples)), mp_context=get_context("spawn")) as ex:
        return list(ex.map(_single_threaded, [fn] * len(arg_tuples), arg_tuples))
