"""§14.55 Cost: O(T^2 d) attention vs O(T d^2) recurrence, measured: forward, training, threads, memory.

The timings the page interprets are a stored *reference* (``timing_cost``), measured on a
quiet machine with repeats and medians (``HEAVY_EVAL=1`` measures it again); the build adds
a quick measurement on the reader's machine beside it. This module holds the steps that call
the timing loops of :mod:`seqlab.analysis.timing`, the tables derived from them, the figures
and ``run``; it re-exports the section's settings (:mod:`seqlab.chapter.s14_55_settings`). The
claim sources that judge the numbers are in :mod:`seqlab.chapter.s14_55_claims`, and the page
words their verdicts.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn as nn

from ..analysis.complexity import attention_flops, crossover, flop_crossover, recurrent_flops
from ..analysis.timing import (
    attention_part_rates,
    forward_grid,
    forward_peak_mb,
    over_rounds,
    score_cost_fit as score_cost_fit,  # the page fits the line itself
    score_cost_split,
    thread_scaling,
    training_grid,
    training_step,
)
from ..nn.multihead import MultiHeadAttention
from ..threads import single_threaded
from ._util import machine_table, provenance
from .base import section
from .s14_55_claims import (
    crossover_claims,
    equal_work_claims,
    growth_claims,
    here_claims,
    memory_claims,
    parts_claims,
    score_claims,
    thread_claims,
    verdict_claims,
)
from .s14_55_settings import (  # the section's settings; the page reads them from here
    BATCH,
    CLOCK,
    D_GRID,
    GAUGE,
    HEADS,
    HERE_D,
    HERE_REPEATS,
    HERE_T,
    LAYER_NAMES,
    LEVEL as LEVEL,  # §14.64 reads it from here
    MEM_D,
    MEM_T,
    PARTS_T,
    QUIET_SHARE,
    QUIET_TRIES,
    REFERENCE,
    REPEATS,
    ROUNDS,
    SEED,
    T_GRID,
    THREAD_MIN_S,
    THREAD_POINTS,
    THREAD_REPEATS,
    TRAIN_T_GRID,
)

def layers(d: int) -> dict[str, nn.Module]:
    """One layer of each kind at width ``d``: multi-head self-attention (fused kernel), a tanh RNN, an LSTM."""
    return {"attention": MultiHeadAttention(d, HEADS, fused=True), "rnn": nn.RNN(d, d, batch_first=True),
            "lstm": nn.LSTM(d, d, batch_first=True)}


def _flops(T: int, d: int) -> dict[str, int]:
    return {"attention": attention_flops(T, d), "rnn": recurrent_flops(T, d, "rnn"),
            "lstm": recurrent_flops(T, d, "lstm")}


# --- the measurements --------------------------------------------------------------------------------------------------

def measure_grid(seed: int = SEED, repeats: int = REPEATS) -> pd.DataFrame:
    """Median forward time (no gradients) of one layer of each kind over ``T_GRID x D_GRID``, batch ``BATCH``,
    one thread, with the attention/LSTM time and FLOP ratios."""
    df = forward_grid(layers, T_GRID, D_GRID, BATCH, repeats, seed, flops=_flops, clock=CLOCK)
    df["ratio_attention_to_lstm"] = df.attention_ms / df.lstm_ms
    df["flop_ratio_attention_to_lstm"] = df.attention_flops / df.lstm_flops
    return df


def measure_training(seed: int = SEED, repeats: int = REPEATS) -> pd.DataFrame:
    """Median time of one training step (forward + backward) of each layer over ``TRAIN_T_GRID x D_GRID``,
    one thread."""
    df = training_grid(layers, TRAIN_T_GRID, D_GRID, BATCH, repeats, seed, clock=CLOCK)
    df["train_ratio_attention_to_lstm"] = df.attention_train_ms / df.lstm_train_ms
    df["flop_ratio_attention_to_lstm"] = [attention_flops(T, d) / recurrent_flops(T, d, "lstm")
                                          for T, d in zip(df["T"], df.d)]
    return df


def attention_parts(seed: int = SEED, T: int = PARTS_T, repeats: int = REPEATS) -> pd.DataFrame:
    """Where the time goes at length ``T``, per width: attention's projections vs its T x T core, and the recurrent
    kernels (:func:`~seqlab.analysis.timing.attention_part_rates`; ``lstm_generic`` is the LSTM with oneDNN's
    fused kernel switched off). Rates are achieved GFLOP/s, batch included."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded(), torch.no_grad():
        for d in D_GRID:
            mods = {k: m.eval() for k, m in layers(d).items()}
            x = torch.randn(BATCH, T, d)
            rates = attention_part_rates(mods["attention"], mods["lstm"], mods["rnn"], x, HEADS, repeats, CLOCK)
            rows.append(dict(T=T, d=d, **rates))
    return pd.DataFrame(rows)


def _thread_cases(points):
    """``(labels, fn, grad)`` for each timing of :func:`measure_threads`, made one at a time (as they are timed)."""
    for d, T in points:
        x = torch.randn(BATCH, T, d)
        lin = nn.Linear(d, d)
        yield dict(layer=GAUGE, mode="forward", d=d, T=T), (lambda: lin(x)), False
        for name, m in ((k, v) for k, v in layers(d).items() if k != "rnn"):
            m.eval()
            yield dict(layer=LAYER_NAMES[name], mode="forward", d=d, T=T), (lambda m=m: m(x)), False
            m.train()
            yield dict(layer=LAYER_NAMES[name], mode="training", d=d, T=T), training_step(m, x), True


def measure_threads(seed: int = SEED, points=THREAD_POINTS, repeats: int = THREAD_REPEATS) -> pd.DataFrame:
    """Median wall-clock time with one and with two torch threads: a plain linear map (the gauge: the most parallel
    work there is), attention and the LSTM, forward and training, at each ``(d, T)`` of ``points``.

    One- and two-thread calls alternate, and a timing during which other programs took more
    than ``QUIET_SHARE`` of the machine is taken again (up to ``QUIET_TRIES`` times, the quietest
    kept; ``others_share`` records it): :func:`~seqlab.analysis.timing.one_and_two_threads`.
    Meant for the reference.
    """
    torch.manual_seed(seed)
    return thread_scaling(_thread_cases(points), repeats, THREAD_MIN_S, QUIET_SHARE, QUIET_TRIES)


def measure_rounds(rounds: int = ROUNDS, seed: int = SEED) -> dict[str, pd.DataFrame]:
    """The forward and the training grid measured ``rounds`` times over, each round with freshly drawn layers
    (seed ``seed + round``): tables ``grid_rounds`` and ``training_rounds``, each with a ``round`` column."""
    fwd = [measure_grid(seed + r).assign(round=r) for r in range(rounds)]
    trn = [measure_training(seed + r).assign(round=r) for r in range(rounds)]
    return {"grid_rounds": pd.concat(fwd, ignore_index=True), "training_rounds": pd.concat(trn, ignore_index=True)}


def reference_config() -> dict:
    """Every setting the stored reference depends on (a stored set made with others is stale)."""
    return dict(seed=SEED, T_GRID=list(T_GRID), D_GRID=list(D_GRID), TRAIN_T_GRID=list(TRAIN_T_GRID), BATCH=BATCH,
                HEADS=HEADS, REPEATS=REPEATS, ROUNDS=ROUNDS, statistic="median", clock=CLOCK, thread_clock="wall",
                PARTS_T=PARTS_T, THREAD_POINTS=[list(p) for p in THREAD_POINTS], THREAD_REPEATS=THREAD_REPEATS,
                QUIET_SHARE=QUIET_SHARE, QUIET_TRIES=QUIET_TRIES, THREAD_MIN_S=THREAD_MIN_S)


def measure_reference() -> dict[str, pd.DataFrame]:
    """The whole timing reference: the forward and training grids in ``ROUNDS`` rounds, attention's parts and the
    thread scaling."""
    return {**measure_rounds(), "parts": attention_parts(SEED), "threads": measure_threads(SEED)}


def cost_reference():
    """The stored §14.55 timing reference (a :class:`~seqlab.experiments.timing.TimingReference`).

    Tables ``grid_rounds``, ``training_rounds``, ``parts`` and ``threads`` as stored, and ``grid``
    and ``training`` derived from the rounds: each point's median over rounds, with the ratio's
    range (``ratio_attention_to_lstm_lo`` / ``_hi``, ``train_ratio_attention_to_lstm_lo`` / ``_hi``).
    ``machine_line()`` says where it was measured. Loading is deterministic, so every page that
    quotes §14.55 reads these numbers; ``HEAVY_EVAL=1`` measures them again (on a quiet machine).
    """
    from dataclasses import replace

    from ..experiments.timing import reference

    ref = reference(REFERENCE, measure_reference, reference_config())
    derived = {"grid": over_rounds(ref["grid_rounds"], "ratio_attention_to_lstm"),
               "training": over_rounds(ref["training_rounds"], "train_ratio_attention_to_lstm")}
    return replace(ref, tables={**ref.tables, **derived})


def measure_here(seed: int = SEED, d: int = HERE_D, lengths=HERE_T, repeats: int = HERE_REPEATS) -> pd.DataFrame:
    """A quick forward timing on the machine running this, at one width: attention and LSTM, medians, one thread."""
    def pair(width):
        return {k: m for k, m in layers(width).items() if k != "rnn"}

    here = forward_grid(pair, lengths, (d,), BATCH, repeats, seed, clock=CLOCK)
    here["ratio_attention_to_lstm"] = here.attention_ms / here.lstm_ms
    return here


def here_beside_reference(here: pd.DataFrame, grid: pd.DataFrame) -> pd.DataFrame:
    """The quick measurement's ratios beside the reference's at the same (T, d)."""
    ref = grid.set_index(["T", "d"]).ratio_attention_to_lstm
    out = here[["T", "d", "ratio_attention_to_lstm"]].rename(columns={"ratio_attention_to_lstm": "here_ratio"})
    out["reference_ratio"] = [ref.get((T, d), np.nan) for T, d in zip(out["T"], out.d)]
    return out


def measure_memory(mem_T=MEM_T, mem_d=MEM_D) -> pd.DataFrame:
    """Peak memory of one forward pass without gradients: attention (explicit and fused) and recurrent layers."""
    rows = []
    with single_threaded():
        for d in mem_d:
            recurrent = {"RNN": nn.RNN(d, d, batch_first=True).eval(),
                         "LSTM": nn.LSTM(d, d, batch_first=True).eval()}
            for T in mem_T:
                x = torch.randn(1, T, d)
                for fused in (False, True):
                    m = MultiHeadAttention(d, HEADS, fused=fused).eval()
                    rows.append(dict(T=T, d=d, path="fused" if fused else "explicit", peak_mb=forward_peak_mb(m, x),
                                     weights_matrix_mb=HEADS * T * T * 4 / 2 ** 20))
                for name, module in recurrent.items():
                    rows.append(dict(T=T, d=d, path=name, peak_mb=forward_peak_mb(module, x), weights_matrix_mb=0.0))
    return pd.DataFrame(rows)


# --- derived tables ----------------------------------------------------------------------------------------------------

def crossovers(grid: pd.DataFrame, training: pd.DataFrame) -> pd.DataFrame:
    """Per width: the measured crossover T*, forward and training, and the FLOP crossover 2d.

    T* is the last length at which attention's time rises above the LSTM's: beyond it
    attention is the dearer layer at every length measured. NaN: attention was still the
    cheaper layer at the longest length. Where the tables carry the rounds' range of the ratio
    (``*_lo``, ``*_hi``), ``*_T_lo`` and ``*_T_hi`` are the crossovers of the highest and of the
    lowest round at each length: a band that holds every round's crossover (NaN in ``*_T_hi``:
    in some round attention stayed the cheaper layer at the longest length).
    """
    rows = []
    for d in sorted(grid.d.unique()):
        row = dict(d=int(d))
        for name, frame, col in (("measured", grid, "ratio_attention_to_lstm"),
                                 ("training", training, "train_ratio_attention_to_lstm")):
            f = frame[frame.d == d].sort_values("T")
            row[f"{name}_T_star"] = crossover(f["T"], f[col], last=True)
            if f"{col}_lo" in f:
                row[f"{name}_T_lo"] = crossover(f["T"], f[f"{col}_hi"], last=True)
                row[f"{name}_T_hi"] = crossover(f["T"], f[f"{col}_lo"], last=True)
        rows.append(dict(row, flop_T_star=flop_crossover(int(d))))
    out = pd.DataFrame(rows)
    return out.astype({c: float for c in out.columns if c.endswith(("_T_star", "_T_lo", "_T_hi"))})


def equal_flops(grid: pd.DataFrame) -> pd.DataFrame:
    """The grid rows at T = 2d, where attention and the LSTM do the same FLOPs: time ratio = rate ratio."""
    rows = grid[grid["T"] == 2 * grid.d]
    cols = ["T", "d", "attention_gflops", "lstm_gflops", "ratio_attention_to_lstm"]
    cols += [c for c in ("ratio_attention_to_lstm_lo", "ratio_attention_to_lstm_hi") if c in rows]
    return rows[cols].reset_index(drop=True)


def round_spread(*rounds: pd.DataFrame) -> float:
    """How far one timing strays on the reference machine: over the grids measured in rounds (``grid_rounds``,
    ``training_rounds``), the largest factor between the slowest and the fastest round of one layer's time at one
    point. A gap between two timings taken once each that is smaller than this is one a single timing cannot carry."""
    worst = 1.0
    for frame in rounds:
        by = frame.groupby(["T", "d"])[[c for c in frame.columns if c.endswith("_ms")]]
        worst = max(worst, float((by.max() / by.min()).to_numpy().max()))
    return worst


def thread_summary(threads: pd.DataFrame) -> pd.DataFrame:
    """Median speed-up from a second thread per layer and pass."""
    return (threads.groupby(["layer", "mode"], sort=False).speedup.agg(["median", "min", "max"])
            .rename(columns={"median": "median_speedup", "min": "min_speedup", "max": "max_speedup"})
            .reset_index())


SEQUENTIAL_STEPS = pd.DataFrame([
    dict(model="self-attention", flops="8Td² + 4T²d", sequential_steps="O(1)", max_path_length="O(1)",
         memory="O(T²) weights (explicit) / O(T) (fused)"),
    dict(model="RNN", flops="4Td²", sequential_steps="O(T)", max_path_length="O(T)", memory="O(Td)"),
    dict(model="LSTM", flops="16Td²", sequential_steps="O(T)", max_path_length="O(T)", memory="O(Td)"),
])


def claims_for(ref, memory: pd.DataFrame, here: pd.DataFrame) -> list:
    """Every claim §14.55 makes, from the reference tables, the memory measurement and the quick one here."""
    grid, training, parts, threads = ref["grid"], ref["training"], ref["parts"], ref["threads"]
    cross, spread = crossovers(grid, training), round_spread(ref["grid_rounds"], ref["training_rounds"])
    return [*crossover_claims(cross, ROUNDS), *equal_work_claims(equal_flops(grid)), *parts_claims(parts, spread),
            *score_claims(parts, spread), *growth_claims(grid), *verdict_claims(cross, parts, grid, spread),
            *thread_claims(threads), *memory_claims(memory), *here_claims(here, grid)]


# --- figures -----------------------------------------------------------------------------------------------------------

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

    def measured(frame, col):
        # the lowest and highest round's ratio where the frame has rounds: the band drawn under the line
        keep = ["T", "d", col] + [c for c in (f"{col}_lo", f"{col}_hi") if c in frame]
        return frame[keep].rename(columns={col: "ratio", f"{col}_lo": "lo", f"{col}_hi": "hi"})

    fwd, trn = measured(grid, "ratio_attention_to_lstm"), measured(training, "train_ratio_attention_to_lstm")
    flop = grid[["T", "d", "flop_ratio_attention_to_lstm"]].rename(columns={"flop_ratio_attention_to_lstm": "ratio"})
    long = pd.concat([fwd.assign(measure="time, forward"), trn.assign(measure="time, training step"),
                      flop.assign(measure="FLOPs")], ignore_index=True).sort_values(["d", "measure", "T"])
    long["d"] = _panel(long.d)
    band = ("lo", "hi") if "lo" in long else None
    return line_pair(long, "T", "ratio", "measure", facet="d", points=True, log_x=True, log_y=True, hline=1.0,
                     band=band, title="Attention / LSTM: measured time ratio against the FLOP ratio",
                     subtitle=("Median of the rounds, shaded from the lowest to the highest; " if band else "")
                     + "above the dashed line attention is the dearer layer; the FLOP ratio crosses it at T = 2d",
                     xlab="Sequence length T (log scale)", ylab="attention / LSTM (log scale)",
                     colors={"time, forward": "#7FB069", "time, training step": "#3B7DD8", "FLOPs": "#737373"})


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
              "score_cost_split": score_cost_split(parts), "here_beside_reference": here_beside_reference(here, grid),
              "timing_machines": machine_table(ref, here=True)}
    notes = [provenance(f"timing_{REFERENCE}", heavy="measured now"), *claims_for(ref, memory, here)]
    return tables, figs, notes
