"""§14.50.2 Causal masking."""
from __future__ import annotations

import pandas as pd
import torch

from ..nn.attention import causal_mask, scaled_dot_product_attention
from .base import section


@section("14.50.2", "Causal masking")
def run(ctx):
    torch.manual_seed(ctx.seed(67))
    T, d = 6, 16
    X = torch.randn(1, T, d)
    _, w = scaled_dot_product_attention(X, X, X, causal_mask(T))
    W = w[0]
    table = pd.DataFrame(W.numpy(), columns=[f"k{j}" for j in range(1, T + 1)])
    table.insert(0, "query", range(1, T + 1))
    upper = torch.triu(W, diagonal=1)
    fused, _ = scaled_dot_product_attention(X, X, X, is_causal=True, fused=True)
    explicit, _ = scaled_dot_product_attention(X, X, X, is_causal=True)
    # what goes wrong when the mask is applied after the softmax instead of before
    post = torch.softmax(X @ X.transpose(1, 2) / d ** 0.5, dim=-1)[0] * causal_mask(T)
    checks = pd.DataFrame([dict(max_above_diagonal=upper.abs().max().item(),
                                row_sums_min=W.sum(-1).min().item(), row_sums_max=W.sum(-1).max().item(),
                                fused_vs_explicit_max_abs=(fused - explicit).abs().max().item(),
                                mask_after_softmax_row_sum_min=post.sum(-1).min().item())])
    notes = ["The strict upper triangle is exactly 0 (masked with -inf before the softmax); every row sums to 1.",
             f"Zeroing the weights after the softmax instead leaves rows summing to as little as "
             f"{checks.mask_after_softmax_row_sum_min[0]:.3f}."]
    return {"causal_weights": table, "causal_checks": checks}, [], notes
