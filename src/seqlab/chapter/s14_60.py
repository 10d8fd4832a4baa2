"""§14.60 Caching keys and values: the cost of generation."""
from __future__ import annotations

import time

import pandas as pd
import torch

from ..nn import GPT, GPTConfig
from ..text.generation import generate
from ..threads import single_threaded
from .base import section

PROMPT_LEN = 64


def generation_cost(new_tokens=(32, 64, 128, 256), seed: int = 0) -> pd.DataFrame:
    """Seconds to generate with and without the cache from one model (the chapter's width, a 1024 window)."""
    torch.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=66, block_size=1024, num_layers=4, num_heads=4, d_model=128, bias=False)).eval()
    prompt = torch.randint(0, 66, (1, PROMPT_LEN), generator=torch.Generator().manual_seed(seed))
    rows = []
    for n in new_tokens:
        out, secs = {}, {}
        for cached in (True, False):
            t0 = time.perf_counter()
            out[cached] = generate(model, prompt, n, greedy=True, use_cache=cached)
            secs[cached] = time.perf_counter() - t0
        rows.append(dict(new_tokens=n, context_at_end=PROMPT_LEN + n, seconds_with_cache=secs[True],
                         seconds_without_cache=secs[False], speedup=secs[False] / secs[True],
                         identical_tokens=bool(torch.equal(out[True], out[False]))))
    return pd.DataFrame(rows)


@section("14.60", "Caching keys and values: the cost of generation")
def run(ctx):
    with single_threaded():
        cost = generation_cost(seed=ctx.seed(0))
    d, L = 128, 4
    flops = pd.DataFrame([dict(step_context=T, attention_flops_per_step_without_cache=L * (8 * T * d * d + 4 * T * T * d),
                               attention_flops_per_step_with_cache=L * (8 * d * d + 4 * T * d)) for T in (64, 256, 1024)])
    last = cost.iloc[-1]
    notes = [
        "Without a cache every new token re-runs the whole prefix: step t costs O(t d^2 + t^2 d), so n tokens cost "
        "O(n^2) passes worth of work. With the cache the prefix's keys and values are kept and each step projects "
        "one token and attends over the cache: O(d^2 + t d) per step.",
        f"Measured (one core, untrained model of the chapter's width): {last.new_tokens} tokens after a "
        f"{PROMPT_LEN}-token prompt take {last.seconds_with_cache:.2f} s with the cache and "
        f"{last.seconds_without_cache:.2f} s without ({last.speedup:.1f}x); the tokens are identical in every row.",
        "The cache costs memory instead: 2 x layers x T x d floats per sequence (keys and values).",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        long = cost.melt(id_vars="new_tokens", value_vars=["seconds_with_cache", "seconds_without_cache"],
                         var_name="path", value_name="seconds")
        long["path"] = long.path.map({"seconds_with_cache": "with KV cache", "seconds_without_cache": "recompute"})
        gg, fig = line_pair(long, "new_tokens", "seconds", "path", points=True, log_x=True, log_y=True,
                            title="The cost of generation with and without a key-value cache",
                            subtitle=f"{PROMPT_LEN}-token prompt, greedy decoding, identical tokens",
                            xlab="New tokens (log scale)", ylab="Seconds (log scale)",
                            colors={"with KV cache": "#3B7DD8", "recompute": "#D8433B"})
        figs = ctx.save("kv_cache_cost", gg, fig)
    return {"generation_cost": cost, "flops_per_step": flops}, figs, notes
