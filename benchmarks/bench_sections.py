"""Per-section seconds of `seqlab run all` (figures included), with the Part I and Part II budgets.

Targets: Part I (14.45-14.49) <= 40 s, Part II (14.50-14.55) <= 40 s on the 2-core reference CPU.
Run alone on a quiet machine: python benchmarks/bench_sections.py [--out DIR]
"""
from __future__ import annotations

import argparse
import tempfile
import time

from seqlab.chapter import registry, run_section

PARTS = {"Part I": ("14.45", "14.49"), "Part II": ("14.50", "14.55")}
BUDGET_S = 40.0


def in_part(sid: str, lo: str, hi: str) -> bool:
    key = lambda s: tuple(int(p) for p in s.split("."))
    return key(lo) <= key(sid)[: len(key(lo))] and key(sid)[:2] <= key(hi)[:2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    out = ap.parse_args().out or tempfile.mkdtemp(prefix="seqlab-bench-")
    secs = {}
    t0 = time.perf_counter()
    for sid, entry in registry().items():
        secs[sid] = run_section(sid, out).seconds
        print(f"  {sid:<8} {secs[sid]:7.2f} s  {entry.title}", flush=True)
    print(f"  {'total':<8} {time.perf_counter() - t0:7.2f} s (including imports of the plotting stack)")
    for part, (lo, hi) in PARTS.items():
        total = sum(s for sid, s in secs.items() if in_part(sid, lo, hi))
        print(f"{part}: {total:.1f} s of a {BUDGET_S:.0f} s budget, ratio {total / BUDGET_S:.2f} "
              f"({'PASS' if total <= BUDGET_S else 'FAIL'})")


if __name__ == "__main__":
    main()
