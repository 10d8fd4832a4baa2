"""§14.55's claim sources: the verdicts that interpret the timing reference, the memory measurement and the quick
measurement on the reader's machine (``seqlab.chapter.s14_55`` imports each and gathers them in ``claims_for``).

Each source returns verdicts with the numbers their wordings quote; the words stand in the
page (``transformer.md``, and the summary for :func:`verdict_claims`). Where a sentence groups
the widths by where their crossover falls against 2d, the evidence carries the groups as
records (``before``, ``near``, ``widths``) and the page words each group.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.complexity import crossover, flop_crossover
from ..analysis.timing import score_cost_fit, score_cost_split
from ..claims import claim_source, require, verdict
from .s14_55_settings import BATCH, GAUGE, LAYER_NAMES, LEVEL, QUIET_SHARE, QUIET_TRIES


def _position(t_star, d, lo=None, hi=None) -> int:
    """-1 before the FLOP crossover 2d, 1 after it, 0 not placed apart from it (a missing crossover: after).

    With the rounds' band ``lo``..``hi`` a side counts only where the whole band lies on it, more
    than ``LEVEL`` from 2d; a band that reaches within ``LEVEL`` of 2d, or spans it, is 0.
    """
    def beyond(t):  # no crossover: attention stayed the cheaper layer, the crossing lies past every length
        return np.inf if t is None or np.isnan(t) else t

    lo, hi = (t_star, t_star) if lo is None else (lo, hi)
    flop = flop_crossover(int(d))
    if beyond(hi) < flop * (1 - LEVEL):
        return -1
    return 1 if beyond(lo) > flop * (1 + LEVEL) else 0


def _positions(cross: pd.DataFrame, name: str) -> list[int]:
    """:func:`_position` of each width's ``name`` crossover (``measured`` or ``training``), with its band if any."""
    t, band = cross[f"{name}_T_star"], f"{name}_T_lo" in cross
    return [_position(t.iloc[i], d, *((cross[f"{name}_T_lo"].iloc[i], cross[f"{name}_T_hi"].iloc[i]) if band else ()))
            for i, d in enumerate(cross.d)]


def _groups(cross: pd.DataFrame, name: str) -> list[dict]:
    """The widths grouped by :func:`_positions`, before / near / after, as records for the page; empty groups left
    out."""
    pos, ds = _positions(cross, name), cross.d.tolist()
    return [dict(before=p < 0, near=p == 0, widths=[int(d) for d, q in zip(ds, pos) if q == p])
            for p in (-1, 0, 1) if p in pos]


def _missing(cross: pd.DataFrame, *columns: str) -> list[int]:
    """Widths at which any of ``columns`` has no crossover: attention stayed the cheaper layer over every length."""
    gone = np.zeros(len(cross), bool)
    for c in columns:
        gone |= cross[c].isna().to_numpy()
    return [int(d) for d in cross.d[gone]]


def _band(cross: pd.DataFrame, name: str) -> dict:
    """The rounds' band of the ``name`` crossovers as evidence (``NAME_lo``, ``NAME_hi``; NaN where absent)."""
    key = {"measured": "forward"}.get(name, name)
    nan = pd.Series([np.nan] * len(cross))
    return {f"{key}_lo": cross.get(f"{name}_T_lo", nan), f"{key}_hi": cross.get(f"{name}_T_hi", nan)}


@claim_source
def crossover_claims(cross: pd.DataFrame, rounds: int | None = None) -> list:
    """Where the measured crossovers fall against the FLOP crossover 2d, and what that says about the usual story.

    A width counts as before or after 2d only where every round of the reference puts it there.
    ``s55_cross_side``: the forward crossover lies before 2d at every width; ``s55_usual_story``:
    some crossover lies before 2d and none after it, forward or training.
    """
    fwd, trn = _positions(cross, "measured"), _positions(cross, "training")
    n, kf, kt = len(cross), fwd.count(-1), trn.count(-1)
    all_early, all_late = kf == n and kt == n, fwd.count(1) == n and trn.count(1) == n
    evidence = dict(d=cross.d, forward=cross.measured_T_star, training=cross.training_T_star, flop=cross.flop_T_star,
                    **_band(cross, "measured"), **_band(cross, "training"), rounds=rounds,
                    all_late=all_late, all_early=all_early, never=_missing(cross, "measured_T_star", "training_T_star"),
                    forward_groups=_groups(cross, "measured"), training_groups=_groups(cross, "training"),
                    earlier=-1 in fwd + trn, later=1 in fwd + trn, unsettled=0 in fwd + trn, level=LEVEL)
    # the forward pass is placed before 2d at every width; across both passes, no width after it
    return [verdict("s55_cross_side", kf == n, **evidence),
            verdict("s55_usual_story", -1 in fwd + trn and 1 not in fwd + trn, **evidence)]


@claim_source
def equal_work_claims(same_flops: pd.DataFrame) -> list:
    """At T = 2d the time ratio is the ratio of achieved rates: which layer did its arithmetic faster.

    With the rounds' range (``ratio_attention_to_lstm_lo`` / ``_hi``) a layer counts as the faster one only where
    every round says so, by more than ``LEVEL``.
    """
    r, ds = same_flops.ratio_attention_to_lstm, same_flops.d.tolist()
    lo = same_flops.get("ratio_attention_to_lstm_lo", r)
    hi = same_flops.get("ratio_attention_to_lstm_hi", r)
    slower = [bool(v > 1 + LEVEL) for v in lo]
    faster = [bool(v < 1 - LEVEL) for v in hi]
    level = [not (a or b) for a, b in zip(slower, faster)]
    groups = [dict(lstm_higher=k == 0, attention_higher=k == 1, widths=[int(d) for d, x in zip(ds, mask) if x])
              for k, mask in enumerate((slower, faster, level)) if any(mask)]
    return [verdict("s55_equal_work", all(slower), d=ds, ratio=r, ratio_lo=lo, ratio_hi=hi,
                    lstm_gflops=same_flops.lstm_gflops, attention_gflops=same_flops.attention_gflops,
                    all_faster=all(faster), groups=groups, level=LEVEL)]


def _by_spread(rel: pd.Series, spread: float, ds) -> tuple[list[bool], list[bool], list[dict]]:
    """Per width, whether a single-timing ratio ``rel`` lies below one, or above it, by more than ``spread`` (the
    factor one timing strays between rounds), and the widths grouped so (``below``, ``above``, ``widths``)."""
    below = [bool(r * spread < 1) for r in rel]
    above = [bool(r > spread) for r in rel]
    level = [not (x or y) for x, y in zip(below, above)]
    groups = [dict(below=k == 0, above=k == 1, widths=[int(d) for d, m in zip(ds, mask) if m])
              for k, mask in enumerate((below, above, level)) if any(mask)]
    return below, above, groups


@claim_source
def parts_claims(parts: pd.DataFrame, spread: float = 1.0) -> list:
    """The recurrent kernels (fused, generic, plain RNN) and attention's core against its projections.

    The parts hold one timing per width, so a gap between two of them counts only where it is
    wider than ``spread``, the factor by which one timing of the reference strays between rounds
    (``s14_55.round_spread``). ``s55_core_rate`` holds where the gap is carried at the narrowest heads
    (the first width)."""
    p = parts.sort_values("d").reset_index(drop=True)
    gain = p.lstm_gflops / p.lstm_generic_gflops
    lo, hi = p.iloc[0], p.iloc[-1]
    rel = p.core_gflops / p.projections_gflops
    below, _, groups = _by_spread(rel, spread, p.d)
    return [
        verdict("s55_fused_gain", gain.min() >= 2 and gain.min() > spread, d=p.d, fused_over_generic=gain,
                gain_lo=gain.min(), gain_hi=gain.max(), generic_lo=p.lstm_generic_gflops.min(),
                generic_hi=p.lstm_generic_gflops.max(), lstm_lo=p.lstm_gflops.min(), lstm_hi=p.lstm_gflops.max(),
                spread=spread, beyond_spread=bool(gain.min() > spread)),
        verdict("s55_rnn_step", lo.rnn_us_per_step > spread * lo.lstm_us_per_step, d=lo.d, rnn_us=lo.rnn_us_per_step,
                lstm_us=lo.lstm_us_per_step, generic_us=lo.lstm_generic_us_per_step,
                step_ratio=lo.rnn_us_per_step / lo.lstm_us_per_step, spread=spread,
                rnn_slower=bool(lo.rnn_us_per_step > lo.lstm_us_per_step)),
        # the narrowest heads: where a single timing carries the core's gap to its projections
        verdict("s55_core_rate", below[0], d=p.d, core_over_projections=rel, groups=groups, spread=spread,
                rel_narrow=rel.iloc[0], all_below=all(below),
                core_lo=lo.core_gflops, core_hi=hi.core_gflops, dk_lo=lo.d_k, dk_hi=hi.d_k, rel_lo=rel.min(),
                rel_hi=rel.max(), projections_lo=p.projections_gflops.min(),
                projections_hi=p.projections_gflops.max()),
    ]


@claim_source
def score_claims(parts: pd.DataFrame, spread: float = 1.0) -> list:
    """How the core's cost per score grows with d_k: a least-squares line through every width, and how well it fits.

    One timing per width: a departure counts only where it is wider than ``spread`` (as in
    :func:`parts_claims`)."""
    p = parts.sort_values("d_k").reset_index(drop=True)
    fit = score_cost_fit(p)
    split = score_cost_split(p)
    lo, hi = p.iloc[0], p.iloc[-1]
    dk_ratio, ns_ratio = hi.d_k / lo.d_k, hi.core_ns_per_score / lo.core_ns_per_score
    good = fit["max_rel_residual"] <= 0.10
    return [
        verdict("s55_score_sublinear", ns_ratio * spread < 0.5 * dk_ratio, dk_ratio=dk_ratio, ns_ratio=ns_ratio,
                spread=spread, below_half=bool(ns_ratio < 0.5 * dk_ratio)),
        # holds where the line's largest miss lies within what one timing strays: no bend can be read
        verdict("s55_score_line", not 1 + fit["max_rel_residual"] > spread, **fit, fits=good, dk_lo=lo.d_k,
                dk_hi=hi.d_k, positive_a=bool(fit["a"] > 0),
                share_lo=split.fixed_share.iloc[0], share_hi=split.fixed_share.iloc[-1], spread=spread,
                off_line=bool(1 + fit["max_rel_residual"] > spread)),
    ]


@claim_source
def growth_claims(grid: pd.DataFrame) -> list:
    """At the smallest width: does the time ratio grow faster than the FLOP ratio from the shortest to the longest T?"""
    d = grid.d.min()
    narrow = grid[grid.d == d].set_index("T").sort_index()
    a, b = narrow.index.min(), narrow.index.max()
    fg = narrow.flop_ratio_attention_to_lstm[b] / narrow.flop_ratio_attention_to_lstm[a]
    r = narrow.ratio_attention_to_lstm
    tg = r[b] / r[a]
    # the least growth the rounds allow: the lowest round's ratio at the longest T over the highest at the shortest
    tg_lo = narrow.get("ratio_attention_to_lstm_lo", r)[b] / narrow.get("ratio_attention_to_lstm_hi", r)[a]
    return [verdict("s55_ratio_growth", tg_lo > fg, d=d, flop_growth=fg, time_growth=tg, time_growth_lo=tg_lo,
                    T_short=a, T_long=b, ratio_short=r[a], ratio_long=r[b])]


def _margin_grows(grid: pd.DataFrame, cross: pd.DataFrame) -> bool:
    """Beyond each width's forward crossover, is attention's time ratio at the longest T the largest seen?"""
    for d, t_star in zip(cross.d, cross.measured_T_star):
        if t_star is None or np.isnan(t_star):
            continue
        after = grid[(grid.d == d) & (grid["T"] >= t_star)].sort_values("T").ratio_attention_to_lstm
        if len(after) >= 2 and after.iloc[-1] < after.max():
            return False
    return True


@claim_source
def verdict_claims(cross: pd.DataFrame, parts: pd.DataFrame, grid: pd.DataFrame, spread: float = 1.0) -> list:
    """What places the crossover on one core, and where each layer wins (sides as in :func:`crossover_claims`).

    ``s55_what_places`` holds where the forward crossover lies before 2d at every width and, at
    T = 2d (equal work), every round gave the LSTM the higher rate by more than ``LEVEL``: the
    crossover comes early because of attention's rate. Attention's core counts as slower than its
    projections at a width only where the gap is wider than ``spread`` (:func:`parts_claims`)."""
    fwd, trn = _positions(cross, "measured"), _positions(cross, "training")
    p = parts.sort_values("d").reset_index(drop=True)
    below, _, _ = _by_spread(p.core_gflops / p.projections_gflops, spread, p.d)
    forward_early, training_early, core_slow = all(q < 0 for q in fwd), all(q < 0 for q in trn), all(below)
    # at T = 2d the work is equal: the LSTM had the higher rate there in every round, at every width timed
    same = grid[grid["T"] == 2 * grid.d]
    lstm_faster = bool(len(same)) and bool((same.get("ratio_attention_to_lstm_lo", same.ratio_attention_to_lstm)
                                            > 1 + LEVEL).all())
    return [
        verdict("s55_what_places", forward_early and lstm_faster, lstm_faster=lstm_faster,
                forward_early=forward_early,
                training_early=training_early, forward_groups=_groups(cross, "measured"),
                training_groups=_groups(cross, "training"), core_slow=core_slow,
                core_slow_d=[int(d) for d, b in zip(p.d, below) if b], spread=spread, level=LEVEL,
                all_late=all(q > 0 for q in fwd + trn)),
        verdict("s55_where_each_wins", all(q < 0 for q in fwd), forward_T_star=cross.measured_T_star,
                **_band(cross, "measured"), flop_T_star=cross.flop_T_star, margin_grows=_margin_grows(grid, cross),
                all_after=all(q > 0 for q in fwd), groups=_groups(cross, "measured"),
                never=_missing(cross, "measured_T_star"), level=LEVEL),
    ]


@claim_source
def thread_claims(threads: pd.DataFrame, batch: int = BATCH) -> list:
    """What a second thread did on the reference machine: the gauge, attention against the LSTM.

    The table holds one timing per point (each the median of its calls), or several rounds
    where it has a ``round`` column. A layer counts as gaining more, or as gaining at all, only
    where every point of every round says so and there is more than one round (``gains_everywhere``): a single
    timing per point cannot tell a difference between layers from one between two moments of timing. The verdicts
    describe the timings as they stand: ``s55_threads_attention``, attention gained more than the LSTM at every
    point; ``s55_threads_lstm``, two threads were slower than one for the LSTM at some point."""
    rounds = int(threads["round"].nunique()) if "round" in threads else 1
    keys = ["d", "T", "mode"] + (["round"] if "round" in threads else [])
    g = threads[threads.layer == GAUGE].speedup
    att = threads[threads.layer == LAYER_NAMES["attention"]].set_index(keys).speedup
    lstm = threads[threads.layer == LAYER_NAMES["lstm"]].set_index(keys).speedup
    ahead = int((att > lstm.reindex(att.index)).sum())
    share = threads.others_share if "others_share" in threads else pd.Series([np.nan] * len(threads))
    noisy = int((share > QUIET_SHARE).sum())
    span = dict(attention=att.median(), lstm=lstm.median(), attention_lo=att.min(), attention_hi=att.max(),
                lstm_lo=lstm.min(), lstm_hi=lstm.max(), rounds=rounds, single=rounds == 1)
    floor = 1.1
    return [
        verdict("s55_threads_quiet", noisy == 0, noisy_rows=noisy, largest_share=share.max(), threshold=QUIET_SHARE,
                rows=len(threads), tries=QUIET_TRIES),
        verdict("s55_threads_gauge", g.median() >= 1.3, gauge_speedup=g.median(), gauge_lo=g.min(), gauge_hi=g.max(),
                points=len(g), not_slower=bool(g.median() >= 0.9), single=rounds == 1),
        verdict("s55_threads_attention", ahead == len(att), ahead=ahead, pairs=len(att), **span),
        verdict("s55_threads_lstm", bool((lstm < 1).any()), batch=batch, gain_floor=floor,
                gains_everywhere=rounds > 1 and bool((lstm >= floor).all()),
                slower=int((lstm < 1).sum()), any_slower=bool((lstm < 1).any()),
                lstm_points=len(lstm), **span),
    ]


@claim_source
def memory_claims(memory: pd.DataFrame) -> list:
    """Peak memory against T: quadratic for explicit attention, not for the fused kernel."""
    d = memory.d.min()
    peak = memory[memory.d == d].pivot_table(index="path", columns="T", values="peak_mb")
    t_lo, t_hi = peak.columns.min(), peak.columns.max()
    r = t_hi / t_lo
    ge = peak.loc["explicit", t_hi] / peak.loc["explicit", t_lo]
    gf = peak.loc["fused", t_hi] / peak.loc["fused", t_lo]
    weights = memory[(memory.d == d) & (memory["T"] == t_hi)].weights_matrix_mb.max()
    quadratic, linear = ge >= 0.5 * r ** 2, gf <= 1.5 * r
    return [
        verdict("s55_mem_explicit", quadratic, growth=ge, length_ratio=r, squared=r ** 2, T_short=t_lo, T_long=t_hi),
        require("s55_mem_fused_below_weights", peak.loc["fused", t_hi] < weights,
                fused_mb=peak.loc["fused", t_hi], weights_mb=weights),
        verdict("s55_mem_fused", linear, growth=gf, length_ratio=r),
        verdict("s55_mem_verdict", quadratic and linear, explicit_growth=ge, fused_growth=gf, length_ratio=r),
    ]


def _where(frame: pd.DataFrame, prefix: str, d: int) -> dict:
    """Where one measurement's crossover at width ``d`` lies, as facts for the page (keys start with ``prefix``).

    Where ``frame`` carries the rounds' range of the ratio, the side is judged on the band as in
    :func:`_position`."""
    f = frame.sort_values("T")
    t = crossover(f["T"], f.ratio_attention_to_lstm, last=True)
    t = np.nan if t is None else t
    band = ()
    if "ratio_attention_to_lstm_lo" in f:
        band = tuple(np.nan if x is None else x for x in (crossover(f["T"], f.ratio_attention_to_lstm_hi, last=True),
                                                          crossover(f["T"], f.ratio_attention_to_lstm_lo, last=True)))
    pos = _position(t, d, *band)
    # attention already the dearer layer at the shortest length: the crossing lies somewhere below it
    shortest = bool(not np.isnan(t) and t == f["T"].min() and f.ratio_attention_to_lstm.iloc[0] >= 1)
    lo, hi = band if band else (t, t)
    return {f"{prefix}_T_star": t, f"{prefix}_T_lo": lo, f"{prefix}_T_hi": hi,
            f"{prefix}_found": bool(not np.isnan(t)), f"{prefix}_at_shortest": shortest,
            f"{prefix}_T_min": f["T"].min(), f"{prefix}_T_max": f["T"].max(), f"{prefix}_before": pos < 0,
            f"{prefix}_near": pos == 0, f"{prefix}_position": pos}


@claim_source
def here_claims(here: pd.DataFrame, grid: pd.DataFrame) -> list:
    """The quick measurement on this machine beside the reference: does its crossover fall inside the band that the
    reference's rounds give? One round here has no spread of its own, so no side of 2d is read from it."""
    d = int(here.d.iloc[0])
    h, ref = _where(here, "here", d), _where(grid[grid.d == d], "reference", d)
    inside = bool(h["here_found"] and ref["reference_found"]
                  and ref["reference_T_lo"] <= h["here_T_star"] <= ref["reference_T_hi"])
    return [verdict("s55_here_side", inside, d=d, flop_T_star=2 * d, level=LEVEL, **h, **ref)]

