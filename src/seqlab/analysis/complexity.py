"""Cost of attention vs recurrence: analytic FLOPs, wall-clock, achieved FLOP rates and peak memory (§14.55)."""
from __future__ import annotations

import time
import warnings
from contextlib import contextmanager

from .params import GATE_BLOCKS

__all__ = ["attention_flops", "attention_core_flops", "recurrent_flops", "flop_crossover",
           "gflops", "time_call", "time_training_step", "fused_rnn_kernels", "peak_cpu_memory",
           "crossover", "line_fit"]


def attention_flops(T: int, d: int) -> int:
    """Forward FLOPs of one self-attention layer: 4 projections 8 T d^2 plus QK^T and AV 4 T^2 d.

    Args:
        T: sequence length.
        d: model width.

    Returns:
        The FLOP count (a multiply-add counts 2).

    Example:
        >>> attention_flops(128, 64) == recurrent_flops(128, 64, "lstm")  # at T = 2d they cost the same
        True
    """
    return 8 * T * d * d + 4 * T * T * d


def attention_core_flops(T: int, d: int) -> int:
    """The T^2 part of :func:`attention_flops`: Q K^T (2 T^2 d) and the weighted sum of values (2 T^2 d).

    Args:
        T: sequence length.
        d: model width.

    Returns:
        The FLOP count.

    Example:
        >>> attention_core_flops(128, 64) / attention_flops(128, 64)  # half the layer's FLOPs at T = 2d
        0.5
    """
    return 4 * T * T * d


def recurrent_flops(T: int, d: int, cell: str = "rnn", input_size: int | None = None) -> int:
    """Forward FLOPs of one recurrent layer: T steps of g blocks of (d x (d + m)) matvecs, 2 g T d (d + m).

    Args:
        T: sequence length.
        d: hidden width.
        cell: ``"rnn"``, ``"gru"`` or ``"lstm"`` (g = 1, 3, 4: :data:`GATE_BLOCKS`).
        input_size: m (default: d).

    Returns:
        The FLOP count.

    Raises:
        KeyError: another cell.

    Example:
        >>> recurrent_flops(10, 8, "lstm") == 4 * recurrent_flops(10, 8, "rnn")
        True
    """
    m = d if input_size is None else input_size
    return 2 * GATE_BLOCKS[cell] * T * d * (d + m)


def flop_crossover(d: int, cell: str = "lstm") -> float:
    """T at which one self-attention layer (8 T d^2 + 4 T^2 d) has as many FLOPs as one recurrent layer.

    For the LSTM (16 T d^2) this is T = 2d; for a vanilla RNN (4 T d^2) attention always has more.

    Args:
        d: the width of both layers (the recurrent layer's input width too).
        cell: ``"rnn"``, ``"gru"`` or ``"lstm"``.

    Returns:
        The sequence length T, or 0.0 where attention costs more at every length.

    Example:
        >>> flop_crossover(64), flop_crossover(64, cell="rnn")
        (128.0, 0.0)
    """
    rec = 2 * GATE_BLOCKS[cell] * 2  # recurrent FLOPs per T d^2 (input size = d)
    return max(0.0, (rec - 8) * d / 4)


def gflops(flops: float, seconds: float) -> float:
    """Achieved rate in GFLOP/s: ``flops / seconds / 1e9``.

    Example:
        >>> gflops(2e9, 0.5)
        4.0
    """
    return flops / seconds / 1e9


def time_call(fn, repeats: int = 3, warmup: int = 1, stat: str = "min", clock: str = "wall") -> float:
    """Seconds of ``fn()`` over ``repeats`` calls after ``warmup`` untimed ones.

    ``stat="min"`` returns the best call, ``stat="median"`` the median call (what a
    stored reference uses: one slow call, or one lucky one, does not move it).
    ``clock="wall"`` measures elapsed time; ``clock="cpu"`` the CPU time this process
    used (``time.process_time``): for single-threaded work on a quiet machine the two
    agree, and the CPU time does not count the moments another program held the core.

    Args:
        fn: the call to time, without arguments.
        repeats: timed calls, >= 1.
        warmup: untimed calls first.
        stat: ``"min"`` or ``"median"``.
        clock: ``"wall"`` or ``"cpu"``.

    Returns:
        Seconds.

    Raises:
        ValueError: another ``stat`` or ``clock``, or ``repeats < 1``.

    Example:
        >>> time_call(lambda: sum(range(1000)), repeats=3) > 0
        True
    """
    if stat not in ("min", "median"):
        raise ValueError(f"stat must be 'min' or 'median', got {stat!r}")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu', got {clock!r}")
    now = time.perf_counter if clock == "wall" else time.process_time
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = now()
        fn()
        times.append(now() - t0)
    if stat == "min":
        return min(times)
    import statistics

    return float(statistics.median(times))


def time_training_step(module, x, repeats: int = 3, warmup: int = 1, stat: str = "min", clock: str = "wall") -> float:
    """Seconds of one forward and backward pass of ``module`` on ``x`` (loss: sum of outputs), by ``stat`` and
    ``clock`` (see :func:`time_call`).

    Parameter gradients are cleared between calls; ``x`` needs no gradient.

    Example:
        >>> import torch
        >>> time_training_step(torch.nn.Linear(4, 4), torch.randn(8, 4), repeats=2) > 0
        True
    """
    def step():
        module.zero_grad(set_to_none=True)
        out = module(x)
        (out[0] if isinstance(out, tuple) else out).sum().backward()

    return time_call(step, repeats, warmup, stat, clock)


def line_fit(x, y) -> dict:
    """Least-squares line ``y = a + b x`` through every point, and how well it fits.

    Returns ``a``, ``b``, ``r2`` (the share of ``y``'s variance the line explains) and
    ``max_rel_residual`` (the largest ``|y - fit| / y`` over the points).

    Raises:
        ValueError: fewer than two distinct x values.

    Example:
        >>> fit = line_fit([1, 2, 3], [3, 5, 7])
        >>> round(fit["a"], 6), round(fit["b"], 6), fit["r2"]
        (1.0, 2.0, 1.0)
    """
    import numpy as np

    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2 or len(set(x.tolist())) < 2:
        raise ValueError("a line needs at least two distinct x values")
    b, a = np.polyfit(x, y, 1)
    fit = a + b * x
    ss_res = float(((y - fit) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return dict(a=float(a), b=float(b), r2=r2, max_rel_residual=float(np.max(np.abs(y - fit) / np.abs(y))))


@contextmanager
def fused_rnn_kernels(enabled: bool):
    """Allow or forbid oneDNN (MKLDNN) kernels, which run a whole LSTM layer as one fused CPU call.

    With ``enabled=False`` PyTorch falls back to its generic path, which dispatches
    the recurrent matrix product step by step. A context manager; the setting comes back after the block.

    Example:
        >>> import torch
        >>> lstm, x = torch.nn.LSTM(4, 8, batch_first=True), torch.randn(1, 5, 4)
        >>> with fused_rnn_kernels(False):
        ...     stepwise = lstm(x)[0]
        >>> torch.allclose(stepwise, lstm(x)[0], atol=1e-6)
        True
    """
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # toggling oneDNN also prints a note about Intel-GPU TF32
        with torch.backends.mkldnn.flags(enabled=enabled):
            yield


def peak_cpu_memory(fn) -> int:
    """Peak bytes held by tensors allocated during ``fn()`` on the CPU, from the profiler's allocation events.

    Example:
        >>> import torch
        >>> peak_cpu_memory(lambda: torch.zeros(1000, 1000)) >= 4_000_000  # a million float32 values
        True
    """
    import os
    import sys

    from torch.profiler import ProfilerActivity, profile

    # the profiler's C++ side logs start/stop lines straight to fd 2; keep the user's stderr clean
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            fn()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    events = sorted((e for e in prof.events() if e.cpu_memory_usage != 0), key=lambda e: e.time_range.start)
    live = peak = 0
    for e in events:
        live += e.cpu_memory_usage
        peak = max(peak, live)
    return int(peak)


def crossover(Ts, ratio, last: bool = False) -> float | None:
    """T at which ``ratio`` (attention cost / recurrent cost) reaches 1, interpolated on log T.

    ``last=False``: the first T where it reaches 1. ``last=True``: the last upward crossing,
    beyond which the ratio stays at or above 1 at every T measured (``None`` if the longest T
    is below 1; the first T if every point is at or above 1).

    Args:
        Ts: the sequence lengths measured, ascending.
        ratio: the cost ratio at each.
        last: the last upward crossing instead of the first.

    Returns:
        The interpolated T, or ``None`` where the ratio never reaches 1 (or, with ``last``, ends below 1).

    Example:
        >>> round(crossover([64, 128, 256, 512], [0.5, 0.8, 1.2, 2.0]))  # between 128 and 256
        187
    """
    import numpy as np

    Ts, ratio = np.asarray(Ts, float), np.asarray(ratio, float)
    if last:
        if len(ratio) == 0 or ratio[-1] < 1:
            return None
        below = np.nonzero(ratio < 1)[0]
        i = 0 if len(below) == 0 else below[-1] + 1
    else:
        above = np.nonzero(ratio >= 1)[0]
        if len(above) == 0:
            return None
        i = above[0]
    if i == 0:
        return float(Ts[0])
    lt = np.log(Ts[i - 1 : i + 1])
    lr = np.log(ratio[i - 1 : i + 1])
    return float(np.exp(lt[0] + (0 - lr[0]) * (lt[1] - lt[0]) / (lr[1] - lr[0])))
