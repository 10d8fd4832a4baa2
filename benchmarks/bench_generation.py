"""Generation with and without the key-value cache: context 256, 500 new tokens, identical tokens.

Target (issue: text generation): the cached path is >= 5x faster than recomputing the whole
context at every step, on the same model, producing the same tokens.
Run alone on a quiet machine: python benchmarks/bench_generation.py
"""
from __future__ import annotations

import time

import torch

from seqlab.nn import GPT, GPTConfig
from seqlab.text.generation import generate


def main():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=66, block_size=1024, num_layers=4, num_heads=4, d_model=128, bias=False)).eval()
    prompt = torch.randint(0, 66, (1, 256), generator=torch.Generator().manual_seed(1))
    times, outs = {}, {}
    for cached in (True, False):
        t0 = time.perf_counter()
        outs[cached] = generate(model, prompt, 500, greedy=True, use_cache=cached)
        times[cached] = time.perf_counter() - t0
    same = torch.equal(outs[True], outs[False])
    ratio = times[False] / times[True]
    print(f"context 256, 500 new tokens, threads={torch.get_num_threads()}")
    print(f"  with cache    {times[True]:6.2f} s  ({500 / times[True]:,.0f} tokens/s)")
    print(f"  recompute     {times[False]:6.2f} s  ({500 / times[False]:,.0f} tokens/s)")
    print(f"  identical tokens: {same}")
    print(f"  speed-up {ratio:.1f}x (target >= 5: {'PASS' if ratio >= 5 and same else 'FAIL'})")


if __name__ == "__main__":
    main()
