"""§14.55 Cost: O(T^2 d) attention vs O(T d^2) recurrence, measured: forward, training, threads, memory."""
from __future__ import annotations

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
    peak_cpu_memory,
    recurrent_flops,
    time_call,
    time_training_step,
)
from ..nn.multihead import MultiHeadAttention
from ..threads import single_threaded, torch_threads
from .base import section

SEED = 97
#: sequence lengths and widths of the forward-pass grid
T_GRID = (16, 32, 64, 128, 256, 512, 1024, 2048)
D_GRID = (32, 64, 128, 256)
#: the training grid (forward + backward) stops earlier: its crossovers lie well below this
TRAIN_T_GRID = (16, 32, 64, 128, 256, 512, 1024)
BATCH = 4
HEADS = 4
REPEATS = 3
#: where the attention layer is taken apart and the recurrent kernels compared
PARTS_T = 256
#: (d, T) points timed with one and with two torch threads
THREAD_POINTS = ((128, 512),)
THREAD_REPEATS = 3
#: a reference speed-up below this means the second core is busy: the layers are then not timed with two threads
FREE_CORE_SPEEDUP = 1.3
#: the thread measurement runs in a child process that is stopped after this many seconds
THREAD_TIMEOUT_S = 25.0
#: lengths and widths of the peak-memory measurement (each point runs the profiler once per layer)
MEM_T = (512, 2048)
MEM_D = (64,)

LAYER_NAMES = {"attention": "self-attention", "rnn": "RNN", "lstm": "LSTM"}


def layers(d: int) -> dict[str, nn.Module]:
    """One layer of each kind at width ``d``: multi-head self-attention (fused kernel), a tanh RNN, an LSTM."""
    return {"attention": MultiHeadAttention(d, HEADS, fused=True), "rnn": nn.RNN(d, d, batch_first=True),
            "lstm": nn.LSTM(d, d, batch_first=True)}


def _flops(T: int, d: int) -> dict[str, int]:
    return {"attention": attention_flops(T, d), "rnn": recurrent_flops(T, d, "rnn"),
            "lstm": recurrent_flops(T, d, "lstm")}


def measure_grid(seed: int = SEED, repeats: int = REPEATS) -> pd.DataFrame:
    """Forward time (no gradients) of one layer of each kind over ``T_GRID x D_GRID``, batch ``BATCH``, one thread."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded():
        for d in D_GRID:
            mods = {k: m.eval() for k, m in layers(d).items()}
            for T in T_GRID:
                x = torch.randn(BATCH, T, d)
                with torch.no_grad():
                    ms = {k: 1e3 * time_call(lambda m=m: m(x), repeats) for k, m in mods.items()}
                fl = _flops(T, d)
                rows.append(dict(T=T, d=d, **{f"{k}_ms": v for k, v in ms.items()},
                                 **{f"{k}_flops": v for k, v in fl.items()},
                                 **{f"{k}_gflops": gflops(BATCH * fl[k], ms[k] / 1e3) for k in mods}))
    df = pd.DataFrame(rows)
    df["ratio_attention_to_lstm"] = df.attention_ms / df.lstm_ms
    df["flop_ratio_attention_to_lstm"] = df.attention_flops / df.lstm_flops
    return df


def measure_training(seed: int = SEED, repeats: int = REPEATS - 1) -> pd.DataFrame:
    """One training step (forward + backward) of each layer over ``TRAIN_T_GRID x D_GRID``, one thread."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded():
        for d in D_GRID:
            mods = layers(d)
            for T in TRAIN_T_GRID:
                x = torch.randn(BATCH, T, d)
                ms = {k: 1e3 * time_training_step(m, x, repeats) for k, m in mods.items()}
                rows.append(dict(T=T, d=d, **{f"{k}_train_ms": v for k, v in ms.items()}))
    df = pd.DataFrame(rows)
    df["train_ratio_attention_to_lstm"] = df.attention_train_ms / df.lstm_train_ms
    df["flop_ratio_attention_to_lstm"] = [attention_flops(T, d) / recurrent_flops(T, d, "lstm")
                                          for T, d in zip(df["T"], df.d)]
    return df


def crossovers(grid: pd.DataFrame, training: pd.DataFrame) -> pd.DataFrame:
    """Per width: where attention's measured time first exceeds the LSTM's, forward and training, and by FLOPs."""
    rows = []
    for d in D_GRID:
        fwd = grid[grid.d == d].sort_values("T")
        trn = training[training.d == d].sort_values("T")
        rows.append(dict(d=d, measured_T_star=crossover(fwd["T"], fwd.ratio_attention_to_lstm),
                         training_T_star=crossover(trn["T"], trn.train_ratio_attention_to_lstm),
                         flop_T_star=flop_crossover(d), note="T* where one attention layer's time first exceeds "
                                                             "one LSTM layer's"))
    return pd.DataFrame(rows)


def equal_flops(grid: pd.DataFrame) -> pd.DataFrame:
    """The grid rows at T = 2d, where attention and the LSTM do the same FLOPs: time ratio = rate ratio."""
    rows = grid[grid["T"] == 2 * grid.d]
    return rows[["T", "d", "attention_gflops", "lstm_gflops", "ratio_attention_to_lstm"]].reset_index(drop=True)


def attention_parts(seed: int = SEED, T: int = PARTS_T, repeats: int = REPEATS) -> pd.DataFrame:
    """Where the time goes at length ``T``: attention's projections vs its T x T core, and the recurrent kernels.

    Rates are achieved GFLOP/s (the formula's FLOPs over the measured time, batch included).
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
            s_proj = time_call(lambda: [p(x) for p in proj], repeats)
            s_core = time_call(lambda: F.scaled_dot_product_attention(q, k, v), repeats)
            s_lstm = time_call(lambda: mods["lstm"](x), repeats)
            with fused_rnn_kernels(False):
                s_lstm_generic = time_call(lambda: mods["lstm"](x), repeats)
            s_rnn = time_call(lambda: mods["rnn"](x), repeats)
            r = dict(T=T, d=d, d_k=d // HEADS,
                     projections_gflops=gflops(BATCH * 8 * T * d * d, s_proj),
                     core_gflops=gflops(BATCH * attention_core_flops(T, d), s_core),
                     core_ns_per_score=1e9 * s_core / (BATCH * HEADS * T * T),
                     lstm_gflops=gflops(BATCH * recurrent_flops(T, d, "lstm"), s_lstm),
                     lstm_generic_gflops=gflops(BATCH * recurrent_flops(T, d, "lstm"), s_lstm_generic),
                     rnn_gflops=gflops(BATCH * recurrent_flops(T, d, "rnn"), s_rnn),
                     lstm_us_per_step=1e6 * s_lstm / T, lstm_generic_us_per_step=1e6 * s_lstm_generic / T,
                     rnn_us_per_step=1e6 * s_rnn / T)
            rows.append(r)
    return pd.DataFrame(rows)


def score_cost_split(parts: pd.DataFrame) -> pd.DataFrame:
    """Cost per attention score as ``a + b d_k`` through the smallest and largest d_k of ``attention_parts``.

    ``a`` (ns) is work per score that does not grow with the dot product's length (softmax,
    kernel overhead); ``fixed_share`` is a's share of the time per score at each d_k.
    """
    lo, hi = parts.loc[parts.d_k.idxmin()], parts.loc[parts.d_k.idxmax()]
    b = (hi.core_ns_per_score - lo.core_ns_per_score) / (hi.d_k - lo.d_k)
    a = lo.core_ns_per_score - b * lo.d_k
    return pd.DataFrame([dict(d_k=int(r.d_k), ns_per_score=r.core_ns_per_score, fixed_ns=a, ns_per_unit_d_k=b,
                              fixed_share=a / r.core_ns_per_score) for r in parts.itertuples()])


def _thread_rows(seed: int, points, repeats: int):
    """The timings of :func:`measure_threads`, one row at a time (a generator, so a stopped run keeps its rows)."""
    torch.manual_seed(seed)

    def both(fn) -> dict[int, float]:
        ms = {}
        for n in (1, 2):
            with torch_threads(n):
                ms[n] = 1e3 * fn()
        return ms

    def row(layer, mode, d, T, ms):
        return dict(layer=layer, mode=mode, d=d, T=T, one_thread_ms=ms[1], two_threads_ms=ms[2])

    for d, T in points:
        x = torch.randn(BATCH, T, d)
        lin = nn.Linear(d, d)
        with torch.no_grad():
            ms = both(lambda: time_call(lambda: lin(x), repeats))
        yield row("linear map (reference)", "forward", d, T, ms)
        if ms[1] / ms[2] < FREE_CORE_SPEEDUP:
            continue
        mods = {k: m for k, m in layers(d).items() if k != "rnn"}
        for mode in ("forward", "training"):
            for name, m in mods.items():
                if mode == "forward":
                    m.eval()
                    with torch.no_grad():
                        ms = both(lambda m=m: time_call(lambda: m(x), repeats))
                else:
                    m.train()
                    ms = both(lambda m=m: time_training_step(m, x, repeats))
                yield row(LAYER_NAMES[name], mode, d, T, ms)
        with torch.no_grad():  # the gauge again: was the core still free while the layers were timed?
            yield row("linear map (reference)", "forward", d, T, both(lambda: time_call(lambda: lin(x), repeats)))


def _thread_worker(args: str) -> None:
    """Entry point of the child process: print each row as one JSON line as soon as it is measured."""
    import json

    for r in _thread_rows(*json.loads(args)):
        print(json.dumps(r), flush=True)


def measure_threads(seed: int = SEED, points=THREAD_POINTS, repeats: int = THREAD_REPEATS,
                    timeout_s: float = THREAD_TIMEOUT_S) -> pd.DataFrame:
    """Attention and LSTM, forward and training, with one and with two torch threads (measured back to back).

    A plain linear map on the same input (the work of attention's projections) is timed
    first and last: the best case for a second thread, and so a gauge of whether a second
    core is free. If it gains less than ``FREE_CORE_SPEEDUP`` the layers are not timed with
    two threads. On a busy core each parallel region waits for a thread that is not
    running; a single two-thread LSTM training step has been seen to take seconds. So the
    measurement runs in a child process that is stopped after ``timeout_s``; the rows
    measured until then are kept, and ``finished`` says whether it completed.
    """
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-c", "import sys; from seqlab.chapter.s14_55 import _thread_worker; "
                                 "_thread_worker(sys.argv[1])", json.dumps([seed, [list(p) for p in points], repeats])]
    try:
        out, finished = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=True).stdout, True
    except subprocess.TimeoutExpired as stopped:
        out, finished = stopped.stdout or "", False
        out = out.decode() if isinstance(out, bytes) else out
    df = pd.DataFrame([json.loads(line) for line in out.splitlines() if line.startswith("{")],
                      columns=["layer", "mode", "d", "T", "one_thread_ms", "two_threads_ms"])
    df["speedup"] = df.one_thread_ms / df.two_threads_ms
    df["finished"] = finished
    return df


def thread_summary(threads: pd.DataFrame) -> pd.DataFrame:
    """Median speed-up from a second thread per layer (NaN where not measured), and whether a second core was free
    (the measurement finished and every timing of the reference, before and after the layers, gained at least
    ``FREE_CORE_SPEEDUP``)."""
    med = threads.groupby("layer", sort=False).speedup.median()
    ref = threads[threads.layer == "linear map (reference)"].speedup
    free = bool(len(ref) and (ref >= FREE_CORE_SPEEDUP).all() and threads.finished.all())
    names = ["linear map (reference)", *LAYER_NAMES.values()]
    return pd.DataFrame([dict(layer=k, median_speedup=float(med.get(k, np.nan)), second_core_free=free)
                         for k in names if k != "RNN"])


def thread_verdict(threads: pd.DataFrame) -> str:
    """What the thread measurement can support, as a clause that completes 'The second core ...'."""
    ref = threads[threads.layer == "linear map (reference)"].speedup.tolist()
    speed = thread_summary(threads).set_index("layer").median_speedup
    a, lstm = speed["self-attention"], speed["LSTM"]
    finished = bool(threads.finished.all()) if len(threads) else False
    if not ref:
        return "could not be tested: the measurement did not finish its first timing within its time limit"
    if ref[0] < FREE_CORE_SPEEDUP:
        return (f"was busy with other work (the reference gained only {ref[0]:.2f}), so the layers were not timed "
                "with two threads: on an occupied core every parallel region waits for a thread that is not "
                "running, and the clock measures the machine's load instead of the layer")
    if not finished:
        return (f"was free at first (the reference gained {ref[0]:.2f}), but the two-thread timings then ran past "
                f"their limit of {THREAD_TIMEOUT_S:.0f} s and were stopped, the sign of a core taken by other work; "
                "the rows that did finish measure that load as much as the layers")
    if min(ref) < FREE_CORE_SPEEDUP:
        return (f"was free at first (the reference gained {ref[0]:.2f}) but busy by the end ({ref[-1]:.2f}), so the "
                "layers' ratios in the table measure the machine's load as much as the layers")
    return (f"stayed free (the reference gained {ref[0]:.2f} before the layers and {ref[-1]:.2f} after), and the "
            f"median speed-ups were {a:.2f} for attention and {lstm:.2f} for the LSTM: attention gained "
            + ("more" if a > lstm else "no more"))


def measure_memory(mem_T=MEM_T, mem_d=MEM_D) -> pd.DataFrame:
    """Peak memory of one forward pass without gradients: attention (explicit and fused) and recurrent layers."""
    with single_threaded():  # the profiler's own threads plus two torch threads crawl on a busy machine
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
    dict(model="self-attention", flops="8 T d^2 + 4 T^2 d", sequential_steps="O(1)", max_path_length="O(1)",
         memory="O(T^2) weights (explicit) / O(T) (fused)"),
    dict(model="RNN", flops="4 T d^2", sequential_steps="O(T)", max_path_length="O(T)", memory="O(T d)"),
    dict(model="LSTM", flops="16 T d^2", sequential_steps="O(T)", max_path_length="O(T)", memory="O(T d)"),
])


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
                     subtitle=f"Batch {BATCH}, one CPU thread; attention's FLOPs grow as T^2 d, the recurrence's as T d^2",
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
    fig = surface_figure([dict(x=list(wide.columns), y=list(wide.index), z=Z, colorscale="RdBu_r", cmid=0.0,
                                colorbar="attention / LSTM", colorbar_ticks=ticks)],
                         title="Measured attention / LSTM time ratio over T and d",
                         subtitle="Log scale; white = equal cost, red = attention dearer, blue = LSTM dearer",
                         xlab="Sequence length T", ylab="Model width d", zlab="attention / LSTM",
                         log_x=True, log_y=True)
    fig.update_layout(scene_zaxis=dict(tickmode="array", tickvals=ticks[0], ticktext=ticks[1]))
    return fig


def _notes(grid, training, cross, parts, threads, memory) -> list[str]:
    fwd, trn = cross.set_index("d").measured_T_star, cross.set_index("d").training_T_star
    p = parts.set_index("d")
    big = memory[(memory["T"] == max(MEM_T)) & (memory.d == min(MEM_D))].set_index("path").peak_mb
    widths = ", ".join(map(str, D_GRID))
    early = bool(((cross.measured_T_star < cross.flop_T_star) & (cross.training_T_star < cross.flop_T_star)).all())

    def fmt(values) -> str:
        return ", ".join("never (within the grid)" if v is None or np.isnan(v) else f"{v:.0f}" for v in values)

    threads_note = f"Threads (table `thread_scaling`): the second core {thread_verdict(threads)}."
    return [
        "FLOPs: one attention layer costs 8 T d^2 + 4 T^2 d, one LSTM layer 16 T d^2; they are equal at T = 2d "
        "(column `flop_T_star`).",
        f"Measured on one thread, batch {BATCH}, attention becomes slower than the LSTM at T* = {fmt(fwd)} (forward) "
        f"and {fmt(trn)} (training step) for d = {widths}"
        + (": earlier than the FLOP crossover in every case, so per FLOP attention is the slower layer, not the "
           "recurrence." if early else "; compare with the FLOP crossover 2d."),
        "At T = 2d, where the FLOPs are equal, the measured time ratio is the ratio of achieved rates: "
        + ", ".join(f"{r:.3g}" for r in equal_flops(grid).ratio_attention_to_lstm) + f" for d = {widths}.",
        f"Why (table `attention_parts`, T = {PARTS_T}): the LSTM runs as one fused oneDNN kernel at "
        f"{p.lstm_gflops.min():.3g}-{p.lstm_gflops.max():.3g} GFLOP/s; on PyTorch's generic step-by-step path it "
        f"reaches {p.lstm_generic_gflops.min():.3g}-{p.lstm_generic_gflops.max():.3g}. Attention's T x T core reaches "
        f"{p.core_gflops.min():.3g}-{p.core_gflops.max():.3g} GFLOP/s, lowest at small d_k, where each of the "
        "B h T^2 scores costs mostly softmax work that the FLOP count leaves out.",
        threads_note,
        "Memory: the explicit path holds h x T x T weights; the fused kernel never materializes them "
        f"(T = {max(MEM_T)}, d = {min(MEM_D)}: {big['explicit']:.0f} MB explicit vs {big['fused']:.1f} MB fused; "
        "the recurrent layers hold O(T d)). Peak memory is one forward pass without gradients, from the profiler's "
        "allocation events.",
        "Timings depend on this machine and on what else runs; ratios measured in one run are what carry over.",
    ]


@section("14.55", "Cost: attention vs recurrence")
def run(ctx):
    seed = ctx.seed(SEED)
    grid = measure_grid(seed)
    training = measure_training(seed)
    cross = crossovers(grid, training)
    parts = attention_parts(seed)
    threads = measure_threads(seed)
    memory = measure_memory()
    figs = []
    if ctx.figures:
        figs = ctx.save("cost_attention_vs_recurrence", *time_figure(grid))
        figs += ctx.save("cost_ratio", *ratio_figure(grid, training))
        figs += ctx.save_plotly("cost_ratio_3d", ratio_surface(grid))
    tables = {"cost_grid": grid, "crossover": cross, "attention_memory": memory, "sequential_steps": SEQUENTIAL_STEPS,
              "training_grid": training, "attention_parts": parts, "thread_scaling": threads,
              "thread_summary": thread_summary(threads), "equal_flops": equal_flops(grid)}
    return tables, figs, _notes(grid, training, cross, parts, threads, memory)
