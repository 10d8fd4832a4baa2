"""Training one N-BEATS member: its configuration, the window samplers, the scaled losses, the weights' moving
average, and the member's forecasts at every step count asked for."""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
import torch.nn as nn

from ...errors import InvalidParameterError
from ...devices import DTYPES, autocast, resolve_device
from ..panel import Panel
from .model import NBeats


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
    ablation), as do ``sampling="windows"`` and ``short="pad"``. ``dtype="bfloat16"`` runs the
    training steps' products in bfloat16 (autocast; the weights, their average and the loss stay float32), which
    costs about a third of float32's time on a CPU that multiplies bfloat16 natively.
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
    dtype: str = "float32"

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise InvalidParameterError(f"loss must be one of {sorted(LOSSES)}, got {self.loss!r}")
        if self.dtype not in DTYPES:
            raise InvalidParameterError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.sampling not in ("series", "windows"):
            raise InvalidParameterError(f"sampling must be series or windows, got {self.sampling!r}")
        for name in ("width", "layers", "blocks", "max_steps", "batch_size", "min_cut"):
            if getattr(self, name) < 1:
                raise InvalidParameterError(f"{name} must be >= 1")
        if self.input_multiple <= 0 or self.learning_rate <= 0:
            raise InvalidParameterError("input_multiple and learning_rate must be > 0")

    def input_size(self, h: int) -> int:
        return max(1, int(round(self.input_multiple * h)))

    def record(self) -> dict:
        """The settings as a dict for a stored artifact's manifest. ``dtype`` came after the stored runs, all
        float32: it is left out at that value, so their manifests still describe the same members."""
        out = asdict(self)
        if out["dtype"] == "float32":
            del out["dtype"]
        return out


#: the generic member of :meth:`NBeatsForecaster.default`: two layers of width 256 per block, three blocks, the
#: MASE loss, series sampled uniformly, windows up to five horizons of history, an EMA of the weights and the
#: last observed level subtracted (an ablation of each setting is in §14.63)
GENERIC_MEMBER = NBeatsConfig(width=256, layers=2, blocks=3, batch_size=512, learning_rate=1e-3, ema=0.999,
                              history=5.0, loss="mase", stack="generic", level=True)


#: the same member with the interpretable basis (trend, seasonality, trend, seasonality): the paper's N-BEATS-I,
#: whose members join the generic ones in its N-BEATS-I+G ensemble
INTERPRETABLE_MEMBER = replace(GENERIC_MEMBER, stack="interpretable", blocks=4)


#: the members of §14.63's round-3 ensemble and of :meth:`NBeatsForecaster.ig_ensemble`: both stacks, with training
#: windows drawn uniformly over every cut point (so long series weigh more) and short histories padded with their
#: first value instead of masked
PRESET_MEMBERS = tuple(replace(c, sampling="windows", short="pad") for c in (GENERIC_MEMBER, INTERPRETABLE_MEMBER))

#: the member of :meth:`NBeatsForecaster.default`: interpretable, input 2h, windows drawn uniformly, short histories
#: masked, 2,000 steps. Chosen on M3 monthly's two validation windows (never its hold-out) against the I+G
#: ensemble's members: masking beat padding for each of four seeds, and four such members in bfloat16 scored
#: 0.8592 against 0.8806 for round 3's twelve (docs/benchmarks.md, "A cheaper default N-BEATS")
FAST_MEMBER = replace(PRESET_MEMBERS[1], short="mask", max_steps=2000)


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
        with autocast(dev, c.dtype):  # bfloat16 products; the weights, their EMA and the loss stay float32
            f = model(torch.from_numpy(X / s[:, None]).to(dev), torch.from_numpy(Mk).to(dev))
        loss = loss_fn(f.float(), torch.from_numpy(Y / s[:, None]).to(dev), torch.from_numpy(w).to(dev))
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
