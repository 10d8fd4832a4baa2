"""§14.46.1 The vanishing-gradient product, measured by lag; clipping preserves direction."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..analysis.gradients import grad_by_lag
from ._util import wide_by_lag
from .base import section

RHOS = (0.7, 0.95, 1.0, 1.15)
T = 60


def first_lag_below(df: pd.DataFrame, rho: float, threshold: float) -> int | None:
    """Smallest lag at which the gradient for ``rho`` has fallen below ``threshold`` (None if never)."""
    sub = df[(df.rho == rho) & (df.g < threshold)]
    return int(sub.lag.min()) if len(sub) else None


@section("14.46.1", "The vanishing-gradient product")
def run(ctx):
    rows = []
    for rho in RHOS:
        g = grad_by_lag(rho, T=T, d=32, seed=ctx.seed(21))
        for t in range(T):
            # the chapter labels the state h_t with lag T-1-t; it is T-t steps before h_T
            rows.append(dict(rho=rho, lag=T - 1 - t, steps_back=T - t, g=max(float(g[t]), 1e-30),
                             label=f"spectral radius = {rho:.2f}"))
    vg = pd.DataFrame(rows)
    wide = wide_by_lag(vg, "rho", [5, 20, 40, 55])

    torch.manual_seed(ctx.seed(23))
    p = torch.randn(100, requires_grad=True)
    (p.sum() * 1e4).backward()
    before = p.grad.norm().item()
    dir_before = p.grad / p.grad.norm()
    torch.nn.utils.clip_grad_norm_([p], max_norm=1.0)
    after = p.grad.norm().item()
    dir_after = p.grad / p.grad.norm()
    clipping = pd.DataFrame([dict(norm_before=float(before), norm_after=float(after),
                                  cosine_between_directions=(dir_before * dir_after).sum().item(),
                                  interpretation="direction preserved exactly; only the length changes")])

    g07_40 = float(vg[(vg.rho == 0.7) & (vg.lag == 40)].g.iloc[0])
    below = first_lag_below(vg, 0.7, 1e-8)
    g115 = vg[vg.rho == 1.15]
    notes = [
        f"Erratum (rho = 0.7): the chapter says the gradient is below 1e-8 by lag 40; measured {g07_40:.3g} at lag 40, "
        f"and it first falls below 1e-8 at lag {below}. The decay is geometric as stated, about "
        f"{np.exp(np.polyfit(vg[vg.rho == 0.7].lag, np.log(vg[vg.rho == 0.7].g), 1)[0]):.3f}x per step.",
        f"Erratum (rho = 1.15): the chapter says a gradient above the dashed line explodes. Measured: it stays between "
        f"{g115.g.min():.3g} and {g115.g.max():.3g} over all 60 lags. With tanh the Jacobian is W^T diag(1 - h^2); "
        "once the state saturates, diag(1 - h^2) shrinks and cancels the growth of W. rho > 1 makes explosion "
        "possible (the bound (||W|| gamma)^(T-t) grows), not inevitable; a linear recurrence would explode.",
        "Lag convention: the chapter labels the gradient at h_t with lag T-1-t (the column `lag`, kept for "
        "fidelity); the state h_t is T-t steps before the loss (column `steps_back`).",
        "W is rescaled by its spectral radius from torch.linalg.eigvals (R uses eigen()); the draws come from "
        "torch's generator in the chapter's order, so the numbers agree with R torch to float precision.",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        gg, fig = line_pair(vg, "lag", "g", "label", title="Gradient reaching back through time",
                            subtitle="Below the dashed line the signal has vanished; rho = 1.15 stays near it "
                                     "because tanh saturates",
                            xlab="Lag (steps back from the loss)", ylab="Gradient norm (log scale)", log_y=True,
                            reverse_x=True, hline=1.0)
        figs = ctx.save("grad_by_lag", gg, fig)
    return {"grad_by_lag": vg, "grad_by_lag_wide": wide, "clipping": clipping}, figs, notes
