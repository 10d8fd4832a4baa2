"""§14.55 Cost: O(T^2 d) attention vs O(T d^2) recurrence, measured: forward, training, threads, memory.

The timings the page interprets are a stored *reference* (``timing_cost``), measured on a
quiet machine with repeats and medians (``HEAVY_EVAL=1`` measures it again); the build adds
a quick measurement on the reader's machine beside it. Every sentence that interprets a
number comes from a claim source below, with a variant for each outcome.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..analysis.complexity import (
    attention_core_flops,
    attention_flops,
    crossover,
    flop_crossover,
    fused_rnn_kernels,
    gflops,
    line_fit,
    peak_cpu_memory,
    recurrent_flops,
    time_call,
    time_training_step,
)
from ..claims import claim, claim_source, require
from ..nn.multihead import MultiHeadAttention
from ..threads import single_threaded, torch_threads
from .base import section

SEED = 97
#: sequence lengths and widths of the forward-pass grid
T_GRID = (16, 32, 64, 128, 256, 512, 1024, 2048)
D_GRID = (32, 64, 128, 256)
#: the training grid (forward + backward) stops one length earlier
TRAIN_T_GRID = (16, 32, 64, 128, 256, 512, 1024)
BATCH = 4
HEADS = 4
#: timed calls per point of the reference (after one untimed warm-up call); the reference keeps their median
REPEATS = 7
#: where the attention layer is taken apart and the recurrent kernels compared
PARTS_T = 256
#: (d, T) points timed with one and with two torch threads (one and two threads alternate, medians kept)
THREAD_POINTS = ((64, 256), (128, 512), (256, 1024))
THREAD_REPEATS = 7
#: the quick measurement on the reader's machine: one width, a few lengths around 2d, medians of a few calls
HERE_D = 64
HERE_T = (32, 64, 128, 256, 512)
HERE_REPEATS = 5
#: lengths and widths of the peak-memory measurement (each point runs the profiler once per layer)
MEM_T = (512, 2048)
MEM_D = (64,)
#: the reference timing set (``seqlab/artifacts/timing_cost``)
REFERENCE = "cost"

LAYER_NAMES = {"attention": "self-attention", "rnn": "RNN", "lstm": "LSTM"}
GAUGE = "linear map (gauge)"


def layers(d: int) -> dict[str, nn.Module]:
    """One layer of each kind at width ``d``: multi-head self-attention (fused kernel), a tanh RNN, an LSTM."""
    return {"attention": MultiHeadAttention(d, HEADS, fused=True), "rnn": nn.RNN(d, d, batch_first=True),
            "lstm": nn.LSTM(d, d, batch_first=True)}


def _flops(T: int, d: int) -> dict[str, int]:
    return {"attention": attention_flops(T, d), "rnn": recurrent_flops(T, d, "rnn"),
            "lstm": recurrent_flops(T, d, "lstm")}


#: single-threaded timings use the process's CPU time (equal to wall-clock time on a quiet machine, and blind to
#: other programs holding the core); the thread measurement needs the wall clock
CLOCK = "cpu"


def _median(fn, repeats: int) -> float:
    return time_call(fn, repeats, stat="median", clock=CLOCK)


# --- the measurements --------------------------------------------------------------------------------------------------

def measure_grid(seed: int = SEED, repeats: int = REPEATS) -> pd.DataFrame:
    """Median forward time (no gradients) of one layer of each kind over ``T_GRID x D_GRID``, batch ``BATCH``,
    one thread."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded():
        for d in D_GRID:
            mods = {k: m.eval() for k, m in layers(d).items()}
            for T in T_GRID:
                x = torch.randn(BATCH, T, d)
                with torch.no_grad():
                    ms = {k: 1e3 * _median(lambda m=m: m(x), repeats) for k, m in mods.items()}
                fl = _flops(T, d)
                rows.append(dict(T=T, d=d, **{f"{k}_ms": v for k, v in ms.items()},
                                 **{f"{k}_flops": v for k, v in fl.items()},
                                 **{f"{k}_gflops": gflops(BATCH * fl[k], ms[k] / 1e3) for k in mods}))
    df = pd.DataFrame(rows)
    df["ratio_attention_to_lstm"] = df.attention_ms / df.lstm_ms
    df["flop_ratio_attention_to_lstm"] = df.attention_flops / df.lstm_flops
    return df


def measure_training(seed: int = SEED, repeats: int = REPEATS) -> pd.DataFrame:
    """Median time of one training step (forward + backward) of each layer over ``TRAIN_T_GRID x D_GRID``,
    one thread."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded():
        for d in D_GRID:
            mods = layers(d)
            for T in TRAIN_T_GRID:
                x = torch.randn(BATCH, T, d)
                ms = {k: 1e3 * time_training_step(m, x, repeats, stat="median", clock=CLOCK) for k, m in mods.items()}
                rows.append(dict(T=T, d=d, **{f"{k}_train_ms": v for k, v in ms.items()}))
    df = pd.DataFrame(rows)
    df["train_ratio_attention_to_lstm"] = df.attention_train_ms / df.lstm_train_ms
    df["flop_ratio_attention_to_lstm"] = [attention_flops(T, d) / recurrent_flops(T, d, "lstm")
                                          for T, d in zip(df["T"], df.d)]
    return df


def attention_parts(seed: int = SEED, T: int = PARTS_T, repeats: int = REPEATS) -> pd.DataFrame:
    """Where the time goes at length ``T``: attention's projections vs its T x T core, and the recurrent kernels.

    Rates are achieved GFLOP/s (the formula's FLOPs over the median time, batch included).
    ``lstm_generic`` is the same LSTM with oneDNN's fused kernel switched off.
    """
    rows = []
    torch.manual_seed(seed)
    with single_threaded(), torch.no_grad():
        for d in D_GRID:
            mods = {k: m.eval() for k, m in layers(d).items()}
            x = torch.randn(BATCH, T, d)
            q, k, v = (torch.randn(BATCH, HEADS, T, d // HEADS) for _ in range(3))
            attn = mods["attention"]
            proj = (attn.Wq, attn.Wk, attn.Wv, attn.Wo)
            s_proj = _median(lambda: [p(x) for p in proj], repeats)
            s_core = _median(lambda: F.scaled_dot_product_attention(q, k, v), repeats)
            s_lstm = _median(lambda: mods["lstm"](x), repeats)
            with fused_rnn_kernels(False):
                s_lstm_generic = _median(lambda: mods["lstm"](x), repeats)
            s_rnn = _median(lambda: mods["rnn"](x), repeats)
            rows.append(dict(T=T, d=d, d_k=d // HEADS,
                             projections_gflops=gflops(BATCH * 8 * T * d * d, s_proj),
                             core_gflops=gflops(BATCH * attention_core_flops(T, d), s_core),
                             core_ns_per_score=1e9 * s_core / (BATCH * HEADS * T * T),
                             lstm_gflops=gflops(BATCH * recurrent_flops(T, d, "lstm"), s_lstm),
                             lstm_generic_gflops=gflops(BATCH * recurrent_flops(T, d, "lstm"), s_lstm_generic),
                             rnn_gflops=gflops(BATCH * recurrent_flops(T, d, "rnn"), s_rnn),
                             lstm_us_per_step=1e6 * s_lstm / T, lstm_generic_us_per_step=1e6 * s_lstm_generic / T,
                             rnn_us_per_step=1e6 * s_rnn / T))
    return pd.DataFrame(rows)


#: a thread timing is kept only if other programs used at most this share of the machine's CPUs meanwhile
QUIET_SHARE = 0.05
#: tries per thread timing before the quietest one is kept
QUIET_TRIES = 6
#: each one- or two-thread timing lasts at least this long (more calls for small products), so the check sees it
THREAD_MIN_S = 0.4


def _busy_seconds() -> float:
    """CPU seconds all programs on this machine have used so far (``/proc/stat``; NaN where there is none)."""
    import os

    try:
        with open("/proc/stat", encoding="ascii") as f:
            v = [int(t) for t in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return float("nan")
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def _cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def measure_threads(seed: int = SEED, points=THREAD_POINTS, repeats: int = THREAD_REPEATS) -> pd.DataFrame:
    """Median wall-clock time with one and with two torch threads: a plain linear map (the gauge: the most parallel
    work there is), attention and the LSTM, forward and training, at each ``(d, T)`` of ``points``.

    One- and two-thread calls alternate, so a slow spell falls on both alike. While they run,
    the CPU time every other program used is read from ``/proc/stat``; a timing during which
    others took more than ``QUIET_SHARE`` of the machine is taken again (up to ``QUIET_TRIES``
    times, the quietest kept), and ``others_share`` records it. Meant for the reference.
    """
    torch.manual_seed(seed)
    rows = []

    def once(fn, calls):
        times = {1: [], 2: []}
        for _ in range(calls):
            for n in (1, 2):
                with torch_threads(n):
                    times[n].append(time_call(fn, 1, warmup=0))
        return {n: 1e3 * float(np.median(t)) for n, t in times.items()}

    def both(fn) -> dict:
        for n in (1, 2):  # warm up each setting, and size the number of calls
            with torch_threads(n):
                fn()
        with torch_threads(1):
            one = time_call(fn, 1, warmup=0)
        calls = max(repeats, int(np.ceil(THREAD_MIN_S / max(one, 1e-6) / 2)))
        best = None
        for attempt in range(1, QUIET_TRIES + 1):
            busy0, self0, wall0 = _busy_seconds(), time.process_time(), time.perf_counter()
            ms = once(fn, calls)
            others = (_busy_seconds() - busy0) - (time.process_time() - self0)
            share = max(0.0, others) / ((time.perf_counter() - wall0) * _cores())
            if best is None or not share >= best["others_share"]:
                best = dict(one_thread_ms=ms[1], two_threads_ms=ms[2], calls=calls, others_share=share,
                            attempts=attempt)
            if not share > QUIET_SHARE:  # quiet enough (or no /proc/stat to tell)
                break
            time.sleep(2.0)
        best["attempts"] = attempt
        return best

    def step(m, x):
        def run():
            m.zero_grad(set_to_none=True)
            out = m(x)
            (out[0] if isinstance(out, tuple) else out).sum().backward()
        return run

    for d, T in points:
        x = torch.randn(BATCH, T, d)
        lin = nn.Linear(d, d)
        with torch.no_grad():
            rows.append(dict(layer=GAUGE, mode="forward", d=d, T=T, **both(lambda: lin(x))))
        for name, m in ((k, v) for k, v in layers(d).items() if k != "rnn"):
            m.eval()
            with torch.no_grad():
                rows.append(dict(layer=LAYER_NAMES[name], mode="forward", d=d, T=T, **both(lambda m=m: m(x))))
            m.train()
            rows.append(dict(layer=LAYER_NAMES[name], mode="training", d=d, T=T, **both(step(m, x))))
    df = pd.DataFrame(rows)
    df["speedup"] = df.one_thread_ms / df.two_threads_ms
    return df


def reference_config() -> dict:
    """Every setting the stored reference depends on (a stored set made with others is stale)."""
    return dict(seed=SEED, T_GRID=list(T_GRID), D_GRID=list(D_GRID), TRAIN_T_GRID=list(TRAIN_T_GRID), BATCH=BATCH,
                HEADS=HEADS, REPEATS=REPEATS, statistic="median", clock=CLOCK, thread_clock="wall", PARTS_T=PARTS_T,
                THREAD_POINTS=[list(p) for p in THREAD_POINTS], THREAD_REPEATS=THREAD_REPEATS,
                QUIET_SHARE=QUIET_SHARE, QUIET_TRIES=QUIET_TRIES, THREAD_MIN_S=THREAD_MIN_S)


def measure_reference() -> dict[str, pd.DataFrame]:
    """The whole timing reference: forward grid, training grid, attention's parts and the thread scaling."""
    return {"grid": measure_grid(SEED), "training": measure_training(SEED), "parts": attention_parts(SEED),
            "threads": measure_threads(SEED)}


def cost_reference():
    """The stored §14.55 timing reference (a :class:`~seqlab.experiments.timing.TimingReference`).

    Tables ``grid``, ``training``, ``parts`` and ``threads``; ``machine_line()`` says where it
    was measured. Loading is deterministic, so every page that quotes §14.55 reads these
    numbers; ``HEAVY_EVAL=1`` measures them again (on a quiet machine) and stores them.
    """
    from ..experiments.timing import reference

    return reference(REFERENCE, measure_reference, reference_config())


def measure_here(seed: int = SEED, d: int = HERE_D, lengths=HERE_T, repeats: int = HERE_REPEATS) -> pd.DataFrame:
    """A quick forward timing on the machine running this, at one width: attention and LSTM, medians, one thread."""
    torch.manual_seed(seed)
    mods = layers(d)
    rows = []
    with single_threaded(), torch.no_grad():
        for T in lengths:
            x = torch.randn(BATCH, T, d)
            t_attn = time_call(lambda: mods["attention"](x), repeats, stat="median", clock=CLOCK)
            t_lstm = time_call(lambda: mods["lstm"](x), repeats, stat="median", clock=CLOCK)
            rows.append(dict(T=T, d=d, attention_ms=1e3 * t_attn, lstm_ms=1e3 * t_lstm))
    here = pd.DataFrame(rows)
    here["ratio_attention_to_lstm"] = here.attention_ms / here.lstm_ms
    return here


def here_beside_reference(here: pd.DataFrame, grid: pd.DataFrame) -> pd.DataFrame:
    """The quick measurement's ratios beside the reference's at the same (T, d)."""
    ref = grid.set_index(["T", "d"]).ratio_attention_to_lstm
    out = here[["T", "d", "ratio_attention_to_lstm"]].rename(columns={"ratio_attention_to_lstm": "here_ratio"})
    out["reference_ratio"] = [ref.get((T, d), np.nan) for T, d in zip(out["T"], out.d)]
    return out


# --- derived tables ----------------------------------------------------------------------------------------------------

def crossovers(grid: pd.DataFrame, training: pd.DataFrame) -> pd.DataFrame:
    """Per width: the measured crossover T*, forward and training, and the FLOP crossover 2d.

    T* is the last length at which attention's time rises above the LSTM's: beyond it
    attention is the dearer layer at every length measured. NaN: attention was still the
    cheaper layer at the longest length.
    """
    rows = []
    for d in sorted(grid.d.unique()):
        fwd = grid[grid.d == d].sort_values("T")
        trn = training[training.d == d].sort_values("T")
        rows.append(dict(d=int(d), measured_T_star=crossover(fwd["T"], fwd.ratio_attention_to_lstm, last=True),
                         training_T_star=crossover(trn["T"], trn.train_ratio_attention_to_lstm, last=True),
                         flop_T_star=flop_crossover(int(d))))
    return pd.DataFrame(rows).astype({"measured_T_star": float, "training_T_star": float})


def equal_flops(grid: pd.DataFrame) -> pd.DataFrame:
    """The grid rows at T = 2d, where attention and the LSTM do the same FLOPs: time ratio = rate ratio."""
    rows = grid[grid["T"] == 2 * grid.d]
    return rows[["T", "d", "attention_gflops", "lstm_gflops", "ratio_attention_to_lstm"]].reset_index(drop=True)


def score_cost_fit(parts: pd.DataFrame) -> dict:
    """Least-squares line ``ns per score = a + b d_k`` through every width of ``attention_parts``, and its fit."""
    fit = line_fit(parts.d_k, parts.core_ns_per_score)
    fit["n"] = len(parts)
    return fit


def score_cost_split(parts: pd.DataFrame) -> pd.DataFrame:
    """Per d_k: measured ns per score, the fitted line's value, and the fixed part ``a``'s share of the time."""
    f = score_cost_fit(parts)
    return pd.DataFrame([dict(d_k=int(r.d_k), ns_per_score=r.core_ns_per_score,
                              fitted_ns=f["a"] + f["b"] * r.d_k, fixed_ns=f["a"], ns_per_unit_d_k=f["b"],
                              fixed_share=f["a"] / r.core_ns_per_score) for r in parts.itertuples()])


def thread_summary(threads: pd.DataFrame) -> pd.DataFrame:
    """Median speed-up from a second thread per layer and pass."""
    return (threads.groupby(["layer", "mode"], sort=False).speedup.agg(["median", "min", "max"])
            .rename(columns={"median": "median_speedup", "min": "min_speedup", "max": "max_speedup"})
            .reset_index())


def measure_memory(mem_T=MEM_T, mem_d=MEM_D) -> pd.DataFrame:
    """Peak memory of one forward pass without gradients: attention (explicit and fused) and recurrent layers."""
    with single_threaded():
        return _measure_memory(mem_T, mem_d)


def _measure_memory(mem_T, mem_d) -> pd.DataFrame:
    rows = []
    for d in mem_d:
        recurrent = {"RNN": nn.RNN(d, d, batch_first=True).eval(), "LSTM": nn.LSTM(d, d, batch_first=True).eval()}
        for T in mem_T:
            x = torch.randn(1, T, d)
            for fused in (False, True):
                m = MultiHeadAttention(d, HEADS, fused=fused).eval()
                with torch.no_grad():
                    peak = peak_cpu_memory(lambda: m(x))
                rows.append(dict(T=T, d=d, path="fused" if fused else "explicit", peak_mb=peak / 2 ** 20,
                                 weights_matrix_mb=HEADS * T * T * 4 / 2 ** 20))
            for name, module in recurrent.items():
                with torch.no_grad():
                    peak = peak_cpu_memory(lambda: module(x))
                rows.append(dict(T=T, d=d, path=name, peak_mb=peak / 2 ** 20, weights_matrix_mb=0.0))
    return pd.DataFrame(rows)


SEQUENTIAL_STEPS = pd.DataFrame([
    dict(model="self-attention", flops="8Td² + 4T²d", sequential_steps="O(1)", max_path_length="O(1)",
         memory="O(T²) weights (explicit) / O(T) (fused)"),
    dict(model="RNN", flops="4Td²", sequential_steps="O(T)", max_path_length="O(T)", memory="O(Td)"),
    dict(model="LSTM", flops="16Td²", sequential_steps="O(T)", max_path_length="O(T)", memory="O(Td)"),
])


# --- words for the prose ------------------------------------------------------------------------------------------------

def listing(values, spec: str = ".0f", never: str = "never") -> str:
    """``'a, b, c and d'``: each value formatted by ``spec``; a missing value (None/NaN) reads ``never``."""
    words = [never if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, spec) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def span(values, spec: str = ".3g") -> str:
    """``'lo to hi'`` of ``values``."""
    return f"{format(min(values), spec)} to {format(max(values), spec)}"


def machine_words(m: dict) -> str:
    """A machine description (:func:`seqlab.machine.describe`) in a few words."""
    return f"{m['cpu']}, {m['cores']} cores, torch {m['torch']}"


#: a measured crossover within this fraction of 2d, or a time ratio within it of one, counts as level
LEVEL = 0.05


def _side(t_star, d) -> str:
    """``'before'``, ``'near'`` (within ``LEVEL`` of 2d) or ``'after'`` the FLOP crossover (a missing one: after)."""
    if t_star is None or np.isnan(t_star):
        return "after"
    ratio = t_star / flop_crossover(int(d))
    return "before" if ratio < 1 - LEVEL else "after" if ratio > 1 + LEVEL else "near"


def _early(t_star, d) -> bool:
    """The measured crossover comes clearly before the FLOP crossover 2d."""
    return _side(t_star, d) == "before"


def _groups(sides, ds, words) -> str:
    """'before 2d at d = 32, within 5% of it at d = 128 and after it at d = 64' for the groups present."""
    parts = [f"{words[k]} at {_widths([d for d, s in zip(ds, sides) if s == k])}"
             for k in ("before", "near", "after") if k in sides]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _sides_words() -> dict:
    return {"before": "before 2d", "near": f"within {LEVEL:.0%} of 2d", "after": "after 2d"}


def _departure(sides) -> str:
    s = set(sides)
    if {"before", "after"} <= s:
        return "the clock departs from the FLOP count in both directions"
    if "before" in s:
        return "where the clock departs from the FLOP count, it brings the crossover forward"
    if "after" in s:
        return "where the clock departs from the FLOP count, it pushes the crossover back"
    return "the FLOP count places the crossover within a few per cent"


def _widths(ds) -> str:
    return "d = " + listing(ds, "d")


# --- claim sources: every sentence that interprets a number ------------------------------------------------------------

@claim_source
def crossover_claims(cross: pd.DataFrame) -> list:
    """Where the measured crossovers fall against the FLOP crossover 2d, and what that says about the usual story."""
    fwd = [_early(t, d) for t, d in zip(cross.measured_T_star, cross.d)]
    trn = [_early(t, d) for t, d in zip(cross.training_T_star, cross.d)]
    n, kf, kt = len(cross), sum(fwd), sum(trn)
    all_early, all_late = kf == n and kt == n, kf == 0 and kt == 0
    never = cross[cross.measured_T_star.isna() | cross.training_T_star.isna()].d.tolist()
    beyond = (f" (at {_widths(never)} attention stayed the cheaper layer up to the longest length timed)"
              if never else "")
    if all_late:
        other = ("At every width the measured crossover comes after 2d, forward and training alike" + beyond
                 + ": on the clock, attention stays the cheaper layer longer than its FLOP count says.")
        story = ("That is the usual story: the recurrence loses on real hardware because it runs T small dependent "
                 "steps, while attention runs a few large matrix products at a high rate, and so attention beats "
                 "its FLOP count.")
    else:
        ds = cross.d.tolist()
        fs = [_side(t, d) for t, d in zip(cross.measured_T_star, cross.d)]
        ts = [_side(t, d) for t, d in zip(cross.training_T_star, cross.d)]
        w = _sides_words()
        other = (f"In the forward pass the measured crossover comes {_groups(fs, ds, w)}; for a training step it comes "
                 f"{_groups(ts, ds, w)}{beyond}: {_departure(fs + ts)}.")
        story = ("The usual story says the recurrence loses on real hardware because it runs T small dependent "
                 "steps while attention runs a few large matrix products; if that were the whole story, the "
                 "measured crossover would come after 2d at every width, and here it does not.")
    evidence = dict(d=cross.d, forward=cross.measured_T_star, training=cross.training_T_star, flop=cross.flop_T_star)
    return [
        claim("s55_cross_side", all_early,
              "At every width the measured crossover comes before 2d, forward and training alike: on the clock, "
              "attention becomes the dearer layer sooner than its FLOP count says.", other, **evidence),
        claim("s55_usual_story", all_early,
              "That is the opposite of the usual story, which says the recurrence loses on real hardware because it "
              "runs T small dependent steps while attention runs a few large matrix products. If that were the "
              "whole story, attention would beat its FLOP count and the measured crossover would come after 2d.",
              story, **evidence),
    ]


@claim_source
def equal_work_claims(same_flops: pd.DataFrame) -> list:
    """At T = 2d the time ratio is the ratio of achieved rates: which layer did its arithmetic faster."""
    r, ds = same_flops.ratio_attention_to_lstm, same_flops.d.tolist()
    lstm, attn = listing(same_flops.lstm_gflops, ".3g"), listing(same_flops.attention_gflops, ".3g")
    slower = [bool(v > 1 + LEVEL) for v in r]
    faster = [bool(v < 1 - LEVEL) for v in r]
    head = f"With equal work attention took {listing(r, '.3g')} times as long as the LSTM"
    if all(faster) or all(slower):
        other = (f"{head}: at every width attention did its arithmetic at the higher rate ({attn} GFLOP/s against "
                 f"the LSTM's {lstm}), and that is what makes attention the cheaper layer at T = 2d.")
    else:
        groups = [(f"the LSTM did its arithmetic at the higher rate at {_widths([d for d, x in zip(ds, slower) if x])}"
                   if any(slower) else ""),
                  (f"attention did its arithmetic at the higher rate at {_widths([d for d, x in zip(ds, faster) if x])}"
                   if any(faster) else ""),
                  ("the two rates were within {:.0%} of each other at {}".format(
                      LEVEL, _widths([d for d, a, b in zip(ds, slower, faster) if not a and not b]))
                   if not all(a or b for a, b in zip(slower, faster)) else "")]
        groups = [g for g in groups if g]
        text = groups[0] if len(groups) == 1 else ", ".join(groups[:-1]) + " and " + groups[-1]
        other = (f"{head}: {text} (LSTM {lstm} GFLOP/s, attention {attn}). At T = 2d the layer with the higher "
                 "rate is the cheaper one, and where the rates are level so are the times.")
    return [claim("s55_equal_work", all(slower),
                  f"{head}: at every width the LSTM did its arithmetic at the higher rate ({lstm} GFLOP/s against "
                  f"attention's {attn}). That, not attention doing more arithmetic, is what makes attention the dearer "
                  "layer at T = 2d.", other, d=ds, ratio=r, lstm_gflops=same_flops.lstm_gflops,
                  attention_gflops=same_flops.attention_gflops)]


@claim_source
def parts_claims(parts: pd.DataFrame) -> list:
    """The recurrent kernels (fused, generic, plain RNN) and attention's core against its projections."""
    p = parts.sort_values("d").reset_index(drop=True)
    gain = p.lstm_gflops / p.lstm_generic_gflops
    lo, hi = p.iloc[0], p.iloc[-1]
    generic = (f"Forced onto PyTorch's generic path, which dispatches the recurrence step by step, the same layer "
               f"manages {span(p.lstm_generic_gflops)} GFLOP/s: the fused kernel is")
    rel = p.core_gflops / p.projections_gflops
    core = (f"{lo.core_gflops:.3g} GFLOP/s for d_k = {lo.d_k:.0f} and {hi.core_gflops:.3g} for d_k = {hi.d_k:.0f}, "
            f"{span(rel, '.0%')} of the projections' rate at the same width")
    if (rel >= 0.8).all() and (rel <= 1.25).all():
        core_other = f"Its T×T core keeps pace with them: {core}."
    elif (rel > 1.25).all():
        core_other = f"Its T×T core runs faster still: {core}."
    else:
        core_other = f"Its T×T core falls behind them at some widths and not at others: {core}."
    step = (f"At d = {lo.d:.0f} the plain RNN, with a quarter of the LSTM's arithmetic and no fused kernel, spends "
            f"{lo.rnn_us_per_step:.2g} µs per step against the fused LSTM's {lo.lstm_us_per_step:.2g} µs "
            f"(generic path: {lo.lstm_generic_us_per_step:.2g} µs)")
    return [
        claim("s55_fused_gain", gain.min() >= 2,
              f"{generic} {span(gain, '.2g')} times as fast, so most of the generic path's time goes to running "
              "many small steps, not to arithmetic.",
              f"{generic} only {span(gain, '.2g')} times as fast, so running the steps one by one is not where most "
              "of the generic path's time goes.", d=p.d, fused_over_generic=gain),
        claim("s55_rnn_step", lo.rnn_us_per_step > lo.lstm_us_per_step,
              f"{step}: the fused LSTM does four times the RNN's arithmetic in less time per step, so at this width "
              "a step's cost is mostly overhead, not arithmetic.",
              f"{step}: its smaller arithmetic still shows through the cost of its steps.",
              d=lo.d, rnn_us=lo.rnn_us_per_step, lstm_us=lo.lstm_us_per_step),
        claim("s55_core_rate", bool((rel < 0.8).all()), f"Its T×T core does not: {core}.", core_other,
              d=p.d, core_over_projections=rel),
    ]


@claim_source
def score_claims(parts: pd.DataFrame) -> list:
    """How the core's cost per score grows with d_k: a least-squares line through every width, and how well it fits."""
    p = parts.sort_values("d_k").reset_index(drop=True)
    fit = score_cost_fit(p)
    split = score_cost_split(p)
    lo, hi = p.iloc[0], p.iloc[-1]
    dk_ratio, ns_ratio = hi.d_k / lo.d_k, hi.core_ns_per_score / lo.core_ns_per_score
    good = fit["max_rel_residual"] <= 0.10
    line = (f"A least-squares line through all {fit['n']} widths, cost per score = a + b·d_k, misses no point by more "
            f"than {fit['max_rel_residual']:.0%} (R² = {fit['r2']:.3f})")
    if good:
        other = (f"{line}, but its intercept a = {fit['a']:.2g} ns is not positive: the time per score shows no fixed "
                 "part that the length of the dot product leaves unchanged.")
    else:
        other = (f"A straight line, cost per score = a + b·d_k, does not describe the {fit['n']} widths: the "
                 f"least-squares line misses one by {fit['max_rel_residual']:.0%} (R² = {fit['r2']:.3f}), so the time "
                 "per score is not a fixed part plus a part in proportion to d_k, and the table is the better "
                 "summary.")
    return [
        claim("s55_score_sublinear", ns_ratio < 0.5 * dk_ratio,
              f"A dot product {dk_ratio:.0f} times longer costs only {ns_ratio:.2g} times as much per score, far less "
              "than in proportion to its length.",
              f"A dot product {dk_ratio:.0f} times longer costs {ns_ratio:.2g} times as much per score, not far from "
              "in proportion to its length.", dk_ratio=dk_ratio, ns_ratio=ns_ratio),
        claim("s55_score_line", good and fit["a"] > 0,
              f"{line}; its intercept a = {fit['a']:.2g} ns is work per score that does not grow with d_k, "
              f"{split.fixed_share.iloc[0]:.0%} of the time per score at d_k = {lo.d_k:.0f} and "
              f"{split.fixed_share.iloc[-1]:.0%} at d_k = {hi.d_k:.0f}. That fixed part is what a softmax does for "
              "every one of the B·h·T² scores (an exponential, a running maximum, a rescaling) plus the kernel's "
              "own bookkeeping, and the FLOP count counts none of it.", other, **fit),
    ]


@claim_source
def growth_claims(grid: pd.DataFrame) -> list:
    """At the smallest width: does the time ratio grow faster than the FLOP ratio from the shortest to the longest T?"""
    d = grid.d.min()
    narrow = grid[grid.d == d].set_index("T").sort_index()
    a, b = narrow.index.min(), narrow.index.max()
    fg = narrow.flop_ratio_attention_to_lstm[b] / narrow.flop_ratio_attention_to_lstm[a]
    tg = narrow.ratio_attention_to_lstm[b] / narrow.ratio_attention_to_lstm[a]
    ta, tb = narrow.ratio_attention_to_lstm[a], narrow.ratio_attention_to_lstm[b]
    head = (f"At d = {d:.0f}, from T = {a:.0f} to {b:.0f}, the FLOP ratio grows {fg:.3g}-fold and the measured time "
            f"ratio {tg:.3g}-fold (from {ta:.3g} to {tb:.3g})")
    return [claim("s55_ratio_growth", tg > fg,
                  f"{head}: attention's rate, relative to the LSTM's, falls as its T² part takes over.",
                  f"{head}: attention's rate, relative to the LSTM's, does not fall as its T² part takes over.",
                  d=d, flop_growth=fg, time_growth=tg)]


def _margin_grows(grid: pd.DataFrame, cross: pd.DataFrame) -> bool:
    """Beyond each width's forward crossover, is attention's time ratio at the longest T the largest seen?"""
    for d, t_star in zip(cross.d, cross.measured_T_star):
        if t_star is None or np.isnan(t_star):
            continue
        after = grid[(grid.d == d) & (grid["T"] >= t_star)].sort_values("T").ratio_attention_to_lstm
        if len(after) >= 2 and after.iloc[-1] < after.max():
            return False
    return True


@claim_source
def verdict_claims(cross: pd.DataFrame, parts: pd.DataFrame, grid: pd.DataFrame) -> list:
    """What places the crossover on one core, and where each layer wins."""
    fwd = [_early(t, d) for t, d in zip(cross.measured_T_star, cross.d)]
    trn = [_early(t, d) for t, d in zip(cross.training_T_star, cross.d)]
    all_early, all_late = all(fwd) and all(trn), not any(fwd) and not any(trn)
    core_slow = bool((parts.core_gflops / parts.projections_gflops < 0.8).all())
    if all_late:
        places = ("On one core, then, the recurrence's chain of small steps does cost it: with equal work attention "
                  "does its arithmetic at the higher rate, and its crossover comes after 2d.")
    elif all_early:
        places = ("On one core, then, the crossover comes before 2d because the LSTM runs at the higher rate, not "
                  "because attention's T×T core falls behind its own projections: the core keeps pace with them.")
    else:
        places = ("On one core, then, no single cause puts the crossover on the same side of 2d at every width: the "
                  "two layers' rates, measured above, decide it width by width.")
    grows = _margin_grows(grid, cross)
    margin = ", by a margin that grows with T" if grows else ""
    never = cross[cross.measured_T_star.isna()].d.tolist()
    tail = (f" (at {_widths(never)} attention stayed the cheaper layer over every length timed)" if never else "")
    lead = ("Per layer on one core of the reference machine, attention is the cheaper layer for sequences shorter than "
            "the measured forward T*, which")
    fs = [_side(t, d) for t, d in zip(cross.measured_T_star, cross.d)]
    if set(fs) == {"after"}:
        wins_other = f"{lead} at every width lay beyond the FLOP estimate 2d{tail}; beyond it the LSTM's fused kernel wins{margin}."
    else:
        w = {"before": "below the FLOP estimate 2d", "near": f"within {LEVEL:.0%} of it", "after": "beyond it"}
        wins_other = f"{lead} lay {_groups(fs, cross.d.tolist(), w)}{tail}; beyond T* the LSTM's fused kernel wins{margin}."
    return [
        claim("s55_what_places", all_early and core_slow,
              "On one core, then, what places the crossover is not the recurrence's chain of steps, which the fused "
              "kernel runs at a high rate, but attention's T×T core, which runs below the rate of its own "
              "projections.", places, all_early=all_early, all_late=all_late, core_slow=core_slow),
        claim("s55_where_each_wins", all(fwd),
              f"{lead} at every width lay below the FLOP estimate 2d; beyond it the LSTM's fused kernel wins{margin}.",
              wins_other, forward_T_star=cross.measured_T_star, flop_T_star=cross.flop_T_star, margin_grows=grows),
    ]


@claim_source
def thread_claims(threads: pd.DataFrame, batch: int = BATCH) -> list:
    """What a second thread did on the reference machine: the gauge, attention against the LSTM."""
    g = threads[threads.layer == GAUGE].speedup.median()
    a = threads[threads.layer == LAYER_NAMES["attention"]].speedup.median()
    lstm = threads[threads.layer == LAYER_NAMES["lstm"]].speedup.median()
    k = int((threads.layer == GAUGE).sum())
    share = threads.others_share if "others_share" in threads else pd.Series([np.nan] * len(threads))
    noisy = int((share > QUIET_SHARE).sum())
    quiet = claim("s55_threads_quiet", noisy == 0,
                  f"Other programs used at most {share.max():.1%} of the reference machine's CPUs while these timings "
                  "ran, so the table measures the layers.",
                  f"At {noisy} of the {len(threads)} timings other programs used more than {QUIET_SHARE:.0%} of the "
                  f"reference machine's CPUs even in the quietest of {QUIET_TRIES} tries (up to {share.max():.0%}); "
                  "those rows measure that contention as much as the layers.",
                  noisy_rows=noisy, largest_share=share.max(), threshold=QUIET_SHARE)
    return [quiet,
        claim("s55_threads_gauge", g >= 1.3,
              f"On the reference machine a second thread made the plain linear map {g:.2f} times as fast (median "
              f"over the {k} points), so there was a second core to share the work.",
              f"On the reference machine a second thread made even the plain linear map, the most parallel work "
              f"there is, {'only ' + format(g, '.2f') + ' times as fast' if g >= 0.9 else 'slower: ' + format(g, '.2f') + ' times its one-thread speed'} "
              f"(median over the {k} points), so its second core gave these products no useful speed-up.",
              gauge_speedup=g, points=k),
        claim("s55_threads_attention", a > lstm,
              f"Attention gained more from the second thread than the LSTM: a median speed-up of {a:.2f} against "
              f"{lstm:.2f}, forward and training steps taken together.",
              f"Attention gained no more from the second thread than the LSTM: a median speed-up of {a:.2f} against "
              f"{lstm:.2f}, forward and training steps taken together.", attention=a, lstm=lstm),
        claim("s55_threads_lstm", lstm >= 1.1,
              f"The LSTM's gain comes from the work inside each step, a batch of {batch} states times the gate "
              "matrices, shared between the threads; its T steps still run one after another.",
              f"The LSTM gained little or nothing ({lstm:.2f}): inside one step a batch of {batch} states times the "
              "gate matrices is too little work to share between two threads, and its T steps must run one after "
              "another.", lstm=lstm, batch=batch),
    ]


@claim_source
def memory_claims(memory: pd.DataFrame) -> list:
    """Peak memory against T: quadratic for explicit attention, not for the fused kernel."""
    d = memory.d.min()
    peak = memory[memory.d == d].pivot_table(index="path", columns="T", values="peak_mb")
    t_lo, t_hi = peak.columns.min(), peak.columns.max()
    r = t_hi / t_lo
    ge = peak.loc["explicit", t_hi] / peak.loc["explicit", t_lo]
    gf = peak.loc["fused", t_hi] / peak.loc["fused", t_lo]
    weights = memory[(memory.d == d) & (memory["T"] == t_hi)].weights_matrix_mb.max()
    quadratic, linear = ge >= 0.5 * r ** 2, gf <= 1.5 * r
    return [
        claim("s55_mem_explicit", quadratic,
              f"Going from T = {t_lo:.0f} to {t_hi:.0f}, a factor of {r:.0f}, multiplies that peak by {ge:.3g}, of "
              f"the order of the square of the factor ({r ** 2:.0f}).",
              f"Going from T = {t_lo:.0f} to {t_hi:.0f}, a factor of {r:.0f}, multiplies that peak by {ge:.3g}, well "
              f"short of the square of the factor ({r ** 2:.0f}).", growth=ge, length_ratio=r),
        require("s55_mem_fused_below_weights", peak.loc["fused", t_hi] < weights,
                fused_mb=peak.loc["fused", t_hi], weights_mb=weights),
        claim("s55_mem_fused", linear,
              f"growing {gf:.3g}-fold over the same range, no faster than the length.",
              f"growing {gf:.3g}-fold over the same range, faster than the length.", growth=gf, length_ratio=r),
        claim("s55_mem_verdict", quadratic and linear,
              "Quadratic memory is a property of the explicit implementation, not of attention itself; quadratic "
              "work belongs to attention itself, and that is what the timings above measured.",
              "These peaks do not separate the implementation from the method: the explicit path's peak did not "
              "grow with the square of T, or the fused kernel's grew faster than T.",
              explicit_growth=ge, fused_growth=gf, length_ratio=r),
    ]


@claim_source
def here_claims(here: pd.DataFrame, grid: pd.DataFrame) -> list:
    """The quick measurement on this machine beside the reference: is the crossover on the same side of 2d?"""
    d = int(here.d.iloc[0])
    h = here.sort_values("T")
    ref = grid[grid.d == d].sort_values("T")
    t_here = crossover(h["T"], h.ratio_attention_to_lstm, last=True)
    t_ref = crossover(ref["T"], ref.ratio_attention_to_lstm, last=True)
    t_here = np.nan if t_here is None else t_here
    t_ref = np.nan if t_ref is None else t_ref
    s_here, s_ref = _side(t_here, d), _side(t_ref, d)
    w = {"before": f"before 2d = {2 * d}", "near": f"within {LEVEL:.0%} of 2d = {2 * d}", "after": f"after 2d = {2 * d}"}

    def where(t, frame):
        if np.isnan(t):
            return f"beyond T = {frame['T'].max():.0f}, the longest length timed"
        if t == frame["T"].min() and frame.ratio_attention_to_lstm.iloc[0] >= 1:
            # attention was already the dearer layer at the shortest length: the crossing lies somewhere below it
            return f"at or below T = {t:.0f}, the shortest length timed"
        return f"at T* ≈ {t:.0f}"

    head = f"On this machine the crossover at d = {d} lies {where(t_here, h)}, {w[s_here]}"
    return [claim("s55_here_side", s_here == s_ref,
                  f"{head}, as in the reference ({where(t_ref, ref)}).",
                  f"{head}, where the reference's lies {where(t_ref, ref)}, {w[s_ref]}: the two layers' "
                  "relative rates here differ from the reference's, and a measurement this short cannot tell "
                  "this machine's own speeds apart from the load it ran under.",
                  d=d, here_T_star=t_here, reference_T_star=t_ref, flop_T_star=2 * d)]


def claims_for(ref, memory: pd.DataFrame, here: pd.DataFrame) -> list:
    """Every claim §14.55 makes, from the reference tables, the memory measurement and the quick one here."""
    grid, training, parts, threads = ref["grid"], ref["training"], ref["parts"], ref["threads"]
    cross = crossovers(grid, training)
    return [*crossover_claims(cross), *equal_work_claims(equal_flops(grid)), *parts_claims(parts),
            *score_claims(parts), *growth_claims(grid), *verdict_claims(cross, parts, grid),
            *thread_claims(threads), *memory_claims(memory), *here_claims(here, grid)]


def _panel(d) -> pd.Categorical:
    """Facet labels ``d = 32`` ... in numeric order (a plain string column would sort ``128`` before ``32``)."""
    labels = [f"d = {v}" for v in D_GRID]
    return pd.Categorical([f"d = {v}" for v in d], categories=labels, ordered=True)


def time_figure(grid: pd.DataFrame):
    """Forward time of each layer against T, one panel per width (panels in numeric order)."""
    from ..plotting import line_pair

    long = grid.melt(id_vars=["T", "d"], value_vars=["attention_ms", "rnn_ms", "lstm_ms"], var_name="layer",
                     value_name="ms")
    long["layer"] = long.layer.str.split("_").str[0].map(LAYER_NAMES)
    long = long.sort_values(["d", "layer", "T"])
    long["d"] = _panel(long.d)
    return line_pair(long, "T", "ms", "layer", facet="d", points=True, log_x=True, log_y=True,
                     title="One layer's forward time: attention vs recurrence",
                     subtitle=f"Batch {BATCH}, one CPU thread; attention's FLOPs grow as T²d, the recurrence's as Td²",
                     xlab="Sequence length T (log scale)", ylab="Milliseconds (log scale)",
                     colors={"self-attention": "#7FB069", "RNN": "#D8433B", "LSTM": "#3B7DD8"})


def ratio_figure(grid: pd.DataFrame, training: pd.DataFrame):
    """Attention/LSTM cost ratio against T: measured forward, measured training step, and FLOPs; 1 = equal cost."""
    from ..plotting import line_pair

    fwd = grid[["T", "d", "ratio_attention_to_lstm"]].rename(columns={"ratio_attention_to_lstm": "ratio"})
    trn = training[["T", "d", "train_ratio_attention_to_lstm"]].rename(
        columns={"train_ratio_attention_to_lstm": "ratio"})
    flop = grid[["T", "d", "flop_ratio_attention_to_lstm"]].rename(columns={"flop_ratio_attention_to_lstm": "ratio"})
    long = pd.concat([fwd.assign(measure="time, forward"), trn.assign(measure="time, training step"),
                      flop.assign(measure="FLOPs")], ignore_index=True).sort_values(["d", "measure", "T"])
    long["d"] = _panel(long.d)
    return line_pair(long, "T", "ratio", "measure", facet="d", points=True, log_x=True, log_y=True, hline=1.0,
                     title="Attention / LSTM: measured time ratio against the FLOP ratio",
                     subtitle="Above the dashed line attention is the dearer layer; "
                              "the FLOP ratio crosses it at T = 2d",
                     xlab="Sequence length T (log scale)", ylab="attention / LSTM (log scale)",
                     colors={"time, forward": "#7FB069", "time, training step": "#3F6B2A", "FLOPs": "#737373"})


def ratio_surface(grid: pd.DataFrame):
    """3D: the measured attention/LSTM forward-time ratio over T and d, on a log scale (height and colour).

    The colour scale diverges around a ratio of 1: white is equal cost, red attention the dearer layer, blue the
    LSTM; ticks are labelled as ratios."""
    from ..plotting import surface_figure
    from ..plotting.figures import log_ratio_ticks

    wide = grid.pivot(index="d", columns="T", values="ratio_attention_to_lstm")
    Z = np.log10(wide.values)
    ticks = log_ratio_ticks(np.nanmin(Z), np.nanmax(Z))
    reach = float(np.nanmax(np.abs(Z)))  # the colour bar is symmetric about 1: ticks over all of it
    fig = surface_figure([dict(x=list(wide.columns), y=list(wide.index), z=Z, colorscale="RdBu_r", cmid=0.0,
                                colorbar="attention / LSTM", colorbar_ticks=log_ratio_ticks(-reach, reach))],
                         title="Measured attention / LSTM time ratio over T and d",
                         subtitle="Log scale; white = equal cost, red = attention dearer, blue = LSTM dearer",
                         xlab="Sequence length T", ylab="Model width d", zlab="attention / LSTM",
                         log_x=True, log_y=True)
    fig.update_layout(scene_zaxis=dict(tickmode="array", tickvals=ticks[0], ticktext=ticks[1]))
    return fig


@section("14.55", "Cost: attention vs recurrence")
def run(ctx):
    from ..machine import describe

    seed = ctx.seed(SEED)
    ref = cost_reference()
    grid, training, parts, threads = ref["grid"], ref["training"], ref["parts"], ref["threads"]
    cross = crossovers(grid, training)
    memory = measure_memory()
    here = measure_here(seed)
    figs = []
    if ctx.figures:
        figs = ctx.save("cost_attention_vs_recurrence", *time_figure(grid))
        figs += ctx.save("cost_ratio", *ratio_figure(grid, training))
        figs += ctx.save_plotly("cost_ratio_3d", ratio_surface(grid))
    tables = {"cost_grid": grid, "crossover": cross, "attention_memory": memory, "sequential_steps": SEQUENTIAL_STEPS,
              "training_grid": training, "attention_parts": parts, "thread_scaling": threads,
              "thread_summary": thread_summary(threads), "equal_flops": equal_flops(grid),
              "score_cost_split": score_cost_split(parts), "here_beside_reference": here_beside_reference(here, grid)}
    notes = [f"Timings: the stored reference, measured on {ref.machine_line()}, medians of {REPEATS} calls; the "
             f"quick measurement at d = {HERE_D} (table `here_beside_reference`) ran on {machine_words(describe())}.",
             "FLOPs: one attention layer costs 8 T d^2 + 4 T^2 d, one LSTM layer 16 T d^2; they are equal at T = 2d."]
    notes += [c.text for c in claims_for(ref, memory, here) if c.text]
    return tables, figs, notes
