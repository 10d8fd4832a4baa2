"""§14.55 on two threads: one and two torch threads timed alternately for a linear map (the gauge), attention
and the LSTM, and the claims that read what a second thread did."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn as nn

from ..analysis.timing import thread_scaling, training_step
from ..claims import claim_source, verdict
from .s14_55_settings import (BATCH, GAUGE, LAYER_NAMES, QUIET_SHARE, QUIET_TRIES, SEED, THREAD_MIN_S,
                              THREAD_POINTS, THREAD_REPEATS, layers)


def _thread_cases(points):
    """``(labels, fn, grad)`` for each timing of :func:`measure_threads`, made one at a time (as they are timed)."""
    for d, T in points:
        x = torch.randn(BATCH, T, d)
        lin = nn.Linear(d, d)
        yield dict(layer=GAUGE, mode="forward", d=d, T=T), (lambda: lin(x)), False
        for name, m in ((k, v) for k, v in layers(d).items() if k != "rnn"):
            m.eval()
            yield dict(layer=LAYER_NAMES[name], mode="forward", d=d, T=T), (lambda m=m: m(x)), False
            m.train()
            yield dict(layer=LAYER_NAMES[name], mode="training", d=d, T=T), training_step(m, x), True


def measure_threads(seed: int = SEED, points=THREAD_POINTS, repeats: int = THREAD_REPEATS) -> pd.DataFrame:
    """Median wall-clock time with one and with two torch threads: a plain linear map (the gauge: the most parallel
    work there is), attention and the LSTM, forward and training, at each ``(d, T)`` of ``points``.

    One- and two-thread calls alternate, and a timing during which other programs took more
    than ``QUIET_SHARE`` of the machine is taken again (up to ``QUIET_TRIES`` times, the quietest
    kept; ``others_share`` records it): :func:`~seqlab.analysis.timing.one_and_two_threads`.
    Meant for the reference.
    """
    torch.manual_seed(seed)
    return thread_scaling(_thread_cases(points), repeats, THREAD_MIN_S, QUIET_SHARE, QUIET_TRIES)


def thread_summary(threads: pd.DataFrame) -> pd.DataFrame:
    """Median speed-up from a second thread per layer and pass."""
    return (threads.groupby(["layer", "mode"], sort=False).speedup.agg(["median", "min", "max"])
            .rename(columns={"median": "median_speedup", "min": "min_speedup", "max": "max_speedup"})
            .reset_index())


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
