"""Fused multi-head attention vs torch.nn.MultiheadAttention, measured side by side in one run.

Targets (issue: Part II):
  * forward + backward at B=8, T=1024, d=256, h=4: seqlab fused <= 1.0x torch's time;
  * at T=4096 the fused path allocates no T x T tensor (peak memory from the profiler).

Run alone on a quiet machine: python benchmarks/bench_attention.py
"""
from __future__ import annotations

import statistics
import time

import torch
import torch.nn as nn

from seqlab.analysis.complexity import peak_cpu_memory
from seqlab.nn import MultiHeadAttention


def fwd_bwd_seconds(module_call, x, repeats=7):
    times = []
    for i in range(repeats + 2):
        x.grad = None
        t0 = time.perf_counter()
        module_call(x).sum().backward()
        if i >= 2:  # two warm-up runs
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    torch.manual_seed(0)
    B, T, d, h = 8, 1024, 256, 4
    ours = MultiHeadAttention(d, h, bias=True, fused=True)
    ref = nn.MultiheadAttention(d, h, batch_first=True)
    x = torch.randn(B, T, d, requires_grad=True)
    # interleave the measurements so that machine noise hits both alike
    t_ours, t_ref, t_ref_w = [], [], []
    for _ in range(3):
        t_ours.append(fwd_bwd_seconds(lambda z: ours(z)[0], x))
        t_ref.append(fwd_bwd_seconds(lambda z: ref(z, z, z, need_weights=False)[0], x))
        t_ref_w.append(fwd_bwd_seconds(lambda z: ref(z, z, z)[0], x))
    a, b, c = min(t_ours), min(t_ref), min(t_ref_w)
    print(f"forward+backward B={B} T={T} d={d} h={h}, threads={torch.get_num_threads()}")
    print(f"  seqlab MultiHeadAttention (fused)          {a * 1e3:8.1f} ms")
    print(f"  torch MultiheadAttention need_weights=False {b * 1e3:8.1f} ms")
    print(f"  torch MultiheadAttention (default weights)  {c * 1e3:8.1f} ms")
    print(f"  ratio seqlab / torch(need_weights=False) = {a / b:.2f}  (target <= 1.00: {'PASS' if a / b <= 1.0 else 'FAIL'})")
    print(f"  ratio seqlab / torch(default)            = {a / c:.2f}")

    T_big = 4096
    xb = torch.randn(1, T_big, 64)
    tt_mb = h * T_big * T_big * 4 / 2 ** 20
    with torch.no_grad():
        fused = peak_cpu_memory(lambda: MultiHeadAttention(64, h, fused=True)(xb)) / 2 ** 20
        explicit = peak_cpu_memory(lambda: MultiHeadAttention(64, h, fused=False)(xb)) / 2 ** 20
    print(f"peak memory, one forward at T={T_big}, d=64, h={h} (one h x T x T float32 tensor = {tt_mb:.0f} MB)")
    print(f"  explicit path {explicit:8.1f} MB")
    print(f"  fused path    {fused:8.1f} MB  (target: below one T x T tensor: {'PASS' if fused < T_big * T_big * 4 / 2 ** 20 else 'FAIL'})")


if __name__ == "__main__":
    main()
