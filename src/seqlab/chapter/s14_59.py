"""§14.59 Top-k and nucleus (top-p) sampling: truncating the tail, and the diversity-quality trade-off."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..claims import claim_source, verdict
from ..analysis.multiple import holm
from ..text.sampling import MinP, TopK, TopP, apply_processors, distribution_entropy
from ._lm import followups, lm
from ._util import provenance
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
            # the standard error is interpolated too: an upper bound on that of the interpolated mean
            for col in ("nll_judge", "nll_judge_se", "nll_gpt", "repetition_rate", "distinct_3", "entropy",
                        "tokens_kept"):
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


#: a difference in mean NLL counts as settled when it exceeds this many standard errors of the difference
SETTLED_SE = 2.0


def against(matched: pd.DataFrame, base: str = "temperature") -> pd.DataFrame:
    """At each level of :func:`at_matched_diversity`: every other knob's NLL minus ``base``'s, with the standard
    error of that difference (the two means' errors combined as independent) and whether it is settled."""
    rows = []
    for target, g in matched.groupby("target", sort=True):
        g = g.set_index("knob")
        for knob in g.index.drop(base):
            diff = g.nll_judge[knob] - g.nll_judge[base]
            se = float(np.hypot(g.nll_judge_se[knob], g.nll_judge_se[base]))
            rows.append(dict(held=g.held.iloc[0], target=target, knob=knob, nll=g.nll_judge[knob],
                             nll_base=g.nll_judge[base], difference=diff, se=se,
                             settled=bool(abs(diff) > SETTLED_SE * se)))
    return pd.DataFrame(rows)


AXIS = {"distinct_3": "distinct-3 of the text (unique 3-character strings / all)",
        "entropy": "Entropy of the distribution sampled from (nats/char)"}


def tradeoff_figure(summary: pd.DataFrame, on: str = MATCH_ON[0]):
    """NLL under the judge against one diversity measure, one line per knob."""
    from ..plotting import line_pair

    df = summary.assign(knob=summary.knob.map(KNOB_NAMES)).sort_values(["knob", on])
    band = None
    if "nll_judge_se" in df:  # two standard errors either side: differences the text can read
        df = df.assign(lo=df.nll_judge - SETTLED_SE * df.nll_judge_se, hi=df.nll_judge + SETTLED_SE * df.nll_judge_se)
        band = ("lo", "hi")
    return line_pair(df, on, "nll_judge", "knob", points=True, band=band,
                     title="Plausibility against diversity, four knobs",
                     subtitle="Each point one setting (8 samples of 400 characters)"
                              + (", shaded ±2 standard errors" if band else "")
                              + "; lower = more plausible to the LSTM",
                     xlab=AXIS[on], ylab="NLL under the independent LSTM (nats/char)", colors=KNOB_COLORS)


def matched_figure(matched: pd.DataFrame):
    """Each knob's NLL at the diversity levels of :func:`at_matched_diversity`, shaded ±2 standard errors: the
    comparison the text reads, on a scale that shows it."""
    from ..plotting import line_pair

    on = str(matched.held.iloc[0])
    df = matched.assign(knob=matched.knob.map(KNOB_NAMES), lo=matched.nll_judge - SETTLED_SE * matched.nll_judge_se,
                        hi=matched.nll_judge + SETTLED_SE * matched.nll_judge_se).sort_values(["knob", "target"])
    from plotnine import scale_x_continuous

    levels = sorted(df.target.unique())
    gg, fig = line_pair(df, "target", "nll_judge", "knob", points=True, band=("lo", "hi"),
                        title="The four rules at equal diversity",
                        subtitle=f"{len(levels)} levels of matched diversity, each rule interpolated there; "
                                 "shaded ±2 standard errors",
                        xlab=AXIS[on], ylab="NLL under the independent LSTM (nats/char)", colors=KNOB_COLORS)
    # ticks at the levels themselves, as the tables print them
    gg += scale_x_continuous(breaks=levels, labels=[f"{t:.3f}" for t in levels])
    fig.update_xaxes(tickmode="array", tickvals=levels, ticktext=[f"{t:.3f}" for t in levels])
    return gg, fig


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
    vs_text, vs_draw = against(matched), against(matched_entropy)
    old = tradeoff[tradeoff.knob == "top_p"].groupby("value").nll_lstm.mean()
    notes = [
        provenance(["lm", "lm_decoding"], mode),
        *kept_claims(by_context),
        *matched_claims(vs_text, matched, matched_entropy),
        *topp_claims(old, sweep[sweep.knob == "top_p"], vs_text, vs_draw),
    ]
    figs = []
    if ctx.figures:
        figs = ctx.save("diversity_quality", *tradeoff_figure(sweep))
        figs += ctx.save("matched_diversity", *matched_figure(matched))
    return {"filtered_distribution": dist, "tokens_kept": kept, "tradeoff": summary, "kept_by_context": by_context,
            "decoding_sweep": sweep, "matched_diversity": matched, "matched_entropy": matched_entropy}, figs, notes


# --- claims: the sentences of §14.59 that interpret its numbers ---------------------------------------------------

def family(vs_text: pd.DataFrame, vs_draw: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Both :func:`against` frames as one family of tests: each difference's two-sided normal p-value
    (difference over its standard error) and its Holm-adjusted p-value over the whole family."""
    both = pd.concat([vs_text, vs_draw], ignore_index=True)
    p = 2.0 * norm.sf((both.difference / both.se).abs().to_numpy())
    adjusted = holm(p)
    return both.assign(p=p, p_holm=adjusted, holm_settled=adjusted < alpha)


@claim_source
def family_claims(fam: pd.DataFrame):
    """The level-by-level verdicts as a family: holds where some of the differences settled at two standard errors
    do not survive Holm's correction over all of them (the level-by-level readings are then exploratory)."""
    lost = fam[fam.settled & ~fam.holm_settled]
    n = len(fam)
    return [verdict("s59_family_exploratory", bool(fam.holm_settled.sum() < fam.settled.sum()), comparisons=n,
                    settled=int(fam.settled.sum()), held=int((fam.settled & fam.holm_settled).sum()),
                    expected=float(2.0 * norm.sf(SETTLED_SE) * n),
                    lost=[f"{KNOB_NAMES[k]} at {h.replace('_', '-')} {t:.3f}"
                          for k, h, t in zip(lost.knob, lost.held, lost.target)])]


def mean_difference(vs: pd.DataFrame, knob: str) -> dict:
    """One knob's NLL minus the base's averaged over the levels of :func:`against`, with its standard error
    (the levels' errors combined as independent) and whether the mean is settled (> ``SETTLED_SE`` errors)."""
    g = vs[vs.knob == knob]
    mean, se = float(g.difference.mean()), float(np.sqrt((g.se ** 2).sum()) / len(g))
    return dict(mean=mean, se=se, settled=bool(abs(mean) > SETTLED_SE * se), lo=float(g.difference.min()),
                hi=float(g.difference.max()))


def _first_reversal(nll: pd.Series):
    """The first pair of neighbouring settings (sorted) where the NLL falls as the setting widens, or None."""
    nll = nll.sort_index()
    for (a, x), (b, y) in zip(nll.items(), list(nll.items())[1:]):
        if y < x:
            return a, x, b, y
    return None


@claim_source
def kept_claims(kept: pd.DataFrame, k: int = 10):
    """The kept sets after a confident and an uncertain context: is a fixed k too loose, then too tight?"""
    t = kept.set_index(["context", "strategy"])
    rules = [r for r in kept.strategy.unique() if r not in ("full", f"top-k {k}")]
    conf = {r: int(t.tokens_kept["confident", r]) for r in rules}
    unc = {r: int(t.tokens_kept["uncertain", r]) for r in rules}
    kept_mass, top = t.mass_kept["confident", f"top-k {k}"], t.top_probability["confident", "full"]
    rest = kept_mass - top
    loose = all(v < k for v in conf.values())
    tight = all(v > k for v in unc.values())
    return [
        verdict("s59_k_loose", loose, confident=conf, k=k, k_minus_one=k - 1, rest=rest, kept_mass=kept_mass,
                top=top, left=1 - top),
        verdict("s59_k_fixed", loose and tight, confident=conf, uncertain=unc, k=k),
    ]


@claim_source
def topp_claims(old: pd.Series, new: pd.DataFrame, vs_text: pd.DataFrame, vs_draw: pd.DataFrame):
    """The chapter's reading of top-p (it trades diversity for plausibility as temperature does), checked.

    ``old``: the chapter's four-sample NLL by p; ``new``: the larger sweep's top-p rows (value, nll_judge,
    distinct_3); ``vs_text`` / ``vs_draw``: :func:`against` at matched distinct-3 and matched entropy.
    """
    rev = _first_reversal(old) or (None,) * 4
    n = new.sort_values("value")
    monotone = n.nll_judge.is_monotonic_increasing and n.distinct_3.is_monotonic_increasing
    m_text, m_draw = mean_difference(vs_text, "top_p"), mean_difference(vs_draw, "top_p")
    return [
        verdict("s59_old_reversal", rev[0] is not None, old=old.to_dict(), narrow=rev[0], narrow_nll=rev[1],
                wide=rev[2], wide_nll=rev[3]),
        verdict("s59_new_monotone", monotone, nll=n.nll_judge.tolist(), distinct_3=n.distinct_3.tolist()),
        verdict("s59_topp_like_temperature", not m_text["settled"] and not m_draw["settled"], text=m_text,
                draw=m_draw),
    ]


def _adaptive_all(vs_text: pd.DataFrame):
    """Every level at once: each level's means (``by_level``), where each adaptive rule is ahead of temperature, and
    how many differences settle; holds where neither adaptive rule has the lower mean at every level."""
    adaptive = vs_text[vs_text.knob.isin(["top_p", "min_p"])]
    by_level = []
    for target, g in adaptive.groupby("target"):
        g = g.set_index("knob")
        by_level.append(dict(target=target, base=g.nll_base.iloc[0], **{
            f"{k}{part}": v for k in ("top_p", "min_p") for part, v in
            (("", g.nll[k]), ("_lower", bool(g.difference[k] < 0)), ("_settled", bool(g.settled[k])))}))
    both_everywhere = all(r["top_p_lower"] and r["min_p_lower"] for r in by_level)
    ahead = adaptive.assign(ahead=adaptive.difference < 0).groupby("target").ahead.sum()
    at = {k: g.target[g.difference < 0].tolist() for k, g in adaptive.groupby("knob")}
    n_levels = vs_text.target.nunique()
    return verdict("s59_adaptive_mixed", not any(len(v) == n_levels for v in at.values()), both=both_everywhere, levels=sorted(vs_text.target.unique()), by_level=by_level,
                   ahead=ahead.to_dict(), settled=int(adaptive.settled.sum()), differences=len(adaptive),
                   top_p_at=at.get("top_p", []), min_p_at=at.get("min_p", []),
                   one_leads_all=any(len(v) == n_levels for v in at.values()))


def _temperature_entropy(vs_text: pd.DataFrame, matched: pd.DataFrame, by_entropy: pd.DataFrame):
    """At equal entropy does temperature have the lowest mean NLL at every level, while it repeats more than the
    adaptive rules at equal distinct-3? (How many of those differences settle is evidence, not the verdict.)"""
    best = rank_rules(by_entropy).best
    rep = matched.pivot(index="target", columns="knob", values="repetition_rate")
    repeats_more = bool((rep.temperature >= rep[["top_p", "min_p"]].max(axis=1)).all())
    vs_draw = against(by_entropy)
    leads = vs_draw[vs_draw.knob.isin(["top_p", "min_p"])]
    n_lead = int((leads.settled & (leads.difference > 0)).sum())
    return verdict("s59_temperature_entropy", set(best) == {"temperature"} and repeats_more,
                   best_at_equal_entropy=sorted(set(best)), settled_leads=n_lead, repetition=rep.to_dict(),
                   best_by_level=[KNOB_NAMES[b] for b in best], settled_draw=int(leads.settled.sum()),
                   comparisons=len(leads), repeats_more=repeats_more, middle=rep.iloc[len(rep) // 2].to_dict())


@claim_source
def matched_claims(vs_text: pd.DataFrame, matched: pd.DataFrame, by_entropy: pd.DataFrame):
    """At equal diversity: do the adaptive rules beat temperature at each level, which rule is last, and does
    temperature win at equal entropy while repeating more at equal distinct-3?"""
    levels = sorted(vs_text.target.unique())
    out = [_adaptive_all(vs_text)]
    worst = set(rank_rules(matched).worst) | set(rank_rules(by_entropy).worst)
    out.append(verdict("s59_topk_last", worst == {"top_k"}, worst=sorted(worst), levels=len(levels),
                       worst_names=sorted(KNOB_NAMES[w] for w in worst),
                       settled=int(vs_text[vs_text.knob == "top_k"].settled.sum())))
    out.append(_temperature_entropy(vs_text, matched, by_entropy))
    return out
