"""§14.55's memory: the peak memory of one forward pass against T, explicit attention (its T x T weights)
against the fused kernel and the recurrent layers, and the claims that read it."""
from __future__ import annotations

import pandas as pd
import torch
import torch.nn as nn

from ..analysis.timing import forward_peak_mb
from ..claims import claim_source, require, verdict
from ..nn.multihead import MultiHeadAttention
from ..threads import single_threaded
from .s14_55_settings import HEADS, MEM_D, MEM_T


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
        verdict("s55_mem_explicit", quadratic, growth=ge, length_ratio=r, squared=r ** 2, T_short=t_lo, T_long=t_hi),
        require("s55_mem_fused_below_weights", peak.loc["fused", t_hi] < weights,
                fused_mb=peak.loc["fused", t_hi], weights_mb=weights),
        verdict("s55_mem_fused", linear, growth=gf, length_ratio=r),
        verdict("s55_mem_verdict", quadratic and linear, explicit_growth=ge, fused_growth=gf, length_ratio=r),
    ]
