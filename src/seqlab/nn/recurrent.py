"""Helpers for PyTorch's recurrent layers."""
from __future__ import annotations

import torch
from torch import nn

from ..errors import InvalidParameterError

__all__ = ["set_forget_bias"]


@torch.no_grad()
def set_forget_bias(lstm: nn.LSTM, value: float) -> nn.LSTM:
    """Make the forget gate's total bias ``value`` in every layer (and direction) of ``lstm``.

    PyTorch adds two biases, ``b_ih + b_hh``, and packs the gate blocks as
    (i, f, g, o), so the forget block is rows ``hidden_size .. 2*hidden_size-1``.
    The gate sees the sum, so ``b_ih``'s block takes ``value`` and ``b_hh``'s is
    zeroed: filling only one of them would leave the other's random draw in the
    sum. Returns ``lstm``, changed in place.
    """
    if not isinstance(lstm, nn.LSTM):
        raise InvalidParameterError(f"set_forget_bias needs a torch.nn.LSTM, got {type(lstm).__name__}")
    if not lstm.bias:
        raise InvalidParameterError("this LSTM was built with bias=False; it has no forget bias to set")
    h = lstm.hidden_size
    for name, p in lstm.named_parameters():
        if name.startswith("bias_ih"):
            p[h : 2 * h].fill_(value)
        elif name.startswith("bias_hh"):
            p[h : 2 * h].zero_()
    return lstm
