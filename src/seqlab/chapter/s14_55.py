"""§14.55 Cost: O(T^2 d) attention vs O(T d^2) recurrence, measured."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn as nn

from ..analysis.complexity import attention_flops, crossover, peak_cpu_memory, recurrent_flops, time_call
from ..nn.multihead import MultiHeadAttention
from ..threads import single_threaded
from .base import section

T_GRID = (16, 32, 64, 128, 256, 512, 1024, 2048)
D_GRID = (32, 64, 128, 256)
BATCH = 4


def measure_grid(seed: int, repeats: int = 3) -> pd.DataFrame:
    rows = []
    torch.manual_seed(seed)
    for d in D_GRID:
        attn = MultiHeadAttention(d, 4, fused=True).eval()
        rnn = nn.RNN(d, d, batch_first=True).eval()
        lstm = nn.LSTM(d, d, batch_first=True).eval()
        for T in T_GRID:
            x = torch.randn(BATCH, T, d)
            with torch.no_grad():
                t_attn = time_call(lambda: attn(x), repeats)
                t_rnn = time_call(lambda: rnn(x), repeats)
                t_lstm = time_call(lambda: lstm(x), repeats)
            rows.append(dict(T=T, d=d, attention_ms=1e3 * t_attn, rnn_ms=1e3 * t_rnn, lstm_ms=1e3 * t_lstm,
                             attention_flops=attention_flops(T, d), rnn_flops=recurrent_flops(T, d, "rnn"),
                             lstm_flops=recurrent_flops(T, d, "lstm")))
    df = pd.DataFrame(rows)
    df["ratio_attention_to_lstm"] = df.attention_ms / df.lstm_ms
    df["flop_ratio_attention_to_lstm"] = df.attention_flops / df.lstm_flops
    return df


def measure_memory(mem_T=(256, 1024, 2048)) -> pd.DataFrame:
    """Peak memory of one forward pass without gradients: attention (explicit and fused) and recurrent layers."""
    rows = []
    for d in D_GRID:
        recurrent = {"RNN": nn.RNN(d, d, batch_first=True).eval(), "LSTM": nn.LSTM(d, d, batch_first=True).eval()}
        for T in mem_T:
            x = torch.randn(1, T, d)
            for fused in (False, True):
                m = MultiHeadAttention(d, 4, fused=fused).eval()
                with torch.no_grad():
                    peak = peak_cpu_memory(lambda: m(x))
                rows.append(dict(T=T, d=d, path="fused" if fused else "explicit", peak_mb=peak / 2 ** 20,
                                 weights_matrix_mb=4 * T * T * 4 / 2 ** 20))
            for name, module in recurrent.items():
                with torch.no_grad():
                    peak = peak_cpu_memory(lambda: module(x))
                rows.append(dict(T=T, d=d, path=name, peak_mb=peak / 2 ** 20, weights_matrix_mb=0.0))
    return pd.DataFrame(rows)


def crossovers(grid: pd.DataFrame) -> pd.DataFrame:
    """Per width: the measured T* where attention's time first exceeds the LSTM's, beside the FLOP crossover 2d."""
    rows = []
    for d in D_GRID:
        sub = grid[grid.d == d].sort_values("T")
        rows.append(dict(d=d, measured_T_star=crossover(sub["T"], sub.ratio_attention_to_lstm), flop_T_star=2 * d,
                         note="T* where one attention layer's time first exceeds one LSTM layer's"))
    return pd.DataFrame(rows)


SEQUENTIAL_STEPS = pd.DataFrame([
    dict(model="self-attention", flops="8 T d^2 + 4 T^2 d", sequential_steps="O(1)", max_path_length="O(1)",
         memory="O(T^2) weights (explicit) / O(T) (fused)"),
    dict(model="RNN", flops="4 T d^2", sequential_steps="O(T)", max_path_length="O(T)", memory="O(T d)"),
    dict(model="LSTM", flops="16 T d^2", sequential_steps="O(T)", max_path_length="O(T)", memory="O(T d)"),
])


def _notes(grid, cross, memory) -> list[str]:
    big = grid[(grid["T"] == max(T_GRID))]
    mem = lambda path: memory[(memory["T"] == 2048) & (memory.d == 64) & (memory.path == path)].peak_mb.iloc[0]  # noqa: E731
    return [
        "FLOPs: attention's T^2 d term overtakes its own projections' T d^2 term at T = 2d; against an LSTM "
        "layer (16 T d^2) attention has more FLOPs once 4 T^2 d > 8 T d^2, i.e. T > 2d (column `flop_T_star`).",
        "Wall-clock is not FLOPs: the recurrence runs T dependent steps of small matrix products, while attention "
        f"is a few large ones. Measured on one core, batch {BATCH}: attention is slower than the LSTM from T* = "
        + ", ".join(f"{r.measured_T_star:.0f}" if r.measured_T_star else "never (<= 2048)" for r in cross.itertuples())
        + f" for d = {', '.join(map(str, D_GRID))}.",
        f"At T = {max(T_GRID)} the attention/LSTM time ratio is "
        + ", ".join(f"{r:.2f}" for r in big.ratio_attention_to_lstm) + f" for d = {', '.join(map(str, D_GRID))}.",
        "Memory: the explicit path holds h x T x T weights; the fused kernel never materializes them "
        f"(T = 2048, d = 64: {mem('explicit'):.0f} MB explicit vs {mem('fused'):.1f} MB "
        "fused; the recurrent layers hold O(T d)). Peak memory is one forward pass without gradients, from the "
        "profiler's allocation events.",
        "Timings depend on this machine and on what else runs; the ratios, measured in one run, are what carry over.",
    ]


def _figures(ctx, grid) -> list:
    from ..plotting import line_pair, surface_figure

    long = grid.melt(id_vars=["T", "d"], value_vars=["attention_ms", "rnn_ms", "lstm_ms"], var_name="layer",
                     value_name="ms")
    long["layer"] = long.layer.map({"attention_ms": "self-attention", "rnn_ms": "RNN", "lstm_ms": "LSTM"})
    long["d"] = "d = " + long.d.astype(str)
    gg, fig = line_pair(long, "T", "ms", "layer", facet="d", points=True, log_x=True, log_y=True,
                        title="One layer's forward time: attention vs recurrence",
                        subtitle=f"Batch {BATCH}, one CPU core; attention grows as T^2 d, recurrence as T d^2",
                        xlab="Sequence length T (log scale)", ylab="Milliseconds (log scale)",
                        colors={"self-attention": "#7FB069", "RNN": "#D8433B", "LSTM": "#3B7DD8"})
    figs = ctx.save("cost_attention_vs_recurrence", gg, fig)
    Z = np.log10(grid.pivot(index="d", columns="T", values="ratio_attention_to_lstm").values)
    fig3 = surface_figure([dict(x=list(T_GRID), y=list(D_GRID), z=Z, colorscale="RdBu_r", colorbar="log10 time ratio")],
                          title="Measured attention / LSTM time ratio over T and d (0 = equal cost)",
                          xlab="Sequence length T", ylab="Model width d", zlab="log10(attention / LSTM)",
                          log_x=True, log_y=True)
    return figs + ctx.save_plotly("cost_ratio_3d", fig3)


@section("14.55", "Cost: attention vs recurrence")
def run(ctx):
    with single_threaded():  # one core for every model: compares algorithms, not thread scaling
        grid = measure_grid(ctx.seed(97))
        memory = measure_memory()
    cross = crossovers(grid)
    figs = _figures(ctx, grid) if ctx.figures else []
    tables = {"cost_grid": grid, "crossover": cross, "attention_memory": memory, "sequential_steps": SEQUENTIAL_STEPS}
    return tables, figs, _notes(grid, cross, memory)
