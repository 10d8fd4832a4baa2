"""Gradient by lag: how far back a loss can send signal through a recurrence (§14.46.1, §14.47)."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from ..errors import InvalidParameterError
from ..nn.recurrent import set_forget_bias

__all__ = ["grad_by_lag", "input_gradient_reach", "RECURRENT_CELLS"]

#: the recurrent cells by name, as ``input_gradient_reach`` builds them: ``"rnn"``, ``"lstm"``, ``"gru"`` -> their
#: torch classes
RECURRENT_CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


def grad_by_lag(rho: float, T: int = 60, d: int = 32, seed: int = 21) -> np.ndarray:
    """||dL/dh_t|| for L = sum(h_T) in h_t = tanh(W h_{t-1} + W_x x_t), W scaled to spectral radius ``rho``.

    Draw order (torch's generator): W (d, d), W_x (d, 4), then x_1 .. x_T.
    Below ``rho = 1`` the norm shrinks geometrically with the lag: the vanishing gradient.

    Args:
        rho: the spectral radius of W, > 0.
        T: steps, >= 1.
        d: state width, >= 1.
        seed: seeds torch's global generator before the draws.

    Returns:
        An array of length ``T`` whose entry ``t`` (0-based) is the gradient norm at the state h_t,
        t = 0 .. T-1; h_t is ``T - t`` steps before h_T.

    Raises:
        InvalidParameterError: ``rho <= 0``, ``T < 1`` or ``d < 1``.

    Example:
        >>> g = grad_by_lag(0.5, T=10, d=8)
        >>> g.shape, bool(g[0] < 1e-3 * g[-1])  # nine steps back, far below the last step
        ((10,), True)
    """
    if rho <= 0 or T < 1 or d < 1:
        raise InvalidParameterError(f"need rho > 0, T >= 1, d >= 1; got rho={rho}, T={T}, d={d}")
    torch.manual_seed(seed)
    W = torch.randn(d, d)
    radius = torch.linalg.eigvals(W.double()).abs().max().item()
    W = W / radius * rho
    Wx = torch.randn(d, 4) * 0.1
    xs = [torch.randn(1, 4) for _ in range(T)]
    h = torch.zeros(1, d, requires_grad=True)
    hs = [h]
    for t in range(T):
        h = torch.tanh(hs[t] @ W.T + xs[t] @ Wx.T)
        h.retain_grad()
        hs.append(h)
    hs[T].sum().backward()
    return np.array([hs[t].grad.norm().item() for t in range(T)])


def input_gradient_reach(
    cell: str,
    T: int = 80,
    d: int = 32,
    seed: int = 31,
    input_size: int = 4,
    forget_bias: float | None = None,
) -> np.ndarray:
    """sum_i |d(sum of the last output)/dx_{t,i}| for every input step t of an untrained cell.

    The cell (``"rnn"``, ``"lstm"`` or ``"gru"``) is built right after
    ``torch.manual_seed(seed)``, then the input (1, T, input_size) is drawn.
    ``forget_bias`` (LSTM only) fills the forget block of ``bias_ih`` and zeros
    that of ``bias_hh``; PyTorch packs the gates as (i, f, g, o).

    Args:
        cell: ``"rnn"``, ``"lstm"`` or ``"gru"`` (:data:`RECURRENT_CELLS`).
        T: input steps.
        d: hidden width.
        seed: seeds torch's global generator before the cell is built.
        input_size: input width.
        forget_bias: the LSTM's forget-gate bias (default: PyTorch's initial one).

    Returns:
        An array of length ``T``; entry ``t`` (0-based) belongs to input step t + 1, i.e. lag ``T - 1 - t``.

    Raises:
        InvalidParameterError: another cell, or ``forget_bias`` for a cell other than the LSTM.

    Example:
        >>> reach = input_gradient_reach("lstm", T=20, d=8, forget_bias=1.0)
        >>> reach.shape, bool(reach[-1] > reach[0])  # the last input moves the last output most
        ((20,), True)
    """
    if cell not in RECURRENT_CELLS:
        raise InvalidParameterError(f"cell must be one of {sorted(RECURRENT_CELLS)}, got {cell!r}")
    if forget_bias is not None and cell != "lstm":
        raise InvalidParameterError("forget_bias applies to the LSTM only")
    torch.manual_seed(seed)
    module = RECURRENT_CELLS[cell](input_size, d, batch_first=True)
    if forget_bias is not None:
        set_forget_bias(module, forget_bias)
    xs = torch.randn(1, T, input_size, requires_grad=True)
    out = module(xs)[0]
    out[0, T - 1].sum().backward()
    return xs.grad[0].abs().sum(dim=1).numpy()
