"""Eight samples at once against eight one after another: what `lm sample --num-samples 8 --batch-size 8` buys.

Target (issue: a practitioner's toolkit): generating 8 samples together, with the key-value cache
and one generator per sample, is >= 4x faster than 8 samples one at a time, and every sample's
text is the same as when it is generated alone with its seed. The model is the chapter's GPT
(4 layers, 4 heads, width 128, context 64, the 65 characters of tinyshakespeare and <unk>),
on one thread as `lm sample` runs by default; both paths go through the generation loop the
command uses, with temperature 0.8 and top-p 0.95. Two lengths: 56 new tokens, which fill the
context from an 8-token prompt, so every step feeds one token through the cache; and `lm
sample`'s default of 300, past the context, where every further step re-encodes the last 64
tokens (the model conditions on exactly its context), so the steps are mostly arithmetic that
batching cannot skip. Each timing is the median of 3 runs, the two paths alternating, so drift
in the machine's load falls on both.
Run alone on a quiet machine: python benchmarks/bench_batched_sampling.py
"""
from __future__ import annotations

import statistics
import time

import torch

from seqlab.nn import GPT, GPTConfig
from seqlab.text.generation import generate
from seqlab.text.sampling import build_processors

SAMPLES, LENGTHS, REPEATS = 8, (56, 300), 3


def one_at_a_time(model, prompt, procs, new: int) -> list[list[int]]:
    return [generate(model, prompt, new, procs, generator=torch.Generator().manual_seed(s))[0].tolist()
            for s in range(SAMPLES)]


def together(model, prompt, procs, new: int) -> list[list[int]]:
    gens = [torch.Generator().manual_seed(s) for s in range(SAMPLES)]
    return generate(model, prompt.expand(SAMPLES, -1), new, procs, generator=gens).tolist()


def compare(model, prompt, procs, new: int) -> tuple[float, bool]:
    times = {"alone": [], "together": []}
    outs = {}
    for _ in range(REPEATS):
        for name, run in (("alone", one_at_a_time), ("together", together)):
            t0 = time.perf_counter()
            outs[name] = run(model, prompt, procs, new)
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    same = outs["alone"] == outs["together"]
    print(f"{SAMPLES} samples x {new} new tokens, context {model.block_size}, threads={torch.get_num_threads()}")
    for name, label in (("alone", "1 sample at a time"), ("together", f"{SAMPLES} samples at once")):
        spread = f"{min(times[name]):.2f}-{max(times[name]):.2f}"
        print(f"  {label:<20} {med[name]:6.2f} s (runs {spread} s)  {SAMPLES * new / med[name]:8,.0f} tokens/s")
    ratio = med["alone"] / med["together"]
    print(f"  identical text per seed: {same}; speed-up {ratio:.1f}x")
    return ratio, same


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=66, block_size=64, num_layers=4, num_heads=4, d_model=128, bias=False)).eval()
    prompt = torch.randint(0, 66, (1, 8), generator=torch.Generator().manual_seed(1))
    procs = build_processors(temperature=0.8, top_p=0.95)
    results = [compare(model, prompt, procs, new) for new in LENGTHS]
    for new, (ratio, same) in zip(LENGTHS, results):
        print(f"{new} new tokens: {ratio:.1f}x (target >= 4: {'PASS' if ratio >= 4 and same else 'FAIL'})")


if __name__ == "__main__":
    main()
