"""The number of torch threads for a block of work.

Small models spend their time in per-operation overhead that a second thread does
not shorten; under load two threads ran many times slower per step than one. A
computation that must give the same numbers in a worker process and in the parent
runs single-threaded in both. §14.55 measures one thread against two with the same
context manager.
"""
from __future__ import annotations

from contextlib import contextmanager

from .errors import InvalidParameterError

__all__ = ["torch_threads", "single_threaded"]


@contextmanager
def torch_threads(n: int):
    """Run the block with ``torch.set_num_threads(n)``; the previous setting comes back afterwards."""
    import torch

    if n < 1:
        raise InvalidParameterError(f"thread count must be >= 1, got {n}")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def single_threaded():
    """``torch_threads(1)``."""
    return torch_threads(1)
