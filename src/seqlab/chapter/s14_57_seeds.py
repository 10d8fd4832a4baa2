"""§14.57 under three seeds: the sweep's GPT-against-LSTM comparison at every budget, seed by seed.

The chapter's sweep (``lm_sweep``) is one run per budget and model; ``lm_sweep_seeds`` repeats it
under two more seeds. A comparison reads "ahead" only where every seed agrees.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from ..claims import claim_source, verdict
from ..experiments.lm import CHAPTER_TRAIN
from .s14_57 import CHAPTER_ITERS, crossover, step_reference, step_summary, sweep_frame, sweep_results

__all__ = ["seed_sweeps", "seed_gaps", "seed_crossings", "seed_claims"]


@functools.cache
def _trained(heavy: bool) -> bool:
    """Under HEAVY_EVAL=1, train ``lm_sweep_seeds`` again, once per process, before it is read."""
    if heavy:
        from ..experiments.lm_seeds import run_lm_sweep_seeds

        run_lm_sweep_seeds()
    return heavy


def seed_sweeps() -> pd.DataFrame:
    """:func:`~seqlab.chapter.s14_57.sweep_frame` rows for every seed: the chapter's and ``lm_sweep_seeds``'
    (HEAVY_EVAL=1 trains the latter again first, once per process)."""
    from ..experiments.lm_seeds import load_sweep_seeds
    from ..store import heavy_eval

    _trained(heavy_eval())
    cost = step_summary(step_reference()["steps"]).set_index("model").median_seconds.to_dict()
    frames = [sweep_frame(sweep_results()[0], cost).assign(seed=CHAPTER_TRAIN.seed)]
    frames += [sweep_frame(g, cost).assign(seed=int(s)) for s, g in load_sweep_seeds().groupby("seed")]
    return pd.concat(frames, ignore_index=True)


def seed_gaps(sweeps: pd.DataFrame) -> pd.DataFrame:
    """Per budget: the LSTM's loss minus the GPT's under each seed (negative: the LSTM ahead), their mean,
    lowest and highest, and the model ahead under every seed (``"neither"`` where the seeds disagree)."""
    wide = sweeps.pivot_table(index=["steps", "seed"], columns="model", values="val_loss_nats")
    d = (wide["LSTM"] - wide["GPT"]).unstack("seed")  # (budgets, seeds)
    out = pd.DataFrame({"steps": d.index, "seeds": d.notna().sum(axis=1).to_numpy(),
                        "mean": d.mean(axis=1).to_numpy(), "lowest": d.min(axis=1).to_numpy(),
                        "highest": d.max(axis=1).to_numpy()})
    out["ahead"] = np.where(out.highest < 0, "LSTM", np.where(out.lowest > 0, "GPT", "neither"))
    return out.reset_index(drop=True)


def seed_crossings(sweeps: pd.DataFrame) -> pd.DataFrame:
    """Per seed: where the curves cross against steps (NaN where they do not) and who is ahead at each end."""
    rows = []
    for seed, g in sweeps.groupby("seed"):
        c = crossover(g, by="steps")
        rows.append(dict(seed=int(seed), crossing_steps=c["at"], ahead_at_start=c["ahead_at_start"],
                         ahead_at_end=c["ahead_at_end"]))
    return pd.DataFrame(rows)


@claim_source
def seed_claims(gaps: pd.DataFrame, crossings: pd.DataFrame):
    """The chapter's budget and the crossing, judged over the seeds: a direction only where every seed agrees."""
    at = gaps.set_index("steps").loc[CHAPTER_ITERS]
    story = bool((crossings.ahead_at_start == "GPT").all() and (crossings.ahead_at_end == "LSTM").all())
    ats = [float(a) for a in crossings.crossing_steps if not math.isnan(a)]
    return [
        verdict("sw_seeds_budget", at.ahead == "LSTM", seeds=int(at.seeds), steps=CHAPTER_ITERS, mean=at["mean"],
                lowest=at.lowest, highest=at.highest, ahead=at.ahead),
        verdict("sw_seeds_cross", story, seeds=len(crossings), lowest=min(ats, default=float("nan")),
                highest=max(ats, default=float("nan")), crossed=len(ats),
                agree=[int(b) for b, a in zip(gaps.steps, gaps.ahead) if a != "neither"],
                split=[int(b) for b, a in zip(gaps.steps, gaps.ahead) if a == "neither"]),
    ]
