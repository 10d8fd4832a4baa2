"""§14.55, where attention becomes the dearer layer: the measured crossover T* against the FLOP crossover 2d,
the rates at equal work (T = 2d), how far one timing strays between rounds, and the claims that read them."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.complexity import crossover, flop_crossover
from ..claims import claim_source, verdict
from .s14_55_parts import by_spread
from .s14_55_settings import LEVEL


def crossovers(grid: pd.DataFrame, training: pd.DataFrame) -> pd.DataFrame:
    """Per width: the measured crossover T*, forward and training, and the FLOP crossover 2d.

    T* is the last length at which attention's time rises above the LSTM's: beyond it
    attention is the dearer layer at every length measured. NaN: attention was still the
    cheaper layer at the longest length. Where the tables carry the rounds' range of the ratio
    (``*_lo``, ``*_hi``), ``*_T_lo`` and ``*_T_hi`` are the crossovers of the highest and of the
    lowest round at each length: a band that holds every round's crossover (NaN in ``*_T_hi``:
    in some round attention stayed the cheaper layer at the longest length).
    """
    rows = []
    for d in sorted(grid.d.unique()):
        row = dict(d=int(d))
        for name, frame, col in (("measured", grid, "ratio_attention_to_lstm"),
                                 ("training", training, "train_ratio_attention_to_lstm")):
            f = frame[frame.d == d].sort_values("T")
            row[f"{name}_T_star"] = crossover(f["T"], f[col], last=True)
            if f"{col}_lo" in f:
                row[f"{name}_T_lo"] = crossover(f["T"], f[f"{col}_hi"], last=True)
                row[f"{name}_T_hi"] = crossover(f["T"], f[f"{col}_lo"], last=True)
        rows.append(dict(row, flop_T_star=flop_crossover(int(d))))
    out = pd.DataFrame(rows)
    return out.astype({c: float for c in out.columns if c.endswith(("_T_star", "_T_lo", "_T_hi"))})


def equal_flops(grid: pd.DataFrame) -> pd.DataFrame:
    """The grid rows at T = 2d, where attention and the LSTM do the same FLOPs: time ratio = rate ratio."""
    rows = grid[grid["T"] == 2 * grid.d]
    cols = ["T", "d", "attention_gflops", "lstm_gflops", "ratio_attention_to_lstm"]
    cols += [c for c in ("ratio_attention_to_lstm_lo", "ratio_attention_to_lstm_hi") if c in rows]
    return rows[cols].reset_index(drop=True)


def round_spread(*rounds: pd.DataFrame) -> float:
    """How far one timing strays on the reference machine: over the grids measured in rounds (``grid_rounds``,
    ``training_rounds``), the largest factor between the slowest and the fastest round of one layer's time at one
    point. A gap between two timings taken once each that is smaller than this is one a single timing cannot carry."""
    worst = 1.0
    for frame in rounds:
        by = frame.groupby(["T", "d"])[[c for c in frame.columns if c.endswith("_ms")]]
        worst = max(worst, float((by.max() / by.min()).to_numpy().max()))
    return worst


def position(t_star, d, lo=None, hi=None) -> int:
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


def crossover_sides(cross: pd.DataFrame, name: str) -> list[int]:
    """:func:`position` of each width's ``name`` crossover (``measured`` or ``training``), with its band if any."""
    t, band = cross[f"{name}_T_star"], f"{name}_T_lo" in cross
    return [position(t.iloc[i], d, *((cross[f"{name}_T_lo"].iloc[i], cross[f"{name}_T_hi"].iloc[i]) if band else ()))
            for i, d in enumerate(cross.d)]


def _groups(cross: pd.DataFrame, name: str) -> list[dict]:
    """The widths grouped by :func:`crossover_sides`, before / near / after, as records for the page; empty groups left
    out."""
    pos, ds = crossover_sides(cross, name), cross.d.tolist()
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
    fwd, trn = crossover_sides(cross, "measured"), crossover_sides(cross, "training")
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
    fwd, trn = crossover_sides(cross, "measured"), crossover_sides(cross, "training")
    p = parts.sort_values("d").reset_index(drop=True)
    below, _, _ = by_spread(p.core_gflops / p.projections_gflops, spread, p.d)
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
