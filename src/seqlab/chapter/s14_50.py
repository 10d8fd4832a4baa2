"""§14.50-14.50.1 Scaled dot-product attention: why sqrt(d_k), measured.

The chapter's settings are module constants; each step below is a few library calls.
``run`` composes the steps in the chapter's draw order and returns the tables of
``seqlab run 14.50 --json``; ``src/seqlab/book/pages/attention.md`` calls the same steps cell by cell.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ..analysis.softmax import (
    attention_entropy,
    attention_saturation,
    entropy_surface,
    logit_spread,
)
from ..nn.attention import scaled_dot_product_attention
from ..threads import single_threaded
from .base import section

#: the page's first worked example: random Q, K, V of DEMO_T positions and width DEMO_DK
DEMO_SEED = 60
DEMO_T = 5
DEMO_DK = 8
#: key dimensions of the spread and saturation tables
D_GRID = (8, 32, 128, 512)
#: (q, k) pairs drawn per key dimension for the spread of q . k
N_PAIRS = 4000
SPREAD_SEED = 61
#: sequence length (queries = keys) of the saturation measurements
T = 32
SATURATION_SEED = 63
#: the entropy surface: 25 key dimensions from 4 to 512 and 25 logit divisors from 10^-0.6 to 10^1.2
SURFACE_SEED = 65
SURFACE_DK = tuple(int(v) for v in np.round(np.exp(np.linspace(math.log(4), math.log(512), 25))))
SURFACE_DIVISORS = tuple(float(v) for v in 10 ** np.linspace(-0.6, 1.2, 25))
#: the explorer: one slider step per key dimension, each a sweep over the divisor (wide enough to pass sqrt(512))
EXPLORER_DK = (4, 8, 16, 32, 64, 128, 256, 512)
EXPLORER_DIVISORS = tuple(float(v) for v in 10 ** np.linspace(-1, 2, 61))

#: the lookup task trained in view: LOOKUP_PAIRS (key, value) pairs drawn from LOOKUP_VOCAB keys and values, and a
#: query that names one of the keys; one attention read, d_model = LOOKUP_D_MODEL, d_k one of LOOKUP_WIDTHS
LOOKUP_VOCAB = 32
LOOKUP_PAIRS = 8
LOOKUP_D_MODEL = 32
LOOKUP_WIDTHS = (8, 32, 128)
#: each seed initialises one model per (width, divisor) and draws its training batches; the held-out set has its own
LOOKUP_SEEDS = (62, 64, 66)
LOOKUP_TEST_SEED = 69
LOOKUP_N_TEST = 1000
LOOKUP_STEPS = 150
LOOKUP_BATCH = 64
LOOKUP_LR = 1e-2
#: the held-out loss is measured before training and every LOOKUP_EVERY steps
LOOKUP_EVERY = 10

SCALED, UNSCALED = "with 1/sqrt(d_k)", "unscaled"


def random_qkv(T: int = DEMO_T, d_k: int = DEMO_DK, seed: int = DEMO_SEED):
    """Independent standard-normal Q, K, V, each (1, T, d_k), drawn in that order after ``torch.manual_seed(seed)``."""
    torch.manual_seed(seed)
    return torch.randn(1, T, d_k), torch.randn(1, T, d_k), torch.randn(1, T, d_k)


def spread_table(d_grid=D_GRID, n: int = N_PAIRS, seed: int = SPREAD_SEED) -> pd.DataFrame:
    """Standard deviation of q . k for q, k ~ N(0, I), unscaled and divided by sqrt(d_k).

    Draw order is the chapter's: every unscaled d_k first, then every scaled one.
    """
    torch.manual_seed(seed)
    unscaled = [logit_spread(d, n, scaled=False) for d in d_grid]
    scaled = [logit_spread(d, n, scaled=True) for d in d_grid]
    return pd.DataFrame(dict(d_k=list(d_grid), sd_unscaled=unscaled, sqrt_d_k=np.sqrt(d_grid), sd_scaled=scaled))


def saturation_table(d_grid=D_GRID, T: int = T, seed: int = SATURATION_SEED) -> pd.DataFrame:
    """:func:`~seqlab.analysis.softmax.attention_saturation` for every d_k, unscaled then scaled."""
    rows = []
    for is_scaled in (False, True):
        for d in d_grid:
            m = attention_saturation(d, T=T, scaled=is_scaled, seed=seed)
            rows.append(dict(d_k=d, scaled=SCALED if is_scaled else UNSCALED, **{k: float(v) for k, v in m.items()}))
    return pd.DataFrame(rows)


def entropy_grid(dk_grid=SURFACE_DK, divisors=SURFACE_DIVISORS, T: int = T, seed: int = SURFACE_SEED) -> np.ndarray:
    """Mean attention entropy, rows = divisors, columns = d_k (the chapter's surface)."""
    return entropy_surface(dk_grid, divisors, T=T, seed=seed).numpy()


def ridge_table(dk_grid=SURFACE_DK, T: int = T, seed: int = SURFACE_SEED) -> pd.DataFrame:
    """The entropy along the divisor sqrt(d_k): the red curve on the surface."""
    ridge = [entropy_surface([dk], [math.sqrt(dk)], T=T, seed=seed).item() for dk in dk_grid]
    return pd.DataFrame(dict(d_k=list(dk_grid), divisor=np.sqrt(dk_grid), entropy=ridge))


def softmax_profile(d_k: int, divisors=EXPLORER_DIVISORS, T: int = T, seed: int = SURFACE_SEED) -> pd.DataFrame:
    """For one d_k: entropy and average largest weight of softmax(Q K^T / divisor) over a sweep of divisors.

    Q and K are drawn from ``seed`` as for the surface, so a column of the surface and this
    sweep share their inputs. ``top_weight`` is the largest weight of each query's row,
    averaged over the queries; ``entropy_fraction`` is the entropy divided by log T (1 = uniform).
    """
    torch.manual_seed(seed)
    Q = torch.randn(1, T, d_k)
    K = torch.randn(1, T, d_k)
    logits = torch.bmm(Q, K.transpose(1, 2))
    rows = []
    for tau in divisors:
        a = torch.softmax(logits / tau, dim=-1)
        h = attention_entropy(a).item()
        rows.append(dict(d_k=d_k, divisor=float(tau), entropy=h, entropy_fraction=h / math.log(T),
                         top_weight=a.max(dim=-1).values.mean().item()))
    return pd.DataFrame(rows)


def explorer_frame(dk_values=EXPLORER_DK, divisors=EXPLORER_DIVISORS, T: int = T,
                   seed: int = SURFACE_SEED) -> pd.DataFrame:
    """:func:`softmax_profile` for every slider position."""
    return pd.concat([softmax_profile(d, divisors, T, seed) for d in dk_values], ignore_index=True)


def lookup_batch(n: int, g: torch.Generator, vocab: int = LOOKUP_VOCAB, pairs: int = LOOKUP_PAIRS):
    """``n`` lookups: ``pairs`` distinct keys with random values, a query that is one of the keys, and its value.

    Returns ``(keys, values, query, target)``, shapes (n, pairs), (n, pairs), (n, 1), (n,).
    """
    keys = torch.rand(n, vocab, generator=g).argsort(-1)[:, :pairs]
    vals = torch.randint(vocab, (n, pairs), generator=g)
    pick = torch.randint(pairs, (n, 1), generator=g)
    return keys, vals, keys.gather(1, pick), vals.gather(1, pick)[:, 0]


class Lookup(nn.Module):
    """Embed the (key, value) pairs, read them once by attention from the query key, map the read to a value.

    The projections start with unit-variance queries (std 1/sqrt(d_model) on unit-variance embeddings), the
    assumption of eq. (eq-var); ``scaled`` divides the scores by sqrt(d_k), otherwise by one.
    """

    def __init__(self, d_k: int, scaled: bool, d_model: int = LOOKUP_D_MODEL, vocab: int = LOOKUP_VOCAB):
        super().__init__()
        self.key = nn.Embedding(vocab, d_model)
        self.value = nn.Embedding(vocab, d_model)
        self.Wq = nn.Linear(d_model, d_k, bias=False)
        self.Wk = nn.Linear(d_model, d_k, bias=False)
        self.Wv = nn.Linear(d_model, d_model, bias=False)
        for W in (self.Wq, self.Wk, self.Wv):
            nn.init.normal_(W.weight, std=d_model ** -0.5)
        self.readout = nn.Linear(d_model, vocab)
        self.scale = d_k ** -0.5 if scaled else 1.0

    def forward(self, keys, vals, query):
        x = self.key(keys) + self.value(vals)  # (B, pairs, d_model)
        q = self.Wq(self.key(query))  # (B, 1, d_k)
        read, alpha = scaled_dot_product_attention(q, self.Wk(x), self.Wv(x), scale=self.scale)
        return self.readout(read[:, 0]), alpha


def train_lookup(d_k: int, scaled: bool, seed: int, test, steps: int = LOOKUP_STEPS, batch: int = LOOKUP_BATCH,
                 lr: float = LOOKUP_LR, every: int = LOOKUP_EVERY) -> list[dict]:
    """One :class:`Lookup` trained by Adam from ``seed`` (its initialisation, then its batches): the held-out loss,
    accuracy and mean largest attention weight before training and every ``every`` steps."""
    torch.manual_seed(seed)
    model = Lookup(d_k, scaled)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    *inputs, target = test

    def measure(step):
        with torch.no_grad():
            logits, alpha = model(*inputs)
        return dict(d_k=d_k, scaled=SCALED if scaled else UNSCALED, seed=seed, step=step,
                    loss=F.cross_entropy(logits, target).item(),
                    accuracy=(logits.argmax(-1) == target).float().mean().item(),
                    top_weight=alpha.max(-1).values.mean().item())

    curve = [measure(0)]
    for step in range(1, steps + 1):
        *x, y = lookup_batch(batch, g)
        loss = F.cross_entropy(model(*x)[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            curve.append(measure(step))
    return curve


def lookup_curves(widths=LOOKUP_WIDTHS, seeds=LOOKUP_SEEDS, test_seed: int = LOOKUP_TEST_SEED,
                  n_test: int = LOOKUP_N_TEST,
                  **kw) -> pd.DataFrame:
    """:func:`train_lookup` for every width, divisor and seed, on one held-out set drawn from ``test_seed``."""
    test = lookup_batch(n_test, torch.Generator().manual_seed(test_seed))
    rows = [r for d in widths for scaled in (True, False) for s in seeds for r in train_lookup(d, scaled, s, test, **kw)]
    return pd.DataFrame(rows)


def lookup_summary(curves: pd.DataFrame) -> pd.DataFrame:
    """Per width and divisor, over the seeds: the mean largest weight before training, and the held-out loss
    (mean, best and worst seed) and accuracy (mean) at the last step."""
    start = curves[curves.step == 0].groupby(["d_k", "scaled"]).top_weight.mean()
    end = curves[curves.step == curves.step.max()].groupby(["d_k", "scaled"])
    return pd.DataFrame(dict(start_top_weight=start, end_loss=end.loss.mean(), end_loss_best=end.loss.min(),
                             end_loss_worst=end.loss.max(), end_accuracy=end.accuracy.mean())).reset_index()


# ----------------------------------------------------------------------------------------------- figures

MEASURES = {"max_attention_weight": "Largest weight", "attention_entropy": "Entropy (nats)",
            "logit_gradient_norm": "Gradient through the softmax"}


def saturation_figure(sat: pd.DataFrame):
    """Three panels against d_k (largest weight, entropy, gradient), unscaled vs scaled: (ggplot, plotly)."""
    from ..plotting import line_pair

    long = sat.melt(id_vars=["d_k", "scaled"], value_vars=list(MEASURES), var_name="measure")
    long["measure"] = pd.Categorical(long.measure.map(MEASURES), categories=list(MEASURES.values()), ordered=True)
    gg, fig = line_pair(long, "d_k", "value", "scaled", facet="measure", points=True, log_x=True,
                        title="Random logits with and without the divisor",
                        subtitle="Largest weight, mean row entropy and gradient through the softmax, against d_k",
                        xlab="Key dimension d_k (log scale)", ylab="",
                        colors={UNSCALED: "#D8433B", SCALED: "#3B7DD8"})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_xaxes(tickvals=sorted(sat.d_k.unique()), ticktext=[str(d) for d in sorted(sat.d_k.unique())])
    return gg, fig


def training_figure(curves: pd.DataFrame):
    """Held-out loss against the training step, one panel per d_k: the mean over the seeds, with and without the
    divisor, the seeds' range shaded: (ggplot, plotly)."""
    from ..plotting import line_pair

    g = curves.groupby(["d_k", "scaled", "step"]).loss
    df = pd.DataFrame(dict(loss=g.mean(), low=g.min(), high=g.max())).reset_index()
    widths = sorted(df.d_k.unique())
    labels = [f"d_k = {d}" for d in widths]
    df["width"] = pd.Categorical(df.d_k.map(dict(zip(widths, labels))), categories=labels, ordered=True)
    gg, fig = line_pair(df, "step", "loss", "scaled", facet="width", band=("low", "high"), log_y=True,
                        title="Training the lookup layer with and without the divisor",
                        subtitle="Held-out cross-entropy: mean over the seeds, their range shaded",
                        xlab="Adam step", ylab="Held-out loss (log scale)",
                        colors={UNSCALED: "#D8433B", SCALED: "#3B7DD8"})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1] if a.text.startswith("width") else a.text))
    from plotnine import theme

    gg += theme(figure_size=(6.8, 3.1))  # three short panels: a shorter figure reads as well
    return gg, fig


def surface_3d(Z: np.ndarray, ridge: pd.DataFrame, dk_grid=SURFACE_DK, divisors=SURFACE_DIVISORS):
    """The chapter's entropy surface with the sqrt(d_k) ridge drawn on it (plotly only)."""
    from ..plotting import surface_figure

    fig = surface_figure([dict(x=np.asarray(dk_grid), y=np.asarray(divisors), z=Z, name="entropy",
                                colorbar="Attention entropy")],
                          lines=[dict(x=ridge.d_k, y=ridge.divisor, z=ridge.entropy, name="divisor = sqrt(d_k)")],
                          title="Attention entropy over key dimension and logit divisor", xlab="d_k",
                          ylab="Logit divisor", zlab="Entropy (nats)", log_x=True, log_y=True)
    # labels with the values: surface_figure's own labels belong to its own tick positions
    dk_ticks, div_ticks = [4, 16, 64, 256, 512], [0.3, 1, 3, 10]
    fig.update_layout(scene=dict(xaxis=dict(tickvals=dk_ticks, ticktext=[f"{v:g}" for v in dk_ticks]),
                                 yaxis=dict(tickvals=div_ticks, ticktext=[f"{v:g}" for v in div_ticks]),
                                 # far enough back that the z title clears its tick labels in the book's column
                                 camera=dict(eye=dict(x=1.7, y=-2.0, z=1.0))),
                      margin=dict(l=10, r=10, b=10))
    return fig


def softmax_explorer(frame: pd.DataFrame, T: int = T):
    """A slider over d_k; each step draws entropy / log T and the average largest weight against the divisor."""
    import plotly.graph_objects as go

    from ..plotting import slider_figure

    steps = []
    for d, part in frame.groupby("d_k", sort=True):
        root = math.sqrt(d)
        steps.append((str(d), [
            go.Scatter(x=part.divisor, y=part.entropy_fraction, mode="lines", name="entropy / log T",
                       line=dict(color="#3B7DD8", width=3)),
            go.Scatter(x=part.divisor, y=part.top_weight, mode="lines", name="average largest weight",
                       line=dict(color="#D8433B", width=3)),
            go.Scatter(x=[root, root], y=[0, 1], mode="lines", name=f"divisor = sqrt(d_k) = {root:.3g}",
                       line=dict(color="#555555", dash="dash")),
            go.Scatter(x=[1, 1], y=[0, 1], mode="lines", name="divisor = 1 (no scaling)",
                       line=dict(color="#BBBBBB", dash="dot")),
        ]))
    fig = slider_figure(steps, title="Softmax of QKᵀ / divisor, one key dimension at a time",
                        subtitle=f"T = {T} random queries and keys; move the slider to change d_k",
                        xlab="Logit divisor (log scale)", ylab="Fraction", slider_label="d_k = ",
                        log_x=True, yrange=(-0.05, 1.05), active=3)
    fig.update_layout(legend=dict(orientation="v", x=0.99, xanchor="right", y=0.5, yanchor="middle", yref="paper",
                                  bgcolor="rgba(255,255,255,0.85)"))
    return fig


@section("14.50", "Scaled dot-product attention")
def run(ctx):
    with single_threaded():  # small tensors: one thread is many times faster than two under load
        spread = spread_table(seed=ctx.seed(SPREAD_SEED))
        sat = saturation_table(seed=ctx.seed(SATURATION_SEED))
        Z = entropy_grid(seed=ctx.seed(SURFACE_SEED))  # (divisor, d_k)
        ridge_tbl = ridge_table(seed=ctx.seed(SURFACE_SEED))

        curves = lookup_curves(seeds=tuple(ctx.seed(s) for s in LOOKUP_SEEDS), test_seed=ctx.seed(LOOKUP_TEST_SEED))

        verdicts = [*spread_claims(spread, n=N_PAIRS), *saturation_claims(sat, T=T),
                    *temperature_claims(ridge_tbl, Z, T=T), *training_claims(curves)]
        figs = []
        if ctx.figures:
            figs = ctx.save("saturation", *saturation_figure(sat))
            figs += ctx.save("lookup_training", *training_figure(curves))
            figs += ctx.save_plotly("entropy_surface_3d", surface_3d(Z, ridge_tbl))
            figs += ctx.save_plotly("softmax_explorer", softmax_explorer(explorer_frame(seed=ctx.seed(SURFACE_SEED))))
        return {"logit_spread": spread, "saturation": sat, "entropy_ridge": ridge_tbl,
                "lookup_training": lookup_summary(curves)}, figs, verdicts


# ----------------------------------------------------------------------------------------------- claims
from ..claims import claim_source, require, verdict


@claim_source
def spread_claims(spread: pd.DataFrame, n: int = N_PAIRS) -> list:
    """The spread of q . k over sqrt(d_k) is one within four standard errors (about 1/sqrt(2n)) at every d_k."""
    ratio = spread.sd_unscaled / spread.sqrt_d_k
    tol = 4 / math.sqrt(2 * n)
    lo, hi = float(ratio.min()), float(ratio.max())
    return [verdict("s50_var_holds", bool((ratio - 1).abs().max() < tol), ratio_min=lo, ratio_max=hi,
                    tolerance=tol)]


@claim_source
def saturation_claims(sat: pd.DataFrame, T: int = T) -> list:
    """Unscaled: the peak climbs, the entropy drops, the softmax gradient falls (at the smallest d_k it is above the
    scaled one's, at the largest below it: ``near_zero`` when below a tenth of it); scaled rows stay put; the gradient
    at Q; the probe."""
    u = sat[sat.scaled == UNSCALED].set_index("d_k").sort_index()
    s = sat[sat.scaled == SCALED].set_index("d_k").sort_index()
    lo, hi = int(u.index.min()), int(u.index.max())
    mw, ent, g, q = u.max_attention_weight, u.attention_entropy, u.logit_gradient_norm, u.query_gradient_norm
    gs = s.logit_gradient_norm
    log_t = math.log(T)
    flat = (s.attention_entropy.min() > 0.8 * log_t and s.max_attention_weight.max() < 0.5
            and s.logit_gradient_norm.max() < 1.5 * s.logit_gradient_norm.min())
    probe = float(sat.gradient_norm.max())
    return [
        verdict("s50_peak_climbs", bool((mw.diff().dropna() >= 0).all()) and mw[hi] > 0.99, d_k_max=hi,
                top=float(mw[hi]), max_weight=mw.to_dict()),
        verdict("s50_entropy_drops", bool((ent.diff().dropna() < 0).all()), first=float(ent[lo]),
                last=float(ent[hi]), entropy=ent.to_dict()),
        verdict("s50_grad_falls", g[hi] < g[lo], d_k_min=lo, first=float(g[lo]), last=float(g[hi]),
                gradient=g.to_dict()),
        verdict("s50_small_more", bool(g[lo] > gs[lo]), d_k=lo, unscaled=float(g[lo]), scaled=float(gs[lo]),
                more_at=[int(d) for d in g.index if g[d] > gs[d]]),
        verdict("s50_grad_weaker", bool(g[hi] < gs[hi]), d_k=hi, unscaled=float(g[hi]), scaled=float(gs[hi]),
                factor=float(gs[hi] / g[hi]) if g[hi] > 0 else math.inf, near_zero=bool(g[hi] < 0.1 * gs[hi])),
        verdict("s50_scaled_flat", flat, log_T=log_t, entropy_min=float(s.attention_entropy.min()),
                weight_max=float(s.max_attention_weight.max()), gradient_min=float(s.logit_gradient_norm.min()),
                gradient_max=float(s.logit_gradient_norm.max())),
        verdict("s50_q_grows", q[hi] > q[lo], first=float(q[lo]), last=float(q[hi]), query_gradient=q.to_dict(),
                d_k_max=hi, scaled_last=float(s.query_gradient_norm[hi])),
        require("s50_probe_is_rounding", probe < 1e-4, probe=probe),
    ]


@claim_source
def temperature_claims(ridge: pd.DataFrame, Z, T: int = T) -> list:
    """Along divisor = sqrt(d_k) the entropy is nearly level; off it the surface spans saturated to uniform."""
    log_t = math.log(T)
    lo, hi = float(ridge.entropy.min()), float(ridge.entropy.max())
    z_lo, z_hi = float(np.min(Z)), float(np.max(Z))
    return [
        verdict("s50_ridge_level", hi - lo < 0.1 * log_t, ridge_min=lo, ridge_max=hi, log_T=log_t,
                d_k_min=int(ridge.d_k.min()), d_k_max=int(ridge.d_k.max())),
        verdict("s50_surface_ends", z_lo < 0.1 * log_t and z_hi > 0.95 * log_t, z_min=z_lo, z_max=z_hi, log_T=log_t),
    ]


@claim_source
def training_claims(curves: pd.DataFrame) -> list:
    """The lookup layer trained with and without the divisor: which ends lower in every (width, seed), and whether
    the unscaled layer's mean final loss grows with d_k."""
    end = curves[curves.step == curves.step.max()]
    by = end.pivot_table(index=["d_k", "seed"], columns="scaled", values="loss")
    ratio = by[UNSCALED] / by[SCALED]
    mean_u = end[end.scaled == UNSCALED].groupby("d_k").loss.mean().sort_index()
    lo, hi = int(mean_u.index.min()), int(mean_u.index.max())
    return [
        verdict("s50_trained_lower", bool((ratio > 1).all()), steps=int(end.step.max()),
                seeds=int(end.seed.nunique()), widths=int(end.d_k.nunique()), ratio_min=float(ratio.min()),
                ratio_max=float(ratio.max()), ratios=[float(r) for r in ratio]),
        verdict("s50_unscaled_wider_worse", bool((mean_u.diff().dropna() > 0).all()), d_k_min=lo, d_k_max=hi,
                first=float(mean_u[lo]), last=float(mean_u[hi]), mean_loss=mean_u.to_dict()),
    ]
