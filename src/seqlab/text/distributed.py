"""Data-parallel training across processes (torchrun): who this process is, and the few collectives the loop needs.

``torchrun --standalone --nproc_per_node=N`` starts N copies of the same command with
``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` set. Every rank draws the same global batch
from the same seeded generator and takes its own slice of it, so the batches, and with
them the training, are the same for any N; DistributedDataParallel averages the
gradients (gloo on the CPU, NCCL on CUDA). Only rank 0 writes checkpoints.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

import torch

from ..errors import InvalidParameterError, SeqlabError

__all__ = ["Rank", "DistributedError", "from_environment", "all_mean", "any_true", "lost_contact", "STOPPED"]

#: how every rank-failure message ends, whichever process reports it
STOPPED = "the run stopped (the last checkpoint is kept)"

#: how long a collective waits for a rank that died before the others give up
TIMEOUT = timedelta(seconds=120)


class DistributedError(SeqlabError, RuntimeError):
    """The process group could not start, or a rank stopped answering."""


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


def from_environment(device: torch.device) -> Rank:
    """The rank torchrun gave this process; joins (or reuses) the process group when there is more than one."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError:
        raise InvalidParameterError("RANK, WORLD_SIZE and LOCAL_RANK must be whole numbers (as torchrun sets them)") \
            from None
    if world < 1 or not 0 <= rank < world:
        raise InvalidParameterError(f"rank {rank} of world size {world} is not a valid place in a run")
    if world == 1:
        return Rank()
    import torch.distributed as dist

    if not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            if local >= torch.cuda.device_count():  # NCCL takes one GPU per process; two ranks cannot share one
                raise DistributedError(f"rank {rank}: local rank {local} needs GPU {local}, but this machine has "
                                       f"{torch.cuda.device_count()}; start at most that many processes per machine")
            torch.cuda.set_device(local)
        try:
            dist.init_process_group(backend=backend, rank=rank, world_size=world, timeout=TIMEOUT)
        except (RuntimeError, ValueError) as e:
            raise DistributedError(f"rank {rank}: could not join the {backend} process group "
                                   f"({' '.join(str(e).split())[:160]})") from None
    return Rank(rank, world, local)


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


def lost_contact(where: Rank, e: BaseException) -> DistributedError:
    """The error for a collective that failed because another rank died or stopped answering."""
    return DistributedError(f"rank {where.rank} of {where.world_size}: another rank stopped answering "
                            f"({' '.join(str(e).split())[:80]}); {STOPPED}")
