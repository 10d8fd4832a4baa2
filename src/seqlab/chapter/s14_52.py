"""§14.52 Positional encoding: permutation equivariance, sinusoids, rotation by offset, RoPE."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..nn.multihead import MultiHeadAttention
from ..nn.positional import RotaryEmbedding, sinusoidal_encoding
from .base import section


def rotation_error(pe: torch.Tensor, k: int, n_pos: int = 60) -> float:
    """max |PE[pos+k, 2j] - (PE[pos, 2j] cos th_j + PE[pos, 2j+1] sin th_j)| over pairs j, th_j = k / 10000^{2j/d}.

    Evaluated in float64 from the float32 table, as the chapter's R code does.
    """
    d = pe.size(1)
    P = pe.double()
    errs = []
    for j in range(d // 2):
        th = k / (10000 ** ((2 * j) / d))
        pred = P[:n_pos, 2 * j] * math.cos(th) + P[:n_pos, 2 * j + 1] * math.sin(th)
        errs.append((pred - P[k:n_pos + k, 2 * j]).abs().max().item())
    return max(errs)


@section("14.52", "Positional encoding")
def run(ctx):
    torch.manual_seed(ctx.seed(81))
    mh = MultiHeadAttention(32, 4)
    X = torch.randn(1, 8, 32)
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(ctx.seed(81)))
    with torch.no_grad():
        out_then_perm = mh(X)[0][0, perm]  # P . Attention(X)
        perm_then_out = mh(X[:, perm])[0][0]  # Attention(PX)
    equiv = pd.DataFrame([dict(max_abs_difference=(out_then_perm - perm_then_out).abs().max().item(),
                               permutation=" ".join(str(int(i) + 1) for i in perm),
                               conclusion="Attention(PX) = P.Attention(X): the operation cannot see order")])

    PE = sinusoidal_encoding(80, 64)
    rot = pd.DataFrame([dict(max_rotation_error=float(rotation_error(PE, 7)), offset=7,
                             interpretation="PE[pos+k] = R(k) PE[pos], a fixed rotation per frequency pair")])

    # RoPE: q.k after rotation depends only on the offset m - n
    rope = RotaryEmbedding(16)
    q, k = torch.randn(1, 16), torch.randn(1, 16)
    pairs = [(m, n) for m, n in ((3, 0), (10, 7), (50, 47), (0, 5), (20, 25))]
    rope_rows = []
    for m, n in pairs:
        dot = (rope(q, m) * rope(k, n)).sum().item()
        rope_rows.append(dict(query_position=m, key_position=n, offset=m - n, dot=dot))
    rope_tbl = pd.DataFrame(rope_rows)
    spread = rope_tbl.groupby("offset").dot.agg(lambda s: s.max() - s.min()).max()
    heat = pd.DataFrame([dict(pos=p + 1, dim=i + 1, v=float(PE[p, i])) for p in range(80) for i in range(64)])
    notes = [
        "The permutation is drawn with torch.randperm (the chapter uses R's sample()); the difference is float "
        "rounding of the same order as the chapter's 8.94e-08, never a structural error.",
        f"RoPE: the rotated dot product depends only on the offset; the same offset at different absolute "
        f"positions agrees to {spread:.2g}.",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import heatmap_pair, surface_figure

        gg, fig = heatmap_pair(heat, "dim", "pos", "v", diverging=True, title="Sinusoidal positional encoding",
                               subtitle="Low dimensions oscillate fast, high dimensions slowly: a multi-scale code",
                               xlab="Embedding dimension", ylab="Position")
        figs = ctx.save("positional_encoding", gg, fig)
        fig3 = surface_figure([dict(x=np.arange(1, 65), y=np.arange(1, 81), z=PE.numpy(), colorscale="RdBu",
                                    colorbar="PE value")], title="The positional encoding matrix as a surface",
                              xlab="Embedding dimension", ylab="Position", zlab="Encoding value")
        figs += ctx.save_plotly("positional_encoding_3d", fig3)
    return {"permutation_equivariance": equiv, "pe_rotation": rot, "rope_offsets": rope_tbl}, figs, notes
