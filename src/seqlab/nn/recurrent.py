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
    sum.

    Args:
        lstm: a ``torch.nn.LSTM`` with biases.
        value: the forget gate's bias (1.0: Jozefowicz et al., 2015).

    Returns:
        ``lstm``, changed in place.

    Raises:
        InvalidParameterError: not an LSTM, or one without biases.

    Example:
        >>> from torch import nn
        >>> lstm = set_forget_bias(nn.LSTM(3, 2), 1.0)
        >>> (lstm.bias_ih_l0 + lstm.bias_hh_l0)[2:4]  # rows d .. 2d - 1: the forget block
        tensor([1., 1.], grad_fn=<SliceBackward0>)
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

    Args:
        x: shape (B, m), this step's input.
        h: shape (B, d), the previous hidden state.
        c: shape (B, d), the previous cell state.
        W_ih: shape (4d, m); the gate blocks stacked in PyTorch's order i, f, g, o.
        W_hh: shape (4d, d).
        b_ih: shape (4d,).
        b_hh: shape (4d,).

    Returns:
        ``(h', c')``, each of shape (B, d).

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> ref, x = torch.nn.LSTMCell(3, 2), torch.randn(4, 3)
        >>> h, c = lstm_cell(x, torch.zeros(4, 2), torch.zeros(4, 2), ref.weight_ih, ref.weight_hh,
        ...                  ref.bias_ih, ref.bias_hh)
        >>> torch.allclose(h, ref(x)[0], atol=1e-6)
        True
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

    Args:
        x: shape (B, m), this step's input.
        h: shape (B, d), the previous state.
        W_ih: shape (3d, m).
        W_hh: shape (3d, d).
        b_ih: shape (3d,).
        b_hh: shape (3d,).

    Returns:
        The new state h', shape (B, d).

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> ref, x, h = torch.nn.GRUCell(3, 2), torch.randn(4, 3), torch.randn(4, 2)
        >>> torch.allclose(gru_cell(x, h, ref.weight_ih, ref.weight_hh, ref.bias_ih, ref.bias_hh), ref(x, h),
        ...                atol=1e-6)
        True
    """
    gx, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh  # (B, 3d) each
    rx, zx, nx = gx.chunk(3, dim=-1)
    rh, zh, nh = gh.chunk(3, dim=-1)
    r, z = torch.sigmoid(rx + rh), torch.sigmoid(zx + zh)
    n = torch.tanh(nx + r * nh)
    return (1 - z) * n + z * h


def unroll(module: nn.LSTM | nn.GRU, x: torch.Tensor) -> torch.Tensor:
    """Outputs of a one-layer, batch-first ``module``, computed step by step with :func:`lstm_cell` or :func:`gru_cell`.

    Args:
        module: a ``torch.nn.LSTM`` or ``torch.nn.GRU`` with one layer, one direction, ``batch_first`` and biases.
        x: shape (B, T, m), the inputs.

    Returns:
        The hidden state at every step, shape (B, T, d), as ``module(x)[0]`` returns it.

    Raises:
        InvalidParameterError: any other module.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> gru, x = torch.nn.GRU(3, 2, batch_first=True), torch.randn(2, 5, 3)
        >>> torch.allclose(unroll(gru, x), gru(x)[0], atol=1e-6)
        True
    """
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
