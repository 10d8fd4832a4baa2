"""Transformer blocks (pre-LN and post-LN), the three attention patterns, and a small GPT."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import InvalidParameterError, InvalidTypeError, ShapeError
from ._checks import check_float, check_lm_inputs, check_weights_dtype
from .linear import Linear
from .multihead import KVCache, MultiHeadAttention
from .positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding

__all__ = [
    "FeedForward",
    "EncoderLayer",
    "DecoderLayer",
    "GPTConfig",
    "GPT",
    "config_record",
]

def relu_squared(x: torch.Tensor) -> torch.Tensor:
    """ReLU(x)^2: the feed-forward activation of the modded-nanoGPT speedruns (So et al., 2021, "Primer")."""
    return F.relu(x).square()


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "relu2": relu_squared}


class FeedForward(nn.Module):
    """Position-wise FFN(x) = W_2 act(W_1 x + b_1) + b_2, applied to every position alike.

    Args:
        d_model: input and output width.
        d_ff: hidden width.
        dropout: dropout on the hidden layer in training.
        activation: ``"relu"``, ``"gelu"`` or ``"relu2"`` (ReLU squared).
        bias: give both linear maps biases.

    Raises:
        InvalidParameterError: another activation; in forward, an input that does not end in ``d_model``.

    Example:
        >>> import torch
        >>> FeedForward(d_model=8, d_ff=32)(torch.zeros(2, 3, 8)).shape
        torch.Size([2, 3, 8])
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu", bias: bool = True):
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise InvalidParameterError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}")
        self.linear1 = Linear(d_model, d_ff, bias=bias)
        self.linear2 = Linear(d_ff, d_model, bias=bias)
        self.act = _ACTIVATIONS[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_float("x", x, min_ndim=1)
        if x.size(-1) != self.linear1.in_features:
            raise ShapeError(f"x must end in d_model={self.linear1.in_features}, got shape {tuple(x.shape)}")
        check_weights_dtype("x", x, self.linear1.weight)
        return self.linear2(_drop(self.dropout, self.act(self.linear1(x))))


def _drop(dropout: nn.Dropout, x: torch.Tensor) -> torch.Tensor:
    """``dropout(x)``, skipping the module call where it is the identity (in eval, or at p = 0): a decoding step
    makes about twenty such calls a token, a few percent of a step at width 384."""
    return dropout(x) if dropout.training and dropout.p > 0 else x


def _check_sequence(name: str, x, d_model: int, weight: torch.Tensor) -> None:
    """Checked before the first LayerNorm, which would fail with torch's message rather than seqlab's."""
    check_float(name, x)
    if x.dim() != 3 or x.size(-1) != d_model:
        raise ShapeError(f"{name} must be (B, T, {d_model}), got {tuple(x.shape)}")
    check_weights_dtype(name, x, weight)


def _check_block_args(d_ff: int, dropout: float) -> None:
    if d_ff < 1:
        raise InvalidParameterError(f"d_ff must be >= 1, got {d_ff}")
    if not 0.0 <= dropout < 1.0:
        raise InvalidParameterError(f"dropout must lie in [0, 1), got {dropout}")


class EncoderLayer(nn.Module):
    """One Transformer block: x + SelfAttn(LN x), x + FFN(LN x) (pre-LN) or LN(x + Sublayer(x)) (post-LN).

    With ``is_causal=True`` in forward it is the decoder-only (GPT) block.
    Parameter and module names follow torch.nn.TransformerEncoderLayer so the
    two can be compared weight for weight.

    Args:
        d_model: model width.
        num_heads: attention heads.
        d_ff: feed-forward width, >= 1.
        dropout: dropout in training, in [0, 1).
        norm_first: pre-LN (``True``) or post-LN.
        activation: the feed-forward activation (see :class:`FeedForward`).
        bias: biases in the linear maps and LayerNorms.
        layer_norm_eps: the LayerNorms' epsilon.
        rotary: rotary positions in the attention (:class:`RotaryEmbedding`).
        qk_norm: QK-norm in the attention (see :class:`MultiHeadAttention`).
        layer_idx: this layer's entry in a shared :class:`KVCache`.

    Raises:
        InvalidParameterError: ``d_ff < 1`` or ``dropout`` outside [0, 1).

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> layer, x = EncoderLayer(d_model=16, num_heads=4, d_ff=32).eval(), torch.randn(2, 5, 16)
        >>> torch.allclose(layer(x), layer.to_torch().eval()(x), atol=1e-5)  # torch's layer, the same weights
        True
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        *,
        norm_first: bool = True,
        activation: str = "relu",
        bias: bool = True,
        layer_norm_eps: float = 1e-5,
        rotary: bool = False,
        qk_norm: bool = False,
        layer_idx: int = 0,
    ):
        super().__init__()
        _check_block_args(d_ff, dropout)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout, rotary=rotary,
                                            qk_norm=qk_norm, layer_idx=layer_idx)
        self.ff = FeedForward(d_model, d_ff, dropout, activation, bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def to_torch(self) -> nn.TransformerEncoderLayer:
        """An equivalent ``torch.nn.TransformerEncoderLayer`` (batch_first) holding copies of these weights."""
        act = self.ff.act  # torch takes the function itself, so every activation here maps across
        ref = nn.TransformerEncoderLayer(self.ff.linear1.in_features, self.self_attn.num_heads,
                                         self.ff.linear1.out_features, dropout=self.dropout1.p, activation=act,
                                         layer_norm_eps=self.norm1.eps, batch_first=True, norm_first=self.norm_first,
                                         bias=self.norm1.bias is not None)
        ref.self_attn = self.self_attn.to_torch()
        with torch.no_grad():
            for mine, theirs in ((self.ff.linear1, ref.linear1), (self.ff.linear2, ref.linear2),
                                 (self.norm1, ref.norm1), (self.norm2, ref.norm2)):
                theirs.weight.copy_(mine.weight)
                if mine.bias is not None:
                    theirs.bias.copy_(mine.bias)
        return ref

    def _sa(self, x, mask, is_causal, cache):
        return _drop(self.dropout1, self.self_attn(x, mask=mask, is_causal=is_causal, cache=cache)[0])

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None, *, is_causal: bool = False,
                cache: KVCache | None = None) -> torch.Tensor:
        """``x`` (B, T, d_model) -> (B, T, d_model); ``mask``, ``is_causal`` and ``cache`` as in
        :meth:`MultiHeadAttention.forward`."""
        _check_sequence("x", x, self.self_attn.d_model, self.self_attn.Wq.weight)
        if self.norm_first:
            x = x + self._sa(self.norm1(x), mask, is_causal, cache)
            return x + _drop(self.dropout2, self.ff(self.norm2(x)))
        x = self.norm1(x + self._sa(x, mask, is_causal, cache))
        return self.norm2(x + _drop(self.dropout2, self.ff(x)))


class DecoderLayer(nn.Module):
    """Encoder-decoder block: causal self-attention, cross-attention to the encoder memory, FFN.

    Args:
        d_model: model width.
        num_heads: attention heads.
        d_ff: feed-forward width, >= 1.
        dropout: dropout in training, in [0, 1).
        norm_first: pre-LN (``True``) or post-LN.
        activation: the feed-forward activation (see :class:`FeedForward`).
        bias: biases in the linear maps and LayerNorms.
        layer_norm_eps: the LayerNorms' epsilon.

    Raises:
        InvalidParameterError: ``d_ff < 1`` or ``dropout`` outside [0, 1).

    Example:
        >>> import torch
        >>> layer = DecoderLayer(d_model=16, num_heads=4, d_ff=32)
        >>> layer(torch.zeros(2, 3, 16), memory=torch.zeros(2, 5, 16)).shape
        torch.Size([2, 3, 16])
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0, *,
                 norm_first: bool = True, activation: str = "relu", bias: bool = True, layer_norm_eps: float = 1e-5):
        super().__init__()
        _check_block_args(d_ff, dropout)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.ff = FeedForward(d_model, d_ff, dropout, activation, bias)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``x`` (B, T_tgt, d), ``memory`` (B, T_src, d); ``memory_mask`` (B, 1, 1, T_src) for padded sources."""
        _check_sequence("x", x, self.self_attn.d_model, self.self_attn.Wq.weight)
        _check_sequence("memory", memory, self.self_attn.d_model, self.self_attn.Wq.weight)
        if memory.size(0) != x.size(0):
            raise ShapeError(f"x and memory must share the batch size, got {x.size(0)} and {memory.size(0)}")
        sa = lambda z: _drop(self.dropout, self.self_attn(z, is_causal=True)[0])
        ca = lambda z: _drop(self.dropout, self.cross_attn(z, memory, memory, mask=memory_mask)[0])
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + ca(self.norm2(x))
            return x + _drop(self.dropout, self.ff(self.norm3(x)))
        x = self.norm1(x + sa(x))
        x = self.norm2(x + ca(x))
        return self.norm3(x + _drop(self.dropout, self.ff(x)))


@dataclass
class GPTConfig:
    """Shape of a :class:`GPT`.

    Args:
        vocab_size: number of token ids.
        block_size: the context: the most tokens one forward pass reads.
        num_layers: Transformer blocks.
        num_heads: attention heads per block, dividing ``d_model``.
        d_model: model width.
        d_ff: feed-forward width (default: ``4 * d_model``).
        dropout: dropout in training.
        bias: biases in the linear maps and LayerNorms.
        positional: ``"learned"``, ``"sinusoidal"`` or ``"rotary"`` positions.
        activation: the feed-forward activation (see :class:`FeedForward`).
        tie_weights: the output head is the token embedding's transpose.
        qk_norm: a LayerNorm on each head's queries and keys before the scores.

    Raises:
        InvalidParameterError: a size below 1, or another ``positional``.

    Example:
        >>> GPTConfig(vocab_size=65, d_model=64).d_ff
        256
    """

    vocab_size: int
    block_size: int = 128
    num_layers: int = 4
    num_heads: int = 4
    d_model: int = 128
    d_ff: int | None = None  # default 4 * d_model
    dropout: float = 0.0
    bias: bool = True
    positional: str = "learned"  # "learned" | "sinusoidal" | "rotary"
    activation: str = "gelu"
    tie_weights: bool = True
    qk_norm: bool = False  # LayerNorm (learned gain, no bias) on each head's queries and keys before the scores

    def __post_init__(self):
        if self.vocab_size < 1 or self.block_size < 1 or self.num_layers < 1:
            raise InvalidParameterError("vocab_size, block_size and num_layers must be >= 1")
        if self.positional not in ("learned", "sinusoidal", "rotary"):
            raise InvalidParameterError(f"positional must be learned, sinusoidal or rotary, got {self.positional!r}")
        if self.d_ff is None:
            self.d_ff = 4 * self.d_model

    def __repr__(self) -> str:
        # the dataclass's own form, less the optional features that are off: reprs recorded before them still match
        return f"GPTConfig({', '.join(f'{k}={v!r}' for k, v in config_record(self).items())})"


#: GPTConfig features that came after records of it were kept (checkpoints, artifact manifests), with their "off"
OPTIONAL_FEATURES = {"qk_norm": False}


def config_record(config) -> dict:
    """A model config as a dict for a record, leaving out the optional features that are off (``qk_norm=False``).

    So checkpoints and artifacts recorded before a feature existed still match a config that does not use it.

    Args:
        config: a :class:`GPTConfig` or :class:`LSTMConfig` (any dataclass).

    Returns:
        The config's fields as a dict.

    Example:
        >>> "qk_norm" in config_record(GPTConfig(vocab_size=10)), config_record(GPTConfig(10, qk_norm=True))["qk_norm"]
        (False, True)
    """
    record = asdict(config)
    if isinstance(config, GPTConfig):
        for key, off in OPTIONAL_FEATURES.items():
            if record[key] == off:
                del record[key]
    return record


class GPT(nn.Module):
    """Decoder-only language model: token embedding + position + pre-LN causal blocks + final LN + (tied) output head.

    Weights start as GPT-2's (normal, std 0.02; the residual projections scaled by 1/sqrt(2 num_layers)).

    Args:
        config: the model's shape.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> model = GPT(GPTConfig(vocab_size=10, block_size=8, num_layers=1, num_heads=2, d_model=16))
        >>> idx = torch.tensor([[1, 2, 3]])
        >>> logits, loss = model(idx, targets=idx)
        >>> logits.shape, 1.5 < loss.item() < 3.0  # near log(10) = 2.3 before training
        (torch.Size([1, 3, 10]), True)
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        c = self.config = config
        self.tok_emb = nn.Embedding(c.vocab_size, c.d_model)
        if c.positional == "learned":
            self.pos = LearnedPositionalEncoding(c.d_model, c.block_size)
        elif c.positional == "sinusoidal":
            self.pos = SinusoidalPositionalEncoding(c.d_model, c.block_size)
        else:
            self.pos = None
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            EncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, norm_first=True, activation=c.activation,
                         bias=c.bias, rotary=c.positional == "rotary", qk_norm=c.qk_norm, layer_idx=i)
            for i in range(c.num_layers)
        )
        self.ln_f = nn.LayerNorm(c.d_model, bias=c.bias)
        self.lm_head = Linear(c.d_model, c.vocab_size, bias=False)
        if c.tie_weights:
            self.lm_head.weight = self.tok_emb.weight
        self.apply(self._init_weights)
        # GPT-2: scale the residual projections by 1/sqrt(2 num_layers)
        for name, p in self.named_parameters():
            if name.endswith("Wo.weight") or name.endswith("linear2.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.num_layers))

    @property
    def block_size(self) -> int:
        """The context: the most tokens one forward pass (cache included) reads."""
        return self.config.block_size

    def new_cache(self) -> KVCache:
        """An empty :class:`KVCache` for incremental decoding."""
        return KVCache()

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, *,
                cache: KVCache | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``idx`` (B, T) token ids -> ``(logits (B, T, vocab), loss)``.

        ``loss`` is the mean cross-entropy against ``targets`` (B, T), which may also hold -100 (ignored), or
        ``None`` without them. With ``cache`` the new tokens follow the cached positions. Ids outside
        ``[0, vocab_size)``, or more tokens than ``block_size``, raise :class:`~seqlab.errors.InvalidParameterError`.
        """
        idx, targets = check_lm_inputs(idx, targets, self.config.vocab_size)
        if cache is not None and not isinstance(cache, KVCache):
            raise InvalidTypeError(f"cache must be a KVCache (model.new_cache()), got {type(cache).__name__}")
        B, T = idx.shape
        offset = cache.length if cache is not None else 0
        if offset + T > self.config.block_size:
            raise InvalidParameterError(f"sequence of {offset + T} tokens exceeds block_size={self.config.block_size}")
        x = self.tok_emb(idx)  # (B, T, d)
        if self.pos is not None:
            x = self.pos(x, offset)
        x = _drop(self.drop, x)
        for block in self.blocks:
            x = block(x, is_causal=True, cache=cache)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss
