"""Attention from its equations: alignment scores, masks, scaled dot-product.

Mask polarity (one convention across seqlab, the same as
``torch.nn.functional.scaled_dot_product_attention``): a boolean mask is
``True`` where a query MAY attend to a key. A floating-point mask is added to
the logits (0 to keep, ``-inf`` to block). A query whose every key is blocked
gets an all-zero weight row and a zero output, never NaN, in both paths.
"""
from __future__ import annotations

import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import InvalidParameterError, InvalidTypeError, ShapeError
from ._checks import check_broadcast, check_float, check_tensor, check_weights_dtype

__all__ = [
    "causal_mask",
    "padding_mask",
    "dot_attention",
    "AdditiveAttention",
    "scaled_dot_product_attention",
]


def causal_mask(t_query: int, t_key: int | None = None, device=None) -> torch.Tensor:
    """Boolean causal mask, ``True`` where query ``i`` may attend to key ``j`` (``j <= i``; eq. e_ij <- -inf for j > i).

    With ``t_key > t_query`` (new queries against a key-value cache) the mask is
    aligned bottom-right: query ``i`` sits at absolute position
    ``t_key - t_query + i``. SDPA's ``is_causal`` aligns top-left, which is wrong
    for that case, so seqlab never relies on it when the lengths differ.

    Args:
        t_query: number of queries, >= 1.
        t_key: number of keys, >= ``t_query`` (default: ``t_query``, square self-attention).
        device: where the mask is made (default: the CPU).

    Returns:
        A bool tensor of shape (t_query, t_key).

    Raises:
        InvalidTypeError: a length that is not an integer.
        InvalidParameterError: ``t_query < 1`` or ``t_key < t_query``.

    Example:
        >>> causal_mask(3)
        tensor([[ True, False, False],
                [ True,  True, False],
                [ True,  True,  True]])
        >>> causal_mask(2, 4)  # two new queries after two cached positions
        tensor([[ True,  True,  True, False],
                [ True,  True,  True,  True]])
    """
    t_key = t_query if t_key is None else t_key
    try:
        t_query, t_key = operator.index(t_query), operator.index(t_key)
    except TypeError:
        raise InvalidTypeError(f"causal_mask needs integer lengths, got {t_query!r}, {t_key!r}") from None
    if t_query < 1 or t_key < t_query:
        raise InvalidParameterError(f"causal_mask needs 1 <= t_query <= t_key, got {t_query}, {t_key}")
    offset = t_key - t_query
    q = torch.arange(t_query, device=device).unsqueeze(1) + offset
    k = torch.arange(t_key, device=device).unsqueeze(0)
    return k <= q  # (t_query, t_key)


def padding_mask(lengths: torch.Tensor, t_key: int) -> torch.Tensor:
    """Boolean key mask that hides padding: ``True`` at the first ``lengths[b]`` keys of each sequence ``b``.

    Args:
        lengths: shape (B,), the real length of each sequence, each in ``[0, t_key]``.
        t_key: the padded length.

    Returns:
        A bool tensor of shape (B, 1, 1, t_key), which broadcasts over heads and queries.

    Raises:
        InvalidTypeError: ``lengths`` is not a tensor of lengths.
        ShapeError: ``lengths`` is not 1-D integer.
        InvalidParameterError: a length below 0 or above ``t_key``.

    Example:
        >>> import torch
        >>> padding_mask(torch.tensor([2, 3]), 3)[:, 0, 0]
        tensor([[ True,  True, False],
                [ True,  True,  True]])
    """
    try:
        lengths = torch.as_tensor(lengths)
    except (TypeError, ValueError, RuntimeError):
        raise InvalidTypeError(f"lengths must be a 1-D tensor of lengths, got {type(lengths).__name__}") from None
    if lengths.dim() != 1 or lengths.dtype == torch.bool or lengths.is_complex():
        raise ShapeError(f"lengths must be a 1-D tensor of lengths, got {lengths.dtype} {tuple(lengths.shape)}")
    if (lengths < 0).any() or (lengths > t_key).any():
        raise InvalidParameterError(f"lengths must lie in [0, {t_key}]")
    keep = torch.arange(t_key, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)
    return keep[:, None, None, :]  # (B, 1, 1, T_k)


def dot_attention(s: torch.Tensor, H: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Dot-product alignment e_tj = s_{t-1}^T h_j, softmax, context c_t = sum_j alpha_tj h_j; no parameters.

    Args:
        s: shape (B, d), the decoder state.
        H: shape (B, T, d), the encoder states (T >= 1).

    Returns:
        ``(context, weights)``, the context of shape (B, d) and the weights of shape (B, T), each row summing to 1.

    Raises:
        InvalidTypeError: a non-float tensor, or ``s`` and ``H`` of different dtypes.
        ShapeError: shapes that do not fit (another rank, batch or feature size).

    Example:
        >>> import torch
        >>> H = torch.eye(3).unsqueeze(0)  # three orthogonal encoder states
        >>> context, weights = dot_attention(torch.tensor([[10.0, 0.0, 0.0]]), H)
        >>> weights.argmax(-1), context.shape
        (tensor([0]), torch.Size([1, 3]))
    """
    _check_state_and_keys(s, H)
    if s.size(-1) != H.size(-1):
        raise ShapeError(f"s and H need the same feature size, got s {tuple(s.shape)}, H {tuple(H.shape)}")
    scores = torch.bmm(H, s.unsqueeze(2)).squeeze(2)  # (B, T)
    alpha = scores.softmax(dim=-1)
    context = torch.bmm(alpha.unsqueeze(1), H).squeeze(1)  # (B, d)
    return context, alpha


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) alignment e_tj = v^T tanh(W_s s_{t-1} + W_h h_j), then softmax and the weighted sum.

    Args:
        state_size: width d_s of the decoder state ``s``.
        key_size: width d_h of the encoder states ``H``.
        attn_size: width of the hidden layer inside the score.

    Raises:
        InvalidParameterError: a size below 1.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> attn = AdditiveAttention(state_size=4, key_size=6, attn_size=8)
        >>> context, weights = attn(torch.randn(2, 4), torch.randn(2, 5, 6))
        >>> context.shape, weights.shape
        (torch.Size([2, 6]), torch.Size([2, 5]))
    """

    def __init__(self, state_size: int, key_size: int, attn_size: int):
        super().__init__()
        for name, v in (("state_size", state_size), ("key_size", key_size), ("attn_size", attn_size)):
            if v < 1:
                raise InvalidParameterError(f"{name} must be >= 1, got {v}")
        self.W_s = nn.Linear(state_size, attn_size, bias=False)
        self.W_h = nn.Linear(key_size, attn_size, bias=False)
        self.v = nn.Linear(attn_size, 1, bias=False)

    def forward(self, s: torch.Tensor, H: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``s`` (B, d_s) and ``H`` (B, T, d_h) -> ``(context (B, d_h), weights (B, T))``."""
        _check_state_and_keys(s, H)
        for name, x, layer in (("s", s, self.W_s), ("H", H, self.W_h)):
            if x.size(-1) != layer.in_features:
                raise ShapeError(f"{name} must have last dimension {layer.in_features}, got {tuple(x.shape)}")
            check_weights_dtype(name, x, layer.weight)
        hidden = torch.tanh(self.W_s(s).unsqueeze(1) + self.W_h(H))  # (B, T, attn)
        alpha = self.v(hidden).squeeze(-1).softmax(dim=-1)  # (B, T)
        context = torch.bmm(alpha.unsqueeze(1), H).squeeze(1)  # (B, d_h)
        return context, alpha


def _check_state_and_keys(s, H) -> None:
    check_float("s", s, ndim=2)
    check_float("H", H, ndim=3)
    if s.dtype != H.dtype:
        raise InvalidTypeError(f"s and H must share one dtype, got {s.dtype}, {H.dtype}")
    if s.size(0) != H.size(0) or H.size(1) < 1:
        raise ShapeError(f"need s (B, d) and H (B, T >= 1, d) with one B, got {tuple(s.shape)}, {tuple(H.shape)}")


def _blocked_rows(mask: torch.Tensor | None) -> torch.Tensor | None:
    """``(..., T_q, 1)`` True where a query has no key it may attend to."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return ~mask.any(dim=-1, keepdim=True)
    return torch.isneginf(mask).all(dim=-1, keepdim=True)


def _check_qkv(q, k, v) -> tuple[int, ...]:
    """The shape (..., T_q, T_k) of the scores, after checking that q, k, v make one attention."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_float(name, x, min_ndim=2)
    if not q.dtype == k.dtype == v.dtype:
        raise InvalidTypeError(f"q, k and v must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.size(-1) < 1 or q.size(-1) != k.size(-1):
        raise ShapeError(f"q and k need one last dimension d_k >= 1, got q {tuple(q.shape)}, k {tuple(k.shape)}")
    # the fused kernel accepts T_k != T_v and returns a tensor that is attention over neither
    if k.size(-2) != v.size(-2):
        raise ShapeError(f"k and v must hold the same number of positions, got k {tuple(k.shape)}, v {tuple(v.shape)}")
    if k.size(-2) < 1:
        raise ShapeError(f"attention needs at least one key, got k {tuple(k.shape)}")
    if q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:  # the usual case, and a decoding step's: no broadcast to work out
        return (*q.shape[:-2], q.size(-2), k.size(-2))
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ShapeError(f"the leading dimensions of q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} "
                         "do not broadcast") from None
    return (*batch, q.size(-2), k.size(-2))


def _check_mask(mask: torch.Tensor | None, scores_shape: tuple[int, ...]) -> None:
    if mask is None:
        return
    check_tensor("mask", mask)
    if not (mask.dtype == torch.bool or mask.is_floating_point()):
        raise InvalidTypeError(f"mask must be bool (True = attend) or float (additive), got {mask.dtype}")
    check_broadcast("mask", mask.shape, scores_shape, "the attention scores (..., T_q, T_k)")


def _add_causal(mask: torch.Tensor | None, t_q: int, t_k: int, device) -> torch.Tensor:
    """``mask`` combined with the bottom-right aligned causal mask (bool stays bool, float stays additive)."""
    cm = causal_mask(t_q, t_k, device=device)
    if mask is None:
        return cm
    if mask.dtype == torch.bool:
        return mask & cm
    return mask.masked_fill(~cm, float("-inf"))


def _fused(q, k, v, mask, *, pure_causal: bool, dropout_p: float, scale: float) -> torch.Tensor:
    """PyTorch's fused kernel; without a mask it never materialises the T_q x T_k weights."""
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=scale)
    if mask.is_floating_point() and mask.dtype not in (torch.float32, q.dtype):
        mask = mask.to(q.dtype)  # the kernel takes an additive mask in float32 or q's dtype only
    if pure_causal:  # square causal self-attention: the kernel can skip the masked half
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True, scale=scale)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)


def _explicit(q, k, v, mask, blocked, *, dropout_p: float, scale: float):
    """softmax(Q K^T * scale + mask) V with the weights kept: ``(output, weights)``."""
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale  # (..., T_q, T_k)
    if mask is not None:
        if mask.dtype == torch.bool:
            # an additive mask of the mask's own size is cheaper than masked_fill on every score, and its
            # backward is free; x + 0 and x + (-inf) are exact, so the scores are the same
            mask = torch.zeros(mask.shape, dtype=scores.dtype, device=mask.device).masked_fill_(~mask, float("-inf"))
        scores = scores + mask
    weights = scores.softmax(dim=-1)
    if blocked is not None and bool(blocked.any()):
        weights = weights.masked_fill(blocked, 0.0)
    attn = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    # a float32 mask on half-precision q promotes the weights; the product must be in v's dtype
    return torch.matmul(attn.to(v.dtype), v), weights  # (..., T_q, d_v), (..., T_q, T_k)


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    scale: float | None = None,
    fused: bool = False,
    need_weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V.

    ``fused=False`` computes the weights explicitly and returns them (for
    teaching and plots). ``fused=True`` calls PyTorch's fused kernel, which never
    materialises the T_q x T_k matrix when no mask is given; it returns ``None``
    for the weights. A query with no allowed key gets a zero output either way.

    Args:
        q: shape (..., T_q, d_k), the queries.
        k: shape (..., T_k, d_k), the keys.
        v: shape (..., T_k, d_v), the values; the leading dimensions of q, k, v broadcast.
        mask: bool (``True`` = may attend) or additive float, broadcasting to (..., T_q, T_k) (default: none).
        is_causal: combine ``mask`` with the bottom-right aligned :func:`causal_mask`.
        dropout_p: dropout on the weights, in [0, 1).
        scale: the factor on the scores (default: ``1 / sqrt(d_k)``).
        fused: use PyTorch's fused kernel.
        need_weights: return the weights (explicit path only).

    Returns:
        ``(output, weights)``, the output of shape (..., T_q, d_v) and the weights of shape (..., T_q, T_k), or
        ``None`` for the weights when ``fused`` or not ``need_weights``.

    Raises:
        ShapeError: shapes that do not make one attention (``T_k`` of ``k`` and ``v`` differ, ``d_k`` differs,
            the mask does not broadcast).
        InvalidTypeError: non-tensors, or dtypes other than one floating-point dtype shared by q, k and v.
        InvalidParameterError: ``dropout_p`` outside [0, 1), or a scale that is not a finite number.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> q = torch.randn(1, 3, 8)
        >>> out, weights = scaled_dot_product_attention(q, q, q, is_causal=True)
        >>> out.shape, weights[0, 0]  # the first query sees only itself
        (torch.Size([1, 3, 8]), tensor([1., 0., 0.]))
        >>> fast, none = scaled_dot_product_attention(q, q, q, is_causal=True, fused=True)
        >>> torch.allclose(out, fast, atol=1e-6), none
        (True, None)
    """
    scores_shape = _check_qkv(q, k, v)
    _check_mask(mask, scores_shape)
    if not (isinstance(dropout_p, (int, float)) and 0.0 <= dropout_p < 1.0):
        raise InvalidParameterError(f"dropout_p must lie in [0, 1), got {dropout_p!r}")
    if scale is not None and not (isinstance(scale, (int, float)) and math.isfinite(scale)):
        raise InvalidParameterError(f"scale must be a finite number, got {scale!r}")
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    t_q, t_k = q.size(-2), k.size(-2)
    pure_causal = is_causal and mask is None and t_q == t_k
    if is_causal:
        mask = _add_causal(mask, t_q, t_k, q.device)
    # in square causal attention every query sees itself, so no row is blocked: skipping the check spares a
    # device-to-host sync per call on a GPU (and a graph break under torch.compile)
    blocked = None if pure_causal else _blocked_rows(mask)
    # torch's kernel does not broadcast the batch of an empty result (a zero-sized batch axis, no queries, or
    # d_v = 0): such a result, which costs nothing, is made by the explicit path
    if fused and math.prod(scores_shape) * v.size(-1) > 0:
        out = _fused(q, k, v, mask, pure_causal=pure_causal, dropout_p=dropout_p, scale=scale)
        if blocked is not None and bool(blocked.any()):
            out = out.masked_fill(blocked, 0.0)
        return out, None
    out, weights = _explicit(q, k, v, mask, blocked, dropout_p=dropout_p, scale=scale)
    return out, (weights if need_weights else None)
