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
    """Training settings of a :class:`NeuralForecaster`: window, width, steps, batch, rate, early stopping, seed.

    ``input_size`` (None: twice the horizon or the season, the larger, at most 60) is how many past values each
    window sees; training stops after ``max_steps`` steps, or when the validation loss, checked every
    ``val_check_steps`` steps, has not improved ``patience`` times in a row.

    Raises:
        InvalidParameterError: a count below 1 or a learning rate that is not positive.

    Example:
        >>> NeuralConfig(hidden_size=8, max_steps=5).max_steps
        5
        >>> try:
        ...     NeuralConfig(max_steps=0)
        ... except InvalidParameterError as e:
        ...     print(e)
        max_steps must be >= 1
    """

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


class _Regressors(nn.Module):
    """Regressors standardized by their training mean and spread (kept as buffers, so stored with the weights)."""

    def __init__(self, k: int):
        super().__init__()
        self.register_buffer("x_mean", torch.zeros(k))
        self.register_buffer("x_std", torch.ones(k))

    def forward(self, x):
        return (x - self.x_mean) / self.x_std


class _RNN(nn.Module):
    """A recurrent encoder of (value, observed, regressors...) whose last state, with the regressors' values over
    the horizon, gives the ``h`` forecasts."""

    def __init__(self, h, hidden, cell, k: int = 0):
        super().__init__()
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(2 + k, hidden, batch_first=True)
        self.out = nn.Linear(hidden + h * k, h)
        self.regressors = _Regressors(k) if k else None

    def forward(self, x, xf=None):  # x: (B, L, 2 + k); xf: (B, h, k), the regressors over the horizon
        _, state = self.rnn(x)
        z = (state[0] if isinstance(state, tuple) else state)[-1]
        if xf is not None:
            z = torch.cat([z, xf.flatten(1)], dim=1)
        return self.out(z)  # (B, h)


class _Attention(nn.Module):
    def __init__(self, h, d, input_size, num_layers=2, num_heads=4, k: int = 0):
        super().__init__()
        self.embed = nn.Linear(2 + k, d)
        self.pos = nn.Parameter(torch.zeros(input_size, d))
        nn.init.normal_(self.pos, std=0.02)
        self.blocks = nn.ModuleList(EncoderLayer(d, num_heads, 2 * d, norm_first=True) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d + h * k, h)
        self.regressors = _Regressors(k) if k else None

    def forward(self, x, xf=None):  # x: (B, L, 2 + k); xf: (B, h, k)
        z = self.embed(x) + self.pos  # (B, L, d)
        for b in self.blocks:
            z = b(z)
        z = self.norm(z[:, -1])  # the last position reads the whole window
        if xf is not None:
            z = torch.cat([z, xf.flatten(1)], dim=1)
        return self.out(z)


class NeuralForecaster:
    """A global model with a statsforecast-like life cycle: ``fit(df, h)`` then ``predict(df, h)``.

    ``device``: "auto" (the default, as for ``seqlab lm train``: CUDA when present, then MPS, else the CPU), "cpu",
    "cuda" or "mps"; an unavailable device is an :class:`~seqlab.errors.InvalidParameterError` at once.

    Example:
        >>> import pandas as pd
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 25), "y": [float(t % 6) for t in range(24)]})
        >>> m = NeuralForecaster("gru", config=NeuralConfig(hidden_size=8, max_steps=5), device="cpu")
        >>> fc = m.fit(df, h=3).predict(df, h=3)
        >>> m.name, fc["a"].shape
        ('GRU', (3,))
    """

    def __init__(self, arch: str = "gru", name: str | None = None, config: NeuralConfig | None = None,
                 season_length: int = 1, device: str = "auto"):
        if arch not in ("gru", "lstm", "transformer"):
            raise InvalidParameterError(f"arch must be gru, lstm or transformer, got {arch!r}")
        resolve_device(device)  # an unknown or unavailable device is refused here, before any training
        self.device = device
        self.arch, self.config, self.season_length = arch, config or NeuralConfig(), season_length
        self.name = name or {"gru": "GRU", "lstm": "LSTM", "transformer": "Transformer"}[arch]
        self.model, self.history, self.exog = None, [], []

    #: the Forecaster hands over regressors: ``fit(df, h, exog=[...])``, ``predict(df, h, X=...)``
    accepts_exog = True

    def _input_size(self, h):
        return self.config.input_size or min(60, max(2 * h, 2 * self.season_length))

    def _build(self, h, L):
        k = len(self.exog)
        if self.arch == "transformer":
            return _Attention(h, self.config.hidden_size, L, k=k)
        return _RNN(h, self.config.hidden_size, self.arch, k=k)

    def _features(self, panel: Panel, i, t, L: int, h: int, x, m, s, future=None):
        """The network's inputs at windows cut at ``t``: values, mask and regressors (the last standardized on
        the device by the network), and the regressors over the horizon (``future`` when given)."""
        base = _inputs(x, m, s)
        if not self.exog:
            return base, None
        past, ahead = panel.exog_windows(i, t, L, 0 if future is not None else h)
        past = past * m[..., None]  # nothing made up looks observed: zero before a series' start, as y
        return np.concatenate([base, past.astype(np.float32)], axis=-1), (future if future is not None else ahead)

    def fit(self, df, h: int, exog=()):
        """Train on every series of ``df``; ``exog``: columns of ``df`` read as future-known regressors."""
        c = self.config
        L = self._input_size(h)
        self.exog = list(exog)
        panel = Panel.from_frame(df, exog=self.exog, pad=L, season=self.season_length)
        # validation: the last h points of each training part; training windows end before them
        cut = np.maximum(panel.lengths - h, 2)
        i, t = window_cuts(cut, L, h)
        if len(i) == 0:
            raise InvalidParameterError(f"no series is longer than 2 horizons ({2 * h}): nothing to train on")
        X, M, Yt, _ = panel.windows(i, t, L, h)
        st = masked_scale(X, M)
        Xt, Ft = self._features(panel, i, t, L, h, X, M, st)
        val = np.flatnonzero(panel.lengths - h >= 1)  # a validation target with at least one observed input
        X, M, Yv, _ = panel.windows(val, panel.lengths[val] - h, L, h)
        sv = masked_scale(X, M)
        Xv, Fv = self._features(panel, val, panel.lengths[val] - h, L, h, X, M, sv)
        dev = resolve_device(self.device)
        Xt, Yt, Xv, Yv = (torch.from_numpy(np.asarray(a, np.float32)).to(dev)
                          for a in (Xt, Yt / st, Xv, Yv / sv))
        torch.manual_seed(c.seed)
        g = torch.Generator().manual_seed(c.seed)  # on the CPU: the same batches on every device
        model = self._build(h, L).to(dev)
        if self.exog:
            model.regressors.x_mean.copy_(torch.from_numpy(panel.x.mean(axis=0)))
            model.regressors.x_std.copy_(torch.from_numpy(np.where(panel.x.std(axis=0) > 0, panel.x.std(axis=0),
                                                                   1.0)))
            Ft, Fv = (torch.from_numpy(np.asarray(a, np.float32)).to(dev) for a in (Ft, Fv))
        opt = torch.optim.Adam(model.parameters(), lr=c.learning_rate)
        best, best_state, bad = float("inf"), None, 0
        self.history = []
        for step in range(1, c.max_steps + 1):
            model.train()
            idx = torch.randint(len(Xt), (c.batch_size,), generator=g).to(dev)
            loss = (self._run(model, Xt[idx], None if Ft is None else Ft[idx]) - Yt[idx]).abs().mean()  # scaled MAE
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if step % c.val_check_steps == 0:
                model.eval()
                with torch.no_grad():
                    val = (self._run(model, Xv, Fv) - Yv).abs().mean().item()
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

    @staticmethod
    def _run(model, x, xf):
        """The network on inputs ``x`` whose regressor channels (after the first two) and ``xf`` are raw."""
        if model.regressors is None:
            return model(x)
        x = torch.cat([x[..., :2], model.regressors(x[..., 2:])], dim=-1)
        return model(x, model.regressors(xf))

    @torch.no_grad()
    def predict(self, df, h: int, X=None):
        """The forecasts from each series' end; ``X`` (series in order of first appearance, h, regressors): the
        regressors over the horizon, needed when the model was fitted with some."""
        if self.model is None or h != self.h:
            raise RuntimeError("fit the forecaster with this horizon first")
        if self.exog and X is None:
            raise InvalidParameterError(f"{self.name} was fitted with regressors {', '.join(self.exog)}: give their "
                                        "values over the horizon")
        panel = Panel.from_frame(df, exog=self.exog, pad=self.L)
        x, m = panel.last(self.L)
        s = masked_scale(x, m)
        ends = np.arange(len(panel.lengths))
        feats, future = self._features(panel, ends, panel.lengths, self.L, h, x, m, s,
                                       None if X is None else np.asarray(X, float))
        device = next(self.model.parameters()).device
        xf = None if future is None else torch.from_numpy(np.asarray(future, np.float32)).to(device)
        yhat = self._run(self.model, torch.from_numpy(feats).to(device), xf).cpu().numpy() * s
        return dict(zip(panel.ids, yhat))
