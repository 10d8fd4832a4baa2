"""Where training runs: the device, autocast precision and torch.compile, resolved from plain settings."""
from __future__ import annotations

import contextlib
import functools
import time

import torch

from .errors import InvalidParameterError

__all__ = ["DEVICES", "DTYPES", "MUON_NS_DTYPES", "resolve_device", "autocast", "native_bfloat16", "muon_ns_dtype"]

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("float32", "bfloat16")
#: how Muon's Newton-Schulz products run: "auto" picks bfloat16 where the device multiplies it natively
MUON_NS_DTYPES = ("auto", "float32", "bfloat16")
#: CPU flags of native bfloat16 products (x86 AVX-512 BF16 and AMX, Arm's BF16 extension)
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


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


def _cpu_flags() -> set[str] | None:
    """The CPU's feature flags from /proc/cpuinfo (Linux), or None where there is no such file."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return None
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags |= set(value.split())
    return flags


def _probe_seconds(dtype: torch.dtype, n: int = 256, repeats: int = 5) -> float:
    a = torch.randn(n, n).to(dtype)
    a @ a  # the first product pays for setting up
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return best


@functools.cache
def native_bfloat16(device_type: str) -> tuple[bool, str]:
    """Whether ``device_type`` ("cpu", "cuda", "mps") multiplies bfloat16 matrices natively, and how that was told.

    A CUDA GPU says so itself; a Linux CPU by its flags (:data:`BF16_CPU_FLAGS`); any other device by a
    short probe (a 256 x 256 product in bfloat16 no more than 1.5 times as slow as in float32; an
    emulated one is several times slower). Checked once per process.
    """
    if device_type == "cuda":
        ok = bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
        return ok, "the CUDA device " + ("supports bfloat16" if ok else "has no native bfloat16")
    if device_type == "cpu":
        flags = _cpu_flags()
        if flags is not None:
            hit = sorted(flags.intersection(BF16_CPU_FLAGS))
            return (True, f"CPU flag {', '.join(hit)}") if hit else (False, "no bfloat16 flag among the CPU's")
    if device_type != "cpu":
        return False, f"{device_type}: bfloat16 products not assumed"
    ratio = _probe_seconds(torch.bfloat16) / _probe_seconds(torch.float32)
    return ratio <= 1.5, f"probe: a bfloat16 product took {ratio:.1f}x a float32 one"


def muon_ns_dtype(setting: str, device: torch.device, run_dtype: str = "bfloat16") -> tuple[torch.dtype | None, str]:
    """The dtype of Muon's Newton-Schulz products for ``setting`` (:data:`MUON_NS_DTYPES`) in a run of ``run_dtype``
    on ``device`` (None: the parameters' own, float32), and a few words on why.

    ``auto`` gives a bfloat16 run torch.optim.Muon's bfloat16 iteration where the device has native bfloat16
    products, and seqlab's float32 one elsewhere (emulated bfloat16 made a step about 5x slower); a float32 run
    stays float32 throughout, so its numbers do not depend on the machine.
    """
    if setting not in MUON_NS_DTYPES:
        raise InvalidParameterError(f"muon_ns_dtype must be one of {', '.join(MUON_NS_DTYPES)}, got {setting!r}")
    if setting != "auto":
        return (torch.bfloat16 if setting == "bfloat16" else None), f"{setting}, as asked"
    if run_dtype != "bfloat16":
        return None, "float32, as the run is"
    ok, why = native_bfloat16(torch.device(device).type)
    return (torch.bfloat16, f"bfloat16 ({why})") if ok else (None, f"float32 ({why})")
