"""§14.46.1 The vanishing-gradient product, measured by lag; clipping preserves direction."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..analysis.gradients import grad_by_lag
from ..claims import claim_source, require, verdict
from ._util import wide_by_lag
from .base import section

#: the chapter's settings: spectral radii, sequence length, width, seeds
RHOS = (0.7, 0.95, 1.0, 1.15)
T = 60
D = 32
SEED = 21
CLIP_SEED = 23
#: the radii the explorer precomputes (a slider over them)
EXPLORER_RHOS = tuple(round(r, 2) for r in np.arange(0.5, 1.301, 0.05))


def gradient_frame(rhos=RHOS, T: int = T, d: int = D, seed: int = SEED) -> pd.DataFrame:
    """``grad_by_lag`` for every radius, long format: rho, lag, steps_back, g."""
    rows = []
    for rho in rhos:
        g = grad_by_lag(rho, T=T, d=d, seed=seed)
        for t in range(T):
            # the chapter labels the state h_t with lag T-1-t; it is T-t steps before h_T
            rows.append(dict(rho=rho, lag=T - 1 - t, steps_back=T - t, g=max(float(g[t]), 1e-30),
                             label=f"ρ = {rho:.2f}"))
    return pd.DataFrame(rows)


def tanh_slopes(rhos=RHOS, T: int = T, d: int = D, seed: int = SEED) -> pd.DataFrame:
    """The tanh slope 1 - h^2 along the runs of :func:`gradient_frame` (the same W, W_x and inputs).

    Columns: rho, mean_slope (mean of 1 - h_t^2 over every step and unit), rho_times_slope,
    largest_state (the largest |h_t| of the run).
    """
    rows = []
    for rho in rhos:
        torch.manual_seed(seed)  # grad_by_lag's draw order: W, W_x, then the inputs
        W = torch.randn(d, d)
        W = W / torch.linalg.eigvals(W.double()).abs().max().item() * rho
        Wx = torch.randn(d, 4) * 0.1
        xs = [torch.randn(4) for _ in range(T)]
        h, hs = torch.zeros(d), []
        for x in xs:
            h = torch.tanh(W @ h + Wx @ x)
            hs.append(h)
        H = torch.stack(hs)
        slope = float((1 - H ** 2).mean())
        rows.append(dict(rho=rho, mean_slope=slope, rho_times_slope=rho * slope,
                         largest_state=float(H.abs().max())))
    return pd.DataFrame(rows)


def clipping_check(seed: int = CLIP_SEED) -> pd.DataFrame:
    """Norm-clip an exploding gradient (norm 1e5) to 1 and measure the angle between before and after."""
    torch.manual_seed(seed)
    p = torch.randn(100, requires_grad=True)
    (p.sum() * 1e4).backward()
    before = p.grad.norm().item()
    dir_before = p.grad / p.grad.norm()
    torch.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    after = p.grad.norm().item()
    dir_after = p.grad / p.grad.norm()
    return pd.DataFrame([dict(norm_before=before, norm_after=after,
                              cosine_between_directions=(dir_before * dir_after).sum().item())])


def first_lag_below(df: pd.DataFrame, rho: float, threshold: float) -> int | None:
    """Smallest lag at which the gradient for ``rho`` has fallen below ``threshold`` (None if never)."""
    sub = df[(df.rho == rho) & (df.g < threshold)]
    return int(sub.lag.min()) if len(sub) else None


def decay_per_step(df: pd.DataFrame, rho: float) -> float:
    """Geometric decay factor per step: exp of the slope of log g against lag."""
    sub = df[df.rho == rho]
    return float(np.exp(np.polyfit(sub.lag, np.log(sub.g), 1)[0]))


def log_linear_fit(df: pd.DataFrame, rho: float) -> float:
    """R² of the straight-line fit of log g against lag for ``rho`` (1 = exactly geometric decay)."""
    sub = df[df.rho == rho]
    y = np.log(sub.g.to_numpy())
    resid = y - np.polyval(np.polyfit(sub.lag, y, 1), sub.lag)
    return float(1 - resid.var() / y.var())


@claim_source
def gradient_claims(vg: pd.DataFrame) -> list:
    """Geometric decay at rho = 0.7, what is left at rho = 0.95, and the errata's premises."""
    at = lambda rho, lag: float(vg[(vg.rho == rho) & (vg.lag == lag)].g.iloc[0])
    r2 = log_linear_fit(vg, 0.7)
    left = at(0.95, 55) / at(0.95, 0)
    g115 = vg[vg.rho == 1.15].g
    return [
        verdict("s461_straight", r2 > 0.99 and decay_per_step(vg, 0.7) < 1, r2=r2,
                decay_per_step=decay_per_step(vg, 0.7)),
        verdict("s461_little_left", left < 0.01, fraction=left),
        require("s461_erratum_lag40", at(0.7, 40) > 1e-8 and first_lag_below(vg, 0.7, 1e-8) is not None,
                g_lag40=at(0.7, 40), first_below=first_lag_below(vg, 0.7, 1e-8)),
        require("s461_erratum_no_explosion", g115.max() < 10 * at(1.15, 0),
                max_g=float(g115.max()), g_lag0=at(1.15, 0)),
    ]


@claim_source
def slope_claims(slopes: pd.DataFrame) -> list:
    """At the largest radius the mean tanh slope brings rho times it below one, and the slope falls as rho grows."""
    s = slopes.sort_values("rho")
    top, low = s.iloc[-1], s.iloc[0]
    falls = bool((np.diff(s.mean_slope.to_numpy()) < 0).all())
    return [verdict("s461_brake", falls and top.rho_times_slope < 1, rho=float(top.rho), slope=float(top.mean_slope),
                    product=float(top.rho_times_slope), largest=float(top.largest_state), rho_low=float(low.rho),
                    slope_low=float(low.mean_slope), falls=falls)]


@claim_source
def clipping_claims(clip: pd.DataFrame) -> list:
    """Clipping sets the norm to one and keeps the direction (cosine one to 1e-6)."""
    c = clip.iloc[0]
    return [require("s461_clip_direction", abs(c.norm_after - 1) < 1e-4 and abs(c.cosine_between_directions - 1) < 1e-6,
                    norm_after=float(c.norm_after), cosine=float(c.cosine_between_directions))]


def figure(vg: pd.DataFrame, slopes: pd.DataFrame | None = None):
    """The gradient by lag for every radius; ``slopes`` (:func:`tanh_slopes`) adds the largest radius's mean slope."""
    from ..plotting import line_pair

    top = vg[vg.label == vg.label.max()]  # the largest radius (labels share one format)
    rho = top.label.iloc[0].split("= ")[1]
    mean = None if slopes is None else float(slopes.set_index("rho").mean_slope[float(rho)])
    subtitle = ("One random W rescaled to each spectral radius ρ; dashed: norm 1"
                + ("" if mean is None else f". Mean tanh slope 1−h² at ρ = {rho}: {mean:.2f}"))
    from plotnine import theme

    gg, fig = line_pair(vg, "lag", "g", "label", title="Gradient reaching back through time", subtitle=subtitle,
                        xlab="Lag (steps back from the loss)", ylab="Gradient norm (log scale)", log_y=True,
                        reverse_x=True, hline=1.0)
    return gg + theme(figure_size=(6.8, 3.6)), fig  # four curves on one panel: a shorter figure reads as well


def explorer(seed: int = SEED, rhos=EXPLORER_RHOS):
    """A slider over the spectral radius: the gradient-by-lag curve for each, precomputed."""
    import plotly.graph_objects as go

    from ..plotting import slider_figure

    vg = gradient_frame(rhos, seed=seed)
    steps = []
    for rho in rhos:
        sub = vg[vg.rho == rho]
        steps.append((f"{rho:.2f}", [go.Scatter(x=sub.lag, y=sub.g, mode="lines", name=f"ρ = {rho:.2f}",
                                                line=dict(color="#3B7DD8", width=3)),
                                     go.Scatter(x=[0, T - 1], y=[1.0, 1.0], mode="lines", name="gradient = 1",
                                                line=dict(color="#737373", dash="dash"))]))
    fig = slider_figure(steps, title="Move the spectral radius", subtitle="Gradient norm at each earlier state, "
                        "same W direction, rescaled", xlab="Lag (steps back from the loss)",
                        ylab="Gradient norm (log scale)", slider_label="spectral radius = ", log_y=True,
                        active=rhos.index(0.95) if 0.95 in rhos else 0, yrange=(-30, 3))
    fig.update_xaxes(autorange="reversed")
    return fig


@section("14.46.1", "The vanishing-gradient product")
def run(ctx):
    vg = gradient_frame(seed=ctx.seed(SEED))
    wide = wide_by_lag(vg, "rho", [5, 20, 40, 55])
    clipping = clipping_check(ctx.seed(CLIP_SEED))
    slopes = tanh_slopes(seed=ctx.seed(SEED))
    figs = []
    if ctx.figures:
        figs = ctx.save("grad_by_lag", *figure(vg, slopes))
        figs += ctx.save_plotly("rho_explorer", explorer(ctx.seed(SEED)))
    return ({"grad_by_lag": vg, "grad_by_lag_wide": wide, "clipping": clipping, "tanh_slopes": slopes}, figs,
            [*gradient_claims(vg), *slope_claims(slopes), *clipping_claims(clipping)])
