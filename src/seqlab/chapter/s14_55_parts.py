"""§14.55, where attention's time goes: its projections against its T x T core, and the recurrent kernels
(fused LSTM, generic LSTM, plain RNN), with the claims that read them."""
from __future__ import annotations

import pandas as pd
import torch

from ..analysis.timing import attention_part_rates, score_cost_fit, score_cost_split
from ..claims import claim_source, verdict
from ..threads import single_threaded
from .s14_55_settings import BATCH, CLOCK, D_GRID, HEADS, PARTS_T, REPEATS, SEED, layers


def attention_parts(seed: int = SEED, T: int = PARTS_T, repeats: int = REPEATS) -> pd.DataFrame:
    """Where the time goes at length ``T``, per width: attention's projections vs its T x T core, and the recurrent
    kernels (:func:`~seqlab.analysis.timing.attention_part_rates`; ``lstm_generic`` is the LSTM with oneDNN's
    fused kernel switched off). Rates are achieved GFLOP/s, batch included."""
    rows = []
    torch.manual_seed(seed)
    with single_threaded(), torch.no_grad():
        for d in D_GRID:
            mods = {k: m.eval() for k, m in layers(d).items()}
            x = torch.randn(BATCH, T, d)
            rates = attention_part_rates(mods["attention"], mods["lstm"], mods["rnn"], x, HEADS, repeats, CLOCK)
            rows.append(dict(T=T, d=d, **rates))
    return pd.DataFrame(rows)


def by_spread(rel: pd.Series, spread: float, ds) -> tuple[list[bool], list[bool], list[dict]]:
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
    below, _, groups = by_spread(rel, spread, p.d)
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
