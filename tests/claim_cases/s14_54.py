"""Inputs for the Transformer page's §14.54 claims (s14_54): masks, tasks, alignment, reversal recap, rerun."""
from __future__ import annotations

import numpy as np
import pandas as pd

CASES: dict = {}


def _s54_masks(leak=0.0, padded=0.0):
    causal = pd.DataFrame([dict(future_leak_max_abs=leak, causal_weights_above_diagonal=0.0)])
    checks = pd.DataFrame(dict(check=list("abcd"), max_abs_logit_change=[padded, 0.3, 0.0, 1.4]))
    return (causal, checks), {}


CASES["seqlab.chapter.s14_54.mask_claims"] = [
    lambda: _s54_masks(),
    lambda: _s54_masks(leak=1e-7),
    lambda: _s54_masks(padded=1e-3),
]


def _s54_comparison(tf=1.0, gru=0.17, train_tf=0.99, heldout_tf=0.87, free=0.22):
    rows = []
    for seed, j in ((41, 0.0), (42, 0.01)):
        for task in ("copy", "reverse"):
            for T in (8, 32):
                rows += [dict(task=task, model="GRU", sequence_length=T, seed=seed, heldout_free_running=gru + j,
                              train_teacher_forced=0.5, heldout_teacher_forced=0.3),
                         dict(task=task, model="GRU + attention", sequence_length=T, seed=seed,
                              heldout_free_running=free + j, train_teacher_forced=train_tf,
                              heldout_teacher_forced=heldout_tf),
                         dict(task=task, model="Transformer", sequence_length=T, seed=seed,
                              heldout_free_running=tf, train_teacher_forced=1.0, heldout_teacher_forced=1.0)]
    return (pd.DataFrame(rows), 0.125), {}


CASES["seqlab.chapter.s14_54.task_claims"] = [
    lambda: _s54_comparison(),
    lambda: _s54_comparison(tf=0.97, gru=0.6, heldout_tf=0.3),
    lambda: _s54_comparison(tf=0.5, gru=0.6),  # the Transformer behind the GRU
]


def _s54_share(copy, rev):

    return (pd.DataFrame(dict(task=["copy", "reverse"], aligned_weight=[copy, rev], uniform=[1 / 16, 1 / 16])),), {}


CASES["seqlab.chapter.s14_54.alignment_claims"] = [lambda: _s54_share(0.9, 0.8), lambda: _s54_share(0.9, 0.3)]


def _s54_rerun(stored, now):

    return (pd.DataFrame(dict(run=["chapter's run", "trained now"], final_loss=[stored, now])),), {}


def _s54_recap(within, exact, late):
    """§14.49's alignment controls as §14.54 recalls them (trained, untrained, uniform)."""

    return (pd.DataFrame(dict(weights=["trained", "untrained", "uniform"], sequences=[500] * 3,
                              weight_within_one_of_antidiagonal=[within, 0.236, 0.236],
                              weight_on_antidiagonal=[exact, 0.083, 0.083],
                              argmax_on_antidiagonal=[0.04, 0.08, np.nan],
                              argmax_one_step_later=[late, 0.1, np.nan])),), {}


CASES["seqlab.chapter.s14_54.reversal_recap_claims"] = [lambda: _s54_recap(0.65, 0.043, 0.64),
                                                        lambda: _s54_recap(0.65, 0.2, 0.64),
                                                        lambda: _s54_recap(0.2, 0.043, 0.02)]
CASES["seqlab.chapter.s14_54.rerun_claims"] = [lambda: _s54_rerun(1.25e-4, 1.25e-4),
                                               lambda: _s54_rerun(1.25e-4, 1.2501e-4)]
