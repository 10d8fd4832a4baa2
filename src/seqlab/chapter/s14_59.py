"""§14.59 Top-k and nucleus (top-p) sampling: truncating the tail, and the diversity-quality trade-off."""
from __future__ import annotations

from ..text.sampling import MinP, TopK, TopP
from ._lm import lm
from .base import section
from .s14_58 import next_char_table


@section("14.59", "Top-k and nucleus sampling")
def run(ctx):
    gpt, tok, _, _, tradeoff, _, mode = lm()
    dist = next_char_table(gpt, tok, {"full": [], "top-k 5": [TopK(5)], "top-p 0.9": [TopP(0.9)],
                                      "min-p 0.1": [MinP(0.1)]})
    kept = dist.groupby("strategy").kept.sum().rename("tokens_kept_of_top_12").reset_index()
    summary = (tradeoff.groupby(["knob", "value"])[["distinct_2", "distinct_3", "repetition_rate", "nll_gpt",
                                                     "nll_lstm"]].mean().reset_index())
    t = summary[summary.knob == "temperature"].set_index("value")
    p = summary[summary.knob == "top_p"].set_index("value")
    notes = [
        f"Trade-off table {mode}: 4 samples of 300 characters per setting, scored for diversity (distinct-n, "
        "repetition of 8-grams) and quality (negative log-likelihood under the GPT itself and under the "
        "independently trained LSTM; lower = more plausible text).",
        f"Raising temperature from 0.5 to 1.5 raises distinct-3 from {t.distinct_3[0.5]:.3f} to {t.distinct_3[1.5]:.3f} "
        f"and the LSTM's NLL from {t.nll_lstm[0.5]:.2f} to {t.nll_lstm[1.5]:.2f} nats/char: diversity is bought with "
        "plausibility.",
        f"Top-p trades the same way but cuts only the tail: from p = 0.5 to 1.0 the LSTM's NLL moves "
        f"{p.nll_lstm[0.5]:.2f} -> {p.nll_lstm[1.0]:.2f}.",
        "Top-k keeps a fixed number of tokens whatever the shape of the distribution; top-p and min-p adapt: a "
        "confident prediction keeps few candidates, an uncertain one many.",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        long = summary.assign(setting=summary.knob.map({"temperature": "temperature", "top_p": "top-p (T = 1)"}))
        gg, fig = line_pair(long.sort_values("distinct_3"), "distinct_3", "nll_lstm", "setting", points=True,
                            title="Diversity against plausibility",
                            subtitle="Each point one setting; right = more diverse, up = less plausible to the LSTM",
                            xlab="distinct-3 (unique character 3-grams / all)", ylab="NLL under the LSTM (nats/char)",
                            colors={"temperature": "#D8433B", "top-p (T = 1)": "#3B7DD8"})
        figs = ctx.save("diversity_quality", gg, fig)
    return {"filtered_distribution": dist, "tokens_kept": kept, "tradeoff": summary}, figs, notes
