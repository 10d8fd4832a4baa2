"""Global neural forecasters: one recurrent or attention network trained across all series.

Each training example is a window of ``input_size`` past values and the next
``h`` values of one series, divided by the mean absolute value of its input
window (per-series, per-window scaling), so series of any level share one model.
The last ``h`` points of every series' training part are held out for early
stopping; training windows end before them (no look-ahead). ``device`` ("auto", "cpu",
"cuda", "mps", as in ``seqlab lm train``) says where the network trains and predicts;
it is initialised and its batches drawn on the CPU, and forecasts come back as CPU arrays.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from ..errors import InvalidParameterError
from ..nn.transformer import EncoderLayer
from ..devices import resolve_device

__all__ = ["NeuralConfig", "NeuralForecaster", "make_windows"]


@dataclass
class NeuralConfig:
    input_size: int | None = None  # default: max(2 h, 2 season), at most 60
    hidden_size: int = 64
    max_steps: int = 1500
    batch_size: int = 256
    learning_rate: float = 1e-3
    val_check_steps: int = 100
    patience: int = 5
    seed: int = 1

    def __post_init__(self):
        for name in ("hidden_size", "max_steps", "batch_size", "val_check_steps", "patience"):
            if getattr(self, name) < 1:
                raise InvalidParameterError(f"{name} must be >= 1")
        if self.learning_rate <= 0:
            raise InvalidParameterError("learning_rate must be > 0")


def _pad(y: np.ndarray, length: int) -> np.ndarray:
    return y if len(y) >= length else np.r_[np.full(length - len(y), y[0]), y]


def make_windows(series: list[np.ndarray], input_size: int, h: int, end_before: list[int] | None = None):
    """All (input, target) windows whose target ends at or before ``end_before[i]`` (default: the series end).

    Short series are padded on the left with their first value. Returns arrays
    X (N, input_size), Y (N, h) and the series index of each window.
    """
    X, Y, owner = [], [], []
    for i, y in enumerate(series):
        stop = len(y) if end_before is None else end_before[i]
        y = y[:stop]
        yp = _pad(y, input_size + h)
        for t in range(input_size, len(yp) - h + 1):
            X.append(yp[t - input_size : t])
            Y.append(yp[t : t + h])
            owner.append(i)
    return np.array(X, dtype=np.float32), np.array(Y, dtype=np.float32), np.array(owner)


def _scale(x: np.ndarray) -> np.ndarray:
    s = np.abs(x).mean(axis=1, keepdims=True)
    return np.where(s > 0, s, 1.0)


class _RNN(nn.Module):
    def __init__(self, h, hidden, cell):
        super().__init__()
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, h)

    def forward(self, x):  # x: (B, L)
        _, state = self.rnn(x.unsqueeze(-1))
        h = state[0] if isinstance(state, tuple) else state
        return self.out(h[-1])  # (B, h)


class _Attention(nn.Module):
    def __init__(self, h, d, input_size, num_layers=2, num_heads=4):
        super().__init__()
        self.embed = nn.Linear(1, d)
        self.pos = nn.Parameter(torch.zeros(input_size, d))
        nn.init.normal_(self.pos, std=0.02)
        self.blocks = nn.ModuleList(EncoderLayer(d, num_heads, 2 * d, norm_first=True) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, h)

    def forward(self, x):  # x: (B, L)
        z = self.embed(x.unsqueeze(-1)) + self.pos  # (B, L, d)
        for b in self.blocks:
            z = b(z)
        return self.out(self.norm(z[:, -1]))  # the last position reads the whole window


class NeuralForecaster:
    """A global model with a statsforecast-like life cycle: ``fit(df, h)`` then ``predict(df, h)``.

    ``device``: "auto" (the default, as for ``seqlab lm train``: CUDA when present, then MPS, else the CPU), "cpu",
    "cuda" or "mps"; an unavailable device is an :class:`~seqlab.errors.InvalidParameterError` at once.
    """

    def __init__(self, arch: str = "gru", name: str | None = None, config: NeuralConfig | None = None,
                 season_length: int = 1, device: str = "auto"):
        if arch not in ("gru", "lstm", "transformer"):
            raise InvalidParameterError(f"arch must be gru, lstm or transformer, got {arch!r}")
        resolve_device(device)  # an unknown or unavailable device is refused here, before any training
        self.device = device
        self.arch, self.config, self.season_length = arch, config or NeuralConfig(), season_length
        self.name = name or {"gru": "GRU", "lstm": "LSTM", "transformer": "Transformer"}[arch]
        self.model, self.history = None, []

    def _input_size(self, h):
        return self.config.input_size or min(60, max(2 * h, 2 * self.season_length))

    def _build(self, h, L):
        if self.arch == "transformer":
            return _Attention(h, self.config.hidden_size, L)
        return _RNN(h, self.config.hidden_size, self.arch)

    def fit(self, df, h: int):
        c = self.config
        series = [g["y"].to_numpy(float) for _, g in df.groupby("unique_id", sort=False)]
        L = self._input_size(h)
        # validation: the last h points of each training part; training windows end before them
        cut = [max(len(y) - h, 2) for y in series]
        Xt, Yt, _ = make_windows(series, L, h, end_before=cut)
        val_series = [_pad(y, L + h) for y in series]
        Xv = np.array([y[-h - L : -h] for y in val_series], dtype=np.float32)
        Yv = np.array([y[-h:] for y in val_series], dtype=np.float32)
        st, sv = _scale(Xt), _scale(Xv)
        dev = resolve_device(self.device)
        Xt, Yt, Xv, Yv = (torch.from_numpy(a).to(dev) for a in (Xt / st, Yt / st, Xv / sv, Yv / sv))
        torch.manual_seed(c.seed)
        g = torch.Generator().manual_seed(c.seed)  # on the CPU: the same batches on every device
        model = self._build(h, L).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=c.learning_rate)
        best, best_state, bad = float("inf"), None, 0
        self.history = []
        for step in range(1, c.max_steps + 1):
            model.train()
            idx = torch.randint(len(Xt), (c.batch_size,), generator=g).to(dev)
            loss = (model(Xt[idx]) - Yt[idx]).abs().mean()  # MAE on the scaled windows
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if step % c.val_check_steps == 0:
                model.eval()
                with torch.no_grad():
                    val = (model(Xv) - Yv).abs().mean().item()
                self.history.append(dict(step=step, train_mae=loss.item(), val_mae=val))
                if val < best - 1e-6:
                    best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
                else:
                    bad += 1
                    if bad >= c.patience:
                        break
        if best_state is not None:
            model.load_state_dict(best_state)
        self.model, self.h, self.L = model.eval(), h, L
        return self

    @torch.no_grad()
    def predict(self, df, h: int):
        if self.model is None or h != self.h:
            raise RuntimeError("fit the forecaster with this horizon first")
        ids, rows = [], []
        for uid, g in df.groupby("unique_id", sort=False):
            ids.append(uid)
            rows.append(_pad(g["y"].to_numpy(float), self.L)[-self.L:])
        X = np.array(rows, dtype=np.float32)
        s = _scale(X)
        device = next(self.model.parameters()).device
        yhat = self.model(torch.from_numpy(X / s).to(device)).cpu().numpy() * s
        return dict(zip(ids, yhat))
