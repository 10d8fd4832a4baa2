"""Inputs for the Transformer page's §14.55 claims: crossovers and equal work, attention's parts, threads, memory, here."""
from __future__ import annotations

import pandas as pd

CASES: dict = {}


def _s55_cross(fwd, trn, d=(32, 64), band=None):
    """``band``: (forward lo, forward hi, training lo, training hi), the rounds' band of each width's crossover."""
    out = pd.DataFrame(dict(d=list(d), measured_T_star=[float(v) for v in fwd],
                            training_T_star=[float(v) for v in trn], flop_T_star=[2.0 * v for v in d]))
    if band is not None:
        for col, vals in zip(("measured_T_lo", "measured_T_hi", "training_T_lo", "training_T_hi"), band):
            out[col] = [float(v) for v in vals]
    return out


CASES["seqlab.chapter.s14_55_crossover.crossover_claims"] = [
    lambda: ((_s55_cross([40, 90], [30, 100]),), {}),           # every crossover before 2d
    lambda: ((_s55_cross([80, 200], [70, float("nan")]),), {}),  # every one after (one never)
    lambda: ((_s55_cross([40, 200], [30, 300]),), {}),          # mixed
    # the rounds' bands: one width's forward band spans 2d (not placed), the rest before it
    lambda: ((_s55_cross([40, 90], [30, 100], band=([35, 80], [45, 140], [25, 90], [35, 110])), 9), {}),
    # every band wholly after 2d, one with a round that never crossed
    lambda: ((_s55_cross([80, 200], [70, 300], band=([75, 180], [90, float("nan")], [68, 260], [72, 320])), 9), {}),
]


def _s55_equal(ratios):
    return pd.DataFrame(dict(T=[64, 128], d=[32, 64], attention_gflops=[10.0 / r for r in ratios],
                             lstm_gflops=[10.0, 10.0], ratio_attention_to_lstm=list(ratios)))


CASES["seqlab.chapter.s14_55_crossover.equal_work_claims"] = [
    lambda: ((_s55_equal([1.5, 2.0]),), {}),
    lambda: ((_s55_equal([0.5, 0.9]),), {}),
    lambda: ((_s55_equal([1.5, 0.9]),), {}),
    # the medians say slower at both widths, but one width's rounds reach below one: not settled there
    lambda: ((_s55_equal([1.5, 1.2]).assign(ratio_attention_to_lstm_lo=[1.4, 0.97],
                                            ratio_attention_to_lstm_hi=[1.6, 1.3]),), {}),
]


def _s55_parts(gain=3.0, rnn_us=5.0, core_rel=(0.3, 0.5), ns=None):
    n = len(core_rel)
    d = [32 * 2 ** i for i in range(n)]
    return pd.DataFrame(dict(T=256, d=d, d_k=[v // 4 for v in d], projections_gflops=[20.0] * n,
                             core_gflops=[20.0 * r for r in core_rel], lstm_gflops=[10.0 * gain] * n,
                             lstm_generic_gflops=[10.0] * n, rnn_gflops=[3.0] * n, lstm_us_per_step=[4.0] * n,
                             lstm_generic_us_per_step=[12.0] * n, rnn_us_per_step=[rnn_us] * n,
                             core_ns_per_score=ns if ns is not None else [2.0 + 0.1 * v // 4 for v in d]))


CASES["seqlab.chapter.s14_55_parts.parts_claims"] = [
    lambda: ((_s55_parts(),), {}),                                      # fused gain, step overhead, slow core
    lambda: ((_s55_parts(gain=1.2, rnn_us=2.0, core_rel=(0.9, 1.1)),), {}),  # core level with projections
    lambda: ((_s55_parts(core_rel=(1.5, 2.0)),), {}),                   # core faster
    lambda: ((_s55_parts(core_rel=(0.5, 1.0)),), {}),                   # mixed
    # one timing strays up to 3-fold: a 2.5-fold gain and a 1.5-fold longer RNN step are not carried
    lambda: ((_s55_parts(gain=2.5, rnn_us=6.0), 3.0), {}),
]

CASES["seqlab.chapter.s14_55_parts.score_claims"] = [
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[3 + 0.1 * k for k in (8, 16, 32, 64)]),), {}),    # line, a > 0
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[-0.5 + 0.2 * k for k in (8, 16, 32, 64)]),), {}),  # a < 0
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[2.0, 2.0, 2.0, 10.0]),), {}),                     # no line
    # one timing strays up to 3-fold: neither the sublinear growth nor the miss of the line is carried
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[3 + 0.1 * k for k in (8, 16, 32, 64)]), 3.0), {}),
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[2.0, 2.0, 2.0, 3.0]), 3.0), {}),
]


def _s55_grid(ratios, T=(16, 64, 256), d=32):
    flop = [(8 * t * d * d + 4 * t * t * d) / (16 * t * d * d) for t in T]
    return pd.DataFrame(dict(T=list(T), d=d, ratio_attention_to_lstm=list(ratios), flop_ratio_attention_to_lstm=flop))


CASES["seqlab.chapter.s14_55_crossover.growth_claims"] = [
    lambda: ((_s55_grid([0.5, 1.0, 20.0]),), {}),
    lambda: ((_s55_grid([0.5, 0.6, 0.9]),), {}),
    # the medians grow faster than the FLOP ratio, the least growth the rounds allow does not
    lambda: ((_s55_grid([0.5, 1.0, 3.5]).assign(ratio_attention_to_lstm_lo=[0.45, 0.9, 2.0],
                                                ratio_attention_to_lstm_hi=[0.6, 1.1, 4.0]),), {}),
]


def _s55_verdict(fwd, trn, core_rel, ratios, spread=1.0):
    grid = pd.concat([_s55_grid(ratios, d=32), _s55_grid(ratios, d=64)], ignore_index=True)
    return (_s55_cross(fwd, trn), _s55_parts(core_rel=core_rel), grid, spread), {}


CASES["seqlab.chapter.s14_55_crossover.verdict_claims"] = [
    lambda: _s55_verdict([40, 90], [30, 100], (0.3, 0.5), [0.5, 1.5, 3.0]),             # early, slow core, growing
    lambda: _s55_verdict([40, 90], [30, 100], (0.9, 1.0), [0.5, 3.0, 1.5]),             # early, core keeps pace
    lambda: _s55_verdict([80, float("nan")], [70, 300], (0.3, 0.5), [0.5, 0.8, 1.5]),  # late (one never)
    lambda: _s55_verdict([40, 200], [30, 300], (0.3, 0.5), [0.5, 1.5, 3.0]),            # mixed
    # early everywhere, but one timing strays 2.5-fold: the core's gap is carried at d = 32 only
    lambda: _s55_verdict([40, 90], [30, 100], (0.3, 0.5), [0.5, 1.5, 3.0], spread=2.5),
]


def _s55_threads(gauge, attn, lstm, share=0.01, rounds=None):
    """One timing per point, or ``rounds`` rounds of them (a ``round`` column)."""
    rows = [("linear map (gauge)", "forward", gauge), ("self-attention", "forward", attn),
            ("self-attention", "training", attn), ("LSTM", "forward", lstm), ("LSTM", "training", lstm)]
    one = pd.DataFrame([dict(layer=la, mode=m, d=64, T=256, one_thread_ms=s, two_threads_ms=1.0, speedup=s,
                             others_share=share) for la, m, s in rows])
    return one if rounds is None else pd.concat([one.assign(round=r) for r in range(rounds)], ignore_index=True)


CASES["seqlab.chapter.s14_55_threads.thread_claims"] = [
    lambda: ((_s55_threads(1.9, 1.6, 1.2),), {}),
    lambda: ((_s55_threads(1.0, 0.95, 1.0, share=0.3),), {}),
    lambda: ((_s55_threads(0.5, 0.95, 1.0, share=0.3),), {}),  # two threads slower than one
    lambda: ((_s55_threads(1.9, 1.6, 1.2, rounds=3),), {}),     # every point of three rounds agrees
    lambda: ((_s55_threads(1.9, 1.0, 0.9, rounds=3),), {}),     # three rounds, the LSTM slower with two threads
]


def _s55_memory(explicit, fused):
    rows = []
    for i, T in enumerate((512, 2048)):
        w = 4 * T * T * 4 / 2 ** 20
        rows += [dict(T=T, d=64, path="explicit", peak_mb=explicit[i], weights_matrix_mb=w),
                 dict(T=T, d=64, path="fused", peak_mb=fused[i], weights_matrix_mb=w),
                 dict(T=T, d=64, path="LSTM", peak_mb=0.1 * (i + 1), weights_matrix_mb=0.0)]
    return pd.DataFrame(rows)


CASES["seqlab.chapter.s14_55_memory.memory_claims"] = [
    lambda: ((_s55_memory([4.5, 70.0], [0.5, 2.0]),), {}),    # quadratic vs linear
    lambda: ((_s55_memory([4.5, 9.0], [0.5, 8.0]),), {}),     # neither
    lambda: ((_s55_memory([4.5, 70.0], [0.5, 100.0]),), {}),  # fused above the weights: raises
]


def _s55_here(here_ratios, ref_ratios):
    T = [32, 64, 128, 256, 512]
    here = pd.DataFrame(dict(T=T, d=64, ratio_attention_to_lstm=here_ratios))
    ref = pd.Series(ref_ratios, dtype=float)
    grid = pd.DataFrame(dict(T=T, d=64, ratio_attention_to_lstm=ref, ratio_attention_to_lstm_lo=ref / 1.5,
                             ratio_attention_to_lstm_hi=ref * 1.5))  # the rounds' band around the reference
    return (here, grid), {}


CASES["seqlab.chapter.s14_55_here.here_claims"] = [
    lambda: _s55_here([0.2, 0.5, 1.5, 3, 6], [0.3, 0.6, 1.2, 2, 4]),     # here inside the reference's band
    lambda: _s55_here([0.2, 0.3, 0.4, 3, 6], [0.3, 0.6, 1.2, 2, 4]),     # here past the band
    lambda: _s55_here([0.2, 0.5, 0.8, 0.9, 0.95], [0.3, 0.6, 1.2, 2, 4]),  # here: never within the lengths
]
