"""§14.55 Cost: O(T^2 d) attention vs O(T d^2) recurrence, measured: forward, training, threads, memory.

The timings the page interprets are a stored *reference* (``timing_cost``), measured on a
quiet machine with repeats and medians (``HEAVY_EVAL=1`` measures it again); the build adds
a quick measurement on the reader's machine beside it. This module holds the forward and
training grids, the reference, the figures and ``run``. Each other question the section asks
has its own module, with its measurement and the claims that read it: where attention becomes
the dearer layer (``s14_55_crossover``), where its time goes (``s14_55_parts``), a second
thread (``s14_55_threads``), memory (``s14_55_memory``) and the measurement here
(``s14_55_here``). The page imports all of them from here, and the settings
(``s14_55_settings``) too.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.complexity import attention_flops, recurrent_flops
from ..analysis.timing import (
    forward_grid,
    over_rounds,
    score_cost_fit as score_cost_fit,  # the page fits the line itself
    score_cost_split,
    training_grid,
)
from ._util import machine_table, provenance
from .base import section
from .s14_55_crossover import (
    crossover_claims,
    crossovers,
    equal_flops,
    equal_work_claims,
    growth_claims,
    round_spread,
    verdict_claims,
)
from .s14_55_here import here_beside_reference, here_claims, measure_here
from .s14_55_memory import measure_memory, memory_claims
from .s14_55_parts import attention_parts, parts_claims, score_claims
from .s14_55_settings import (  # the section's settings; the page reads them from here
    BATCH,
    CLOCK,
    D_GRID,
    GAUGE as GAUGE,
    HEADS,
    HERE_D as HERE_D,
    HERE_REPEATS as HERE_REPEATS,
    HERE_T as HERE_T,
    LAYER_NAMES,
    LEVEL as LEVEL,  # §14.64 reads it from here
    MEM_D as MEM_D,
    MEM_T as MEM_T,
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
    layer_flops,
    layers,
)
from .s14_55_threads import measure_threads, thread_claims, thread_summary


# --- the measurements --------------------------------------------------------------------------------------------------

def measure_grid(seed: int = SEED, repeats: int = REPEATS) -> pd.DataFrame:
    """Median forward time (no gradients) of one layer of each kind over ``T_GRID x D_GRID``, batch ``BATCH``,
    one thread, with the attention/LSTM time and FLOP ratios."""
    df = forward_grid(layers, T_GRID, D_GRID, BATCH, repeats, seed, flops=layer_flops, clock=CLOCK)
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


# --- derived tables ----------------------------------------------------------------------------------------------------

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
