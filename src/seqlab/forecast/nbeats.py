"""N-BEATS (Oreshkin et al., 2020): a global forecaster built from fully connected blocks.

One small class per equation, as in the Annotated Transformer:

================  ============================================================  ==================
class             equation                                                      label on the page
================  ============================================================  ==================
FullyConnected    h_l = ReLU(W_l h_{l-1} + b_l)                                 eq-nbeats-block
GenericBasis      (xb, yf) = (theta[:L], theta[L:]), theta = W h                eq-nbeats-block
TrendBasis        yf_j = sum_p theta_p tau_j^p                                  (interpretable)
SeasonalityBasis  yf_j = sum_k a_k cos(2 pi k tau_j) + b_k sin(2 pi k tau_j)    (interpretable)
Block             theta = W_theta FC(x); (xb, yf) = basis(theta)                eq-nbeats-block
NBeats            x_{k+1} = (x_k - xb_k) m;  yhat = y_last + sum_k yf_k         eq-nbeats-residual
MASELoss          mean_j |y_j - yhat_j| / q_t, q_t the MASE scale at the cut    (the loss)
================  ============================================================  ==================

The data side is as small: :class:`~seqlab.forecast.panel.Panel` (the one panel structure of
:mod:`seqlab.forecast`) gives the collection as one left-padded array with a mask of observed
points (short series are masked, never padded with made-up values), and :class:`UniformSeriesSampler` draws a series uniformly and
then a cut point uniformly within it. Training windows reach the forecast origin:
the last cut of a series is ``n - h``, so its target is the series' last horizon.
Nothing is held back for early stopping; the step count is a setting chosen on
validation windows that end before the hold-out.

:class:`NBeatsForecaster` is an ensemble: one member per (input length, loss, seed),
each an independent job with a fixed seed (run in worker processes by
:func:`seqlab.parallel.run_calls`), combined by the median. ``device`` (as in
``seqlab lm train``: "auto", "cpu", "cuda", "mps") says where the members train and
forecast; the weights are initialised and the windows drawn on the CPU, so only the
arithmetic moves, and forecasts come back as CPU arrays.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
import torch.nn as nn

from ..errors import InvalidParameterError
from ..devices import resolve_device
from .engines import make_engine
from .panel import Panel
from .neural import NeuralForecaster

__all__ = ["FullyConnected", "GenericBasis", "TrendBasis", "SeasonalityBasis", "Block", "NBeats", "Panel",
           "UniformSeriesSampler", "UniformWindowSampler", "MASELoss", "SMAPELoss", "ScaledMAELoss", "LOSSES",
           "NBeatsConfig", "GENERIC_MEMBER", "INTERPRETABLE_MEMBER", "train_member", "member_forecasts",
           "timed_member_forecasts", "MemberForecasts", "ensemble_median", "NBeatsForecaster"]


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

    def forward(self, x, mask):  # x, mask: (B, input_size), the oldest value first
        residual = x * mask
        forecast = x[:, -1:].expand(-1, self.h) if self.level else x.new_zeros(x.shape[0], self.h)
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


# ----------------------------------------------------------------------------------------------------------------
# The data: one array for the collection, windows up to the origin
# ----------------------------------------------------------------------------------------------------------------
class UniformSeriesSampler:
    """i ~ U{series with a cut}, then t ~ U{lo_i .. hi_i}: every series weighs the same, whatever its length."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, seed: int):
        self.ok = np.flatnonzero(hi >= lo)
        if not len(self.ok):
            raise InvalidParameterError("no series is long enough for a single training window")
        self.lo, self.hi = lo, hi
        self.rng = np.random.default_rng(seed)

    def draw(self, batch: int):
        i = self.ok[self.rng.integers(0, len(self.ok), batch)]
        t = self.lo[i] + (self.rng.random(batch) * (self.hi[i] - self.lo[i] + 1)).astype(int)
        return i, np.minimum(t, self.hi[i])


class UniformWindowSampler(UniformSeriesSampler):
    """(i, t) ~ U{all windows}: long series are drawn in proportion to their number of cuts (the ablation)."""

    def __init__(self, lo, hi, seed):
        super().__init__(lo, hi, seed)
        count = np.where(hi >= lo, hi - lo + 1, 0).astype(float)
        self.p = count / count.sum()

    def draw(self, batch: int):
        i = self.rng.choice(len(self.p), size=batch, p=self.p)
        t = self.lo[i] + (self.rng.random(batch) * (self.hi[i] - self.lo[i] + 1)).astype(int)
        return i, np.minimum(t, self.hi[i])


# ----------------------------------------------------------------------------------------------------------------
# The losses. The network works on y / s (s: mean |input|); each loss receives the scaled forecast and target,
# and the factor w = s / q that turns a scaled absolute error into the window's own MASE terms.
# ----------------------------------------------------------------------------------------------------------------
class MASELoss(nn.Module):
    """mean_j |y_j - yhat_j| / q_t: the window's MASE, q_t the in-sample seasonal-naive MAE of y[:t]."""

    def forward(self, f, y, w):
        return ((f - y).abs() * w[:, None]).mean()


class SMAPELoss(nn.Module):
    """mean_j 200 |y_j - yhat_j| / (|y_j| + |yhat_j|): sMAPE, scale-free (M3's own metric)."""

    def forward(self, f, y, w):
        return (200 * (f - y).abs() / (f.abs() + y.abs()).clamp_min(1e-6)).mean()


class ScaledMAELoss(nn.Module):
    """mean_j |y_j - yhat_j| / s: the absolute error on the window's input scale (what the GRU minimises)."""

    def forward(self, f, y, w):
        return (f - y).abs().mean()


LOSSES = {"mase": MASELoss, "smape": SMAPELoss, "mae": ScaledMAELoss}


# ----------------------------------------------------------------------------------------------------------------
# Training one member
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NBeatsConfig:
    """One member's settings; an ensemble varies ``input_multiple``, ``loss`` and ``seed``.

    ``input_size = round(input_multiple * h)``. ``ema``: forecasts come from an exponential
    moving average of the weights (decay ``min(ema, (1 + step) / (10 + step))``; None: the
    raw weights), which smooths the step-to-step noise of a constant learning rate. ``history`` limits the cut points to
    the last ``history`` horizons of each series (None: all). ``reach_origin=False``
    stops the windows one horizon before the origin (the GRU's scheme, kept for the
    ablation), as do ``sampling="windows"`` and ``short="pad"``.
    """

    input_multiple: float = 2.0
    loss: str = "mase"
    seed: int = 1
    stack: str = "generic"
    width: int = 256
    layers: int = 3
    blocks: int = 3
    level: bool = True
    max_steps: int = 1000
    batch_size: int = 512
    learning_rate: float = 1e-3
    history: float | None = None
    ema: float | None = 0.999
    min_cut: int = 2
    sampling: str = "series"
    short: str = "mask"
    reach_origin: bool = True

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise InvalidParameterError(f"loss must be one of {sorted(LOSSES)}, got {self.loss!r}")
        if self.sampling not in ("series", "windows"):
            raise InvalidParameterError(f"sampling must be series or windows, got {self.sampling!r}")
        for name in ("width", "layers", "blocks", "max_steps", "batch_size", "min_cut"):
            if getattr(self, name) < 1:
                raise InvalidParameterError(f"{name} must be >= 1")
        if self.input_multiple <= 0 or self.learning_rate <= 0:
            raise InvalidParameterError("input_multiple and learning_rate must be > 0")

    def input_size(self, h: int) -> int:
        return max(1, int(round(self.input_multiple * h)))


#: the generic member of :meth:`NBeatsForecaster.default`: two layers of width 256 per block, three blocks, the
#: MASE loss, series sampled uniformly, windows up to five horizons of history, an EMA of the weights and the
#: last observed level subtracted (an ablation of each setting is in §14.63)
GENERIC_MEMBER = NBeatsConfig(width=256, layers=2, blocks=3, batch_size=512, learning_rate=1e-3, ema=0.999,
                              history=5.0, loss="mase", stack="generic", level=True)
#: the same member with the interpretable basis (trend, seasonality, trend, seasonality): the paper's N-BEATS-I,
#: whose members join the generic ones in its N-BEATS-I+G ensemble
INTERPRETABLE_MEMBER = replace(GENERIC_MEMBER, stack="interpretable", blocks=4)
#: the members of :meth:`NBeatsForecaster.default`: both stacks, with training windows drawn uniformly over every
#: cut point (so long series weigh more) and short histories padded with their first value instead of masked
PRESET_MEMBERS = tuple(replace(c, sampling="windows", short="pad") for c in (GENERIC_MEMBER, INTERPRETABLE_MEMBER))


def build_model(c: NBeatsConfig, h: int, season: int = 1) -> NBeats:
    """The network a member's config describes."""
    return NBeats(c.input_size(h), h, c.width, c.layers, c.blocks, c.stack, season, c.level)


def _input_scale(X, Mk):
    """s = mean |x| over the observed inputs (1 where that is 0): the per-window scale the network sees."""
    s = (np.abs(X) * Mk).sum(1) / np.maximum(Mk.sum(1), 1)
    return np.where(s > 0, s, 1.0).astype(np.float32)


def _cut_range(n: np.ndarray, h: int, c: NBeatsConfig):
    hi = n - h if c.reach_origin else n - 2 * h
    lo = np.full_like(n, c.min_cut)
    if c.history is not None:
        lo = np.maximum(lo, hi - int(round(c.history * h)) + 1)
    return lo, hi


def _device(device) -> torch.device:
    """A device name (see :func:`seqlab.devices.resolve_device`) or a ``torch.device``, as a torch.device."""
    return device if isinstance(device, torch.device) else resolve_device(device)


def _forecast(model, X, Mk):
    s = _input_scale(X, Mk)
    device = next(model.parameters()).device
    with torch.no_grad():
        f = model(torch.from_numpy(X / s[:, None]).to(device), torch.from_numpy(Mk).to(device)).cpu().numpy()
    return f.astype(float) * s[:, None]


def train_member(series: list[np.ndarray], h: int, season: int, config: NBeatsConfig,
                 checkpoints: tuple[int, ...] = (), progress=None, device="cpu"):
    """Train one member on every window of ``series`` that ends by the origin; return ``(model, forecasts)``.

    ``forecasts`` maps each step in ``checkpoints`` (and ``max_steps``) to the (N, h)
    forecasts from each series' end after that many steps. The learning rate is
    constant, so the model at step s of a longer run is the model a run of s steps
    ends with: one run gives the validation curve over step counts. ``progress(step)``, when
    given, is called about a hundred times along the way and after the last step. ``device``: where the steps
    run (the model is initialised on the CPU and moved there; the model returned stays there).
    """
    c = config
    dev = _device(device)
    L = c.input_size(h)
    torch.manual_seed(c.seed)
    panel = Panel(series, L, season, c.short)
    lo, hi = _cut_range(panel.n, h, c)
    sampler = (UniformSeriesSampler if c.sampling == "series" else UniformWindowSampler)(lo, hi, c.seed)
    model = build_model(c, h, season).to(dev)
    loss_fn = LOSSES[c.loss]()
    opt = torch.optim.Adam(model.parameters(), lr=c.learning_rate)
    avg = _EMA(model, c.ema) if c.ema else None
    Xo, Mo = panel.last(L)
    marks = sorted({int(s) for s in checkpoints if 0 < s <= c.max_steps} | {c.max_steps})
    out = {}
    every = max(1, min(c.max_steps // 100, 20))
    for step in range(1, c.max_steps + 1):
        i, t = sampler.draw(c.batch_size)
        X, Mk, Y, q = panel.windows(i, t, L, h)
        s = _input_scale(X, Mk)
        w = np.where(q > 0, s / np.where(q > 0, q, 1), 1.0).astype(np.float32)  # s / q: scaled error -> MASE terms
        f = model(torch.from_numpy(X / s[:, None]).to(dev), torch.from_numpy(Mk).to(dev))
        loss = loss_fn(f, torch.from_numpy(Y / s[:, None]).to(dev), torch.from_numpy(w).to(dev))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if avg is not None:
            avg.update(model, step)
        if step in marks:
            out[step] = _forecast(avg.model if avg is not None else model, Xo, Mo)
        if progress is not None and (step % every == 0 or step == c.max_steps):
            progress(step)
    return (avg.model if avg is not None else model).eval(), out


class _EMA:
    """theta_avg <- d theta_avg + (1 - d) theta, d = min(decay, (1 + step) / (10 + step)): Polyak-style averaging."""

    def __init__(self, model, decay):
        self.model = copy.deepcopy(model).eval()
        self.decay = decay
        self.avg = [p.requires_grad_(False) for p in self.model.parameters()]

    @torch.no_grad()
    def update(self, model, step):
        d = min(self.decay, (1 + step) / (10 + step))
        torch._foreach_mul_(self.avg, d)
        torch._foreach_add_(self.avg, [p.detach() for p in model.parameters()], alpha=1 - d)


def member_forecasts(series: list[np.ndarray], h: int, season: int, config: NBeatsConfig,
                     checkpoints: tuple[int, ...] = (), device="cpu") -> dict[int, np.ndarray]:
    """Only the forecasts of :func:`train_member` (small to send back from a worker process)."""
    return train_member(series, h, season, config, checkpoints, device=device)[1]


def timed_member_forecasts(series: list[np.ndarray], h: int, season: int, config: NBeatsConfig,
                           checkpoints: tuple[int, ...] = (), device="cpu") -> tuple[dict[int, np.ndarray], float]:
    """:func:`member_forecasts` and the seconds the training took: one job of
    :meth:`NBeatsForecaster.member_jobs` (a top-level function, so worker processes can run it)."""
    import time

    t0 = time.perf_counter()
    out = member_forecasts(series, h, season, config, checkpoints, device)
    return out, time.perf_counter() - t0


@dataclass
class MemberForecasts:
    """Each member's forecasts after each checkpoint, from :meth:`NBeatsForecaster.forecast_members`.

    ``forecasts[m][s]`` is member ``m``'s (N, h) forecast after ``s`` training steps, series in the
    order of ``ids`` (sorted ``unique_id``); ``seconds[m]`` the seconds its training took.
    """

    ids: list
    forecasts: list
    seconds: list

    def median(self, steps: int, members: int | None = None) -> np.ndarray:
        """The ensemble's forecast: the median of the first ``members`` members (all by default) after ``steps``."""
        chosen = self.forecasts[: len(self.forecasts) if members is None else members]
        if not chosen:
            raise InvalidParameterError(f"members must be >= 1, got {members!r}")
        if any(steps not in f for f in chosen):
            raise InvalidParameterError(f"no forecast after {steps} steps: the checkpoints are "
                                        f"{sorted(chosen[0])}")
        return ensemble_median([f[steps] for f in chosen])


def ensemble_median(forecasts: list[np.ndarray]) -> np.ndarray:
    """The element-wise median over members: robust to one member that goes astray."""
    return np.median(np.stack(forecasts), axis=0)


# ----------------------------------------------------------------------------------------------------------------
# The forecaster: fit/predict like the other global models
# ----------------------------------------------------------------------------------------------------------------
#: the most members :meth:`NBeatsForecaster.default` trains (ten seeds)
MAX_MEMBERS = 60


#: member seeds are reduced modulo this, so that a base seed up to the CLI's 2**62 still gives valid torch seeds
_SEED_MODULUS = 2 ** 63


def _fit_member(series, h, season, config, report=None, device="cpu"):
    model, _ = train_member(series, h, season, config, progress=report, device=device)
    return config, {k: v.cpu() for k, v in model.state_dict().items()}  # CPU tensors travel between processes


def _member_report(progress, k: int, n: int, steps: int):
    return lambda step: progress(member=k + 1, members=n, step=step, steps=steps)


class _QueueReport:
    """A member's ``progress(step)`` in a worker process: ``(member, step)`` onto the parent's queue."""

    def __init__(self, queue, member: int):
        self.queue, self.member = queue, member

    def __call__(self, step: int) -> None:
        self.queue.put((self.member, step))


def _drain(queue, progress, members: int, steps: list[int], stop) -> None:
    while not stop.is_set():
        try:
            k, step = queue.get(timeout=0.2)
        except Exception:  # empty, or the manager is gone at the end
            continue
        progress(member=k + 1, members=members, step=step, steps=steps[k])


class NBeatsForecaster(NeuralForecaster):
    """An N-BEATS ensemble: one member per (architecture, seed, loss, input multiple), combined by the median.

    ``config`` is one member config, or several (architectures, e.g. the generic and the
    interpretable stack: the paper's I+G ensemble). Members are ordered architecture
    first, then seed, so the first ``len(losses) * len(input_multiples)`` members hold one
    of each kind for the first architecture; member ``k`` of the round of seed ``s`` of
    architecture ``a`` is trained with seed ``(1000 s + 100 a + k) mod 2**63`` (torch takes 64-bit seeds).
    ``size`` keeps the
    first ``size`` members (an ensemble size chosen on validation windows). ``fit(df, h)`` trains the members as
    independent jobs in ``workers`` processes (each seeded and single-threaded, so the result does
    not depend on the number of workers), or on a cluster when an ``engine`` is given (an
    :class:`~seqlab.forecast.Engine` or "dask", "ray", "spark"; a
    :class:`~seqlab.forecast.Forecaster` with an engine hands it over): the same members,
    the same numbers. ``predict(df, h)`` returns the median forecast. ``device``: "auto" (the default, as for
    ``seqlab lm train``: CUDA when present, then MPS, else the CPU), "cpu", "cuda" or "mps"; every member trains and
    forecasts there, and an unavailable device is an :class:`~seqlab.errors.InvalidParameterError` at once. On the
    CPU the numbers do not depend on the option (the same arithmetic runs); a GPU's differ from them by rounding.
    """

    #: :class:`~seqlab.forecast.Forecaster` passes its engine to ``fit``
    accepts_engine = True
    #: and a ``progress`` callback, which follows the members' training steps
    accepts_progress = True

    @classmethod
    def default(cls, season_length: int = 1, max_steps: int | None = None, members: int | None = None,
                **kw) -> "NBeatsForecaster":
        """The preset ``Forecaster(["N-BEATS"])`` and ``seqlab forecast evaluate --models N-BEATS`` use.

        Generic and interpretable members (:data:`PRESET_MEMBERS`: the paper's I+G ensemble, windows drawn
        uniformly, short histories padded) with inputs of 2h, 3h and 4h, one seed: six members, 2,500 steps each,
        combined by the median. §14.63 chooses these settings on M3 monthly's validation windows. ``max_steps``
        replaces the 2,500 steps; ``members`` keeps the first that many members in the ensemble's order (generic 2h, 3h, 4h, then
        interpretable; past 6, more seeds, whose generic members all come before the interpretable ones); ``kw``
        goes to the constructor (``workers``, ``engine``, ``device``, ``name``).
        """
        steps = 2500 if max_steps is None else max_steps
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise InvalidParameterError(f"max_steps must be a whole number >= 1, got {max_steps!r}")
        if members is not None and (isinstance(members, bool) or not isinstance(members, int)
                                    or not 1 <= members <= MAX_MEMBERS):
            raise InvalidParameterError(f"members must be a whole number from 1 to {MAX_MEMBERS}, got {members!r}")
        configs = tuple(replace(c, max_steps=steps) for c in PRESET_MEMBERS)
        inputs = (2.0, 3.0, 4.0)
        if members is not None:  # members run architecture first, then seed: every seed's generic ones come first
            kw |= dict(seeds=tuple(range(1, -(-members // (len(configs) * len(inputs))) + 1)), size=members)
        return cls(configs, input_multiples=inputs, season_length=season_length, **kw)

    def __init__(self, config: NBeatsConfig | tuple | list | None = None, input_multiples=(2.0,), losses=("mase",),
                 seeds=(1,), season_length: int = 1, name: str = "N-BEATS", size: int | None = None,
                 workers: int | None = None, engine=None, device: str = "auto"):
        configs = (config or NBeatsConfig(),) if config is None or isinstance(config, NBeatsConfig) else tuple(config)
        if not configs or not all(isinstance(c, NBeatsConfig) for c in configs):
            raise InvalidParameterError("config must be an NBeatsConfig or a non-empty sequence of them")
        if len(configs) > 10:
            raise InvalidParameterError(f"at most 10 architectures (their seeds are 100 apart), got {len(configs)}")
        self.configs = configs
        self.config = configs[0]
        self.input_multiples, self.losses, self.seeds = tuple(input_multiples), tuple(losses), tuple(seeds)
        if not (self.input_multiples and self.losses and self.seeds):
            raise InvalidParameterError("give at least one input multiple, loss and seed")
        for loss in self.losses:
            if loss not in LOSSES:
                raise InvalidParameterError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}")
        if size is not None and size < 1:
            raise InvalidParameterError(f"size must be >= 1, got {size}")
        self.arch, self.name, self.season_length, self.workers = "nbeats", name, season_length, workers
        self.size = size
        self.engine = make_engine(engine)
        resolve_device(device)  # an unknown or unavailable device is refused here, before any training
        self.device = device
        self.model, self.members, self.history = None, [], []

    def member_configs(self) -> list[NBeatsConfig]:
        """Every member's config, in the fixed order: architecture, seed, loss, input multiple."""
        if len(self.losses) * len(self.input_multiples) > 100:
            raise InvalidParameterError("at most 100 (loss, input multiple) pairs per seed")
        out = []
        for a, config in enumerate(self.configs):
            for s in self.seeds:
                for k, (loss, m) in enumerate(itertools.product(self.losses, self.input_multiples)):
                    seed = (1000 * int(s) + 100 * a + k) % _SEED_MODULUS
                    out.append(replace(config, input_multiple=float(m), loss=loss, seed=seed))
        return out[: self.size]

    def describe(self) -> dict:
        extra = {"architectures": [asdict(c) for c in self.configs[1:]]} if len(self.configs) > 1 else {}
        return asdict(self.config) | {"input_multiples": list(self.input_multiples), "losses": list(self.losses),
                                      "seeds": list(self.seeds), "size": self.size} | extra

    @staticmethod
    def _series(df):
        """The series in the order of their ``unique_id``, each in time order: the model does not depend on the
        frame's row order."""
        ids, series = [], []
        for uid, g in df.sort_values("ds", kind="stable").groupby("unique_id", sort=True):
            ids.append(uid)
            series.append(g["y"].to_numpy(float))
        return ids, series

    def fit(self, df, h: int, engine=None, progress=None):
        """Train every member on all series up to their ends; ``engine`` (else the one given at construction).

        ``progress(member=i, members=N, step=s, steps=S)``, when given, follows the members' training (in this
        process or in local workers; on a cluster only each member's end). It changes no number.
        """
        _, series = self._series(df)
        configs = self.member_configs()
        device = resolve_device(self.device)
        engine = self.engine if engine is None else make_engine(engine)
        if engine is not None:
            fitted = engine.run_calls([(_fit_member, (series, h, self.season_length, c, None, device.type))
                                       for c in configs])
            for k, c in enumerate(configs):
                if progress is not None:
                    progress(member=k + 1, members=len(configs), step=c.max_steps, steps=c.max_steps)
        else:
            fitted = self._fit_here(series, h, configs, progress, device.type)
        self.members = []
        for c, state in fitted:
            net = build_model(c, h, self.season_length)
            net.load_state_dict(state)
            self.members.append((c, net.to(device).eval()))
        self.model, self.h = self.members[0][1], h
        return self

    def _fit_here(self, series, h, configs, progress, device: str):
        """The members in this process or in local worker processes, with their progress when asked for."""
        import threading

        from ..parallel import default_workers, run_calls

        args = (series, h, self.season_length)
        workers = default_workers() if self.workers is None else self.workers
        if progress is None:
            return run_calls([(_fit_member, (*args, c, None, device)) for c in configs], workers=workers)
        steps, n = [c.max_steps for c in configs], len(configs)
        if workers <= 1 or n <= 1:  # in this process: a plain callback
            return run_calls([(_fit_member, (*args, c, _member_report(progress, k, n, steps[k]), device))
                              for k, c in enumerate(configs)], workers=1)
        from multiprocessing import get_context

        manager = get_context("spawn").Manager()  # its queue's proxies travel to the spawned workers
        stop = threading.Event()
        try:
            queue = manager.Queue()
            drain = threading.Thread(target=_drain, args=(queue, progress, n, steps, stop), daemon=True)
            drain.start()
            return run_calls([(_fit_member, (*args, c, _QueueReport(queue, k), device))
                              for k, c in enumerate(configs)], workers=workers)
        finally:
            stop.set()
            manager.shutdown()

    def member_jobs(self, df, h: int, steps=(), members=None) -> list[tuple]:
        """The independent training jobs behind :meth:`forecast_members`, as ``(fn, args)`` pairs.

        Each job trains one member on every series of ``df`` up to its end for ``max(steps)`` steps (its own
        ``max_steps`` when ``steps`` is empty) and returns ``(forecasts, seconds)``: its (N, h) forecasts from the
        series' ends after each of ``steps``, and the seconds it took. ``members``: the indices of the members to
        train (all by default). Jobs of several forecasters and data sets can go to one
        :func:`seqlab.parallel.run_calls` (or an engine's ``run_calls``), which keeps every worker busy.
        """
        _, series = self._series(df)
        steps = tuple(sorted({int(s) for s in steps}))
        if any(s < 1 for s in steps):
            raise InvalidParameterError(f"steps must be whole numbers >= 1, got {steps!r}")
        configs = self.member_configs()
        chosen = range(len(configs)) if members is None else list(members)
        if any(not 0 <= k < len(configs) for k in chosen):
            raise InvalidParameterError(f"members must be indices below {len(configs)}, got {members!r}")
        device = resolve_device(self.device).type
        return [(timed_member_forecasts, (series, h, self.season_length,
                                          replace(configs[k], max_steps=steps[-1]) if steps else configs[k],
                                          steps, device)) for k in chosen]

    def forecast_members(self, df, h: int, steps=(), members=None) -> MemberForecasts:
        """Train the members on ``df`` and keep each one's forecasts after each of ``steps`` training steps.

        The evidence that a step count and an ensemble size are chosen from on validation windows: one run
        gives every member at every step count (the learning rate is constant, so the member after ``s`` steps
        of a longer run is the member a run of ``s`` steps ends with), and ``result.median(s, k)`` is the
        ensemble of the first ``k`` members after ``s`` steps. The members run as :meth:`fit`'s do (in
        ``workers`` processes or on the engine), with the same numbers; the trained networks are not kept.
        """
        jobs = self.member_jobs(df, h, steps, members)
        if self.engine is not None:
            done = self.engine.run_calls(jobs)
        else:
            from ..parallel import run_calls

            done = run_calls(jobs, workers=self.workers)
        ids, _ = self._series(df)
        return MemberForecasts(ids, [f for f, _ in done], [sec for _, sec in done])

    def predict(self, df, h: int):
        if not self.members or h != self.h:
            raise RuntimeError("fit the forecaster with this horizon first")
        from ..threads import single_threaded

        ids, series = self._series(df)
        preds = []
        with single_threaded():  # the same arithmetic as a worker's, so fit-then-predict matches the experiment's jobs
            for c, net in self.members:
                L = c.input_size(h)
                X, Mk = Panel(series, L, self.season_length, c.short).last(L)
                preds.append(_forecast(net, X, Mk))
        return dict(zip(ids, ensemble_median(preds)))
