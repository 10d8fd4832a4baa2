"""Where training runs: the device, autocast precision and torch.compile, resolved from plain settings."""
from __future__ import annotations

import contextlib

import torch

from ..errors import InvalidParameterError

__all__ = ["DEVICES", "DTYPES", "resolve_device", "autocast"]

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("float32", "bfloat16")


def resolve_device(name: str) -> torch.device:
    """``auto`` is CUDA when present, then Apple's MPS, else the CPU; an unavailable device is an error."""
    if name not in DEVICES:
        raise InvalidParameterError(f"device must be one of {', '.join(DEVICES)}, got {name!r}")
    mps = getattr(torch.backends, "mps", None)
    has_mps = bool(mps is not None and mps.is_available())
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "mps" if has_mps else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise InvalidParameterError("device 'cuda' asked for, but this torch build sees no CUDA GPU "
                                    f"(torch {torch.__version__}); use --device cpu or auto")
    if name == "mps" and not has_mps:
        raise InvalidParameterError("device 'mps' asked for, but Apple's MPS backend is not available here")
    return torch.device(name)


def autocast(device: torch.device, dtype: str):
    """Autocast to bfloat16 on ``device`` for ``dtype == "bfloat16"``; a no-op context for float32."""
    if dtype not in DTYPES:
        raise InvalidParameterError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
