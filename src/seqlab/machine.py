"""What machine a measurement was taken on: stored beside every timing so a reader can compare."""
from __future__ import annotations

import os
import platform

__all__ = ["describe", "cpu_model"]


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def describe() -> dict:
    """CPU model, logical cores usable by this process, torch version, torch's default thread count, OS and Python."""
    import torch

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return {"cpu": cpu_model(), "cores": cores, "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(terse=True), "python": platform.python_version()}
