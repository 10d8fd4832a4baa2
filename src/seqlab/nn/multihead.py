"""Multi-head attention with separate W^Q, W^K, W^V, W^O and an optional key-value cache."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import InvalidParameterError, InvalidTypeError, ShapeError
from ._checks import check_broadcast, check_float, check_tensor, check_weights_dtype
from .attention import scaled_dot_product_attention
from .linear import Linear, RowMajorCopy, is_decode_step, row_major_copy, row_major_product
from .positional import RotaryEmbedding

__all__ = ["KVCache", "MultiHeadAttention"]


@dataclass
class KVCache:
    """Keys and values of the positions decoded so far, one entry per layer: the state of incremental decoding.

    Each entry holds tensors of shape (B, h, T_past, d_k). ``length`` is the
    number of cached positions, which is also the absolute position of the next
    token (used by positional encodings). Pass one cache to every call of a
    decoding loop (a model's ``new_cache()`` makes an empty one); each call
    appends its keys and values and attends over all of them.

    Attributes:
        keys: per layer, the cached keys (B, h, T_past, d_k), or ``None`` before that layer's first call.
        values: per layer, the cached values, shaped like the keys.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> attn, cache = MultiHeadAttention(16, num_heads=4), KVCache()
        >>> x = torch.randn(1, 5, 16)
        >>> first, _ = attn(x[:, :3], is_causal=True, cache=cache)
        >>> rest, _ = attn(x[:, 3:], is_causal=True, cache=cache)
        >>> cache.length, torch.allclose(torch.cat([first, rest], 1), attn(x, is_causal=True)[0], atol=1e-6)
        (5, True)
    """

    keys: list[torch.Tensor | None] = field(default_factory=list)
    values: list[torch.Tensor | None] = field(default_factory=list)
    # per layer, (keys, values) buffers with room past the cached positions, or None
    _room: list = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def length(self) -> int:
        """Positions cached by the first layer (before a forward pass, by every layer)."""
        return self.layer_length(0)

    def layer_length(self, layer: int) -> int:
        """Positions cached by layer ``layer`` (0 before its first call)."""
        if layer < len(self.keys) and self.keys[layer] is not None:
            return self.keys[layer].size(-2)
        return 0

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``k`` and ``v`` (B, h, T_new, d_k) to layer ``layer``'s cache; returns all its keys and values.

        Raises :class:`~seqlab.errors.ShapeError` when they differ from the cached ones in more than the positions.
        """
        while len(self.keys) <= layer:
            self.keys.append(None)
            self.values.append(None)
        past = self.keys[layer]
        if past is not None and (past.shape[:-2] != k.shape[:-2] or past.size(-1) != k.size(-1)):
            raise ShapeError(f"the cache of layer {layer} holds keys of shape {tuple(past.shape)}; new keys "
                             f"{tuple(k.shape)} differ in more than the positions (a cache from another batch?)")
        if torch.is_grad_enabled() and (k.requires_grad or v.requires_grad):
            # writing into a buffer would change tensors autograd saved; concatenation keeps them
            if past is not None:
                k = torch.cat((past, k), dim=-2)  # (B, h, T_past + T_new, d_k)
                v = torch.cat((self.values[layer], v), dim=-2)
            self.keys[layer], self.values[layer] = k, v
            return k, v
        return self._append(layer, k, v)

    def _append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # A new tensor per step (torch.cat) costs a fresh allocation, whose pages the system faults in on first
        # touch: at width 384 that made decoding 1.2x slower than transformers'. The keys and values go into
        # buffers that double when full, and the cache holds views of their filled part.
        while len(self._room) <= layer:
            self._room.append(None)
        past, filled, new = self.keys[layer], self.layer_length(layer), k.size(-2)
        room = self._room[layer]
        # the buffers are this cache's own only while its views still start them and end where they were filled
        # (a cache copied from this one's lists writes its own)
        owned = (room is not None and past is not None and past.data_ptr() == room[0].data_ptr()
                 and room[2] == filled and room[0].dtype == k.dtype and room[0].device == k.device)
        if not owned or filled + new > room[0].size(-2):
            size = max(2 * (filled + new), 16)
            kb = k.new_empty((*k.shape[:-2], size, k.size(-1)))  # (B, h, capacity, d_k)
            vb = v.new_empty((*v.shape[:-2], size, v.size(-1)))
            if past is not None:
                kb[..., :filled, :] = past
                vb[..., :filled, :] = self.values[layer]
            room = [kb, vb, filled]
            self._room[layer] = room
        room[0][..., filled:filled + new, :] = k
        room[1][..., filled:filled + new, :] = v
        room[2] = filled + new
        self.keys[layer] = room[0][..., :filled + new, :]  # (B, h, T_past + T_new, d_k), a view
        self.values[layer] = room[1][..., :filled + new, :]
        return self.keys[layer], self.values[layer]


def fused_is_slow(q: torch.Tensor) -> bool:
    """True where the explicit product trains faster than torch's fused kernel: bfloat16 on the CPU, with gradients.

    torch's CPU flash-attention kernel backpropagates bfloat16 several times slower than it does float32 (at the
    chapter's GPT shape, torch 2.13: about 6.8 ms a call against about 1 ms for the explicit product), so
    bfloat16 training on the CPU takes the explicit path; the two compute the same attention.
    """
    return q.device.type == "cpu" and q.dtype == torch.bfloat16 and torch.is_grad_enabled() and q.requires_grad


def _head_norm(x: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    """``norm(x)`` with the gain in x's dtype, so that autocast's half-precision heads take the fused kernel."""
    return F.layer_norm(x, norm.normalized_shape, norm.weight.to(x.dtype), None, norm.eps)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    d_k = d_v = d_model / h, so the projections hold 4 d_model^2 weights (plus
    4 d_model biases when ``bias=True``) whatever the number of heads.

    Args:
        d_model: model width, divisible by ``num_heads``.
        num_heads: number of heads h.
        bias: give the four projections biases.
        dropout: dropout on the attention weights in training, in [0, 1).
        fused: use PyTorch's fused kernel when no weights are asked for.
        rotary: rotate each head's queries and keys by their positions (:class:`RotaryEmbedding`).
        qk_norm: a LayerNorm (learned gain, no bias) on each head's queries and keys before the scores.
        layer_idx: this layer's entry in a :class:`KVCache` shared by a stack of layers.

    Raises:
        InvalidParameterError: a size below 1, ``d_model`` not divisible by ``num_heads``, or ``dropout``
            outside [0, 1).

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> attn = MultiHeadAttention(d_model=16, num_heads=4)
        >>> out, weights = attn(torch.randn(2, 5, 16), is_causal=True, need_weights=True)
        >>> out.shape, weights.shape
        (torch.Size([2, 5, 16]), torch.Size([2, 4, 5, 5]))
        >>> sum(p.numel() for p in attn.parameters()) == 4 * 16 * 16
        True
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        bias: bool = False,
        dropout: float = 0.0,
        fused: bool = True,
        rotary: bool = False,
        qk_norm: bool = False,
        layer_idx: int = 0,
    ):
        super().__init__()
        if d_model < 1 or num_heads < 1:
            raise InvalidParameterError(f"d_model and num_heads must be >= 1, got {d_model}, {num_heads}")
        if d_model % num_heads:
            raise InvalidParameterError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        if not 0.0 <= dropout < 1.0:
            raise InvalidParameterError(f"dropout must lie in [0, 1), got {dropout}")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout, self.fused, self.layer_idx = dropout, fused, layer_idx
        self.Wq = Linear(d_model, d_model, bias=bias)
        self.Wk = Linear(d_model, d_model, bias=bias)
        self.Wv = Linear(d_model, d_model, bias=bias)
        self.Wo = Linear(d_model, d_model, bias=bias)
        self.rope = RotaryEmbedding(self.d_k) if rotary else None
        # QK-norm (Dehghani et al., 2023): a LayerNorm with a learned gain on each head's queries and keys bounds
        # the logits; torch's CPU LayerNorm also runs about twice as fast as its RMSNorm at these shapes
        self.q_norm = nn.LayerNorm(self.d_k, bias=False) if qk_norm else None
        self.k_norm = nn.LayerNorm(self.d_k, bias=False) if qk_norm else None

    def to_torch(self) -> nn.MultiheadAttention:
        """An equivalent ``torch.nn.MultiheadAttention`` (batch_first) holding copies of these weights.

        torch packs W^Q, W^K, W^V into one ``in_proj_weight``; its boolean masks
        use the opposite polarity (True = blocked).
        """
        bias = self.Wq.bias is not None
        ref = nn.MultiheadAttention(self.d_model, self.num_heads, dropout=self.dropout, bias=bias, batch_first=True)
        with torch.no_grad():
            ref.in_proj_weight.copy_(torch.cat([self.Wq.weight, self.Wk.weight, self.Wv.weight]))
            ref.out_proj.weight.copy_(self.Wo.weight)
            if bias:
                ref.in_proj_bias.copy_(torch.cat([self.Wq.bias, self.Wk.bias, self.Wv.bias]))
                ref.out_proj.bias.copy_(self.Wo.bias)
        return ref

    def _check_inputs(self, query, key, value) -> None:
        inputs = (("query", query), ("key", key), ("value", value))
        for name, x in inputs[:1] if key is query and value is query else inputs:
            check_float(name, x)
            if x.dim() != 3 or x.size(-1) != self.d_model:
                raise ShapeError(f"{name} must be (B, T, {self.d_model}), got {tuple(x.shape)}")
            check_weights_dtype(name, x, self.Wq.weight)
        if not query.size(0) == key.size(0) == value.size(0):
            raise ShapeError(f"query, key and value must share the batch size, got "
                             f"{query.size(0)}, {key.size(0)}, {value.size(0)}")
        # the fused kernel would accept this and return attention over neither sequence
        if key.size(1) != value.size(1):
            raise ShapeError(f"key and value must have the same length, got {key.size(1)} and {value.size(1)}")

    def _split(self, z: torch.Tensor) -> torch.Tensor:
        B, T, _ = z.shape
        return z.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    _qkv_by_row: RowMajorCopy | None = None

    def _project_qkv(self, query, key, value):
        if key is query and value is query and is_decode_step(query, self.Wq.weight, stacked=3):
            # a decoding step streams the three weights as one stacked (in, 3 d_model) copy
            w, b = row_major_copy(self, "_qkv_by_row").get([self.Wq.weight, self.Wk.weight, self.Wv.weight],
                                        [self.Wq.bias, self.Wk.bias, self.Wv.bias])
            return row_major_product(query, w, b).chunk(3, dim=-1)
        if key is query and value is query and torch.is_grad_enabled():
            # training self-attention: one product (and one backward) over the stacked weights. Without
            # gradients three products are as fast at every size measured (width 128 and 384, 1 to 1,024 rows,
            # torch 2.13, one thread) and skip copying the stacked weights
            w = torch.cat((self.Wq.weight, self.Wk.weight, self.Wv.weight), dim=0)  # (3d, d)
            b = None if self.Wq.bias is None else torch.cat((self.Wq.bias, self.Wk.bias, self.Wv.bias))
            return F.linear(query, w, b).chunk(3, dim=-1)
        return self.Wq(query), self.Wk(key), self.Wv(value)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        is_causal: bool = False,
        cache: KVCache | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key`` and ``value``.

        Args:
            query: shape (B, T_q, d_model).
            key: shape (B, T_k, d_model) (default: ``query``, self-attention).
            value: shape (B, T_k, d_model) (default: ``key``).
            mask: bool (``True`` = attend) or additive, broadcasting to (B, h, T_q, T_k); a (B, T_q, T_k) mask
                applies to every head.
            is_causal: each query sees only keys at or before its position; with a cache, the new queries
                are aligned to the end of it.
            cache: append this call's keys and values and attend over all of them.
            need_weights: take the explicit path and return the weights.

        Returns:
            ``(output, weights)``, the output of shape (B, T_q, d_model) and the weights of shape (B, h, T_q, T_k),
            or ``None`` unless ``need_weights``.

        Raises:
            ShapeError: inputs that are not (B, T, d_model), differ in batch, or a key and value of different
                lengths.
            InvalidTypeError: non-float inputs, or a cache that is not a :class:`KVCache`.
        """
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value)
        if mask is not None:
            check_tensor("mask", mask)
        if cache is not None and not isinstance(cache, KVCache):
            raise InvalidTypeError(f"cache must be a KVCache, got {type(cache).__name__}")
        q, k, v = self._project_qkv(query, key, value)
        q, k, v = self._split(q), self._split(k), self._split(v)  # (B, h, T, d_k)
        offset = cache.layer_length(self.layer_idx) if cache is not None else 0
        if self.q_norm is not None:
            q, k = _head_norm(q, self.q_norm), _head_norm(k, self.k_norm)
        if self.rope is not None:
            q, k = self.rope.rotate_pair(q, k, offset)
        if cache is not None:
            k, v = cache.update(self.layer_idx, k, v)  # (B, h, T_past + T_q, d_k)
        if mask is not None and mask.dim() == 3:
            check_broadcast("mask", mask.shape, (q.size(0), q.size(-2), k.size(-2)), "(B, T_q, T_k)")
            mask = mask.unsqueeze(1)  # (B, 1, T_q, T_k): same mask for every head
        # a single new query may see every cached key: no mask needed
        causal = is_causal and q.size(-2) > 1
        out, weights = scaled_dot_product_attention(
            q, k, v, mask, is_causal=causal,
            dropout_p=self.dropout if self.training else 0.0,
            fused=self.fused and not need_weights and not fused_is_slow(q), need_weights=need_weights,
        )
        B, _, T_q, _ = out.shape
        merged = out.transpose(1, 2).contiguous().view(B, T_q, self.d_model)  # (B, T_q, d_model)
        return self.Wo(merged), weights
