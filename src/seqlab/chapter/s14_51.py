"""§14.51 Multi-head attention: same parameters for any head count; what the heads buy, measured.

Two parts. The chapter's: parameter counts for 1..16 heads, and the patterns of four untrained
heads (pinned to the chapter's printed correlations: keep seed 71 and the draw order). And a
measured demonstration of what several heads buy at an equal parameter count: the offset task
of :mod:`seqlab.tasks.offsets`, where the target at position t is the pair (x_{t-1}, x_{t-3}).
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import torch

from ..analysis.params import count_parameters, multihead_parameters
from ..nn.multihead import MultiHeadAttention
from ..tasks.offsets import (
    OffsetAttention,
    attention_by_offset,
    fit_offset_model,
    offset_accuracy,
    offset_task,
)
from ..threads import single_threaded
from ..results import share
from .base import section

# --- the chapter's parameter table and untrained heads
PARAM_D_MODEL = 256
PARAM_HEADS = (1, 2, 4, 8, 16)
INIT_SEED = 71
INIT_D_MODEL = 64
INIT_HEADS = 4
INIT_T = 14

# --- the offset task: what several heads buy at a fixed d_model (and so a fixed parameter count)
OFFSETS = (1, 3)
VOCAB = 32
SEQ_LEN = 12
TASK_D_MODEL = 32
TASK_HEADS = (1, 2, 4)
N_TRAIN = 4000
N_TEST = 1000
DATA_SEED = 73
#: one model per (head count, seed); every head count sees the same seeds
TRAIN_SEEDS = (74, 75, 76)
STEPS = 300
BATCH = 64
LR = 1e-2
#: offsets 0..MAX_OFFSET are shown in the attention-by-offset table
MAX_OFFSET = 5
#: held-out sequences averaged in the attention maps
N_SHOWN = 200


def head_parameter_table(d_model: int = PARAM_D_MODEL, heads=PARAM_HEADS) -> pd.DataFrame:
    """Parameters of :class:`MultiHeadAttention` for each head count, beside 4 d_model^2."""
    return pd.DataFrame([dict(n_heads=h, d_per_head=d_model // h,
                              parameters=count_parameters(MultiHeadAttention(d_model, h)),
                              formula_4_d_model_sq=multihead_parameters(d_model)) for h in heads])


def initial_head_weights(seed: int = INIT_SEED, d_model: int = INIT_D_MODEL, heads: int = INIT_HEADS,
                         T: int = INIT_T) -> np.ndarray:
    """Weights (heads, T, T) of an untrained layer on one random input (layer first, then the input, from ``seed``)."""
    torch.manual_seed(seed)
    mh = MultiHeadAttention(d_model, heads)
    X = torch.randn(1, T, d_model)
    with torch.no_grad():
        _, w = mh(X, need_weights=True)  # (1, h, T, T)
    return w[0].numpy()


def head_diversity(W: np.ndarray) -> pd.DataFrame:
    """Mean and largest correlation between the flattened weight matrices of every pair of heads."""
    pw = [np.corrcoef(W[i].ravel(), W[j].ravel())[0, 1] for i, j in itertools.combinations(range(W.shape[0]), 2)]
    return pd.DataFrame([dict(mean_pairwise_correlation=float(np.mean(pw)), max_pairwise_correlation=float(np.max(pw)))])


def head_weights_long(W: np.ndarray) -> pd.DataFrame:
    """``W`` as a long frame (head, query, key, w), positions counted from 1."""
    H, T, _ = W.shape
    return pd.DataFrame([dict(head=f"head {h + 1}", query=q + 1, key=k + 1, w=float(W[h, q, k]))
                         for h in range(H) for q in range(T) for k in range(T)])


def offset_data(seed: int = DATA_SEED, n_train: int = N_TRAIN, n_test: int = N_TEST, length: int = SEQ_LEN,
                vocab: int = VOCAB, offsets=OFFSETS) -> dict[str, torch.Tensor]:
    """Training and held-out sequences of the offset task, both drawn from one generator seeded with ``seed``.

    Returns ``x_train, y_train, x_test, y_test`` and the task's ``vocab`` and ``offsets``.
    """
    g = torch.Generator().manual_seed(seed)
    x_train, y_train = offset_task(n_train, length, vocab, offsets, generator=g)
    x_test, y_test = offset_task(n_test, length, vocab, offsets, generator=g)
    return dict(x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, vocab=vocab,
                offsets=tuple(offsets))


def train_offset_model(data: dict, num_heads: int, seed: int, d_model: int = TASK_D_MODEL, *,
                       positions: bool = True, steps: int = STEPS, batch: int = BATCH,
                       lr: float = LR) -> OffsetAttention:
    """One model: initialised after ``torch.manual_seed(seed)``, minibatches drawn from ``seed``, one thread."""
    torch.manual_seed(seed)
    model = OffsetAttention(data["vocab"], data["x_train"].size(1), d_model, num_heads,
                            n_targets=data["y_train"].size(-1), positions=positions)
    fit_offset_model(model, data["x_train"], data["y_train"], steps=steps, batch=batch, lr=lr, seed=seed)
    return model


def train_offset_models(data: dict, heads=TASK_HEADS, seeds=TRAIN_SEEDS,
                        **kw) -> dict[tuple[int, int], OffsetAttention]:
    """:func:`train_offset_model` for every (head count, seed)."""
    return {(h, s): train_offset_model(data, h, s, **kw) for h in heads for s in seeds}


def accuracy_table(models: dict, data: dict) -> pd.DataFrame:
    """Held-out accuracy of every model: each target alone and both at once (chance: 1/vocab and 1/vocab^2)."""
    rows = []
    for (h, s), m in models.items():
        acc = offset_accuracy(m, data["x_test"], data["y_test"])
        rows.append(dict(n_heads=h, d_per_head=m.attn.d_k, seed=s, parameters=count_parameters(m),
                         accuracy_first_target=acc["target_1"], accuracy_second_target=acc["target_2"],
                         accuracy_both=acc["both"]))
    return pd.DataFrame(rows)


def accuracy_summary(acc: pd.DataFrame) -> pd.DataFrame:
    """Per head count: parameters, and the mean, worst and best accuracy on both targets over the seeds."""
    g = acc.groupby("n_heads")
    return pd.DataFrame(dict(parameters=g.parameters.first(), d_per_head=g.d_per_head.first(),
                             mean_accuracy_both=g.accuracy_both.mean(), worst_accuracy_both=g.accuracy_both.min(),
                             best_accuracy_both=g.accuracy_both.max(),
                             mean_accuracy_first=g.accuracy_first_target.mean(),
                             mean_accuracy_second=g.accuracy_second_target.mean())).reset_index()


def offset_attention_table(models: dict, data: dict, max_offset: int = MAX_OFFSET,
                           n_shown: int = N_SHOWN) -> pd.DataFrame:
    """Each head's mean weight on the key ``offset`` steps back, over held-out sequences: a long frame."""
    rows = []
    for (h, s), m in models.items():
        by = attention_by_offset(m, data["x_test"][:n_shown], max_offset).numpy()  # (h, max_offset + 1)
        rows += [dict(n_heads=h, seed=s, head=i + 1, offset=k, weight=float(by[i, k]))
                 for i in range(by.shape[0]) for k in range(by.shape[1])]
    return pd.DataFrame(rows)


def one_head_split(by_offset: pd.DataFrame, acc: pd.DataFrame, offsets=OFFSETS) -> pd.DataFrame:
    """For the one-head models: the mean weight on each target's offset beside that target's accuracy, per seed."""
    one = by_offset[by_offset.n_heads == 1].pivot(index="seed", columns="offset", values="weight")
    out = acc[acc.n_heads == 1].set_index("seed")[["accuracy_first_target", "accuracy_second_target"]].copy()
    out.insert(0, "weight_first_offset", one[offsets[0]])
    out.insert(1, "weight_second_offset", one[offsets[1]])
    return out.reset_index()


def head_roles(by_offset: pd.DataFrame, seed: int | None = TRAIN_SEEDS[0]) -> pd.DataFrame:
    """For every head of the models of ``seed`` (every seed: ``None``): the offset it weighs most and that mean
    weight."""
    part = by_offset if seed is None else by_offset[by_offset.seed == seed]
    top = part.loc[part.groupby(["seed", "n_heads", "head"]).weight.idxmax()]
    return top.rename(columns={"offset": "main_offset", "weight": "main_weight"})[
        ["seed", "n_heads", "head", "main_offset", "main_weight"]].reset_index(drop=True)


@torch.no_grad()
def attention_maps(models: dict, data: dict, seed: int = TRAIN_SEEDS[0], n_shown: int = N_SHOWN) -> pd.DataFrame:
    """Mean weights (query x key) of every head of the models trained with ``seed``, over held-out sequences."""
    rows = []
    for (h, s), m in models.items():
        if s != seed:
            continue
        _, w = m(data["x_test"][:n_shown], need_weights=True)
        W = w.mean(0).numpy()  # (h, T, T)
        T = W.shape[-1]
        rows += [dict(n_heads=h, head=i + 1, query=q + 1, key=k + 1, weight=float(W[i, q, k]))
                 for i in range(h) for q in range(T) for k in range(T)]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------- figures

def _heads_label(h: int) -> str:
    return f"{h} head" + ("" if h == 1 else "s")


HEAD_COLORS = ("#3B7DD8", "#D8433B", "#7FB069", "#E0A526", "#8E6CC1", "#4BB3B3", "#737373", "#C85C9E")


def head_patterns_figure(long: pd.DataFrame):
    """The chapter's four untrained heads side by side: (ggplot, plotly)."""
    import warnings

    from plotnine import scale_x_continuous, scale_y_reverse

    from ..plotting import heatmap_pair

    from plotnine import labs

    gg, fig = heatmap_pair(long, "key", "query", "w", facet="head", title="Four heads at initialization, same input",
                           subtitle="Attention weights of each untrained head on one random input",
                           xlab="Key position", ylab="Query position")
    gg += labs(fill="Weight")
    fig.update_traces(colorbar=dict(title=dict(text="Weight", side="right")), selector=dict(type="heatmap"))
    T = int(long["key"].max())
    ticks = sorted({1, *range(5, T + 1, 5), T})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # replaces heatmap_pair's every-position breaks, too dense in four panels
        gg += scale_x_continuous(breaks=ticks)
        gg += scale_y_reverse(breaks=ticks)
    fig.update_xaxes(tickvals=ticks)
    fig.update_yaxes(tickvals=ticks)
    return gg, fig


def offset_attention_figure(by_offset: pd.DataFrame, seed: int = TRAIN_SEEDS[0]):
    """Mean weight by offset as grouped bars, one bar per head, one panel per head count (models of ``seed``)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    from plotnine import (
        aes,
        facet_wrap,
        geom_col,
        ggplot,
        labs,
        position_dodge,
        scale_fill_manual,
        scale_x_continuous,
        scale_y_continuous,
        theme,
    )

    from ..plotting import theme_seqlab
    from ..plotting.theme import plotly_layout

    df = by_offset[by_offset.seed == seed].copy()
    counts = sorted(df.n_heads.unique())
    labels = [_heads_label(h) for h in counts]
    df["model"] = pd.Categorical(df.n_heads.map(_heads_label), categories=labels, ordered=True)
    n_max = int(df["head"].max())
    heads = [f"head {i}" for i in range(1, n_max + 1)]
    df["head"] = pd.Categorical("head " + df["head"].astype(str), categories=heads, ordered=True)
    offsets = sorted(df.offset.unique())
    colors = dict(zip(heads, HEAD_COLORS))
    title, subtitle = "Where each trained head looks", f"Mean weight on the token k steps back, held-out " \
        f"sequences; seed {seed}"
    xlab = "Offset k (query position minus key position)"
    gg = (ggplot(df, aes("offset", "weight", fill="head")) + geom_col(position=position_dodge(width=0.85), width=0.8)
          + facet_wrap("model", nrow=1) + scale_fill_manual(values=colors)
          + scale_x_continuous(breaks=offsets) + scale_y_continuous(limits=(0, 1))
          + labs(title=title, subtitle=subtitle, x=xlab, y="Mean weight", fill="") + theme_seqlab()
          + theme(figure_size=(6.8, 3.0)))

    fig = make_subplots(rows=1, cols=len(counts), subplot_titles=labels, shared_yaxes=True)
    for c, h in enumerate(counts, start=1):
        part = df[df.n_heads == h]
        for name, g in part.groupby("head", observed=True, sort=True):
            fig.add_trace(go.Bar(x=g.offset, y=g.weight, name=str(name), marker_color=colors[str(name)],
                                 legendgroup=str(name), showlegend=c == len(counts)), row=1, col=c)
    fig.update_layout(**plotly_layout(title, subtitle), barmode="group")
    fig.update_xaxes(tickvals=offsets, title_text=xlab, row=1, col=(len(counts) + 1) // 2)
    fig.update_xaxes(tickvals=offsets)
    fig.update_yaxes(range=[0, 1.02])
    fig.update_yaxes(title_text="Mean weight", row=1, col=1)
    return gg, fig


def head_explorer(maps: pd.DataFrame):
    """A slider over (model, head): each step is one head's mean attention map."""
    import plotly.graph_objects as go

    from ..plotting import slider_figure

    steps = []
    for (h, i), part in maps.groupby(["n_heads", "head"], sort=True):
        wide = part.pivot(index="query", columns="key", values="weight")
        steps.append((f"{_heads_label(h)}: head {i}",
                      [go.Heatmap(z=wide.values, x=wide.columns, y=wide.index, colorscale="Inferno", zmin=0, zmax=1,
                                  colorbar=dict(title=dict(text="weight", side="right")))]))
    fig = slider_figure(steps, title="Trained heads on the offset task",
                        subtitle="Mean attention over held-out sequences; move the slider to pick a model and a head",
                        xlab="Key position", ylab="Query position", slider_label="")
    T = int(maps["query"].max())
    fig.update_xaxes(tickmode="linear", tick0=1, dtick=1, range=[0.5, T + 0.5], constrain="domain")
    fig.update_yaxes(tickmode="linear", tick0=1, dtick=1, range=[T + 0.5, 0.5], scaleanchor="x", constrain="domain")
    fig.update_layout(height=640)
    return fig


def head_accuracy() -> pd.DataFrame:
    """The two-offset task as this section runs it: one model per head count and seed; the per-head summary.

    §14.64 quotes it through :func:`seqlab.results.once`; the section and its page hand over their own
    training of the same models with :func:`seqlab.results.share`, so it is trained once per build.
    """
    data = offset_data(DATA_SEED, n_train=N_TRAIN, n_test=N_TEST, length=SEQ_LEN, vocab=VOCAB, offsets=OFFSETS)
    models = train_offset_models(data, TASK_HEADS, TRAIN_SEEDS, d_model=TASK_D_MODEL, steps=STEPS, batch=BATCH,
                                 lr=LR)
    return accuracy_summary(accuracy_table(models, data))


@section("14.51", "Multi-head attention")
def run(ctx):
    with single_threaded():  # small tensors: one thread is many times faster than two under load
        heads = head_parameter_table()
        W = initial_head_weights(ctx.seed(INIT_SEED))
        diversity = head_diversity(W)
        long = head_weights_long(W)

        data = offset_data(ctx.seed(DATA_SEED))
        seeds = tuple(ctx.seed(s) for s in TRAIN_SEEDS)
        models = train_offset_models(data, seeds=seeds)
        acc = accuracy_table(models, data)
        summary = accuracy_summary(acc)
        if ctx.seed(DATA_SEED) == DATA_SEED and seeds == tuple(TRAIN_SEEDS):
            share(head_accuracy, summary)  # §14.64 quotes this training instead of running it again
        by_offset = offset_attention_table(models, data)

        split = one_head_split(by_offset, acc, OFFSETS)
        roles = head_roles(by_offset, seed=None)
        verdicts = [*parameter_claims(heads, diversity), *heads_claims(summary, split, roles, offsets=OFFSETS)]
        figs = []
        if ctx.figures:
            figs = ctx.save("head_patterns", *head_patterns_figure(long))
            figs += ctx.save("offset_attention", *offset_attention_figure(by_offset, seed=ctx.seed(TRAIN_SEEDS[0])))
            figs += ctx.save_plotly("head_explorer", head_explorer(attention_maps(models, data,
                                                                                  seed=ctx.seed(TRAIN_SEEDS[0]))))
        return {"head_parameters": heads, "head_diversity": diversity, "head_weights": long,
                "offset_accuracy": acc, "offset_accuracy_summary": summary, "offset_attention": by_offset,
                "one_head_split": split, "head_roles": roles}, figs, verdicts


# ----------------------------------------------------------------------------------------------- claims
from ..claims import claim_source, require, verdict

#: the chapter's printed head-diversity numbers (mean and largest pairwise correlation)
CHAPTER_CORRELATIONS = (0.0618, 0.202)


@claim_source
def parameter_claims(params: pd.DataFrame, div: pd.DataFrame, chapter=CHAPTER_CORRELATIONS) -> list:
    """Every head count holds 4 d_model^2 parameters; the untrained correlations are the chapter's."""
    mean, top = float(div.mean_pairwise_correlation[0]), float(div.max_pairwise_correlation[0])
    return [
        require("s51_params_fixed", params.parameters.nunique() == 1
                and (params.parameters == params.formula_4_d_model_sq).all(), counts=params.parameters.tolist()),
        verdict("s51_chapter_corr", abs(mean - chapter[0]) < 5e-5 and abs(top - chapter[1]) < 5e-4, mean=mean,
                largest=top, chapter_mean=chapter[0], chapter_largest=chapter[1]),
    ]


@claim_source
def heads_claims(summary: pd.DataFrame, split: pd.DataFrame, roles: pd.DataFrame, offsets=OFFSETS) -> list:
    """One head fails and two suffice; how the single head splits its weight; how the heads share the offsets."""
    by_h = summary.set_index("n_heads").sort_index()
    one, two, many = int(by_h.index[0]), int(by_h.index[1]), int(by_h.index[-1])
    w = split[["weight_first_offset", "weight_second_offset"]].to_numpy()
    a = split[["accuracy_first_target", "accuracy_second_target"]].to_numpy()
    favoured = int((w.argmax(1) == a.argmax(1)).sum())
    n = len(split)
    two_r, many_r = roles[roles.n_heads == two], roles[roles.n_heads == many]
    split_two = all(g.main_offset.nunique() == 2 for _, g in two_r.groupby("seed"))
    shares = [dict(seed=int(k), on_first=int((g.main_offset == offsets[0]).sum()),
                   on_second=int((g.main_offset == offsets[1]).sum())) for k, g in many_r.groupby("seed")]
    shared = all(r["on_first"] >= 1 and r["on_second"] >= 1 and r["on_first"] + r["on_second"] > 2 for r in shares)
    worst_two = float(by_h.worst_accuracy_both[two])
    split_ok = bool(((a.max(1) > 0.5) & (a.min(1) < 0.5)).all())
    return [
        require("s51_same_params", summary.parameters.nunique() == 1, parameters=summary.parameters.tolist()),
        verdict("s51_one_fails", by_h.best_accuracy_both[one] < min(worst_two, by_h.worst_accuracy_both[many]) - 0.5,
                one=one, two=two, many=many, one_mean=float(by_h.mean_accuracy_both[one]),
                one_best=float(by_h.best_accuracy_both[one]), worst_two=worst_two,
                worst_many=float(by_h.worst_accuracy_both[many]), summary=by_h.to_dict()),
        verdict("s51_one_of_two", split_ok, accuracies=a.tolist()),
        verdict("s51_spreads", bool((w > 0.3).all()), lowest=float(w.min()), highest=float(w.max()),
                weights=w.tolist()),
        verdict("s51_heavier_wins", favoured == n, favoured=favoured, seeds=n, lighter_best=float(a.min(1).max()),
                chance=2 ** n),
        verdict("s51_two_split", split_two and two_r.main_weight.min() > 0.9, seeds=int(two_r.seed.nunique()),
                smallest_main_weight=float(two_r.main_weight.min()), main_offsets=two_r.main_offset.tolist(),
                main_weights=two_r.main_weight.tolist()),
        verdict("s51_many_share", shared, heads=many, shares=shares, seeds=len(shares), first_offset=offsets[0],
                second_offset=offsets[1], alike=len({(r["on_first"], r["on_second"]) for r in shares}) == 1,
                on_first=shares[0]["on_first"] if shares else 0, on_second=shares[0]["on_second"] if shares else 0,
                weakest=float(many_r.main_weight.min()) if len(many_r) else float("nan")),
        verdict("s51_two_enough", worst_two > 0.95, two=two, worst_two=worst_two),
    ]
