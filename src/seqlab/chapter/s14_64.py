"""§14.64 Summary: the verdicts of the learning objectives and of the two threads, from the sections' numbers.

Every number the summary quotes is the number a section shows: the same library calls with the section's settings,
the same result through :func:`seqlab.results.once`, the same verified artifact set or stored timing reference.
What it adds is the claims, one source per objective and thread; the page writes their sentences.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..claims import claim_source, require, verdict
from .base import section
from .s14_50 import SCALED, UNSCALED
from .s14_55 import LEVEL as COST_LEVEL

#: the copy task's lengths the bottleneck verdict compares (§14.48's sweep)
COPY_SHORT, COPY_LONG = 4, 32
#: accuracy points by which a difference must exceed to count as a fall / a gain (one token in ten)
ACCURACY_MARGIN = 0.10
#: the lag at which §14.47 compares the cells' input-gradient reach (T - 1)
REACH_LAG = 79
#: a difference below this is float rounding (permutation equivariance, causal leak)
ROUNDING = 1e-5
#: a softmax whose largest weight is above this is saturated (nearly one-hot)
SATURATED = 0.99
#: two standard errors: a decoding rule "beats" temperature only by more than this many standard errors
DECODING_SE = 2.0

#: the first page's list of objectives: "N. text" then "Taught in {ref}`§S <label>`, ...; summed up in the {ref}`...`"
_OBJECTIVE = re.compile(r"^\s*(\d+)\. (.+?)\n\s+Taught in (.+?); summed up in the \{ref\}`summary <summary-([\w-]+)>`\.$",
                        re.M)
#: the objectives' one home: the first page's list
OBJECTIVES = Path(__file__).resolve().parents[1] / "book" / "pages" / "index.md"
#: the objectives' math as plain text for the table
_PLAIN = (("$", ""), (r"\sqrt{d_k}", "√d_k"), ("^2", "²"))


def objectives(index: Path = OBJECTIVES) -> pd.DataFrame:
    """The chapter's ten learning objectives as the first page lists them (their one home, ``index.md``):
    number, short name (the summary's label is ``summary-NAME``), text and the sections that teach each."""
    rows = []
    for number, text, taught, name in _OBJECTIVE.findall(index.read_text(encoding="utf-8")):
        for old, new in _PLAIN:
            text = text.replace(old, new)
        sections = ", ".join(f"§{s}" for s in re.findall(r"\{ref\}`§([\d.]+) <", taught))
        rows.append(dict(objective=int(number), name=name, text=text, sections=sections))
    return pd.DataFrame(rows, columns=["objective", "name", "text", "sections"])


# the verdicts: one claim source per objective and per thread


@claim_source
def problem_class_claims(parameters_by_length: dict, outputs_by_length: dict) -> list:
    """One many-to-one module reads every length with one parameter count and one output shape."""
    counts, shapes = set(parameters_by_length.values()), set(map(tuple, outputs_by_length.values()))
    lo, hi = min(parameters_by_length), max(parameters_by_length)
    n = next(iter(counts)) if len(counts) == 1 else None
    return [verdict("s64_v_problem_class", len(counts) == 1 and len(shapes) == 1, shortest=lo, longest=hi, count=n,
                    parameters=parameters_by_length, shapes={k: list(v) for k, v in outputs_by_length.items()})]


@claim_source
def gradient_claims(decay_by_rho: dict, ranges: dict) -> list:
    """The gradient's decay per step against the spectral radius: bounded by rho below one, and never growing.

    ``ranges`` maps a radius to the (smallest, largest) gradient over the lags, quoted for the largest radius."""
    below = {r: f for r, f in decay_by_rho.items() if r < 1}
    above = {r: f for r, f in below.items() if f > r}
    grows = {r: f for r, f in decay_by_rho.items() if f > 1}
    top = max(decay_by_rho)
    return [
        verdict("s64_v_gradient", not above, radii=sorted(below), factors=[below[r] for r in sorted(below)],
                exceeding=sorted(above), decay=decay_by_rho),
        verdict("s64_v_gradient_growth", not grows, top=top, top_factor=decay_by_rho[top],
                top_range=list(ranges[top]), growing=sorted(grows), decay=decay_by_rho),
    ]


@claim_source
def gating_claims(ratios: pd.DataFrame, lag: int = REACH_LAG, width: int = 32) -> list:
    """The gated cells' input gradient at the longest lag against the plain RNN's, before training.

    ``ratios`` is §14.47's ``reach_ratios``: per initialisation (seed) and width, the LSTM's and the GRU's gradient
    at lag ``lag`` over the RNN's. ``s64_v_gating``: both gated cells above the RNN in every draw at ``width``;
    ``s64_v_gating_widths``: the LSTM above the RNN in most draws over every width."""
    at = ratios[ratios.width == width]
    below = ratios[ratios.lstm_over_rnn <= 1]
    lo, hi = ratios.loc[ratios.lstm_over_rnn.idxmin()], ratios.loc[ratios.lstm_over_rnn.idxmax()]
    return [verdict("s64_v_gating", bool((at.lstm_over_rnn > 1).all() and (at.gru_over_rnn > 1).all()), lag=lag,
                    width=width, draws=int(ratios.seed.nunique()), lstm_lo=float(at.lstm_over_rnn.min()),
                    lstm_hi=float(at.lstm_over_rnn.max()), gru_lo=float(at.gru_over_rnn.min()),
                    gru_hi=float(at.gru_over_rnn.max())),
            verdict("s64_v_gating_widths", len(below) < len(ratios) / 2, lowest=float(lo.lstm_over_rnn),
                    lowest_width=int(lo.width), highest=float(hi.lstm_over_rnn), highest_width=int(hi.width),
                    n_below=len(below), n_above=len(ratios) - len(below), n_draws=len(ratios),
                    below_widths=sorted(set(int(w) for w in below.width)))]


@claim_source
def bottleneck_claims(spread: pd.DataFrame, short: int = COPY_SHORT, long: int = COPY_LONG,
                      margin: float = ACCURACY_MARGIN) -> list:
    """Held-out teacher-forced copy accuracy over seeds (``spread``: §14.48's ``seed_spread``): does the fixed
    vector fail with length (its worst seed at ``short`` above its best at ``long`` by more than ``margin``), and
    does attention repair it (attention's worst seed at ``long`` above the fixed vector's best)?"""
    r = spread.set_index(["attention", "sequence_length"])
    lo, hi = r.heldout_teacher_forced_lowest, r.heldout_teacher_forced_highest
    mean = r.heldout_teacher_forced_mean
    n = int(spread.seeds.min())
    return [
        verdict("s64_v_bottleneck", float(lo[("none", short)] - hi[("none", long)]) > margin, short=short, long=long,
                seeds=n, fixed_short=float(mean[("none", short)]), fixed_long=float(mean[("none", long)]),
                fixed_short_worst=float(lo[("none", short)]), fixed_long_best=float(hi[("none", long)]),
                margin=margin),
        verdict("s64_v_bottleneck_attention", bool(lo[("general", long)] > hi[("none", long)]), long=long, seeds=n,
                attention_worst=float(lo[("general", long)]), attention_best=float(hi[("general", long)]),
                fixed_worst=float(lo[("none", long)]), fixed_best=float(hi[("none", long)])),
    ]


@claim_source
def scaling_claims(spread: pd.DataFrame, saturation: pd.DataFrame, tolerance: float = 0.05) -> list:
    """The spread of q·k is √d_k and the scaled one is one (to ``tolerance``); without scaling the softmax saturates.

    At the largest d_k the evidence also sets the unscaled gradients beside the scaled ones at that width: through
    the softmax (``factor``: scaled over unscaled) and at Q (``query_larger``: larger unscaled)."""
    ratio = spread.sd_unscaled / spread.sqrt_d_k
    unit = bool(((ratio - 1).abs() < tolerance).all() and ((spread.sd_scaled - 1).abs() < tolerance).all())
    hi = int(saturation.d_k.max())
    raw = saturation[(saturation.d_k == hi) & (saturation.scaled == UNSCALED)].iloc[0]
    scaled = saturation[saturation.scaled == SCALED]
    same = scaled[scaled.d_k == hi].iloc[0]  # the scaled softmax at the same width
    saturates = bool(raw.max_attention_weight > SATURATED and scaled.max_attention_weight.max() < SATURATED
                     and raw.logit_gradient_norm < scaled.logit_gradient_norm.min())
    return [
        verdict("s64_v_scaling", unit, ratio_min=float(ratio.min()), ratio_max=float(ratio.max()),
                scaled_min=float(spread.sd_scaled.min()), scaled_max=float(spread.sd_scaled.max()),
                tolerance=tolerance, ratio=ratio.tolist(), scaled=spread.sd_scaled.tolist()),
        verdict("s64_v_scaling_breaks", saturates, d_k=hi, max_weight=float(raw.max_attention_weight),
                gradient=float(raw.logit_gradient_norm), scaled_gradient_min=float(scaled.logit_gradient_norm.min()),
                scaled_gradient=float(same.logit_gradient_norm),
                factor=float(same.logit_gradient_norm / raw.logit_gradient_norm) if raw.logit_gradient_norm > 0
                else math.inf,
                query=float(raw.query_gradient_norm), query_scaled=float(same.query_gradient_norm),
                query_larger=bool(raw.query_gradient_norm > same.query_gradient_norm)),
    ]


@claim_source
def multihead_claims(parameters_by_heads: dict, mean_one: float, worst_many: float, margin: float = ACCURACY_MARGIN) -> list:
    """One parameter count for every head count; several heads against one on the two-offset task."""
    heads = sorted(parameters_by_heads)
    same = len(set(parameters_by_heads.values())) == 1
    return [
        verdict("s64_v_heads_params", same, fewest=heads[0], most=heads[-1],
                count=parameters_by_heads[heads[0]], counts=[parameters_by_heads[h] for h in heads],
                parameters=parameters_by_heads),
        verdict("s64_v_heads_buy", worst_many - mean_one > margin, mean_one=mean_one, worst_many=worst_many,
                margin=margin),
    ]


@claim_source
def positional_claims(gap: float, gap_with_positions: float, rounding: float = ROUNDING) -> list:
    """Attention(PX) = P Attention(X) to rounding; sinusoidal positions break it."""
    return [verdict("s64_v_equivariant", gap < rounding, gap=gap),
            verdict("s64_v_positions", gap_with_positions > 1000 * rounding, gap=gap_with_positions)]


@claim_source
def cost_claims(cross: pd.DataFrame, level: float = COST_LEVEL) -> list:
    """The measured crossovers of attention and the LSTM, forward and for a training step, against T = 2d per width:
    each holds where every width's crossover (the median over the rounds) is below 2d and no width's whole band of
    the rounds' crossovers lies beyond 2d. None measured on the grid: not below. ``early``/``near`` place each
    width as §14.55 does (the whole band on one side by more than ``level``), for the evidence.
    """
    return [_crossover_claim("s64_v_cost", cross, "measured", level),
            _crossover_claim("s64_v_cost_train", cross, "training", level)]


def _crossover_claim(name: str, cross: pd.DataFrame, which: str, level: float):
    from .s14_55_crossover import crossover_sides
    if level != COST_LEVEL:
        raise ValueError(f"the crossover sides are §14.55's, judged at its level {COST_LEVEL}; got {level}")
    pos = np.array(crossover_sides(cross, which))
    d = cross.d.astype(int).to_numpy()
    before, within, after = pos < 0, pos == 0, pos > 0
    band = {k: cross[f"{which}_T_{k}"].tolist() if f"{which}_T_{k}" in cross else [float("nan")] * len(d)
            for k in ("lo", "hi")}
    flop = cross.flop_T_star.astype(float).to_numpy()
    below = cross[f"{which}_T_star"].astype(float).to_numpy() < flop  # a crossover not measured: not below
    past = np.array(band["lo"], dtype=float) > flop  # every round's crossover beyond 2d
    return verdict(name, bool(below.all() and not past.any()), early=int(before.sum()), near=int(within.sum()),
                   widths=len(d), band_past_d=d[past], above_d=d[~below],
                   measured=cross[f"{which}_T_star"].tolist(), **band, flop=cross.flop_T_star.tolist(), d=d,
                   d_lo=d.min(), d_hi=d.max(), before_d=d[before], near_d=d[within], after_d=d[after], level=level)


@claim_source
def decoding_claims(leak_masked: float, leak_unmasked: float, matched: pd.DataFrame, se: float, kv: dict,
                    rounding: float = ROUNDING, n_se: float = DECODING_SE, levels: pd.DataFrame | None = None,
                    family: pd.DataFrame | None = None, alpha: float = 0.05) -> list:
    """The causal mask hides the future; a truncation rule against temperature; the cache's tokens and cost.

    ``matched`` is one diversity level of §14.59 (the middle one on the page); ``levels`` (§14.59's
    ``against`` over all its levels) adds whether the best rule of that level leads across every level.
    ``kv`` is §14.60's ``kv_speedup()``: identical_tokens, step_speedup, cached_rise, context_lo, context_hi.
    ``family`` (§14.59's ``family``: every comparison of that section with its Holm-adjusted p) gives the middle
    level's best rule its adjusted p. ``s64_v_sampling`` holds where that rule leads temperature by more than
    ``n_se`` standard errors at the level alone, but Holm's correction over the family does not keep the lead
    (without a family nothing is corrected: it does not hold).
    """
    from .s14_59 import KNOB_NAMES

    nll = matched.set_index("knob").nll_judge
    best = nll.drop("temperature").idxmin()
    gain = float(nll["temperature"] - nll[best])
    at_level = "target" in matched
    # the error of the difference itself where §14.59's comparison gives it (two means' errors combined)
    se_diff, of_difference = se, False
    if levels is not None and at_level:
        row = levels[(levels.target == matched.target.iloc[0]) & (levels.knob == best)]
        if len(row):
            se_diff, of_difference = float(row.se.iloc[0]), True
    across = [] if levels is None else [_levels_claim(levels, best)]
    p_holm, comparisons = math.nan, 0
    if family is not None and at_level:
        row = family[(family.held == matched.held.iloc[0]) & (family.target == matched.target.iloc[0])
                     & (family.knob == best)]
        p_holm, comparisons = float(row.p_holm.iloc[0]), len(family)
    beyond = gain > n_se * se_diff
    kept = comparisons == 0 or p_holm < alpha
    return across + [
        verdict("s64_v_causal", leak_masked < rounding < leak_unmasked, masked=leak_masked, unmasked=leak_unmasked),
        verdict("s64_v_cache_tokens", kv["identical_tokens"], identical=kv["identical_tokens"]),
        verdict("s64_v_cache_cost", kv["step_speedup"] > 1 and kv["cached_rise"] > 1,
                step_speedup=kv["step_speedup"], cached_rise=kv["cached_rise"], context_lo=kv["context_lo"],
                context_hi=kv["context_hi"]),
        verdict("s64_v_sampling", beyond and not kept, best=best, gain=gain, se=se_diff, rule=KNOB_NAMES.get(best, best),
                n_se=n_se, threshold=n_se * se_diff, of_difference=of_difference, at_level=at_level, beyond=beyond,
                p_holm=p_holm, comparisons=comparisons, corrected=comparisons > 0,
                target=float(matched.target.iloc[0]) if at_level else None),
    ]


def _levels_claim(levels: pd.DataFrame, best: str):
    """Over every level of §14.59's ``against``: is ``best`` told from temperature on average?"""
    from .s14_59 import KNOB_NAMES, SETTLED_SE, mean_difference

    m = mean_difference(levels, best)
    return verdict("s64_v_sampling_levels", not m["settled"], **m, rule=KNOB_NAMES.get(best, best),
                   levels=levels.target.nunique(), two=SETTLED_SE, lower=m["mean"] < 0)


@claim_source
def forecast_claims(verdicts: pd.DataFrame, coverage: pd.DataFrame) -> list:
    """Neural against seasonal naive and against the best classical model; conformal against native intervals."""
    ho = verdicts[verdicts.scope == "official hold-out"]
    n, naive = len(ho), int(ho.neural_beats_seasonal_naive.sum())
    ahead = ho[ho.neural_beats_best_classical]
    c = coverage.set_index(["kind", "level"])
    miss = {k: [abs(float(c["mean"][(k, lv)]) - lv / 100) for lv in (80, 95)] for k in ("conformal", "native")}
    nearer = all(a < b for a, b in zip(miss["conformal"], miss["native"]))
    scored = [int(c["scored"][(k, 80)]) for k in ("conformal", "native")]
    return [
        verdict("s64_v_forecast_naive", naive == n, beats=naive, of=n),
        verdict("s64_v_forecast_best", len(ahead) > n / 2, ahead=len(ahead), of=n, sets=list(ahead.dataset)),
        verdict("s64_v_intervals", nearer, conformal_80=float(c["mean"][("conformal", 80)]),
                conformal_95=float(c["mean"][("conformal", 95)]), native_80=float(c["mean"][("native", 80)]),
                native_95=float(c["mean"][("native", 95)]), scored=scored, miss=miss),
    ]


@claim_source
def exercise_bound_claims(rows: dict) -> list:
    """Exercise 1: the bound ‖W‖^k ‖g_0‖ is at least the gradient at lag k for every matrix."""
    return [require("s64_ex1_bound", all(r["bound"] >= r["gradient"] for r in rows.values()),
                    bounds={k: r["bound"] for k, r in rows.items()},
                    gradients={k: r["gradient"] for k, r in rows.items()})]


# the errata, found where they are shown
#: an erratum box in a page's Markdown (``:::{erratum} what the chapter says``; seqlab.book.errata renders it)
_ERRATUM = re.compile(r"^:::\{erratum\}[ \t]*([^\n]*)$", re.M)
#: a box drawn only when a claim fails (``:unless: claim``, see seqlab.book.errata)
_UNLESS = re.compile(r"[ \t]*:unless:[ \t]*\w+")
#: pages whose headings carry no section number, and the section they extend
_PAGE_SECTION = {"forecasting_record": "14.63"}


def errata_index(pages: Path | None = None, shown: dict[str, bool] | None = None) -> pd.DataFrame:
    """Every Erratum box of the chapter's pages: section, page and what the chapter says (the ``{erratum}`` boxes
    of the page sources' Markdown).

    A box with ``:unless: claim`` appears on its page only when the claim fails; ``conditional`` marks it.
    With ``shown`` ({section: whether that section's conditional erratum stands in this build}) those rows are
    kept or dropped accordingly, and a conditional erratum of a section ``shown`` does not name raises
    ``ValueError``, so the list cannot silently disagree with the boxes on the pages.
    """
    if pages is None:
        pages = Path(__file__).resolve().parents[1] / "book" / "pages"
    rows = []
    for path in sorted(pages.glob("*.md")):
        if path.stem in ("index", "summary"):
            continue
        text = path.read_text(encoding="utf-8")
        heads = [(m.start(), m.group(1)) for m in re.finditer(r"^#{2,3} .*\(§(14\.[\d.]+)\)\s*$", text, re.M)]
        for box in _ERRATUM.finditer(text):  # the pages' erratum boxes, written in their Markdown
            sec = next((s for pos, s in reversed(heads) if pos < box.start()), _PAGE_SECTION.get(path.stem))
            unless = bool(_UNLESS.match(text, box.end() + 1))
            rows.append(dict(section=sec, page=path.stem, chapter_says=box.group(1).strip(), conditional=unless))
    rows.sort(key=lambda r: tuple(int(x) for x in (r["section"] or "0").split(".")))
    out = pd.DataFrame(rows, columns=["section", "page", "chapter_says", "conditional"])
    if shown is None:
        return out
    missing = sorted(set(out.section[out.conditional]) - set(shown))
    if missing:
        raise ValueError(f"conditional errata in §{', §'.join(missing)}: say whether each box appears (shown=...)")
    keep = ~out.conditional | out.section.map(lambda s: bool(shown.get(s, True)))
    return out[keep].reset_index(drop=True)


# seqlab run 14.64: the same numbers and verdicts as the page

def _numbers():
    """Every quantity the summary quotes, by the calls the page makes (see the page for each step)."""
    import torch

    from ..analysis.params import count_parameters
    from ..experiments.forecast import forecast_results
    from ..results import once
    from ..nn import problem_shapes as ps
    from . import (s14_45, s14_46_1, s14_47, s14_48, s14_50, s14_50_2, s14_51, s14_52, s14_55, s14_58, s14_59, s14_60,
                   s14_63, s14_63_intervals)

    m2o = ps.ManyToOne(s14_45.D_IN, s14_45.D_H, s14_45.D_OUT)
    with torch.no_grad():
        shapes = {T: tuple(m2o(torch.zeros(2, T, s14_45.D_IN)).shape) for T in s14_45.LENGTHS}
    vg = once(s14_46_1.gradient_frame, rhos=s14_46_1.RHOS)  # the page writes the fit out; the same numbers
    ratios = once(s14_47.reach_ratios, seeds=s14_47.SEEDS, widths=s14_47.WIDTHS)
    runs = once(s14_48.copy_runs, seed=s14_48.SEED)
    spread = once(s14_50.spread_table, s14_50.D_GRID, n=s14_50.N_PAIRS, seed=s14_50.SPREAD_SEED)
    sat = once(s14_50.saturation_table, s14_50.D_GRID, T=s14_50.T, seed=s14_50.SATURATION_SEED)
    params = once(s14_51.head_parameter_table, s14_51.PARAM_D_MODEL, s14_51.PARAM_HEADS)
    heads = once(s14_51.head_accuracy)
    order = once(s14_52.order_check, s14_52.SEED, d_model=s14_52.D_MODEL, heads=s14_52.HEADS, T=s14_52.T)
    ref = s14_55.cost_reference()
    cross = s14_55.crossovers(ref["grid"], ref["training"])
    X = s14_50_2.causal_inputs(s14_50_2.SEED, T=s14_50_2.T, d=s14_50_2.D)
    leak = s14_50_2.future_leak(X, change_from=s14_50_2.CHANGE_FROM)
    kv = s14_60.kv_speedup()
    scores, _, _ = s14_58.decoding_results()
    sweep = s14_58.knob_summary(scores)
    matched = s14_59.at_matched_diversity(sweep, s14_59.MATCH_ON[0], s14_59.MATCH_LEVELS)
    middle = matched[matched.target == sorted(matched.target.unique())[1]]
    levels = s14_59.against(matched)
    family = s14_59.family(levels, s14_59.against(s14_59.at_matched_diversity(sweep, s14_59.MATCH_ON[1])))
    summary = forecast_results()[0]
    verdict = s14_63.verdict(summary)
    cover = s14_63_intervals.coverage_summary(s14_63_intervals.intervals())
    by_h = heads.set_index("n_heads")
    return dict(
        problem=({T: count_parameters(m2o) for T in s14_45.LENGTHS}, shapes),
        gradient=({r: s14_46_1.decay_per_step(vg, r) for r in s14_46_1.RHOS},
                  {r: (float(g.min()), float(g.max())) for r, g in vg.groupby("rho").g}),
        gating=(ratios, REACH_LAG, s14_47.REACH_WIDTH),
        bottleneck=(s14_48.seed_spread(runs),),
        scaling=(spread, sat),
        heads=(dict(zip(params.n_heads, params.parameters)), by_h.mean_accuracy_both.iloc[0],
               by_h.worst_accuracy_both.iloc[-1]),
        positional=(order.max_abs_difference[0], order.max_abs_difference[1]),
        cost=(cross,),
        decoding=(leak.max_change_before[0], leak.max_change_before[1], middle, float(sweep.nll_judge_se.mean()),
                  kv, ROUNDING, DECODING_SE, levels.merge(family[["held", "target", "knob", "p_holm"]]), family),
        forecast=(verdict, cover),
    ), dict(crossovers=cross, copy=runs[runs.seed == s14_48.SEED], matched=middle, verdict=verdict, coverage=cover,
            heads=heads)


SOURCES = dict(problem=problem_class_claims, gradient=gradient_claims, gating=gating_claims,
               bottleneck=bottleneck_claims, scaling=scaling_claims, heads=multihead_claims,
               positional=positional_claims, cost=cost_claims, decoding=decoding_claims, forecast=forecast_claims)


@section("14.64", "Summary: the verdicts")
def run(ctx):
    with ctx.step("gathering the sections' numbers (the copy sweep and the head-count task train)"):
        numbers, tables = _numbers()
    said = [(key, c) for key, args in numbers.items() for c in SOURCES[key](*args)]
    verdict_table = pd.DataFrame([dict(topic=key, claim=c.name, holds=c.holds) for key, c in said])
    out = {"objectives": objectives(), "verdicts": verdict_table, "crossovers": tables["crossovers"],
           "copy_bottleneck": tables["copy"], "decoding_at_matched_diversity": tables["matched"],
           "forecast_verdict": tables["verdict"], "interval_coverage": tables["coverage"],
           "errata": errata_index()}
    return out, [], [c for _, c in said]
