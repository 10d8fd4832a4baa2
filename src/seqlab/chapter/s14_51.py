"""§14.51 Multi-head attention: same parameters for any head count, different patterns per head."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import torch

from ..analysis.params import count_parameters, multihead_parameters
from ..nn.multihead import MultiHeadAttention
from .base import section


@section("14.51", "Multi-head attention")
def run(ctx):
    d_model = 256
    heads = pd.DataFrame([dict(n_heads=h, d_per_head=d_model // h,
                               parameters=count_parameters(MultiHeadAttention(d_model, h)),
                               formula_4_d_model_sq=multihead_parameters(d_model),
                               note="identical: 4 * d_model^2 regardless of head count") for h in (1, 2, 4, 8, 16)])

    torch.manual_seed(ctx.seed(71))
    mh = MultiHeadAttention(64, 4)
    X = torch.randn(1, 14, 64)
    with torch.no_grad():
        _, w = mh(X, need_weights=True)  # (1, 4, 14, 14)
    W = w[0].numpy()
    pw = [np.corrcoef(W[i].ravel(), W[j].ravel())[0, 1] for i, j in itertools.combinations(range(4), 2)]
    diversity = pd.DataFrame([dict(mean_pairwise_correlation=float(np.mean(pw)),
                                   max_pairwise_correlation=float(np.max(pw)),
                                   interpretation="low correlation = heads are attending to different things")])
    long = pd.DataFrame([dict(head=f"head {h + 1}", query=q + 1, key=k + 1, w=float(W[h, q, k]))
                         for h in range(4) for q in range(14) for k in range(14)])
    notes = ["Weights are initialized exactly as the chapter's nn_linear layers (Wq, Wk, Wv, Wo drawn in that "
             "order after seed 71), so the head correlations match its printed 0.0618 / 0.202.",
             "These heads are untrained: the differences come from random projections. Whether trained heads "
             "specialize is a separate, empirical question (many can be pruned; Michel et al., 2019)."]
    figs = []
    if ctx.figures:
        from ..plotting import heatmap_pair

        gg, fig = heatmap_pair(long, "key", "query", "w", facet="head", title="Four heads at initialization, same input",
                               subtitle="Each head projects to its own subspace and attends differently",
                               xlab="Key position", ylab="Query position")
        figs = ctx.save("head_patterns", gg, fig)
    return {"head_parameters": heads, "head_diversity": diversity, "head_weights": long}, figs, notes
