"""seqlab's Muon (float32 Newton-Schulz) against torch.optim.Muon (bfloat16 Newton-Schulz) on the chapter's GPT.

Both take the same update (tests/test_optim.py checks one against the other); this measures
what each costs per training step, forward and backward included, on one thread. On a CPU
without native bfloat16 matrix products torch's iteration is emulated, which is why seqlab
keeps its own. Run alone: timings taken beside other work can be far off.
"""
from __future__ import annotations

import platform
import statistics
import time

import torch

from seqlab.experiments.lm import CHAPTER_TRAIN, chapter_gpt_config
from seqlab.nn import GPT
from seqlab.text.optim import Muon, split_muon_params

STEPS, REPEATS = 15, 3


def step_seconds(kind: str) -> tuple[float, float]:
    """Median seconds per training step and the final loss, for ``kind`` in {"seqlab", "torch"}."""
    torch.manual_seed(0)
    model = GPT(chapter_gpt_config(65))
    hidden, other = split_muon_params(model)
    adamw = torch.optim.AdamW(other, lr=CHAPTER_TRAIN.learning_rate)
    if kind == "seqlab":
        muon = Muon(hidden, lr=CHAPTER_TRAIN.muon_lr)
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
    results = {"seqlab": [], "torch": []}
    for _ in range(REPEATS):  # interleaved, so a change in load hits both
        for kind in results:
            results[kind].append(step_seconds(kind))
    ours = statistics.median(s for s, _ in results["seqlab"])
    theirs = statistics.median(s for s, _ in results["torch"])
    for kind, rows in results.items():
        print(f"{kind:>7}: {statistics.median(s for s, _ in rows) * 1e3:7.1f} ms per step; "
              f"loss after {STEPS} steps {rows[-1][1]:.4f}")
    print(f"torch.optim.Muon / seqlab Muon time per step: {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
