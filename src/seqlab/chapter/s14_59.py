"""§14.59 Top-k and nucleus (top-p) sampling: truncating the tail, and the diversity-quality trade-off."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..text.sampling import MinP, TopK, TopP, apply_processors, distribution_entropy
from ._lm import followups, lm
from .base import section
from .s14_58 import knob_summary, next_char_table, next_logits

#: two contexts for the kept-set comparison: the next character is nearly certain, or wide open
CONTEXTS = {"confident": "KING RICHAR", "uncertain": "ROMEO:\n"}
#: the truncation rules compared on them
TRUNCATIONS = {"top-k 10": TopK(10), "top-p 0.9": TopP(0.9), "min-p 0.1": MinP(0.1)}
#: the matched-diversity comparison: the diversity measures held equal (the text's, then the sampler's), and
#: where in the range every knob reaches
MATCH_ON = ("distinct_3", "entropy")
MATCH_LEVELS = (0.25, 0.5, 0.75)
KNOB_NAMES = {"temperature": "temperature", "top_k": "top-k", "top_p": "top-p", "min_p": "min-p"}
KNOB_COLORS = {"temperature": "#D8433B", "top-k": "#737373", "top-p": "#3B7DD8", "min-p": "#7FB069"}


def kept_sets(gpt, tok, contexts: dict = CONTEXTS, truncations: dict = TRUNCATIONS) -> pd.DataFrame:
    """For each context and truncation rule: how many characters survive and how much probability they hold."""
    rows = []
    for label, text in contexts.items():
        logits = next_logits(gpt, tok, text).unsqueeze(0)
        probs = logits.softmax(-1)[0]
        for name, rule in {"full": None, **truncations}.items():
            z = logits if rule is None else apply_processors(logits, [rule])
            keep = z[0].isfinite()
            rows.append(dict(context=label, text=text, top_probability=probs.max().item(),
                             entropy_nats=distribution_entropy(logits[0]).item(), strategy=name,
                             tokens_kept=int(keep.sum()), mass_kept=probs[keep].sum().item()))
    return pd.DataFrame(rows)


def at_matched_diversity(summary: pd.DataFrame, on: str = MATCH_ON[0], levels=MATCH_LEVELS) -> pd.DataFrame:
    """Each knob's setting, quality and repetition at the same diversity.

    ``summary`` has one row per (knob, value) (:func:`knob_summary`). The targets lie
    at ``levels`` of the range of ``on`` that every knob reaches; along each knob the
    columns are interpolated linearly in ``on`` between its two neighbouring settings.
    """
    spans = summary.groupby("knob")[on].agg(["min", "max"])
    lo, hi = spans["min"].max(), spans["max"].min()
    rows = []
    for level in levels:
        target = lo + level * (hi - lo)
        for knob, g in summary.groupby("knob", sort=False):
            g = g.sort_values(on)
            x = g[on].to_numpy()
            row = dict(held=on, target=target, knob=knob, setting=float(np.interp(target, x, g.value.to_numpy())))
            for col in ("nll_judge", "nll_gpt", "repetition_rate", "distinct_3", "entropy", "tokens_kept"):
                row[col] = float(np.interp(target, x, g[col].to_numpy()))
            rows.append(row)
    return pd.DataFrame(rows)


def rank_rules(matched: pd.DataFrame) -> pd.DataFrame:
    """Per diversity level of :func:`at_matched_diversity`: the knob with the lowest and the highest NLL."""
    rows = []
    for target, g in matched.groupby("target"):
        nll = g.set_index("knob").nll_judge
        rows.append(dict(target=target, best=nll.idxmin(), best_nll=nll.min(), worst=nll.idxmax(),
                         worst_nll=nll.max()))
    return pd.DataFrame(rows)


AXIS = {"distinct_3": "distinct-3 of the text (unique 3-character strings / all)",
        "entropy": "Entropy of the distribution sampled from (nats/char)"}


def tradeoff_figure(summary: pd.DataFrame, on: str = MATCH_ON[0]):
    """NLL under the judge against one diversity measure, one line per knob."""
    from ..plotting import line_pair

    df = summary.assign(knob=summary.knob.map(KNOB_NAMES)).sort_values(["knob", on])
    return line_pair(df, on, "nll_judge", "knob", points=True,
                     title="Plausibility against diversity, four knobs",
                     subtitle="Each point one setting (8 samples of 400 characters); lower = more plausible to the LSTM",
                     xlab=AXIS[on], ylab="NLL under the independent LSTM (nats/char)", colors=KNOB_COLORS)


@section("14.59", "Top-k and nucleus sampling")
def run(ctx):
    gpt, tok, _, _, tradeoff, _, mode = lm()
    dist = next_char_table(gpt, tok, {"full": [], "top-k 5": [TopK(5)], "top-p 0.9": [TopP(0.9)],
                                      "min-p 0.1": [MinP(0.1)]})
    kept = dist.groupby("strategy").kept.sum().rename("tokens_kept_of_top_12").reset_index()
    summary = (tradeoff.groupby(["knob", "value"])[["distinct_2", "distinct_3", "repetition_rate", "nll_gpt",
                                                     "nll_lstm"]].mean().reset_index())
    by_context = kept_sets(gpt, tok)
    scores, _, _ = followups()["decoding"]
    sweep = knob_summary(scores)
    matched = at_matched_diversity(sweep, MATCH_ON[0])
    matched_entropy = at_matched_diversity(sweep, MATCH_ON[1])
    t = summary[summary.knob == "temperature"].set_index("value")
    p = summary[summary.knob == "top_p"].set_index("value")
    best = matched.loc[matched.groupby("target").nll_judge.idxmin()]
    notes = [
        f"Chapter trade-off table {mode}: 4 samples of 300 characters per setting, scored for diversity (distinct-n, "
        "repetition of 8-grams) and quality (negative log-likelihood under the GPT itself and under the "
        "independently trained LSTM; lower = more plausible text).",
        f"Raising temperature from 0.5 to 1.5 raises distinct-3 from {t.distinct_3[0.5]:.3f} to {t.distinct_3[1.5]:.3f} "
        f"and the LSTM's NLL from {t.nll_lstm[0.5]:.2f} to {t.nll_lstm[1.5]:.2f} nats/char: diversity is bought with "
        "plausibility.",
        "Top-p in the same table is not monotone: the LSTM's NLL is "
        + ", ".join(f"{v:.3f} at p = {k}" for k, v in p.nll_lstm.items()) + ".",
        "Kept sets (table `kept_by_context`): " + "; ".join(
            f"{r.strategy} keeps {r.tokens_kept} after {r.text!r}" for r in by_context[by_context.strategy != "full"]
            .itertuples()) + ".",
        f"At matched {MATCH_ON[0]} (table `matched_diversity`, artifact set 'lm_decoding'): lowest NLL under the "
        "judge " + "; ".join(f"{r.knob} at {r.target:.3f} ({r.nll_judge:.3f})" for r in best.itertuples())
        + ". At matched entropy (table `matched_entropy`): " + "; ".join(
            f"{r.knob} at {r.target:.3f} nats ({r.nll_judge:.3f})"
            for r in matched_entropy.loc[matched_entropy.groupby("target").nll_judge.idxmin()].itertuples()) + ".",
    ]
    figs = []
    if ctx.figures:
        figs = ctx.save("diversity_quality", *tradeoff_figure(sweep))
    return {"filtered_distribution": dist, "tokens_kept": kept, "tradeoff": summary, "kept_by_context": by_context,
            "decoding_sweep": sweep, "matched_diversity": matched, "matched_entropy": matched_entropy}, figs, notes
