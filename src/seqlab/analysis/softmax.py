"""Softmax saturation: logit spread, attention entropy and the gradient that survives (§14.50.1)."""
from __future__ import annotations

import math

import torch

__all__ = ["logit_spread", "attention_entropy", "attention_saturation", "entropy_surface"]


def logit_spread(d_k: int, n: int = 4000, scaled: bool = False, generator: torch.Generator | None = None) -> float:
    """Sample standard deviation of q . k (divided by sqrt(d_k) if ``scaled``) for q, k ~ N(0, I).

    Unscaled it grows like sqrt(d_k); scaled it stays near 1, which is why attention divides by sqrt(d_k).

    Args:
        d_k: the vectors' width.
        n: pairs drawn.
        scaled: divide each product by sqrt(d_k).
        generator: draws q (n, d_k), then k (default: torch's global generator).

    Returns:
        The standard deviation.

    Example:
        >>> import torch
        >>> round(logit_spread(64, generator=torch.Generator().manual_seed(0)))
        8
        >>> round(logit_spread(64, scaled=True, generator=torch.Generator().manual_seed(0)))
        1
    """
    q = torch.randn(n, d_k, generator=generator)
    k = torch.randn(n, d_k, generator=generator)
    s = (q * k).sum(dim=1)
    if scaled:
        s = s / math.sqrt(d_k)
    return s.std().item()


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Mean over queries of H(alpha_i) = -sum_j alpha_ij log alpha_ij (nats).

    Args:
        weights: attention weights (..., T_q, T_k), each row summing to 1.

    Returns:
        A 0-d tensor, log(T_k) for uniform rows and 0 for one-hot rows.

    Example:
        >>> import torch
        >>> attention_entropy(torch.full((1, 4, 4), 0.25))  # log 4
        tensor(1.3863)
    """
    return -(weights * torch.log(weights + 1e-12)).sum(dim=-1).mean()


def attention_saturation(d_k: int, T: int = 32, scaled: bool = True, seed: int = 63) -> dict[str, float]:
    """Saturation of softmax(Q K^T / tau) for random Q, K, tau = sqrt(d_k) or 1.

    Reports two gradients with respect to Q:

    * ``gradient_norm``: of sum(alpha), the chapter's probe. Each softmax row sums
      to 1, so this loss is constant and its true gradient is exactly zero; what
      it returns is floating-point rounding, not a property of the softmax.
    * ``logit_gradient_norm``: of sum(alpha * G) for a fixed random G (drawn after
      Q and K), taken with respect to the logits. It is ||J^T G|| with the softmax
      Jacobian J = diag(alpha) - alpha alpha^T, so it isolates saturation.
    * ``query_gradient_norm``: the same loss with respect to Q. It also carries the
      factor K / tau, whose size grows like sqrt(d_k) when tau = 1, so it mixes
      saturation with the growth of the logits.

    and ``max_attention_weight`` and ``attention_entropy`` (nats) of the weights.

    Args:
        d_k: the queries' and keys' width.
        T: queries and keys.
        scaled: tau = sqrt(d_k) (``True``) or 1.
        seed: seeds torch's global generator before Q, K and G are drawn.

    Returns:
        A dict of the five numbers.

    Example:
        >>> scaled, unscaled = attention_saturation(64, T=8), attention_saturation(64, T=8, scaled=False)
        >>> round(unscaled["max_attention_weight"], 2)  # saturated: one key takes all the weight
        1.0
        >>> unscaled["logit_gradient_norm"] < scaled["logit_gradient_norm"]  # and little gradient gets through
        True
    """
    torch.manual_seed(seed)
    Q = torch.randn(1, T, d_k, requires_grad=True)
    K = torch.randn(1, T, d_k)
    G = torch.randn(1, T, T)
    tau = math.sqrt(d_k) if scaled else 1.0

    def logits():
        return torch.bmm(Q, K.transpose(1, 2)) / tau

    a = torch.softmax(logits(), dim=-1)
    a.sum().backward()
    sum_loss_grad = Q.grad.norm().item()  # the gradient of sum(softmax), which the row sums make zero
    Q.grad = None
    s = logits()
    s.retain_grad()
    (torch.softmax(s, dim=-1) * G).sum().backward()
    with torch.no_grad():
        return {
            "gradient_norm": sum_loss_grad,
            "logit_gradient_norm": s.grad.norm().item(),
            "query_gradient_norm": Q.grad.norm().item(),
            "max_attention_weight": a.max().item(),
            "attention_entropy": attention_entropy(a).item(),
        }


def entropy_surface(dk_grid, divisor_grid, T: int = 32, seed: int = 65) -> torch.Tensor:
    """Mean attention entropy of softmax(Q K^T / tau) over a grid: result[i, j] for divisor_grid[i], dk_grid[j].

    Q and K are redrawn from ``seed`` for every d_k (as the chapter does), so each
    column differs only in the divisor.

    Args:
        dk_grid: the widths d_k (columns).
        divisor_grid: the divisors tau (rows).
        T: queries and keys.
        seed: seeds torch's global generator for each d_k.

    Returns:
        A tensor of shape (len(divisor_grid), len(dk_grid)).

    Example:
        >>> surface = entropy_surface([4, 64], [1.0, 8.0], T=8)
        >>> surface.shape, bool(surface[1, 1] > surface[0, 1])  # a larger divisor flattens the weights
        (torch.Size([2, 2]), True)
    """
    out = torch.empty(len(divisor_grid), len(dk_grid))
    for j, dk in enumerate(dk_grid):
        torch.manual_seed(seed)
        Q = torch.randn(1, T, int(dk))
        K = torch.randn(1, T, int(dk))
        logits = torch.bmm(Q, K.transpose(1, 2))
        for i, tau in enumerate(divisor_grid):
            out[i, j] = attention_entropy(torch.softmax(logits / float(tau), dim=-1))
    return out
