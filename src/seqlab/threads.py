"""One torch thread for a block of work.

Small models spend their time in per-operation overhead that a second thread does
not shorten; under load two threads ran many times slower per step than one. A
computation that must give the same numbers in a worker process and in the parent
runs single-threaded in both.
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["single_threaded"]


@contextmanager
def single_threaded():
    """Run the block with ``torch.set_num_threads(1)``; the previous setting comes back afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
