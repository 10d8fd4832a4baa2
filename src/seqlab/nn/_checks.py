"""Cheap checks at the boundary of the neural modules.

Torch reports a bad shape or dtype deep inside a kernel (or, worse, computes
something that is not what was asked), so every public forward checks its
inputs here first and raises a seqlab error that names the argument. The checks
read shapes and dtypes only, except :func:`token_ids`, which takes one min/max
over the ids.
"""
from __future__ import annotations

import operator

import torch

from ..errors import InvalidParameterError, InvalidTypeError, ShapeError

__all__ = [
    "check_tensor", "check_float", "check_broadcast", "check_token_ids", "check_lm_inputs", "check_offset",
    "check_weights_dtype",
]


def check_tensor(name: str, x) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise InvalidTypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    return x


def check_float(name: str, x, *, ndim: int | None = None, min_ndim: int = 0) -> torch.Tensor:
    """A real floating-point tensor, of rank ``ndim`` exactly or at least ``min_ndim``."""
    check_tensor(name, x)
    if not x.is_floating_point():
        raise InvalidTypeError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if ndim is not None and x.dim() != ndim:
        raise ShapeError(f"{name} must have {ndim} dimensions, got shape {tuple(x.shape)}")
    if x.dim() < min_ndim:
        raise ShapeError(f"{name} must have at least {min_ndim} dimensions, got shape {tuple(x.shape)}")
    return x


def check_broadcast(name: str, shape: torch.Size, target: tuple[int, ...], what: str) -> None:
    """``shape`` must broadcast to ``target`` without enlarging it."""
    try:
        ok = tuple(torch.broadcast_shapes(shape, target)) == tuple(target)
    except RuntimeError:
        ok = False
    if not ok:
        raise ShapeError(f"{name} of shape {tuple(shape)} does not broadcast to {what} {tuple(target)}")


def _integer(name: str, x) -> torch.Tensor:
    check_tensor(name, x)
    if x.dtype == torch.bool or x.is_floating_point() or x.is_complex():
        raise InvalidTypeError(f"{name} must be an integer tensor of token ids, got {x.dtype}")
    return x


def _token_shape(name: str, idx) -> None:
    _integer(name, idx)
    if idx.dim() != 2 or idx.numel() == 0:
        raise ShapeError(f"{name} must be (B, T) token ids with B, T >= 1, got shape {tuple(idx.shape)}")


def _outside(idx: torch.Tensor, vocab_size: int) -> torch.Tensor:
    lo, hi = torch.aminmax(idx)
    return (lo < 0) | (hi >= vocab_size)  # 0-d, still on idx's device


def _range_error(name: str, idx: torch.Tensor, vocab_size: int) -> InvalidParameterError:
    lo, hi = torch.aminmax(idx)
    return InvalidParameterError(
        f"{name} holds ids in [{int(lo)}, {int(hi)}], outside the vocabulary [0, {vocab_size})")


def _as_index(idx: torch.Tensor) -> torch.Tensor:
    return idx if idx.dtype in (torch.int32, torch.int64) else idx.long()  # what nn.Embedding takes


def check_token_ids(name: str, idx, vocab_size: int) -> torch.Tensor:
    """``idx`` (B, T) of ids in ``[0, vocab_size)``, B and T >= 1; returned as int64 when it was not int32/int64."""
    _token_shape(name, idx)
    if bool(_outside(idx, vocab_size)):
        raise _range_error(name, idx, vocab_size)
    return _as_index(idx)


def check_lm_inputs(idx, targets, vocab_size: int,
                    ignore_index: int = -100) -> tuple[torch.Tensor, torch.Tensor | None]:
    """:func:`token_ids` for ``idx``, and ``targets`` of its shape in ``[0, vocab_size)`` or ``ignore_index``.

    Both ranges are read back in one device sync; targets come back as int64, as cross-entropy needs.
    """
    _token_shape("idx", idx)
    if targets is None:
        if bool(_outside(idx, vocab_size)):
            raise _range_error("idx", idx, vocab_size)
        return _as_index(idx), None
    _integer("targets", targets)
    if targets.shape != idx.shape:
        raise ShapeError(f"targets must have the shape of idx {tuple(idx.shape)}, got {tuple(targets.shape)}")
    bad = ((targets < 0) & (targets != ignore_index)) | (targets >= vocab_size)
    idx_bad, targets_bad = torch.stack((_outside(idx, vocab_size), bad.any())).tolist()
    if idx_bad:
        raise _range_error("idx", idx, vocab_size)
    if targets_bad:
        raise InvalidParameterError(
            f"targets must be ids in [0, {vocab_size}) or {ignore_index} (ignored), got {int(targets[bad][0])}")
    return _as_index(idx), targets.long()


def check_offset(offset) -> int:
    try:
        value = None if isinstance(offset, bool) else operator.index(offset)
    except TypeError:
        value = None
    if value is None:
        raise InvalidTypeError(f"offset must be an integer, got {type(offset).__name__}")
    if value < 0:
        raise InvalidParameterError(f"offset must be >= 0, got {value}")
    return value


def check_weights_dtype(name: str, x: torch.Tensor, weight: torch.Tensor) -> None:
    """``x`` in the module's dtype; under autocast torch casts both, so any float dtype will do."""
    if x.dtype != weight.dtype and not torch.is_autocast_enabled(x.device.type):
        raise InvalidTypeError(f"{name} is {x.dtype} but the module's weights are {weight.dtype}; "
                               f"convert one of them (x.to(dtype) or module.to(dtype))")
