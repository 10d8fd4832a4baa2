"""A GPT's decoding step as one flat function: the arithmetic of ``GPT.forward`` on one new token per row.

A decoding step runs a few dozen small operations per layer. Through the modules, each one also pays for a
module call, input checks and the choice of a product's layout; at width 384 on one thread (torch 2.13) the
same operations took 6.7 ms a token that way and 4.7 ms written out. :class:`GPTDecoder` makes those choices
once per generation and then runs the same operations, on the same tensors, in the same order, so its logits
equal the model's bit for bit (the tests check it).
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules import module as _module

from ..errors import InvalidParameterError
from .linear import Linear, is_decode_step, row_major_copy, row_major_product
from .multihead import KVCache, _head_norm
from .positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from .transformer import GPT

__all__ = ["GPTDecoder"]


class _Product:
    """x W^T + b for one or more stacked :class:`Linear` layers, in the layout their forward takes for a
    decoding step of this many rows: an (in, out) copy, or ``F.linear`` on each layer."""

    def __init__(self, layers: list[Linear], probe: torch.Tensor, owner=None, slot: str = "_by_row"):
        self.layers = layers
        self.by_row = is_decode_step(probe, layers[0].weight, stacked=len(layers))
        self.w = self.b = None
        if self.by_row:
            # the module's own copy, so a later forward reuses it
            copy = row_major_copy(layers[0] if owner is None else owner, slot)
            self.w, self.b = copy.get([m.weight for m in layers], [m.bias for m in layers])

    def __call__(self, x: torch.Tensor):
        if self.by_row:
            y = row_major_product(x, self.w, self.b)
            return y.chunk(len(self.layers), dim=-1) if len(self.layers) > 1 else y
        ys = [F.linear(x, m.weight, m.bias) for m in self.layers]
        return ys if len(ys) > 1 else ys[0]


def _norm(x: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    """``norm(x)`` without the module call (``nn.LayerNorm.forward`` is this one call)."""
    return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)


def _has_hooks(model: nn.Module) -> bool:
    if _module._global_forward_hooks or _module._global_forward_pre_hooks:
        return True
    return any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


class GPTDecoder:
    """One new token per row through a :class:`GPT` with a :class:`KVCache`, without module calls.

    ``decoder(idx, cache)`` returns what ``model(idx, cache=cache)[0]`` returns, the logits (B, 1, vocab),
    and appends to the cache as it would. Build it with :meth:`for_model` after the prompt is encoded, and
    build a new one whenever the weights may have changed (the copies it reads are taken when it is built).

    Example:
        >>> import torch
        >>> from seqlab.nn import GPT, GPTConfig
        >>> _ = torch.manual_seed(0)
        >>> model = GPT(GPTConfig(vocab_size=11, block_size=16, num_layers=2, num_heads=2, d_model=16)).eval()
        >>> ids = torch.randint(0, 11, (1, 6))
        >>> with torch.no_grad():
        ...     a, b = model.new_cache(), model.new_cache()
        ...     _, _ = model(ids[:, :5], cache=a), model(ids[:, :5], cache=b)
        ...     step = GPTDecoder.for_model(model, batch_size=1)
        ...     torch.equal(step(ids[:, 5:], a), model(ids[:, 5:], cache=b)[0])
        True
    """

    def __init__(self, model: GPT, batch_size: int):
        c = model.config
        weight = model.tok_emb.weight
        probe = weight.new_empty((batch_size, 1, c.d_model))  # (B, 1, d): the rows each step multiplies
        self.model, self.batch_size, self.block_size = model, batch_size, c.block_size
        self.blocks = []
        for block in model.blocks:
            attn, ff = block.self_attn, block.ff
            self.blocks.append((
                block.norm1, attn, _Product([attn.Wq, attn.Wk, attn.Wv], probe, attn, "_qkv_by_row"),
                _Product([attn.Wo], probe), block.norm2, _Product([ff.linear1], probe), ff.act,
                _Product([ff.linear2], probe.new_empty((batch_size, 1, ff.linear1.out_features))),
            ))
        self.head = _Product([model.lm_head], probe)

    @classmethod
    def for_model(cls, model, batch_size: int) -> GPTDecoder | None:
        """A decoder for ``model``'s steps of ``batch_size`` rows, or ``None`` where the model's own forward
        must run: not a :class:`GPT`, gradients or autocast on, forward hooks that a flat step would skip,
        attention built without the fused kernel, or a model in training mode (dropout)."""
        if not isinstance(model, GPT) or model.training or torch.is_grad_enabled() or _has_hooks(model):
            return None
        if torch.is_autocast_enabled(model.tok_emb.weight.device.type):
            return None
        if not all(block.self_attn.fused and block.norm_first for block in model.blocks):
            return None
        return cls(model, batch_size)

    def _embed(self, idx: torch.Tensor, offset: int) -> torch.Tensor:
        model = self.model
        x = F.embedding(idx, model.tok_emb.weight)  # (B, 1, d)
        pos = model.pos
        if isinstance(pos, LearnedPositionalEncoding):
            return x + F.embedding(torch.arange(offset, offset + 1, device=x.device), pos.embedding.weight)
        if isinstance(pos, SinusoidalPositionalEncoding):
            return x + pos.pe[offset:offset + 1].to(x.dtype)
        return x

    def __call__(self, idx: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """``idx`` (B, 1), the newest token of each row -> logits (B, 1, vocab); the cache grows by one."""
        B, T = idx.shape
        offset = cache.length
        if B != self.batch_size or T != 1 or offset + 1 > self.block_size:
            raise InvalidParameterError(f"a decoding step takes ({self.batch_size}, 1) ids within block_size="
                                        f"{self.block_size}; got {tuple(idx.shape)} after {offset} positions")
        x = self._embed(idx, offset)
        for norm1, attn, qkv, out, norm2, up, act, down in self.blocks:
            h, d_k = attn.num_heads, attn.d_k
            q, k, v = qkv(_norm(x, norm1))
            q = q.view(B, 1, h, d_k).transpose(1, 2)  # (B, h, 1, d_k)
            k = k.view(B, 1, h, d_k).transpose(1, 2)
            v = v.view(B, 1, h, d_k).transpose(1, 2)
            if attn.q_norm is not None:
                q, k = _head_norm(q, attn.q_norm), _head_norm(k, attn.k_norm)
            if attn.rope is not None:
                q, k = attn.rope.rotate_pair(q, k, offset)
            k, v = cache.update(attn.layer_idx, k, v)  # (B, h, T_past + 1, d_k)
            o = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, scale=1.0 / math.sqrt(d_k))
            x = x + out(o.transpose(1, 2).contiguous().view(B, 1, attn.d_model))  # (B, 1, d)
            x = x + down(act(up(_norm(x, norm2))))
        return self.head(_norm(x, self.model.ln_f))  # (B, 1, vocab)

