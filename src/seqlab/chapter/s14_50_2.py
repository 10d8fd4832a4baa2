"""§14.50.2 Causal masking.

The chapter's settings are module constants; the steps below are a few library calls each.
The weights are pinned to the chapter's printed matrix: keep the seed and the draw order.
"""
from __future__ import annotations

import pandas as pd
import torch

from ..nn.attention import causal_mask, scaled_dot_product_attention
from ..threads import single_threaded
from .base import section

SEED = 67
#: sequence length and model width of the chapter's example (Q = K = V = X)
T = 6
D = 16
#: the position from which the future is overwritten in the leak test (0-based)
CHANGE_FROM = 3


def causal_inputs(seed: int = SEED, T: int = T, d: int = D) -> torch.Tensor:
    """The chapter's input: one sequence ``X`` (1, T, d) drawn after ``torch.manual_seed(seed)``."""
    torch.manual_seed(seed)
    return torch.randn(1, T, d)


def causal_weights(X: torch.Tensor) -> torch.Tensor:
    """Self-attention weights of ``X`` with the causal mask, Q = K = V = X: (T, T)."""
    _, w = scaled_dot_product_attention(X, X, X, causal_mask(X.size(1)))
    return w[0]


def weights_table(W: torch.Tensor) -> pd.DataFrame:
    """One row per query position, one column ``k1..kT`` per key position."""
    T = W.size(0)
    table = pd.DataFrame(W.numpy(), columns=[f"k{j}" for j in range(1, T + 1)])
    table.insert(0, "query", range(1, T + 1))
    return table


def mask_checks(X: torch.Tensor, W: torch.Tensor) -> pd.DataFrame:
    """What the mask guarantees, and what goes wrong if it is applied after the softmax instead of before."""
    T, d = X.size(1), X.size(2)
    fused, _ = scaled_dot_product_attention(X, X, X, is_causal=True, fused=True)
    explicit, _ = scaled_dot_product_attention(X, X, X, is_causal=True)
    post = torch.softmax(X @ X.transpose(1, 2) / d ** 0.5, dim=-1)[0] * causal_mask(T)
    return pd.DataFrame([dict(max_above_diagonal=torch.triu(W, diagonal=1).abs().max().item(),
                              row_sums_min=W.sum(-1).min().item(), row_sums_max=W.sum(-1).max().item(),
                              fused_vs_explicit_max_abs=(fused - explicit).abs().max().item(),
                              mask_after_softmax_row_sum_min=post.sum(-1).min().item())])


def future_leak(X: torch.Tensor, change_from: int = CHANGE_FROM) -> pd.DataFrame:
    """Overwrite every position >= ``change_from`` (X -> -X there, no new random draws) and measure how much the
    outputs at the earlier positions move, with and without the causal mask."""
    X2 = X.clone()
    X2[:, change_from:] = -X2[:, change_from:]
    rows = []
    for masked in (True, False):
        out1, _ = scaled_dot_product_attention(X, X, X, is_causal=masked)
        out2, _ = scaled_dot_product_attention(X2, X2, X2, is_causal=masked)
        rows.append(dict(mask="causal" if masked else "none", changed_from_position=change_from + 1,
                         max_change_before=(out1 - out2)[:, :change_from].abs().max().item()))
    return pd.DataFrame(rows)


@section("14.50.2", "Causal masking")
def run(ctx):
    with single_threaded():  # small tensors: one thread is many times faster than two under load
        X = causal_inputs(ctx.seed(SEED))
        W = causal_weights(X)
        checks = mask_checks(X, W)
        leak = future_leak(X)
        tables = {"causal_weights": weights_table(W), "causal_checks": checks, "future_leak": leak}
        return tables, [], mask_claims(W, checks, leak)


# ----------------------------------------------------------------------------------------------- claims
from ..claims import claim_source, require, verdict


@claim_source
def mask_claims(W: torch.Tensor, checks: pd.DataFrame, leak: pd.DataFrame) -> list:
    """The mask zeroes the future and keeps rows normalised; masking after the softmax does not; no leak."""
    T = W.size(0)
    on_diag = int((W.argmax(-1) == torch.arange(T)).sum())
    c = checks.iloc[0]
    post, fused = float(c.mask_after_softmax_row_sum_min), float(c.fused_vs_explicit_max_abs)
    masked, unmasked = float(leak.max_change_before[0]), float(leak.max_change_before[1])
    diag_lo = float(W.diagonal()[1:].min())
    return [
        require("s502_zero_future", c.max_above_diagonal == 0 and abs(c.row_sums_min - 1) < 1e-6
                and abs(c.row_sums_max - 1) < 1e-6, above=float(c.max_above_diagonal)),
        verdict("s502_diagonal", on_diag == T, rows_on_diagonal=on_diag, rows=T, diagonal_min=diag_lo),
        verdict("s502_post", post < 0.99, post_min=post),
        verdict("s502_fused", fused < 1e-5, fused=fused),
        verdict("s502_no_leak", masked < 1e-6 and unmasked > 1e-3, masked=masked, unmasked=unmasked,
                unchanged=masked == 0),
    ]
