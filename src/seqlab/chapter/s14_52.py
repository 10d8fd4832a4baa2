"""§14.52 Positional encoding: permutation equivariance, sinusoids, rotation by offset, RoPE.

The chapter's settings are module constants; the steps below are a few library calls each.
The equivariance and rotation results are pinned to the chapter's printed values: keep
seed 81 and the draw order of :func:`equivariance_setup`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..nn.multihead import MultiHeadAttention
from ..nn.positional import RotaryEmbedding, sinusoidal_encoding
from ..tasks.offsets import accuracy_by_position, offset_accuracy
from ..threads import single_threaded
from . import s14_51
from .base import section

SEED = 81
D_MODEL = 32
HEADS = 4
T = 8
#: the sinusoidal table of the chapter: 80 positions, 64 dimensions
PE_LEN = 80
PE_DIM = 64
#: the shift-by-rotation check: offset k, evaluated on positions 0..ROT_POSITIONS-1
ROT_OFFSET = 7
ROT_POSITIONS = 60
#: RoPE check: head dimension, its own seed for q and k, and (query position, key position) pairs
ROPE_DIM = 16
ROPE_SEED = 83
ROPE_PAIRS = ((3, 0), (10, 7), (50, 47), (0, 5), (20, 25))
#: query positions offered by the similarity explorer's slider
EXPLORER_POSITIONS = (0, 10, 20, 30, 40, 50, 60, 70, 79)


def equivariance_setup(seed: int = SEED, d_model: int = D_MODEL, heads: int = HEADS, T: int = T):
    """The chapter's draw order: the layer, then X (1, T, d_model) from ``seed``; the permutation from its own
    generator seeded with ``seed``. Returns ``(layer, X, perm)``."""
    torch.manual_seed(seed)
    mh = MultiHeadAttention(d_model, heads)
    X = torch.randn(1, T, d_model)
    perm = torch.randperm(T, generator=torch.Generator().manual_seed(seed))
    return mh, X, perm


@torch.no_grad()
def permutation_gap(mh: MultiHeadAttention, X: torch.Tensor, perm: torch.Tensor) -> float:
    """max |P . Attention(X) - Attention(P X)| over every output entry."""
    out_then_perm = mh(X)[0][0, perm]
    perm_then_out = mh(X[:, perm])[0][0]
    return (out_then_perm - perm_then_out).abs().max().item()


def equivariance_table(mh, X, perm) -> pd.DataFrame:
    return pd.DataFrame([dict(max_abs_difference=permutation_gap(mh, X, perm),
                              permutation=" ".join(str(int(i) + 1) for i in perm))])


def order_sensitivity(mh, X, perm) -> pd.DataFrame:
    """The same gap with and without a sinusoidal code added to X (positions stay in place; tokens move)."""
    PE = sinusoidal_encoding(X.size(1), X.size(2)).unsqueeze(0)

    @torch.no_grad()
    def gap_with_positions():
        out_then_perm = mh(X + PE)[0][0, perm]
        perm_then_out = mh(X[:, perm] + PE)[0][0]
        return (out_then_perm - perm_then_out).abs().max().item()

    return pd.DataFrame([dict(inputs="tokens only", max_abs_difference=permutation_gap(mh, X, perm)),
                         dict(inputs="tokens + sinusoidal positions", max_abs_difference=gap_with_positions())])


def order_check(seed: int = SEED, d_model: int = D_MODEL, heads: int = HEADS, T: int = T) -> pd.DataFrame:
    """:func:`order_sensitivity` on the chapter's layer, input and shuffle (:func:`equivariance_setup`)."""
    return order_sensitivity(*equivariance_setup(seed, d_model=d_model, heads=heads, T=T))


def rotation_error(pe: torch.Tensor, k: int, n_pos: int = ROT_POSITIONS) -> float:
    """max |PE[pos+k, 2j] - (PE[pos, 2j] cos th_j + PE[pos, 2j+1] sin th_j)| over pairs j, th_j = k / 10000^{2j/d}.

    Evaluated in float64 from the float32 table, as the chapter's R code does.
    """
    d = pe.size(1)
    P = pe.double()
    errs = []
    for j in range(d // 2):
        th = k / (10000 ** ((2 * j) / d))
        pred = P[:n_pos, 2 * j] * math.cos(th) + P[:n_pos, 2 * j + 1] * math.sin(th)
        errs.append((pred - P[k:n_pos + k, 2 * j]).abs().max().item())
    return max(errs)


def rotation_table(PE: torch.Tensor, k: int = ROT_OFFSET) -> pd.DataFrame:
    return pd.DataFrame([dict(max_rotation_error=float(rotation_error(PE, k)), offset=k)])


def similarity_by_offset(PE: torch.Tensor) -> pd.DataFrame:
    """PE[m] . PE[n] grouped by the offset m - n: its spread over all pairs with that offset (float64)."""
    S = (PE.double() @ PE.double().T).numpy()
    n = S.shape[0]
    off = np.subtract.outer(np.arange(n), np.arange(n))
    rows = [dict(offset=int(k), dot_min=float(S[off == k].min()), dot_max=float(S[off == k].max()))
            for k in range(n)]
    out = pd.DataFrame(rows)
    out["spread"] = out.dot_max - out.dot_min
    return out


def rope_table(head_dim: int = ROPE_DIM, seed: int = ROPE_SEED, pairs=ROPE_PAIRS) -> pd.DataFrame:
    """<R(m) q, R(n) k> for one random (q, k) at several (m, n): it depends only on m - n."""
    torch.manual_seed(seed)
    rope = RotaryEmbedding(head_dim)
    q, k = torch.randn(1, head_dim), torch.randn(1, head_dim)
    rows = [dict(query_position=m, key_position=n, offset=m - n, dot=(rope(q, m) * rope(k, n)).sum().item())
            for m, n in pairs]
    return pd.DataFrame(rows)


def ablation_models(data: dict, num_heads: int = max(s14_51.TASK_HEADS), seeds=s14_51.TRAIN_SEEDS,
                    with_positions: dict | None = None) -> dict:
    """The §14.51 offset model with and without learned positions, for each seed (same heads): a dict keyed
    ``(positions, seed)``. ``with_positions`` holds models already trained with positions, keyed
    ``(heads, seed)`` as :func:`~seqlab.chapter.s14_51.train_offset_models` returns them; those are not trained
    again."""
    done = with_positions or {}
    out = {}
    for seed in seeds:
        trained = done.get((num_heads, seed))
        out[(True, seed)] = trained if trained is not None else s14_51.train_offset_model(data, num_heads, seed)
        out[(False, seed)] = s14_51.train_offset_model(data, num_heads, seed, positions=False)
    return out


def ablation_table(models: dict, data: dict) -> pd.DataFrame:
    """Held-out accuracy of each model of :func:`ablation_models`, one row per (positions, seed)."""
    rows = []
    for (positions, seed), m in models.items():
        acc = offset_accuracy(m, data["x_test"], data["y_test"])
        rows.append(dict(positions="learned" if positions else "none", seed=seed, n_heads=m.attn.num_heads,
                         accuracy_first_target=acc["target_1"], accuracy_second_target=acc["target_2"],
                         accuracy_both=acc["both"]))
    return pd.DataFrame(rows)


def ablation_by_position(models: dict, data: dict) -> pd.DataFrame:
    """Accuracy per query position (counted from 1), averaged over the targets, for every model and seed."""
    rows = []
    for (positions, seed), m in models.items():
        acc = accuracy_by_position(m, data["x_test"], data["y_test"]).mean(-1)  # (T,)
        rows += [dict(positions="learned" if positions else "none", seed=seed, position=t + 1, accuracy=float(a))
                 for t, a in enumerate(acc.tolist()) if a == a]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------- figures

def encoding_figure(PE: torch.Tensor):
    """The sinusoidal table as a heatmap, positions and dimensions counted from 0 as in the formula."""
    from ..plotting import heatmap_pair

    n, d = PE.shape
    from plotnine import labs

    heat = pd.DataFrame([dict(pos=p, dim=i, v=float(PE[p, i])) for p in range(n) for i in range(d)])
    gg, fig = heatmap_pair(heat, "dim", "pos", "v", diverging=True, title="Sinusoidal positional encoding",
                           subtitle=f"PE[pos, dim] for {n} positions and {d} dimensions",
                           xlab="Embedding dimension (2i = sin, 2i+1 = cos)", ylab="Position pos")
    from plotnine import theme

    gg += labs(fill="PE value")
    gg += theme(figure_size=(6.8, 2.9), legend_position="right")
    fig.update_traces(colorbar=dict(title=dict(text="PE value", side="right")), selector=dict(type="heatmap"))
    return gg, fig


def encoding_surface(PE: torch.Tensor):
    from ..plotting import surface_figure

    n, d = PE.shape
    return surface_figure([dict(x=np.arange(d), y=np.arange(n), z=PE.numpy(), colorscale="RdBu",
                                colorbar="PE value")], title="The positional encoding matrix as a surface",
                          xlab="Embedding dimension", ylab="Position", zlab="Encoding value")


def similarity_explorer(PE: torch.Tensor, positions=EXPLORER_POSITIONS):
    """A slider over the query position m; each step draws PE[m] . PE[n] against the key position n."""
    import plotly.graph_objects as go

    from ..plotting import slider_figure

    S = (PE @ PE.T).numpy()
    n = np.arange(S.shape[0])
    steps = []
    for m in positions:
        steps.append((str(m), [go.Scatter(x=n, y=S[m], mode="lines", name="PE[m] . PE[n]",
                                          line=dict(color="#3B7DD8", width=3)),
                               go.Scatter(x=[m, m], y=[S.min(), S.max()], mode="lines", name="n = m",
                                          line=dict(color="#555555", dash="dash"))]))
    fig = slider_figure(steps, title="How alike two positions' codes are",
                        subtitle="Dot product of the sinusoidal codes of query position m and every position n",
                        xlab="Key position n", ylab="PE[m] . PE[n]", slider_label="m = ", active=4)
    fig.update_xaxes(tickmode="linear", dtick=10)
    return fig


@section("14.52", "Positional encoding")
def run(ctx):
    with single_threaded():  # small tensors: one thread is many times faster than two under load
        mh, X, perm = equivariance_setup(ctx.seed(SEED))
        equiv = equivariance_table(mh, X, perm)
        order = order_sensitivity(mh, X, perm)
        PE = sinusoidal_encoding(PE_LEN, PE_DIM)
        rot = rotation_table(PE)
        sim = similarity_by_offset(PE)
        rope_tbl = rope_table(seed=ctx.seed(ROPE_SEED))
        data = s14_51.offset_data(ctx.seed(s14_51.DATA_SEED))
        ablated = ablation_models(data, seeds=tuple(ctx.seed(x) for x in s14_51.TRAIN_SEEDS))
        ablation = ablation_table(ablated, data)
        ablation_positions = ablation_by_position(ablated, data)
        spread = rope_tbl.groupby("offset").dot.agg(lambda s: s.max() - s.min()).max()
        verdicts = [*order_claims(order, rot, sim, spread), *ablation_claims(ablation, ablation_positions)]
        figs = []
        if ctx.figures:
            figs = ctx.save("positional_encoding", *encoding_figure(PE))
            figs += ctx.save_plotly("positional_encoding_3d", encoding_surface(PE))
            figs += ctx.save_plotly("position_similarity_explorer", similarity_explorer(PE))
        return {"permutation_equivariance": equiv, "pe_rotation": rot, "rope_offsets": rope_tbl,
                "order_sensitivity": order, "pe_similarity_by_offset": sim, "position_ablation": ablation,
                "position_ablation_by_position": ablation_positions}, figs, verdicts


# ----------------------------------------------------------------------------------------------- claims
from ..claims import claim_source, verdict


@claim_source
def order_claims(order: pd.DataFrame, rot: pd.DataFrame, sim: pd.DataFrame, rope_spread: float) -> list:
    """Equivariance is rounding, positions break it; the rotation, the offset dot products and RoPE are rounding."""
    gap, gap_pe = float(order.max_abs_difference[0]), float(order.max_abs_difference[1])
    k, err = int(rot.offset[0]), float(rot.max_rotation_error[0])
    spread = float(sim.spread.max())
    peak, floor = float(sim.dot_max[0]), float(sim.dot_min[1:].min())
    return [
        verdict("s52_equivariant", gap < 1e-5, gap=gap),
        verdict("s52_positions_break", gap_pe > 1e-3, gap=gap_pe),
        verdict("s52_rotation", err < 1e-4 and spread < 1e-4, offset=k, rotation_error=err, spread=spread),
        verdict("s52_no_clean_decay", floor > 0.25 * peak, peak=peak, floor=floor),
        verdict("s52_rope", rope_spread < 1e-4, spread=rope_spread),
    ]


@claim_source
def ablation_claims(ablation: pd.DataFrame, by_pos: pd.DataFrame) -> list:
    """Over the seeds: without position vectors the task fails (the worst seed with them against the best without),
    and the accuracy per target is lower at the last position than at the first in every seed."""
    both = ablation.groupby("positions").accuracy_both
    worst, best = both.min(), both.max()
    none_rows = ablation[ablation.positions == "none"]
    alone = float(none_rows[["accuracy_first_target", "accuracy_second_target"]].to_numpy().max())
    none = by_pos[by_pos.positions == "none"].pivot(index="position", columns="seed", values="accuracy").sort_index()
    first, last = none.iloc[0], none.iloc[-1]
    steady = bool((none.diff().dropna() < 0).all().all())
    return [
        verdict("s52_ablation", worst["learned"] > 0.9 and best["none"] < 0.5, seeds=int(ablation.seed.nunique()),
                learned_worst=float(worst["learned"]), learned_best=float(best["learned"]),
                none_worst=float(worst["none"]), none_best=float(best["none"]), alone=alone),
        verdict("s52_trend", bool((last < first).all()), seeds=int(none.shape[1]), first=float(first.mean()),
                last=float(last.mean()), first_position=int(none.index[0]), last_position=int(none.index[-1]),
                steady=steady, first_by_seed=first.tolist(), last_by_seed=last.tolist()),
    ]
