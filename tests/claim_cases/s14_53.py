"""Inputs for the Transformer page's §14.53 claims (s14_53): warm-up, schedule, spread, walkthrough, block."""
from __future__ import annotations

import pandas as pd

CASES: dict = {}


def _s53_summary(post0, postw, pre0, post0_lo, acc0=0.13, n=3):
    rows = []
    for lr, solved in ((0.01, {("post-LN", 0): post0_lo, ("post-LN", 10): n, ("pre-LN", 0): n, ("pre-LN", 10): n}),
                       (0.03, {("post-LN", 0): post0, ("post-LN", 10): postw, ("pre-LN", 0): pre0,
                               ("pre-LN", 10): n})):
        for (norm, wu), k in solved.items():
            rows.append(dict(lr=lr, norm=norm, warmup_steps=wu, seeds=n, seeds_solved=k,
                             mean_heldout_free_running=acc0 if (lr, norm, wu) == (0.03, "post-LN", 0) else 1.0,
                             worst_heldout_free_running=1.0 if k == n else 0.12))
    return pd.DataFrame(rows)


CASES["seqlab.chapter.s14_53.warmup_claims"] = [
    lambda: ((_s53_summary(0, 2, 3, 3), 10, 0.125), {}),                # leans the classical way, p = 0.2
    lambda: ((_s53_summary(0, 3, 3, 3), 10, 0.125), {}),                # 3 of 3 against 0 of 3: p = 0.05
    lambda: ((_s53_summary(0, 6, 6, 6, n=6), 10, 0.125), {}),           # six seeds: separated, fine at the low rate
    lambda: ((_s53_summary(0, 6, 6, 3, n=6), 10, 0.125), {}),           # separated, post-LN failing at the low rate
    lambda: ((_s53_summary(2, 2, 1, 2, acc0=0.8), 10, 0.125), {}),     # not the classical picture
    lambda: ((_s53_summary(0, 3, 1, 3), 10, 0.125), {}),                # warm-up's half only
    lambda: ((_s53_summary(0, 2, 2, 2, n=2), 10, 0.125), {}),           # two seeds: no count can reach the bar
]

CASES["seqlab.chapter.s14_53.schedule_claims"] = [
    lambda: (([0.1, 0.2, 0.2], [0.1, 0.2, 0.2]), {}),
    lambda: (([0.1, 0.2, 0.2], [0.1, 0.2, 0.3]), {}),                   # a step differs: raises
]


def _s53_spread(post, pre):
    return pd.DataFrame(dict(variant=["pre-LN", "post-LN"], last_over_first=[pre, post]))


CASES["seqlab.chapter.s14_53.spread_claims"] = [
    lambda: ((_s53_spread(1.25, 0.8),), {}),
    lambda: ((_s53_spread(0.7, 0.8),), {}),
]


def _s53_steps(worst):
    return pd.DataFrame(dict(step=["LN(x)", "y"], shape=["2 x 10 x 64"] * 2, max_abs_difference=[1e-8, worst]))


CASES["seqlab.chapter.s14_53.walkthrough_claims"] = [
    lambda: ((_s53_steps(4e-7),), {}),
    lambda: ((_s53_steps(1e-3),), {}),
]


def _s53_block(std_min, std_max, counted=100, diff=1e-7):
    ln = pd.DataFrame([dict(max_abs_difference=1e-7, largest_position_mean=1e-8, position_std_min=std_min,
                            position_std_max=std_max)])
    params = pd.DataFrame(dict(part=["a", "total"], parameters=[counted, 200], formula_value=[100, 200]))
    same = pd.DataFrame(dict(variant=["pre-LN", "post-LN"], max_abs_difference_vs_torch=[diff, diff]))
    return (ln, params, same), {}


CASES["seqlab.chapter.s14_53.block_claims"] = [
    lambda: _s53_block(0.999995, 0.999996),
    lambda: _s53_block(0.95, 0.999),
    lambda: _s53_block(0.999995, 0.999996, counted=101),
]
