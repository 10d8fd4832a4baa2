"""§14.55 on the reader's machine: a quick forward timing at one width, set beside the stored reference, and
the claim that reads whether its crossover falls inside the reference's band."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.complexity import crossover
from ..analysis.timing import forward_grid
from ..claims import claim_source, verdict
from .s14_55_crossover import position
from .s14_55_settings import BATCH, CLOCK, HERE_D, HERE_REPEATS, HERE_T, LEVEL, SEED, layers


def measure_here(seed: int = SEED, d: int = HERE_D, lengths=HERE_T, repeats: int = HERE_REPEATS) -> pd.DataFrame:
    """A quick forward timing on the machine running this, at one width: attention and LSTM, medians, one thread."""
    def pair(width):
        return {k: m for k, m in layers(width).items() if k != "rnn"}

    here = forward_grid(pair, lengths, (d,), BATCH, repeats, seed, clock=CLOCK)
    here["ratio_attention_to_lstm"] = here.attention_ms / here.lstm_ms
    return here


def here_beside_reference(here: pd.DataFrame, grid: pd.DataFrame) -> pd.DataFrame:
    """The quick measurement's ratios beside the reference's at the same (T, d)."""
    ref = grid.set_index(["T", "d"]).ratio_attention_to_lstm
    out = here[["T", "d", "ratio_attention_to_lstm"]].rename(columns={"ratio_attention_to_lstm": "here_ratio"})
    out["reference_ratio"] = [ref.get((T, d), np.nan) for T, d in zip(out["T"], out.d)]
    return out


def _where(frame: pd.DataFrame, prefix: str, d: int) -> dict:
    """Where one measurement's crossover at width ``d`` lies, as facts for the page (keys start with ``prefix``).

    Where ``frame`` carries the rounds' range of the ratio, the side is judged on the band as in
    :func:`~seqlab.chapter.s14_55_crossover.position`."""
    f = frame.sort_values("T")
    t = crossover(f["T"], f.ratio_attention_to_lstm, last=True)
    t = np.nan if t is None else t
    band = ()
    if "ratio_attention_to_lstm_lo" in f:
        band = tuple(np.nan if x is None else x for x in (crossover(f["T"], f.ratio_attention_to_lstm_hi, last=True),
                                                          crossover(f["T"], f.ratio_attention_to_lstm_lo, last=True)))
    pos = position(t, d, *band)
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
