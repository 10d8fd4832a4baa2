"""Timing loops that compare layers: forward and training grids, an attention layer's parts, one thread against
two, and peak memory.

Each loop takes the layers it times from a factory ``make_layers(d) -> {name: module}`` and every
setting as an argument, so it holds no study's choices; §14.55 calls them with its own. The single
calls they are built from (:func:`~seqlab.analysis.complexity.time_call`, FLOP counts, peak memory)
live in :mod:`seqlab.analysis.complexity`.
"""
from __future__ import annotations

import os
import time
from contextlib import nullcontext

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ..threads import single_threaded, torch_threads
from .complexity import (
    attention_core_flops,
    fused_rnn_kernels,
    gflops,
    line_fit,
    peak_cpu_memory,
    recurrent_flops,
    time_call,
    time_training_step,
)

__all__ = ["forward_grid", "training_grid", "attention_part_rates", "score_cost_fit", "score_cost_split",
           "busy_seconds", "usable_cores", "training_step", "one_and_two_threads", "thread_scaling",
           "forward_peak_mb", "over_rounds"]


def forward_grid(make_layers, lengths, widths, batch: int, repeats: int, seed: int, flops=None,
                 clock: str = "cpu") -> pd.DataFrame:
    """Median forward time (no gradients, eval mode, one thread) of each layer ``make_layers(d)`` makes, over
    ``lengths x widths`` with a random batch of ``batch`` sequences: columns ``T``, ``d`` and ``NAME_ms``.

    ``flops(T, d) -> {name: FLOPs of one sequence}`` adds ``NAME_flops`` and the achieved ``NAME_gflops``
    (batch included). ``clock`` as in :func:`~seqlab.analysis.complexity.time_call`.
    """
    rows = []
    torch.manual_seed(seed)
    with single_threaded():
        for d in widths:
            mods = {k: m.eval() for k, m in make_layers(d).items()}
            for T in lengths:
                x = torch.randn(batch, T, d)
                with torch.no_grad():
                    ms = {k: 1e3 * time_call(lambda m=m: m(x), repeats, stat="median", clock=clock)
                          for k, m in mods.items()}
                row = dict(T=T, d=d, **{f"{k}_ms": v for k, v in ms.items()})
                if flops is not None:
                    fl = flops(T, d)
                    row.update({f"{k}_flops": v for k, v in fl.items()})
                    row.update({f"{k}_gflops": gflops(batch * fl[k], ms[k] / 1e3) for k in mods})
                rows.append(row)
    return pd.DataFrame(rows)


def training_grid(make_layers, lengths, widths, batch: int, repeats: int, seed: int,
                  clock: str = "cpu") -> pd.DataFrame:
    """Median time of one training step (forward and backward, loss the sum of the outputs, one thread) of each
    layer ``make_layers(d)`` makes, over ``lengths x widths``: columns ``T``, ``d`` and ``NAME_train_ms``."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded():
        for d in widths:
            mods = make_layers(d)
            for T in lengths:
                x = torch.randn(batch, T, d)
                ms = {k: 1e3 * time_training_step(m, x, repeats, stat="median", clock=clock) for k, m in mods.items()}
                rows.append(dict(T=T, d=d, **{f"{k}_train_ms": v for k, v in ms.items()}))
    return pd.DataFrame(rows)


def over_rounds(rounds: pd.DataFrame, ratio: str, keys=("T", "d")) -> pd.DataFrame:
    """One row per point of ``rounds`` (a grid measured several times over, column ``round``): every column's
    median over the rounds, and the lowest and highest round's ``ratio`` as ``{ratio}_lo`` and ``{ratio}_hi``."""
    keys = list(keys)
    g = rounds.drop(columns="round").groupby(keys, sort=True)
    out = g.median()
    out[f"{ratio}_lo"], out[f"{ratio}_hi"] = g[ratio].min(), g[ratio].max()
    return out.reset_index()


def attention_part_rates(attention, lstm, rnn, x: torch.Tensor, heads: int, repeats: int,
                         clock: str = "cpu") -> dict:
    """Where the time of one forward pass goes on the input ``x`` (batch, T, d): the heads' width ``d_k``; achieved
    GFLOP/s of an attention layer's four projections (its ``Wq``, ``Wk``, ``Wv``, ``Wo``) and of a T x T core of ``heads`` heads (PyTorch's
    fused kernel on random queries, keys and values), with the core's nanoseconds per score; and of an LSTM run
    with oneDNN's fused kernel (``lstm``) and without it (``lstm_generic``) and of a plain RNN, with each one's
    microseconds per step. Medians of ``repeats`` calls; call it without gradients, on one thread."""
    B, T, d = x.shape
    q, k, v = (torch.randn(B, heads, T, d // heads) for _ in range(3))
    proj = (attention.Wq, attention.Wk, attention.Wv, attention.Wo)

    def median(fn) -> float:
        return time_call(fn, repeats, stat="median", clock=clock)

    s_proj = median(lambda: [p(x) for p in proj])
    s_core = median(lambda: F.scaled_dot_product_attention(q, k, v))
    s_lstm = median(lambda: lstm(x))
    with fused_rnn_kernels(False):
        s_lstm_generic = median(lambda: lstm(x))
    s_rnn = median(lambda: rnn(x))
    lstm_flops = B * recurrent_flops(T, d, "lstm")
    return dict(d_k=d // heads, projections_gflops=gflops(B * 8 * T * d * d, s_proj),
                core_gflops=gflops(B * attention_core_flops(T, d), s_core),
                core_ns_per_score=1e9 * s_core / (B * heads * T * T),
                lstm_gflops=gflops(lstm_flops, s_lstm), lstm_generic_gflops=gflops(lstm_flops, s_lstm_generic),
                rnn_gflops=gflops(B * recurrent_flops(T, d, "rnn"), s_rnn),
                lstm_us_per_step=1e6 * s_lstm / T, lstm_generic_us_per_step=1e6 * s_lstm_generic / T,
                rnn_us_per_step=1e6 * s_rnn / T)


def score_cost_fit(parts: pd.DataFrame) -> dict:
    """Least-squares line ``ns per score = a + b d_k`` through rows of :func:`attention_part_rates` (columns ``d_k``
    and ``core_ns_per_score``), with its fit (:func:`~seqlab.analysis.complexity.line_fit`) and ``n``, the rows."""
    fit = line_fit(parts.d_k, parts.core_ns_per_score)
    fit["n"] = len(parts)
    return fit


def score_cost_split(parts: pd.DataFrame) -> pd.DataFrame:
    """Per d_k of those rows: measured ns per score, the fitted line's value, and the fixed part ``a``'s share of the
    time."""
    f = score_cost_fit(parts)
    return pd.DataFrame([dict(d_k=int(r.d_k), ns_per_score=r.core_ns_per_score,
                              fitted_ns=f["a"] + f["b"] * r.d_k, fixed_ns=f["a"], ns_per_unit_d_k=f["b"],
                              fixed_share=f["a"] / r.core_ns_per_score) for r in parts.itertuples()])


def busy_seconds() -> float:
    """CPU seconds all programs on this machine have used so far (``/proc/stat``; NaN where there is none)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            v = [int(t) for t in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return float("nan")
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def usable_cores() -> int:
    """Logical cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def training_step(module, x):
    """A call that runs one training step of ``module`` on ``x``: clear the gradients, forward, sum, backward."""
    def run():
        module.zero_grad(set_to_none=True)
        out = module(x)
        (out[0] if isinstance(out, tuple) else out).sum().backward()

    return run


def _alternating(fn, calls: int) -> dict:
    # one- and two-thread calls alternate, so a slow spell falls on both alike
    times = {1: [], 2: []}
    for _ in range(calls):
        for n in (1, 2):
            with torch_threads(n):
                times[n].append(time_call(fn, 1, warmup=0))
    return {n: 1e3 * float(np.median(t)) for n, t in times.items()}


def one_and_two_threads(fn, repeats: int, min_seconds: float, quiet_share: float, quiet_tries: int,
                        pause: float = 2.0) -> dict:
    """Median wall-clock milliseconds of ``fn()`` with one and with two torch threads, calls alternating.

    Each setting gets at least ``repeats`` calls, and enough that its calls last ``min_seconds``.
    While they run, the CPU time every other program used is read (:func:`busy_seconds`); a timing
    during which others took more than ``quiet_share`` of the machine is taken again after ``pause``
    seconds, up to ``quiet_tries`` times, and the quietest is kept. Returns ``one_thread_ms``,
    ``two_threads_ms``, ``calls``, ``others_share`` and ``attempts``.
    """
    for n in (1, 2):  # warm up each setting, and size the number of calls
        with torch_threads(n):
            fn()
    with torch_threads(1):
        one = time_call(fn, 1, warmup=0)
    calls = max(repeats, int(np.ceil(min_seconds / max(one, 1e-6) / 2)))
    best = None
    for attempt in range(1, quiet_tries + 1):
        busy0, self0, wall0 = busy_seconds(), time.process_time(), time.perf_counter()
        ms = _alternating(fn, calls)
        others = (busy_seconds() - busy0) - (time.process_time() - self0)
        share = max(0.0, others) / ((time.perf_counter() - wall0) * usable_cores())
        if best is None or not share >= best["others_share"]:
            best = dict(one_thread_ms=ms[1], two_threads_ms=ms[2], calls=calls, others_share=share)
        if not share > quiet_share:  # quiet enough (or no /proc/stat to tell)
            break
        time.sleep(pause)
    best["attempts"] = attempt
    return best


def thread_scaling(cases, repeats: int, min_seconds: float, quiet_share: float, quiet_tries: int) -> pd.DataFrame:
    """:func:`one_and_two_threads` for each ``(labels, fn, grad)`` of ``cases`` (``grad`` false: timed without
    gradients): one row per case, its ``labels`` (a dict) first, then the timings and ``speedup`` (one thread's
    time over two threads'). ``cases`` may be a generator: each case is timed before the next is made."""
    rows = []
    for labels, fn, grad in cases:
        with nullcontext() if grad else torch.no_grad():
            rows.append(dict(**labels, **one_and_two_threads(fn, repeats, min_seconds, quiet_share, quiet_tries)))
    df = pd.DataFrame(rows)
    df["speedup"] = df.one_thread_ms / df.two_threads_ms
    return df


def forward_peak_mb(module, x: torch.Tensor) -> float:
    """Peak MB held by the tensors one forward pass of ``module`` on ``x`` allocates, without gradients (CPU)."""
    with torch.no_grad():
        return peak_cpu_memory(lambda: module(x)) / 2 ** 20
