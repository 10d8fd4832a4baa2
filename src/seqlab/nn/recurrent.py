"""Recurrent cells written from their gate equations, checked against PyTorch's, and the forget-gate bias.

The recurrence page prints the bodies of these functions: their lines stay within the 68 characters of
the page's code column.
"""
from __future__ import annotations

import torch
from torch import nn

from ..errors import InvalidParameterError

__all__ = ["set_forget_bias", "lstm_cell", "gru_cell", "unroll"]


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
        raise InvalidParameterError(
            "set_forget_bias needs a torch.nn.LSTM, "
            f"got {type(lstm).__name__}")
    if not lstm.bias:
        raise InvalidParameterError(
            "this LSTM was built with bias=False; "
            "it has no forget bias to set")
    h = lstm.hidden_size
    for name, p in lstm.named_parameters():
        if name.startswith("bias_ih"):
            p[h : 2 * h].fill_(value)
        elif name.startswith("bias_hh"):
            p[h : 2 * h].zero_()
    return lstm


def lstm_cell(x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, W_ih: torch.Tensor, W_hh: torch.Tensor,
              b_ih: torch.Tensor, b_hh: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step, eqs. (eq-lstm-gates)-(eq-lstm-state): c' = f*c + i*g, h' = o*tanh(c').

    ``x`` (B, m), ``h`` and ``c`` (B, d); ``W_ih`` (4d, m), ``W_hh`` (4d, d), biases (4d,),
    the gate blocks stacked in PyTorch's order i, f, g, o.
    """
    z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh  # (B, 4d)
    i, f, g, o = z.chunk(4, dim=-1)  # each (B, d)
    # the additive cell path
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def gru_cell(x: torch.Tensor, h: torch.Tensor, W_ih: torch.Tensor, W_hh: torch.Tensor, b_ih: torch.Tensor,
             b_hh: torch.Tensor) -> torch.Tensor:
    """One GRU step, eq. (eq-gru): h' = (1 - z)*n + z*h, a convex mix of the candidate and the old state.

    Blocks stacked in PyTorch's order r, z, n. The reset gate multiplies the
    recurrent part of the candidate *after* its matrix product (PyTorch's and
    cuDNN's form; the original paper resets h before the product).
    """
    gx, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh  # (B, 3d) each
    rx, zx, nx = gx.chunk(3, dim=-1)
    rh, zh, nh = gh.chunk(3, dim=-1)
    r, z = torch.sigmoid(rx + rh), torch.sigmoid(zx + zh)
    n = torch.tanh(nx + r * nh)
    return (1 - z) * n + z * h


def unroll(module: nn.LSTM | nn.GRU, x: torch.Tensor) -> torch.Tensor:
    """Outputs (B, T, d) of a one-layer, batch-first ``module``, computed step by step with the cells above."""
    if module.num_layers != 1 or module.bidirectional or not module.batch_first or not module.bias:
        raise InvalidParameterError("unroll reproduces a one-layer, one-direction, batch_first module with biases")
    weights = (module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0, module.bias_hh_l0)
    B, d = x.size(0), module.hidden_size
    h = x.new_zeros(B, d)
    c = x.new_zeros(B, d)
    outputs = []
    for t in range(x.size(1)):
        if isinstance(module, nn.LSTM):
            h, c = lstm_cell(x[:, t], h, c, *weights)
        elif isinstance(module, nn.GRU):
            h = gru_cell(x[:, t], h, *weights)
        else:
            raise InvalidParameterError(f"unroll needs an nn.LSTM or nn.GRU, got {type(module).__name__}")
        outputs.append(h)
    return torch.stack(outputs, dim=1)  # (B, T, d)
