"""§14.60 Caching keys and values: the cost of generation."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import torch

from ..claims import claim_source, verdict
from ..nn import GPT, GPTConfig, KVCache
from ..text.generation import generate
from ..threads import single_threaded
from ._util import machine_table, provenance
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


def generation_cost(new_tokens=NEW_TOKENS, seed: int = SEED, repeats: int = 1) -> pd.DataFrame:
    """Seconds to generate greedily with and without the cache from one model, after a ``PROMPT_LEN``-token prompt.

    Each time is the median of ``repeats`` runs, the cached and the recomputing run taking turns.
    """
    model = cost_model(seed)
    prompt = torch.randint(0, VOCAB, (1, PROMPT_LEN), generator=torch.Generator().manual_seed(seed))
    rows = []
    for n in new_tokens:
        out, secs = {}, {True: [], False: []}
        for _ in range(repeats):
            for cached in (True, False):
                t0 = time.perf_counter()
                out[cached] = generate(model, prompt, n, greedy=True, use_cache=cached)
                secs[cached].append(time.perf_counter() - t0)
        med = {c: float(np.median(v)) for c, v in secs.items()}
        rows.append(dict(new_tokens=n, context_at_end=PROMPT_LEN + n, seconds_with_cache=med[True],
                         seconds_without_cache=med[False], speedup=med[False] / med[True],
                         identical_tokens=bool(torch.equal(out[True], out[False]))))
    return pd.DataFrame(rows)


def flops_per_step(t: int, d: int = D_MODEL, layers: int = LAYERS, cached: bool = True) -> int:
    """Multiply-adds x 2 of one decoding step at context ``t``: projections and MLP (24 d^2 per position) plus
    attention scores and mixing (4 t d per query); without a cache all ``t`` positions are recomputed."""
    if cached:
        return layers * (24 * d * d + 4 * t * d)
    return layers * (24 * t * d * d + 4 * t * t * d)


@torch.no_grad()
def step_cost(contexts=STEP_CONTEXTS, seed: int = SEED, repeats: int = REPEATS, calls: int = 10) -> pd.DataFrame:
    """Seconds for one new token at each context length ``t``, with and without the cache: medians of ``repeats``.

    With the cache the step feeds one token and attends over ``t - 1`` cached keys
    and values (a copy of the cache is restored before each call); without it the
    whole ``t``-token context is run through the model again. One repeat times
    ``calls`` cached steps (the cheap path) or two recomputed ones and takes the
    time per call; the repeats sweep through the contexts up, then down, so that a
    stretch of competing work does not land on one context only, and each time is
    the median over the repeats.
    """
    model = cost_model(seed)
    setups = {}
    for t in contexts:
        ids = torch.randint(0, VOCAB, (1, t), generator=torch.Generator().manual_seed(seed))
        cache = KVCache()
        model(ids[:, :-1], cache=cache)
        setups[t] = (ids, cache)
    times = {t: ([], []) for t in contexts}
    for k in range(repeats + 1):  # the first sweep warms up and is not kept
        for t in (contexts if k % 2 == 0 else tuple(reversed(contexts))):
            ids, cache = setups[t]

            def cached_step(ids=ids, cache=cache):
                model(ids[:, -1:], cache=KVCache(keys=list(cache.keys), values=list(cache.values)))

            s_cached = _per_call(cached_step, calls)
            s_full = _per_call(lambda ids=ids: model(ids), 2)
            if k:
                times[t][0].append(s_cached)
                times[t][1].append(s_full)
    rows = []
    for t in contexts:
        s_cached, s_full = (float(np.median(v)) for v in times[t])
        rows.append(dict(context=t, seconds_with_cache=s_cached, seconds_without_cache=s_full,
                         speedup=s_full / s_cached, flops_with_cache=flops_per_step(t, cached=True),
                         flops_without_cache=flops_per_step(t, cached=False),
                         cache_kb=2 * LAYERS * t * D_MODEL * 4 / 1024))
    return pd.DataFrame(rows)


def _per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


#: the stored reference: repeats of the per-step curve and of the end-to-end runs
REFERENCE_REPEATS, REFERENCE_GENERATION_REPEATS = 9, 3
#: the quick measurement a build takes on its own machine, beside the reference
HERE_CONTEXTS, HERE_REPEATS = (64, 1024), 3


def reference_config() -> dict:
    """Every setting the stored KV-cache timing depends on."""
    return dict(d_model=D_MODEL, layers=LAYERS, heads=HEADS, vocab=VOCAB, window=WINDOW, prompt=PROMPT_LEN,
                seed=SEED, contexts=list(STEP_CONTEXTS), new_tokens=list(NEW_TOKENS), repeats=REFERENCE_REPEATS,
                generation_repeats=REFERENCE_GENERATION_REPEATS, threads=1, statistic="median")


def _measure_reference() -> dict:
    with single_threaded():
        steps = step_cost(STEP_CONTEXTS, SEED, REFERENCE_REPEATS)
        cost = generation_cost(NEW_TOKENS, SEED, REFERENCE_GENERATION_REPEATS)
    return {"step_cost": steps, "generation_cost": cost}


def kv_reference(root=None):
    """The stored KV-cache timing (artifact set ``timing_kv_cache``): tables ``step_cost`` and ``generation_cost``.

    Measured on a quiet machine, one thread, medians of repeats; ``HEAVY_EVAL=1`` measures it again.
    """
    from ..experiments.timing import reference

    return reference("kv_cache", _measure_reference, reference_config(), root)


def kv_speedup(root=None) -> dict:
    """The reference's headline numbers, for any page that quotes them: the per-step speed-up at the longest
    context, how much the cached step grows over the curve, and the end-to-end speed-up at the most tokens."""
    ref = kv_reference(root)
    s = ref["step_cost"].set_index("context")
    g = ref["generation_cost"].set_index("new_tokens")
    lo, hi = int(s.index.min()), int(s.index.max())
    return dict(context_lo=lo, context_hi=hi, step_speedup=float(s.speedup[hi]),
                cached_rise=float(s.seconds_with_cache[hi] / s.seconds_with_cache[lo]),
                new_tokens=int(g.index.max()), generation_speedup=float(g.speedup[g.index.max()]),
                identical_tokens=bool(g.identical_tokens.all()), machine=ref.machine_line())


def quick_step_cost(contexts=HERE_CONTEXTS, repeats: int = HERE_REPEATS) -> pd.DataFrame:
    """A short measurement of the per-step curve on the machine running it (one thread), to set beside the reference."""
    with single_threaded():
        return step_cost(contexts, SEED, repeats)


def step_cost_figure(steps: pd.DataFrame, repeats: int = REFERENCE_REPEATS):
    """The per-step curve, with and without the cache; ``repeats``: how many repeats each point is the median of
    (the stored reference's by default)."""
    from ..plotting import line_pair

    long = steps.melt(id_vars="context", value_vars=["seconds_with_cache", "seconds_without_cache"],
                      var_name="path", value_name="seconds")
    long["path"] = long.path.map({"seconds_with_cache": "with KV cache", "seconds_without_cache": "recompute"})
    long["ms"] = 1e3 * long.seconds
    return line_pair(long, "context", "ms", "path", points=True, log_x=True, log_y=True,
                     title="The cost of one new token against the context it attends to",
                     subtitle=f"The chapter's width ({D_MODEL}) and depth ({LAYERS}), one thread, median of {repeats} repeats",
                     xlab="Context length t (log scale)", ylab="Milliseconds per token (log scale)",
                     colors={"with KV cache": "#3B7DD8", "recompute": "#D8433B"})


@section("14.60", "Caching keys and values: the cost of generation")
def run(ctx):
    ref = kv_reference()
    cost, steps = ref["generation_cost"], ref["step_cost"]
    d, L = D_MODEL, LAYERS
    flops = pd.DataFrame([dict(step_context=T, attention_flops_per_step_without_cache=L * (8 * T * d * d + 4 * T * T * d),
                               attention_flops_per_step_with_cache=L * (8 * d * d + 4 * T * d)) for T in (64, 256, 1024)])
    notes = [provenance("timing_kv_cache", heavy="measured now"), *kv_claims(steps, cost)]
    figs = []
    if ctx.figures:
        figs = ctx.save("kv_cache_step_cost", *step_cost_figure(steps))
    tables = {"generation_cost": cost, "flops_per_step": flops, "step_cost": steps,
              "timing_machines": machine_table(ref)}
    return tables, figs, notes


# --- claims: the sentences of §14.60 that interpret its numbers ---------------------------------------------------

#: the cached step counts as flat over the short contexts when it grows by less than this factor there
FLAT = 1.25


@claim_source
def kv_claims(steps: pd.DataFrame, cost: pd.DataFrame):
    """The per-step curve and the end-to-end runs of the timing reference."""
    c = steps.sort_values("context").set_index("context")
    lo, hi = c.index.min(), c.index.max()
    cached = c.seconds_with_cache
    short = cached.iloc[min(2, len(cached) - 1)] / cached.iloc[0]  # the first three contexts
    rise = cached[hi] / cached[lo]
    flops_rise = c.flops_with_cache[hi] / c.flops_with_cache[lo]
    flat, upward = short < FLAT, rise > FLAT
    fixed = flops_per_step(0, cached=True) / c.flops_with_cache[lo]
    speed, last = c.speedup[hi], cost.sort_values("new_tokens").iloc[-1]
    runs = cost.sort_values("new_tokens").reset_index(drop=True)
    per_token = runs.seconds_with_cache / runs.new_tokens
    # the dearest cached step a run can take: the step table's contexts up to the first one at or past its final
    # context (the table's last where the run goes further); a tenth more allows for the sampling the table omits

    def ceiling_for(end):
        top = min([t for t in c.index if t >= end], default=hi)
        return float(cached[c.index <= top].max())

    ceiling = pd.Series([ceiling_for(end) for end in runs.context_at_end])
    over = runs.assign(per_token=per_token, ceiling=ceiling)[per_token > 1.1 * ceiling]
    return [
        verdict("kv_shape", flat and upward, fixed_share=fixed, first_context=int(lo), short_rise=short, rise=rise),
        verdict("kv_slower_than_flops", rise < flops_rise, rise=rise, flops_rise=flops_rise),
        verdict("kv_faster", speed > 1, speedup=speed),
        verdict("kv_same", bool(cost.identical_tokens.all()), identical=cost.identical_tokens.tolist()),
        verdict("kv_gen_vs_step", last.speedup < speed, generation=last.speedup, step=speed,
                context_at_end=int(last.context_at_end)),
        verdict("kv_gen_per_token", bool(over.empty), new_tokens=[int(n) for n in runs.new_tokens],
                per_token_ms=(1e3 * per_token).tolist(), ceiling_ms=(1e3 * ceiling).tolist(),
                slower_runs=[int(n) for n in over.new_tokens]),
        verdict("kv_gen_faster", last.speedup > 1, new_tokens=int(last.new_tokens), speedup=last.speedup),
    ]


@claim_source
def here_claims(reference: pd.DataFrame, here: pd.DataFrame):
    """The quick per-step measurement on the machine running the page against the reference, at the longest
    context both have: does the cache make a step cheaper on both machines?"""
    ref, now = reference.set_index("context"), here.set_index("context")
    t = max(set(ref.index) & set(now.index))
    r, n = ref.speedup[t], now.speedup[t]
    return [verdict("kv_here", n > 1 and r > 1, context=int(t), here=n, reference=r)]
