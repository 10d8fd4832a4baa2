"""§14.60 Caching keys and values: the cost of generation."""
from __future__ import annotations

import time

import pandas as pd
import torch

from ..analysis.complexity import time_call
from ..nn import GPT, GPTConfig, KVCache
from ..text.generation import generate
from ..threads import single_threaded
from .base import section

PROMPT_LEN = 64
SEED = 0
#: the model timed: the chapter's width and depth with a window long enough for the longest context
D_MODEL, LAYERS, HEADS, VOCAB, WINDOW = 128, 4, 4, 66, 1024
#: new tokens of the end-to-end table and context lengths of the per-step curve
NEW_TOKENS = (32, 64, 128, 256)
STEP_CONTEXTS = (16, 32, 64, 128, 256, 512, 1024)
REPEATS = 5


def cost_model(seed: int = SEED) -> GPT:
    """An untrained GPT of the chapter's width and depth with a 1,024-token window (timing needs no training)."""
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=VOCAB, block_size=WINDOW, num_layers=LAYERS, num_heads=HEADS, d_model=D_MODEL,
                         bias=False)).eval()


def generation_cost(new_tokens=NEW_TOKENS, seed: int = SEED) -> pd.DataFrame:
    """Seconds to generate with and without the cache from one model, after a ``PROMPT_LEN``-token prompt."""
    model = cost_model(seed)
    prompt = torch.randint(0, VOCAB, (1, PROMPT_LEN), generator=torch.Generator().manual_seed(seed))
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


def flops_per_step(t: int, d: int = D_MODEL, layers: int = LAYERS, cached: bool = True) -> int:
    """Multiply-adds x 2 of one decoding step at context ``t``: projections and MLP (24 d^2 per position) plus
    attention scores and mixing (4 t d per query); without a cache all ``t`` positions are recomputed."""
    if cached:
        return layers * (24 * d * d + 4 * t * d)
    return layers * (24 * t * d * d + 4 * t * t * d)


@torch.no_grad()
def step_cost(contexts=STEP_CONTEXTS, seed: int = SEED, repeats: int = REPEATS, passes: int = 2) -> pd.DataFrame:
    """Seconds for one new token at each context length ``t``, with and without the cache (one thread).

    With the cache the step feeds one token and attends over ``t - 1`` cached keys
    and values (a copy of the cache is restored before each repeat); without it the
    whole ``t``-token context is run through the model again. Each time is the best of
    ``repeats`` calls (ten times as many for the cheap cached step), taken over
    ``passes`` sweeps through the contexts, up and then down, so that a stretch of
    competing work on the machine does not land on one context only.
    """
    model = cost_model(seed)
    setups = {}
    for t in contexts:
        ids = torch.randint(0, VOCAB, (1, t), generator=torch.Generator().manual_seed(seed))
        cache = KVCache()
        model(ids[:, :-1], cache=cache)
        setups[t] = (ids, cache)
    best = {t: [float("inf"), float("inf")] for t in contexts}
    for k in range(passes):
        for t in (contexts if k % 2 == 0 else tuple(reversed(contexts))):
            ids, cache = setups[t]

            def cached_step(ids=ids, cache=cache):
                model(ids[:, -1:], cache=KVCache(keys=list(cache.keys), values=list(cache.values)))

            best[t][0] = min(best[t][0], time_call(cached_step, 10 * repeats))
            best[t][1] = min(best[t][1], time_call(lambda ids=ids: model(ids), repeats))
    rows = []
    for t in contexts:
        s_cached, s_full = best[t]
        rows.append(dict(context=t, seconds_with_cache=s_cached, seconds_without_cache=s_full,
                         speedup=s_full / s_cached, flops_with_cache=flops_per_step(t, cached=True),
                         flops_without_cache=flops_per_step(t, cached=False),
                         cache_kb=2 * LAYERS * t * D_MODEL * 4 / 1024))
    return pd.DataFrame(rows)


def step_cost_figure(steps: pd.DataFrame):
    from ..plotting import line_pair

    long = steps.melt(id_vars="context", value_vars=["seconds_with_cache", "seconds_without_cache"],
                      var_name="path", value_name="seconds")
    long["path"] = long.path.map({"seconds_with_cache": "with KV cache", "seconds_without_cache": "recompute"})
    long["ms"] = 1e3 * long.seconds
    return line_pair(long, "context", "ms", "path", points=True, log_x=True, log_y=True,
                     title="The cost of one new token against the context it attends to",
                     subtitle=f"The chapter's width ({D_MODEL}) and depth ({LAYERS}), one thread, best of {REPEATS}",
                     xlab="Context length t (log scale)", ylab="Milliseconds per token (log scale)",
                     colors={"with KV cache": "#3B7DD8", "recompute": "#D8433B"})


@section("14.60", "Caching keys and values: the cost of generation")
def run(ctx):
    with single_threaded():
        cost = generation_cost(seed=ctx.seed(SEED))
        steps = step_cost(seed=ctx.seed(SEED))
    d, L = D_MODEL, LAYERS
    flops = pd.DataFrame([dict(step_context=T, attention_flops_per_step_without_cache=L * (8 * T * d * d + 4 * T * T * d),
                               attention_flops_per_step_with_cache=L * (8 * d * d + 4 * T * d)) for T in (64, 256, 1024)])
    last = cost.iloc[-1]
    s = steps.set_index("context")
    lo, hi = min(STEP_CONTEXTS), max(STEP_CONTEXTS)
    notes = [
        "Without a cache every new token re-runs the whole prefix: step t costs O(t d^2 + t^2 d) per layer. With the "
        "cache the prefix's keys and values are kept and each step projects one token and attends over the cache: "
        "O(d^2 + t d) per layer. Generating n tokens costs O(n^2 d^2 + n^3 d) without and O(n d^2 + n^2 d) with it: "
        "the d^2 part becomes linear in n, the attention part stays quadratic.",
        f"Measured per step (table `step_cost`, one thread): from t = {lo} to t = {hi} the cached step goes from "
        f"{1e3 * s.seconds_with_cache[lo]:.2f} to {1e3 * s.seconds_with_cache[hi]:.2f} ms and the recomputed one from "
        f"{1e3 * s.seconds_without_cache[lo]:.2f} to {1e3 * s.seconds_without_cache[hi]:.2f} ms.",
        f"End to end (untrained model of the chapter's width): {last.new_tokens} tokens after a "
        f"{PROMPT_LEN}-token prompt take {last.seconds_with_cache:.2f} s with the cache and "
        f"{last.seconds_without_cache:.2f} s without ({last.speedup:.1f}x); the tokens are identical in every row.",
        "The cache costs memory instead: 2 x layers x t x d floats per sequence (keys and values).",
    ]
    figs = []
    if ctx.figures:
        figs = ctx.save("kv_cache_step_cost", *step_cost_figure(steps))
    return {"generation_cost": cost, "flops_per_step": flops, "step_cost": steps}, figs, notes
