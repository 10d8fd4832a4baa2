"""Parameter counts and the closed-form formulas they must equal."""
from __future__ import annotations

import torch.nn as nn

__all__ = ["count_parameters", "recurrent_parameters", "multihead_parameters", "encoder_layer_parameters",
           "decoder_layer_parameters", "GATE_BLOCKS"]

#: number of weight blocks per recurrent cell: RNN 1, GRU 3 (r, z, n), LSTM 4 (i, f, g, o)
GATE_BLOCKS = {"rnn": 1, "gru": 3, "lstm": 4}


def count_parameters(module: nn.Module) -> int:
    """Number of scalar parameters (shared tensors counted once).

    Args:
        module: any ``torch.nn.Module``.

    Returns:
        The count.

    Example:
        >>> from torch import nn
        >>> count_parameters(nn.Linear(4, 3))  # 4 x 3 weights and 3 biases
        15
    """
    return sum(p.numel() for p in module.parameters())


def recurrent_parameters(cell: str, hidden_size: int, input_size: int, bias_vectors: int = 2) -> int:
    """g d (d + m) + bias_vectors * g d for g gate blocks, d = hidden_size, m = input_size.

    PyTorch keeps two bias vectors per block (b_ih and b_hh), so ``bias_vectors=2``
    equals its count; ``bias_vectors=1`` is the textbook single-bias form.

    Args:
        cell: ``"rnn"``, ``"gru"`` or ``"lstm"`` (any case; :data:`GATE_BLOCKS`).
        hidden_size: d.
        input_size: m.
        bias_vectors: bias vectors per gate block.

    Returns:
        The count.

    Raises:
        KeyError: another cell.

    Example:
        >>> from torch import nn
        >>> recurrent_parameters("lstm", hidden_size=8, input_size=4) == count_parameters(nn.LSTM(4, 8))
        True
    """
    g = GATE_BLOCKS[cell.lower()]
    d, m = hidden_size, input_size
    return g * d * (d + m) + bias_vectors * g * d


def multihead_parameters(d_model: int, bias: bool = False) -> int:
    """4 d^2 (+ 4 d with biases): W^Q, W^K, W^V, W^O, independent of the head count.

    Args:
        d_model: d.
        bias: the projections have biases.

    Returns:
        The count.

    Example:
        >>> from seqlab.nn import MultiHeadAttention
        >>> multihead_parameters(16) == count_parameters(MultiHeadAttention(16, num_heads=4))
        True
    """
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def encoder_layer_parameters(d_model: int, d_ff: int, bias: bool = True) -> int:
    """Self-attention 4d^2 + FFN 2 d d_ff + two LayerNorms (+ biases): one :class:`~seqlab.nn.EncoderLayer`.

    Args:
        d_model: d.
        d_ff: the feed-forward width.
        bias: biases in the linear maps and LayerNorms.

    Returns:
        The count.

    Example:
        >>> from seqlab.nn import EncoderLayer
        >>> encoder_layer_parameters(16, 32) == count_parameters(EncoderLayer(16, num_heads=4, d_ff=32))
        True
    """
    b = 1 if bias else 0
    attn = multihead_parameters(d_model, bias)
    ffn = 2 * d_model * d_ff + b * (d_ff + d_model)
    norms = 2 * (d_model + b * d_model)
    return attn + ffn + norms


def decoder_layer_parameters(d_model: int, d_ff: int, bias: bool = True) -> int:
    """Encoder layer + a cross-attention block and a third LayerNorm: one :class:`~seqlab.nn.DecoderLayer`.

    Args:
        d_model: d.
        d_ff: the feed-forward width.
        bias: biases in the linear maps and LayerNorms.

    Returns:
        The count.

    Example:
        >>> from seqlab.nn import DecoderLayer
        >>> decoder_layer_parameters(16, 32) == count_parameters(DecoderLayer(16, num_heads=4, d_ff=32))
        True
    """
    b = 1 if bias else 0
    return encoder_layer_parameters(d_model, d_ff, bias) + multihead_parameters(d_model, bias) + d_model + b * d_model
