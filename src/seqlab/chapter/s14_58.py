"""§14.58 Autoregressive decoding: greedy and temperature."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..claims import claim_source, require, verdict
from ..text.metrics import repetition_rate
from ..text.sampling import Temperature, apply_processors, build_processors, distribution_entropy
from ._lm import followups, lm
from ._util import provenance
from .base import section

CONTEXT = "ROMEO:\nI will "
#: temperatures of the entropy table
TEMPERATURES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
#: strategies of the chapter's sample table (the ``lm`` set's samples)
SAMPLE_STRATEGIES = ("greedy", "temperature 0.5", "temperature 1.0", "temperature 1.5")
#: the explorer: prompts, and the grid of temperature x top-p it precomputes
EXPLORER_PROMPTS = ("ROMEO:\n", "I pray you, si", "KING RICHAR")
EXPLORER_TEMPERATURES = (0.5, 0.8, 1.0, 1.3)
EXPLORER_TOP_PS = (0.5, 0.8, 0.95, 1.0)
EXPLORER_TOP = 10
EXCERPT = 180


def visible(token: str) -> str:
    return token.replace(" ", "␣").replace("\n", "⏎")


def decoding_results():
    """The decoding sweep (artifact set ``lm_decoding``, verified): ``(per-sample scores, texts, manifest)``."""
    return followups()["decoding"]


@torch.no_grad()
def next_logits(gpt, tok, context: str = CONTEXT) -> torch.Tensor:
    """The model's logits (vocabulary,) for the character after ``context``."""
    gpt.eval()
    ids = tok.encode(context)[-(getattr(gpt, "block_size", None) or 0):]  # the model's window at most
    return gpt(torch.tensor([ids]))[0][0, -1]


def next_char_table(gpt, tok, processors_by_name: dict, top: int = 12, context: str = CONTEXT) -> pd.DataFrame:
    """Probabilities of the most likely next characters after ``context`` under each processor list."""
    logits = next_logits(gpt, tok, context)
    order = logits.softmax(-1).argsort(descending=True)[:top]
    rows = []
    for name, procs in processors_by_name.items():
        z = apply_processors(logits.unsqueeze(0), procs)
        probs = z.softmax(-1)[0]
        for rank, i in enumerate(order.tolist(), start=1):
            rows.append(dict(strategy=name, rank=rank, char=repr(tok.id_to_token[i]), probability=probs[i].item(),
                             kept=bool(torch.isfinite(z[0, i]))))
    return pd.DataFrame(rows)


def entropy_by_temperature(logits: torch.Tensor, temperatures=TEMPERATURES) -> pd.DataFrame:
    """Entropy (nats) and top probability of softmax(logits / T) for each T."""
    rows = []
    for t in temperatures:
        z = apply_processors(logits.unsqueeze(0), [Temperature(t)])[0]
        rows.append(dict(temperature=t, entropy_nats=distribution_entropy(z).item(),
                         max_probability=z.softmax(-1).max().item()))
    return pd.DataFrame(rows)


def chapter_samples(samples: dict, tok, strategies=SAMPLE_STRATEGIES) -> pd.DataFrame:
    """The ``lm`` set's samples with the fraction of 8-character windows that repeat an earlier one."""
    return pd.DataFrame([dict(strategy=name, repetition_rate=repetition_rate(tok.encode(samples[name]), 8),
                              text=samples[name][:200]) for name in strategies])


def knob_summary(scores: pd.DataFrame, knob: str | None = None) -> pd.DataFrame:
    """Means over the samples of each setting of the decoding sweep (``lm_decoding``), one row per setting."""
    cols = ["entropy", "tokens_kept", "distinct_1", "distinct_2", "distinct_3", "distinct_4", "repetition_rate",
            "nll_gpt", "nll_judge"]
    df = scores if knob is None else scores[scores.knob == knob]
    groups = df.groupby(["knob", "value"], sort=False)
    out = groups[cols].mean()
    out["nll_judge_se"] = groups.nll_judge.std() / np.sqrt(groups.size())  # standard error of the mean
    out["samples"] = groups.size()
    return out.reset_index()


def temperature_samples(scores: pd.DataFrame, texts: dict, prompt: str = "ROMEO:\n",
                        excerpt: int = EXCERPT) -> pd.DataFrame:
    """One row per temperature of the decoding sweep: its scores and the start of its first sample."""
    out = knob_summary(scores, "temperature")
    out["sample"] = [texts["temperature"][str(v)][len(prompt):][:excerpt] for v in out.value]
    return out


def explorer(gpt, tok, prompts=EXPLORER_PROMPTS, temperatures=EXPLORER_TEMPERATURES, top_ps=EXPLORER_TOP_PS,
             top: int = EXPLORER_TOP):
    """Offline explorer: the next-character distribution after each prompt, for every (temperature, top-p).

    Each prompt gets a panel with its ``top`` most likely characters (at τ = 1); the
    slider steps through the grid, every position computed here.
    """
    import plotly.graph_objects as go

    from ..plotting import slider_figure

    logits = {p: next_logits(gpt, tok, p) for p in prompts}
    order = {p: logits[p].softmax(-1).argsort(descending=True)[:top].tolist() for p in prompts}
    colors = ["#D8433B", "#3B7DD8", "#7FB069", "#737373"]
    steps = []
    for t in temperatures:
        for tp in top_ps:
            traces = []
            for j, p in enumerate(prompts):
                probs = apply_processors(logits[p].unsqueeze(0), build_processors(temperature=t, top_p=tp))
                probs = probs.softmax(-1)[0]
                key = "" if j == 0 else str(j + 1)
                traces.append(go.Bar(x=[visible(tok.id_to_token[i]) for i in order[p]],
                                     y=[probs[i].item() for i in order[p]], xaxis=f"x{key}", yaxis=f"y{key}",
                                     marker_color=colors[j % len(colors)], showlegend=False, name=repr(p),
                                     hovertemplate="%{x}: %{y:.3f}<extra></extra>"))
            steps.append((f"τ = {t}, top-p = {tp}", traces))
    grid = [(t, tp) for t in temperatures for tp in top_ps]
    start = grid.index((1.0, 1.0)) if (1.0, 1.0) in grid else 0  # the model's own distribution
    fig = slider_figure(steps, title="The next character under temperature and top-p",
                        subtitle="The chapter's GPT; move the slider through the grid", slider_label="",
                        active=start)
    width = 1 / len(prompts)
    layout = {}
    for j, p in enumerate(prompts):
        key = "" if j == 0 else str(j + 1)
        layout[f"xaxis{key}"] = dict(domain=[j * width + 0.02, (j + 1) * width - 0.02], anchor=f"y{key}",
                                     title=dict(text=f"after {p!r}"), type="category")
        layout[f"yaxis{key}"] = dict(range=[0, 1], anchor=f"x{key}", title=dict(text="Probability" if j == 0 else ""))
    fig.update_layout(**layout)
    return fig


def distribution_figure(dist: pd.DataFrame, context: str = CONTEXT):
    from ..plotting import line_pair

    return line_pair(dist, "rank", "probability", "strategy", points=True,
                     title="The next character under three temperatures",
                     subtitle=f"After {context!r}: the most likely characters under " + ", ".join(dist.strategy.unique()),
                     xlab="Rank of the character under τ = 1", ylab="Probability")


@section("14.58", "Autoregressive decoding: greedy and temperature")
def run(ctx):
    gpt, tok, _, samples, _, _, mode = lm()
    dist = next_char_table(gpt, tok, {f"τ = {t}": [Temperature(t)] for t in (0.5, 1.0, 1.5)})
    ent = entropy_by_temperature(next_logits(gpt, tok))
    table = chapter_samples(samples, tok)
    scores, texts, _ = followups()["decoding"]
    sweep = temperature_samples(scores, texts)
    notes = [provenance(["lm", "lm_decoding"], mode),
             *temperature_claims(ent, table.set_index("strategy").repetition_rate.to_dict(), sweep)]
    figs = []
    if ctx.figures:
        figs = ctx.save("temperature", *distribution_figure(dist))
        figs += ctx.save_plotly("decoding_explorer", explorer(gpt, tok))
    return {"next_char_distribution": dist, "temperature_entropy": ent, "samples": table,
            "temperature_sweep": sweep}, figs, notes


# --- claims: the sentences of §14.58 that interpret its numbers ---------------------------------------------------

#: the favourite's probability from which a distribution counts as close to greedy
NEAR_GREEDY = 0.9


@claim_source
def temperature_claims(ent: pd.DataFrame, repetition: dict, temps: pd.DataFrame):
    """Temperature on one distribution (``ent``), greedy against sampling (``repetition`` by strategy), and the
    temperature rows of the decoding sweep (``temps``)."""
    e = ent.sort_values("temperature")
    top_lo = e.max_probability.iloc[0]
    t = temps.sort_values("value")
    both = t.distinct_3.is_monotonic_increasing and t.nll_judge.is_monotonic_increasing
    coolest = t.iloc[0]
    cool_best = coolest.nll_judge == t.nll_judge.min() and coolest.repetition_rate == t.repetition_rate.max()
    g, s1 = repetition["greedy"], repetition["temperature 1.0"]
    return [
        require("t_monotone", e.entropy_nats.is_monotonic_increasing and e.max_probability.is_monotonic_decreasing,
                entropy=e.entropy_nats.tolist()),
        verdict("t_short_of_greedy", top_lo < NEAR_GREEDY, top_probability=top_lo, rest=1 - top_lo,
                threshold=NEAR_GREEDY),
        verdict("greedy_repeats", g > s1, greedy=g, sampled=s1),
        verdict("ts_trade", both, distinct_3=t.distinct_3.tolist(), nll=t.nll_judge.tolist()),
        verdict("ts_cool", cool_best, coolest_repetition=float(coolest.repetition_rate), nll=t.nll_judge.tolist(),
                repetition=t.repetition_rate.tolist()),
    ]


@claim_source
def library_checks(**same):
    """The page's own sampling code against seqlab's: each ``name=True`` says the two gave the same result."""
    return [require(f"same_as_library_{name}", ok, equal=ok) for name, ok in same.items()]
