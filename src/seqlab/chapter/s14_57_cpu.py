"""§14.57, ten minutes on a CPU: the stored run of the best recipe found for 600 s of training on two cores,
against nanoGPT's GPU figure (timing reference ``timing_lm_long``; HEAVY_EVAL=1 runs it again, alone)."""
from __future__ import annotations

import functools

import pandas as pd

from ..claims import claim_source, require
from ..experiments.lm_long import CHECKPOINTS_S, NANOGPT_GPU_LOSS, RECIPES, long_config

__all__ = ["long_results", "marks_frame", "long_figure", "long_facts", "NANOGPT_GPU_LOSS"]


def long_results():
    """The stored ten-minute run: a timing reference with tables ``curves`` and ``runs`` and its machine."""
    from ..store import heavy_eval

    return _long(heavy_eval())


@functools.cache  # keyed by the HEAVY_EVAL setting, as the chapter's other stored runs
def _long(heavy: bool):
    from ..experiments.lm_long import long_reference

    return long_reference()


def marks_frame(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per mark (60, 120, 300, 600 s, then the whole split at the end): the mean, lowest and highest
    loss over the seeds."""
    rows = []
    for s in CHECKPOINTS_S:
        v = runs[f"best_{s}s"]
        rows.append(dict(within=f"{s} s", mean=v.mean(), lowest=v.min(), highest=v.max()))
    v = runs["whole_split_loss"]
    rows.append(dict(within="whole split, final model", mean=v.mean(), lowest=v.min(), highest=v.max()))
    return pd.DataFrame(rows)


def long_figure(curves: pd.DataFrame):
    from ..plotting import line_pair

    name = long_config()["recipe"]
    df = curves.assign(minutes=curves["seconds"] / 60, seed=curves["seed"].map(lambda s: f"seed {s}"))
    return line_pair(df, "minutes", "val_loss", "seed", points=False,
                     title="Validation loss against minutes of CPU training",
                     subtitle=f"{RECIPES[name].describe()}; the cosine fitted to 10 minutes",
                     xlab="Minutes of training (evaluations not counted)", ylab="Validation loss (nats/char)",
                     hline=NANOGPT_GPU_LOSS, hline_label=f"nanoGPT on one GPU: {NANOGPT_GPU_LOSS}")


@claim_source
def long_facts(runs: pd.DataFrame, steps_minutes: float = 10.0):
    """What the passage states of the stored run: every seed ends below nanoGPT's GPU figure within the ten
    minutes, and the first mark at which every seed is below it."""
    best = runs["best_600s"]
    below = [s for s in CHECKPOINTS_S if (runs[f"best_{s}s"] <= NANOGPT_GPU_LOSS).all()]
    return [
        require("cpu_every_seed_below_gpu", (best <= NANOGPT_GPU_LOSS).all(), worst=best.max(),
                gpu=NANOGPT_GPU_LOSS),
        require("cpu_whole_split_below_gpu", (runs["whole_split_loss"] <= NANOGPT_GPU_LOSS).all(),
                worst=runs["whole_split_loss"].max(), gpu=NANOGPT_GPU_LOSS),
        require("cpu_first_mark_below", bool(below) and below[0] == 300, first=below[0] if below else None,
                marks=list(CHECKPOINTS_S)),
    ]
