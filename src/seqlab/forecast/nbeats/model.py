"""N-BEATS's network, one small class per equation (the table of :mod:`seqlab.forecast.nbeats`)."""
from __future__ import annotations

import torch
import torch.nn as nn

from ...errors import InvalidParameterError


# ----------------------------------------------------------------------------------------------------------------
# The model
# ----------------------------------------------------------------------------------------------------------------
class FullyConnected(nn.Module):
    """h_l = ReLU(W_l h_{l-1} + b_l), l = 1..layers: the block's hidden layers (eq-nbeats-fc)."""

    def __init__(self, d_in: int, width: int, layers: int):
        super().__init__()
        dims = [d_in] + [width] * layers
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))

    def forward(self, x):
        for lin in self.layers:
            x = torch.relu(lin(x))
        return x


class GenericBasis(nn.Module):
    """(backcast, forecast) = (theta[:L], theta[L:]), theta = W z: a learned linear basis (eq-nbeats-basis).

    The paper writes V_b theta_b; a learned V after a learned linear theta is one linear
    map, so the block projects straight to L + h numbers.
    """

    def __init__(self, width: int, input_size: int, h: int):
        super().__init__()
        self.theta = nn.Linear(width, input_size + h)
        self.L = input_size

    def forward(self, z):
        theta = self.theta(z)
        return theta[:, : self.L], theta[:, self.L :]


def _time(n: int, start: float = 0.0) -> torch.Tensor:
    """tau_j = j / n for j = 0 .. n-1, shifted by ``start``: the normalised time a fixed basis is evaluated on."""
    return start + torch.arange(n, dtype=torch.float32) / n


class TrendBasis(nn.Module):
    """forecast_j = sum_{p=0}^{P} theta_p tau_j^p: a polynomial of low degree (eq-nbeats-basis)."""

    def __init__(self, width: int, input_size: int, h: int, degree: int = 2):
        super().__init__()
        self.theta = nn.Linear(width, 2 * (degree + 1))
        powers = torch.arange(degree + 1, dtype=torch.float32)[:, None]
        self.register_buffer("Tb", _time(input_size, -1.0) ** powers)  # the input window is tau in [-1, 0)
        self.register_buffer("Tf", _time(h) ** powers)

    def forward(self, z):
        tb, tf = self.theta(z).chunk(2, dim=-1)
        return tb @ self.Tb, tf @ self.Tf


class SeasonalityBasis(nn.Module):
    """forecast_j = sum_k a_k cos(2 pi k tau_j) + b_k sin(2 pi k tau_j): a Fourier series (eq-nbeats-basis)."""

    def __init__(self, width: int, input_size: int, h: int, period: int = 1, harmonics: int | None = None):
        super().__init__()
        period = max(period, 2)
        harmonics = harmonics or period // 2
        k = torch.arange(1, harmonics + 1, dtype=torch.float32)[:, None]

        def waves(t):  # t counts periods of the season: tau * (n / period)
            angle = 2 * torch.pi * k * t
            return torch.cat([torch.ones(1, t.shape[-1]), torch.cos(angle), torch.sin(angle)])

        self.register_buffer("Sb", waves(torch.arange(-input_size, 0, dtype=torch.float32) / period))
        self.register_buffer("Sf", waves(torch.arange(h, dtype=torch.float32) / period))
        self.theta = nn.Linear(width, 2 * (2 * harmonics + 1))

    def forward(self, z):
        tb, tf = self.theta(z).chunk(2, dim=-1)
        return tb @ self.Sb, tf @ self.Sf


class Block(nn.Module):
    """theta = W_theta FC(x); (backcast, forecast) = basis(theta): one block (eq-nbeats-block)."""

    def __init__(self, fc: FullyConnected, basis: nn.Module):
        super().__init__()
        self.fc, self.basis = fc, basis

    def forward(self, x):
        return self.basis(self.fc(x))


class NBeats(nn.Module):
    """x_{k+1} = (x_k - backcast_k) * mask;  yhat = level + sum_k forecast_k: the doubly residual stack.

    (eq-nbeats-residual on the page.)

    ``stack="generic"``: ``blocks`` blocks with learned bases; ``"interpretable"``: a trend
    block followed by a seasonality block per pair, whose forecasts can be read separately.
    ``level=True`` starts the forecast from the last observed input (the naive forecast),
    so the blocks learn the change from it.
    """

    def __init__(self, input_size: int, h: int, width: int = 256, layers: int = 3, blocks: int = 3,
                 stack: str = "generic", season: int = 1, level: bool = True):
        super().__init__()
        if stack not in ("generic", "interpretable"):
            raise InvalidParameterError(f"stack must be generic or interpretable, got {stack!r}")
        mods = []
        for k in range(blocks):
            fc = FullyConnected(input_size, width, layers)
            if stack == "generic":
                basis = GenericBasis(width, input_size, h)
            elif k % 2 == 0:
                basis = TrendBasis(width, input_size, h)
            else:
                basis = SeasonalityBasis(width, input_size, h, period=season)
            mods.append(Block(fc, basis))
        self.blocks = nn.ModuleList(mods)
        self.input_size, self.h, self.level = input_size, h, level

    # the forecasting page prints this method: its lines fit the page's 68-character code column
    def forward(self, x, mask):
        # x, mask: (B, input_size), the oldest value first
        residual = x * mask
        forecast = (x[:, -1:].expand(-1, self.h) if self.level
                    else x.new_zeros(x.shape[0], self.h))
        for block in self.blocks:
            backcast, f = block(residual)
            residual = (residual - backcast) * mask
            forecast = forecast + f
        return forecast

    def decompose(self, x, mask):
        """Each block's forecast (B, blocks, h): for the interpretable stack, trend and seasonality apart."""
        residual, parts = x * mask, []
        for block in self.blocks:
            backcast, f = block(residual)
            residual = (residual - backcast) * mask
            parts.append(f)
        return torch.stack(parts, dim=1)
