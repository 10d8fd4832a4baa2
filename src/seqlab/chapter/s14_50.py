"""§14.50-14.50.1 Scaled dot-product attention: why sqrt(d_k), measured."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..analysis.softmax import attention_saturation, entropy_surface, logit_spread
from .base import section

D_GRID = (8, 32, 128, 512)


@section("14.50", "Scaled dot-product attention")
def run(ctx):
    torch.manual_seed(ctx.seed(61))
    # the chapter's draw order: all unscaled d_k first, then all scaled
    unscaled = [logit_spread(d, scaled=False) for d in D_GRID]
    scaled = [logit_spread(d, scaled=True) for d in D_GRID]
    spread = pd.DataFrame(dict(d_k=D_GRID, sd_unscaled=unscaled,
                               sqrt_d_k=np.sqrt(D_GRID), sd_scaled=scaled))

    rows = []
    for is_scaled in (False, True):
        for d in D_GRID:
            m = attention_saturation(d, T=32, scaled=is_scaled, seed=ctx.seed(63))
            rows.append(dict(d_k=d, scaled="with 1/sqrt(d_k)" if is_scaled else "unscaled",
                             **{k: float(v) for k, v in m.items()}))
    sat = pd.DataFrame(rows)

    dk_grid = np.round(np.exp(np.linspace(math.log(4), math.log(512), 25))).astype(int)
    tau_grid = 10 ** np.linspace(-0.6, 1.2, 25)
    Z = entropy_surface(dk_grid, tau_grid, T=32, seed=ctx.seed(65)).numpy()  # (tau, d_k)
    ridge = np.array([entropy_surface([dk], [math.sqrt(dk)], seed=ctx.seed(65)).item() for dk in dk_grid])
    ridge_tbl = pd.DataFrame(dict(d_k=dk_grid, divisor=np.sqrt(dk_grid), entropy=ridge))

    u = sat[sat.scaled == "unscaled"].set_index("d_k")
    s = sat[sat.scaled != "unscaled"].set_index("d_k")
    notes = [
        f"The unscaled spread tracks sqrt(d_k) (ratio {min(np.divide(unscaled, np.sqrt(D_GRID))):.3f} to "
        f"{max(np.divide(unscaled, np.sqrt(D_GRID))):.3f}); scaled it stays near 1.",
        "Erratum (saturation table): the chapter backpropagates sum(alpha). Every softmax row sums to 1, so that "
        "loss is the constant T and its true gradient is exactly zero; the `gradient_norm` column is float rounding "
        f"(at most {sat.gradient_norm.max():.3g}) and cannot show saturation. The column `logit_gradient_norm` "
        "backpropagates sum(alpha * G) for a fixed random G to the logits, i.e. through the softmax Jacobian: "
        f"unscaled it falls from {u.logit_gradient_norm[8]:.3g} (d_k = 8) to {u.logit_gradient_norm[512]:.3g} "
        f"(d_k = 512) while the max weight reaches {u.max_attention_weight[512]:.3g}; scaled it stays within "
        f"{s.logit_gradient_norm.min():.3g}-{s.logit_gradient_norm.max():.3g}. With respect to Q "
        f"(`query_gradient_norm`) the unscaled gradient grows instead ({u.query_gradient_norm[8]:.3g} -> "
        f"{u.query_gradient_norm[512]:.3g}), because dL/dQ = J^T G K carries the sqrt(d_k)-sized keys: "
        "saturation shows in the rows that go one-hot, not in a smaller overall norm.",
        f"Along tau = sqrt(d_k) the entropy stays between {ridge.min():.3f} and {ridge.max():.3f} nats "
        f"(log 32 = {math.log(32):.3f} is uniform) across d_k = 4..512: the ridge the text describes.",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair, surface_figure

        long = sat.melt(id_vars=["d_k", "scaled"], value_vars=["logit_gradient_norm", "max_attention_weight",
                                                              "attention_entropy"], var_name="measure")
        gg, fig = line_pair(long, "d_k", "value", "scaled", facet="measure", points=True, log_x=True,
                            title="What the 1/sqrt(d_k) buys", subtitle="Unscaled logits saturate the softmax: "
                            "weights go one-hot, entropy and gradient collapse",
                            xlab="Key dimension d_k (log scale)", ylab="",
                            colors={"unscaled": "#D8433B", "with 1/sqrt(d_k)": "#3B7DD8"})
        figs = ctx.save("saturation", gg, fig)
        fig3 = surface_figure([dict(x=dk_grid, y=tau_grid, z=Z, name="entropy", colorbar="Attention entropy")],
                              lines=[dict(x=dk_grid, y=np.sqrt(dk_grid), z=ridge, name="divisor = sqrt(d_k)")],
                              title="Attention entropy over key dimension and logit divisor", xlab="d_k",
                              ylab="Logit divisor", zlab="Mean attention entropy", log_x=True, log_y=True)
        figs += ctx.save_plotly("entropy_surface_3d", fig3)
    return {"logit_spread": spread, "saturation": sat, "entropy_ridge": ridge_tbl}, figs, notes
