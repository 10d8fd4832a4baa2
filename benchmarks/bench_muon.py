"""seqlab's Muon (float32 Newton-Schulz) against torch.optim.Muon (bfloat16 Newton-Schulz) on the chapter's GPT.

All take the same update (tests/test_optim.py checks one against the other); this measures
what each costs per training step, forward and backward included, on one thread: seqlab's
iteration in float32, in bfloat16, and torch.optim.Muon's. On a CPU without native bfloat16
matrix products the bfloat16 iteration is emulated and several times slower; with them it is
the cheaper one. `lm train --muon-ns-dtype auto` (the default) picks by the CPU's flags (or a
short probe); the last line says what it picked here, and whether the timings agree.
Run alone: timings taken beside other work can be far off.
"""
from __future__ import annotations

import platform
import statistics
import time

import torch

from seqlab.experiments.lm import CHAPTER_TRAIN, chapter_gpt_config
from seqlab.nn import GPT
from seqlab.devices import muon_ns_dtype
from seqlab.text.optim import Muon, split_muon_params

STEPS, REPEATS = 15, 3


def step_seconds(kind: str) -> tuple[float, float]:
    """Median seconds per training step and the final loss, for ``kind`` in {"seqlab", "seqlab bf16", "torch"}."""
    torch.manual_seed(0)
    model = GPT(chapter_gpt_config(65))
    hidden, other = split_muon_params(model)
    adamw = torch.optim.AdamW(other, lr=CHAPTER_TRAIN.learning_rate)
    if kind.startswith("seqlab"):
        muon = Muon(hidden, lr=CHAPTER_TRAIN.muon_lr, ns_dtype=torch.bfloat16 if "bf16" in kind else None)
    else:
        muon = torch.optim.Muon(hidden, lr=CHAPTER_TRAIN.muon_lr, weight_decay=0.0)
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 65, (CHAPTER_TRAIN.batch_size, CHAPTER_TRAIN.block_size), generator=g)
    y = torch.randint(0, 65, x.shape, generator=g)
    times = []
    for _ in range(STEPS):
        t = time.perf_counter()
        _, loss = model(x, y)
        adamw.zero_grad()
        muon.zero_grad()
        loss.backward()
        muon.step()
        adamw.step()
        times.append(time.perf_counter() - t)
    return statistics.median(times[2:]), loss.item()


def main() -> None:
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, 1 thread; "
          f"chapter GPT, batch {CHAPTER_TRAIN.batch_size} x {CHAPTER_TRAIN.block_size}")
    results = {"seqlab": [], "seqlab bf16": [], "torch": []}
    for _ in range(REPEATS):  # interleaved, so a change in load hits both
        for kind in results:
            results[kind].append(step_seconds(kind))
    med = {kind: statistics.median(s for s, _ in rows) for kind, rows in results.items()}
    for kind, rows in results.items():
        print(f"{kind:>11}: {med[kind] * 1e3:7.1f} ms per step; loss after {STEPS} steps {rows[-1][1]:.4f}")
    print(f"torch.optim.Muon / seqlab Muon (float32) time per step: {med['torch'] / med['seqlab']:.2f}x")
    dtype, why = muon_ns_dtype("auto", torch.device("cpu"))
    faster = "bfloat16" if med["seqlab bf16"] < med["seqlab"] else "float32"
    picked = "bfloat16" if dtype is torch.bfloat16 else "float32"
    print(f"picked for a bfloat16 run (lm train --dtype bfloat16, --muon-ns-dtype auto): Newton-Schulz in {why}; "
          f"the faster here was {faster} "
          f"({'agrees' if faster == picked else 'DISAGREES'})")

if __name__ == "__main__":
    main()
