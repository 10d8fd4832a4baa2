"""Inputs for the summary's claims, §14.64 (s14_64)."""
from __future__ import annotations


def _cases() -> dict:
    import pandas as pd

    from seqlab.chapter.s14_50 import SCALED, UNSCALED

    P = "seqlab.chapter.s14_64."

    def spread(ok):
        d = [8, 512]
        sd = [2.83, 22.6] if ok else [2.83, 30.0]
        return pd.DataFrame({"d_k": d, "sd_unscaled": sd, "sqrt_d_k": [2.828, 22.63],
                             "sd_scaled": [1.0, 1.01] if ok else [1.0, 1.3]})

    def saturation(saturates):
        return pd.DataFrame({"d_k": [512, 512], "scaled": [UNSCALED, SCALED],
                             "max_attention_weight": [1.0 if saturates else 0.6, 0.4],
                             "logit_gradient_norm": [0.01 if saturates else 0.3, 0.2],
                             "query_gradient_norm": [12.0, 1.3]})

    def cross(early):  # early: no width's crossover after 2d
        return pd.DataFrame({"d": [32, 64], "flop_T_star": [64, 128],
                             "measured_T_star": [32 if early else 128, 100 if early else 256],
                             "training_T_star": [60 if early else 128, 125 if early else None]})

    def matched(gain):  # the middle of three distinct-3 levels
        return pd.DataFrame({"knob": ["temperature", "top_p", "min_p"], "target": 0.7,
                             "nll_judge": [1.3, 1.3 - gain, 1.35]})

    def levels(diffs):  # §14.59's against(): each rule minus temperature at each level, with its error
        return pd.DataFrame({"knob": ["top_p"] * len(diffs) + ["min_p"] * len(diffs),
                             "target": [0.6, 0.7, 0.8][:len(diffs)] * 2,
                             "difference": list(diffs) + [0.01] * len(diffs), "se": [0.01] * (2 * len(diffs))})

    def ratios(by_width):  # §14.47's reach_ratios: per width, the LSTM/RNN ratio of each draw (GRU twice that)
        return pd.DataFrame([dict(seed=k, width=w, lstm_over_rnn=x, gru_over_rnn=2 * x)
                             for w, xs in by_width.items() for k, x in enumerate(xs)])

    def copy_spread(fixed_short, fixed_long, attention_long):  # §14.48's seed_spread: (lowest, highest) pairs
        cells = {("none", 4): fixed_short, ("none", 32): fixed_long, ("general", 4): (0.9, 0.95),
                 ("general", 32): attention_long}
        return pd.DataFrame([dict(attention=a, sequence_length=T, seeds=3, heldout_teacher_forced_mean=sum(v) / 2,
                                  heldout_teacher_forced_lowest=v[0], heldout_teacher_forced_highest=v[1])
                             for (a, T), v in cells.items()])

    def family(p_holm):  # §14.59's family(): the middle level's top-p with the given Holm p, two other rows
        return pd.DataFrame({"held": ["distinct_3", "distinct_3", "entropy"], "target": [0.7, 0.6, 1.2],
                             "knob": ["top_p", "top_p", "top_p"], "p_holm": [p_holm, 1.0, 1.0]})

    def kv(same, speedup, rise):
        return dict(identical_tokens=same, step_speedup=speedup, cached_rise=rise, context_lo=16, context_hi=1024)

    def verdict(naive_all, ahead):
        sets = ["A", "B", "C"]
        return pd.DataFrame({"dataset": sets + ["A"], "scope": ["official hold-out"] * 3 + ["all windows"],
                             "neural_beats_seasonal_naive": [True, True, naive_all, True],
                             "neural_beats_best_classical": [i < ahead for i in range(3)] + [False]})

    def coverage(nearer):
        conf = (0.81, 0.95) if nearer else (0.6, 0.7)
        c = pd.DataFrame({"kind": ["conformal", "conformal", "native", "native"], "level": [80, 95, 80, 95],
                          "mean": [*conf, 0.64, 0.79]})
        return c.assign(scored=[52, 52, 30, 30])

    return {
        P + "problem_class_claims": [
            lambda: (({5: 100, 5000: 100}, {5: (2, 3), 5000: (2, 3)}), {}),
            lambda: (({5: 100, 5000: 120}, {5: (2, 3), 5000: (2, 3)}), {})],
        P + "gradient_claims": [
            lambda: (({0.7: 0.65, 1.15: 0.97}, {0.7: (1e-9, 1.0), 1.15: (0.3, 2.1)}), {}),
            lambda: (({0.7: 0.75, 1.15: 1.05}, {0.7: (1e-5, 1.0), 1.15: (0.3, 9.0)}), {})],
        P + "gating_claims": [lambda: ((ratios({8: [3.0, 4.0], 32: [5500.0, 800.0]}),), {}),
                              lambda: ((ratios({8: [0.03, 2.0], 32: [5500.0, 800.0]}),), {}),
                              lambda: ((ratios({8: [0.5, 0.2], 32: [0.5, 3.0]}),), {"lag": 79})],
        P + "bottleneck_claims": [lambda: ((copy_spread((0.85, 0.95), (0.2, 0.3), (0.8, 0.9)),), {}),
                                  lambda: ((copy_spread((0.5, 0.9), (0.45, 0.6), (0.5, 0.7)),), {})],
        P + "scaling_claims": [lambda: ((spread(True), saturation(True)), {}),
                               lambda: ((spread(False), saturation(False)), {})],
        P + "multihead_claims": [lambda: (({1: 7616, 4: 7616}, 0.3, 0.99), {}),
                                 lambda: (({1: 7616, 4: 7700}, 0.9, 0.95), {})],
        P + "positional_claims": [lambda: ((1e-7, 0.5), {}), lambda: ((0.1, 0.001), {})],
        P + "cost_claims": [lambda: ((cross(False),), {}), lambda: ((cross(True),), {})],
        P + "decoding_claims": [lambda: ((0.0, 0.3, matched(0.1), 0.02, kv(True, 18.8, 1.6)),
                                         {"levels": levels([-0.06, 0.04, 0.03])}),
                                lambda: ((0.1, 0.3, matched(0.01), 0.02, kv(False, 18.8, 0.9)),
                                         {"levels": levels([-0.06, -0.05, -0.07])}),
                                # beyond two errors, then with and without Holm's correction over the family
                                lambda: ((0.0, 0.3, matched(0.1).assign(held="distinct_3"), 0.02,
                                          kv(True, 18.8, 1.6)), {"levels": levels([-0.06, 0.04, 0.03]),
                                                                 "family": family(0.4)}),
                                lambda: ((0.0, 0.3, matched(0.1).assign(held="distinct_3"), 0.02,
                                          kv(True, 18.8, 1.6)), {"levels": levels([-0.06, 0.04, 0.03]),
                                                                 "family": family(0.01)}),
                                # no level named and no comparison across levels: the typical error of one NLL
                                lambda: ((0.0, 0.3, matched(0.1).drop(columns="target"), 0.02, kv(True, 18.8, 1.6)),
                                         {})],
        P + "forecast_claims": [lambda: ((verdict(True, 2), coverage(True)), {}),
                                lambda: ((verdict(False, 1), coverage(False)), {})],
        P + "exercise_bound_claims": [
            lambda: (({"a": {"bound": 0.03, "gradient": 0.006}},), {}),
            lambda: (({"a": {"bound": 0.00515, "gradient": 0.00646}},), {})],
    }


CASES = _cases()
