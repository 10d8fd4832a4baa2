"""Global neural forecasters: one recurrent or attention network trained across all series.

Each training example is a window of ``input_size`` past values and the next
``h`` values of one series, divided by the mean absolute value of the observed
part of its input window (per-series, per-window scaling), so series of any level
share one model. The windows are cut by :class:`~seqlab.forecast.panel.Panel`, as
N-BEATS's are: a history shorter than the input is zero before its first value and
the network reads a second channel, the mask of observed positions, so nothing
made up looks observed. The last ``h`` points of every series' training part are
held out for early stopping; training windows end before them (no look-ahead). ``device`` ("auto", "cpu",
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
from .panel import Panel

__all__ = ["NeuralConfig", "NeuralForecaster", "window_cuts", "masked_scale"]


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


def window_cuts(lengths, input_size: int, h: int):
    """Series index ``i`` and cut ``t`` (observed points before the target) of every training window.

    A series of length n gives the windows with full inputs, ``t = input_size .. n - h``,
    or, when it is shorter than ``input_size + h``, the one window ``t = n - h`` with a
    partly masked input; a series with ``n <= h`` has none (its target would leave it).
    """
    i, t = [], []
    for k, n in enumerate(np.asarray(lengths, np.int64)):
        last = int(n) - h
        if last >= 1:
            cuts = np.arange(min(input_size, last), last + 1)
            i.append(np.full(len(cuts), k))
            t.append(cuts)
    if not i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(i), np.concatenate(t)


def masked_scale(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean absolute value of each row's observed inputs, (B, 1); 1 where that is 0."""
    s = (np.abs(x) * mask).sum(axis=1, keepdims=True) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return np.where(s > 0, s, 1.0)


def _inputs(x: np.ndarray, mask: np.ndarray, s: np.ndarray) -> np.ndarray:
    return np.stack([x / s, mask], axis=-1).astype(np.float32)  # (B, L, 2): value, observed


class _RNN(nn.Module):
    def __init__(self, h, hidden, cell):
        super().__init__()
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(2, hidden, batch_first=True)
        self.out = nn.Linear(hidden, h)

    def forward(self, x):  # x: (B, L, 2)
        _, state = self.rnn(x)
        h = state[0] if isinstance(state, tuple) else state
        return self.out(h[-1])  # (B, h)


class _Attention(nn.Module):
    def __init__(self, h, d, input_size, num_layers=2, num_heads=4):
        super().__init__()
        self.embed = nn.Linear(2, d)
        self.pos = nn.Parameter(torch.zeros(input_size, d))
        nn.init.normal_(self.pos, std=0.02)
        self.blocks = nn.ModuleList(EncoderLayer(d, num_heads, 2 * d, norm_first=True) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, h)

    def forward(self, x):  # x: (B, L, 2)
        z = self.embed(x) + self.pos  # (B, L, d)
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
        L = self._input_size(h)
        panel = Panel.from_frame(df, pad=L, season=self.season_length)
        # validation: the last h points of each training part; training windows end before them
        cut = np.maximum(panel.lengths - h, 2)
        i, t = window_cuts(cut, L, h)
        if len(i) == 0:
            raise InvalidParameterError(f"no series is longer than 2 horizons ({2 * h}): nothing to train on")
        X, M, Yt, _ = panel.windows(i, t, L, h)
        st = masked_scale(X, M)
        Xt = _inputs(X, M, st)
        val = np.flatnonzero(panel.lengths - h >= 1)  # a validation target with at least one observed input
        X, M, Yv, _ = panel.windows(val, panel.lengths[val] - h, L, h)
        sv = masked_scale(X, M)
        Xv = _inputs(X, M, sv)
        dev = resolve_device(self.device)
        Xt, Yt, Xv, Yv = (torch.from_numpy(np.asarray(a, np.float32)).to(dev)
                          for a in (Xt, Yt / st, Xv, Yv / sv))
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
        panel = Panel.from_frame(df, pad=self.L)
        X, M = panel.last(self.L)
        s = masked_scale(X, M)
        device = next(self.model.parameters()).device
        yhat = self.model(torch.from_numpy(_inputs(X, M, s)).to(device)).cpu().numpy() * s
        return dict(zip(panel.ids, yhat))
