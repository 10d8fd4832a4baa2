"""Inputs for the recurrence page's claims, §14.45–§14.49 (s14_45 to s14_49)."""
from __future__ import annotations


def _cases():
    import numpy as np
    import pandas as pd

    def grad_frame(g07, g095, g115):
        lags = np.arange(60)
        return pd.DataFrame([dict(rho=rho, lag=int(k), g=float(f(k))) for rho, f in
                             ((0.7, g07), (0.95, g095), (1.15, g115)) for k in lags])

    geometric = grad_frame(lambda k: 3 * 0.65 ** k, lambda k: 4 * 0.85 ** k, lambda k: 1 + 0.01 * k)
    bent = grad_frame(lambda k: np.exp(-(k / 10) ** 2), lambda k: 4 * 0.99 ** k, lambda k: 1 + 0.01 * k)
    exploding = grad_frame(lambda k: 3 * 0.75 ** k, lambda k: 4 * 0.85 ** k, lambda k: 1.15 ** k)
    clip = lambda after, cos: pd.DataFrame([dict(norm_before=1e5, norm_after=after, cosine_between_directions=cos)])

    def reach(rnn1, lstm1, ratio79):
        return pd.DataFrame([dict(cell=c, lag=lag, g=v) for c, vals in
                             (("RNN", (rnn1, 1e-9)), ("LSTM", (lstm1, 1e-9 * ratio79)), ("GRU", (lstm1, 1e-9 * ratio79)))
                             for lag, v in zip((1, 79), vals)])

    def gaps(narrow_above):
        rows = [dict(width=8, lags_lstm_above=narrow_above, lstm_above_from_lag_40=False, ratio_at_last_lag=0.5)]
        rows += [dict(width=w, lags_lstm_above=60, lstm_above_from_lag_40=True, ratio_at_last_lag=2.0)
                 for w in (16, 32, 64)]
        return pd.DataFrame(rows)

    def ratios(at32, by_width, miss=False, miss_all=False):
        """Three draws per width: LSTM/RNN ``by_width[w] * (1, 2, 3)``; at width 32 ``at32`` for both gated cells;
        ``miss``: the LSTM falls below the RNN from lag 40 on in one draw at width 16 (``miss_all``: in every
        draw)."""
        rows = []
        for w, r in by_width.items():
            for k, seed in enumerate((31, 32, 33)):
                x = at32[k] if w == 32 else r * (k + 1)
                rows.append(dict(seed=seed, width=w, lstm_over_rnn=x, gru_over_rnn=x,
                                 lstm_above_from_lag_40=not (miss_all or miss and w == 16 and k == 1)))
        return pd.DataFrame(rows)

    ordered = {8: 0.5, 16: 2.0, 32: 0, 64: 1e4}
    forget = lambda vals: pd.DataFrame(dict(forget_bias=[-1.0, 0.0, 1.0, 2.0][:len(vals)], lag_70=vals))
    slopes = lambda s115: pd.DataFrame(dict(rho=[0.7, 1.15], mean_slope=[0.95, s115], rho_times_slope=[0.665,
                                            1.15 * s115], largest_state=[0.8, 0.96]))

    def formulas(gru, lstm, ok=True):
        return pd.DataFrame(dict(cell=["RNN", "GRU", "LSTM"], parameters=[100, gru, lstm],
                                 formula_value=[100, gru, lstm] if ok else [90, gru, lstm],
                                 chapter_formula_value=[90, gru - 10, lstm - 10]))

    def steps(gru, lstm, spread=0.05):  # s14_47_1.step_time_summary: median, fastest and slowest repeat
        return pd.DataFrame(dict(cell=["GRU", "LSTM"], median_ms=[gru, lstm], min_ms=[gru * (1 - spread),
                                 lstm * (1 - spread)], max_ms=[gru * (1 + spread), lstm * (1 + spread)]))

    def runs(tf, free, att_tf32, fixed_tf32, att_free32, short_fixed, short_att):
        """§14.48's copy_runs: seeds 41-43 (the chapter's first, unshifted; each later seed 0.01 higher) at
        T = 4, 8, 16, 32; per-seed lists give held-out teacher-forced accuracy at T = 32 and free running at
        T = 32 (attention) and T = 4 (both models)."""
        rows = []
        for k, seed in enumerate((41, 42, 43)):
            for i, T in enumerate((4, 8, 16, 32)):
                j = 0.01 * k
                rows.append(dict(sequence_length=T, attention="none", final_loss=1.0, copy_accuracy=tf[i] + j,
                                 heldout_teacher_forced=fixed_tf32[k] if T == 32 else 0.5,
                                 heldout_free_running=short_fixed[k] if T == 4 else free[i] + j, seed=seed))
                free_att = att_free32[k] if T == 32 else short_att[k] if T == 4 else 0.5
                rows.append(dict(sequence_length=T, attention="general", final_loss=0.1, copy_accuracy=1.0,
                                 heldout_teacher_forced=att_tf32[k] if T == 32 else 0.99,
                                 heldout_free_running=free_att, seed=seed,
                                 # after a first mistake: the free-running accuracy falls as far as free running
                                 # does overall, against 0.9 fed the true prefix
                                 heldout_after_error_free_running=free_att - 0.05,
                                 heldout_after_error_teacher_forced=0.9, heldout_after_error_positions=0.5,
                                 heldout_after_error_one_behind=0.1, heldout_after_error_one_ahead=0.1))
        return pd.DataFrame(rows)

    good = runs([1.0, 0.8, 0.5, 0.3], [0.9, 0.4, 0.2, 0.15], [0.9, 0.92, 0.95], [0.3, 0.35, 0.4],
                [0.4, 0.45, 0.5], [0.8, 0.85, 0.9], [0.82, 0.86, 0.88])
    # no fall at 16, free running above teacher forcing at 8, overlapping seeds at 32, no free-running drop,
    # attention ahead at T = 4
    bad = runs([1.0, 0.8, 0.85, 0.3], [0.9, 0.85, 0.2, 0.15], [0.5, 0.6, 0.9], [0.3, 0.55, 0.7],
               [0.6, 0.7, 0.8], [0.5, 0.6, 0.7], [0.9, 0.92, 0.95])
    # the fixed vector ahead at 32 (teacher-forced) and at 4 (free running)
    reversed_ = runs([1.0, 0.8, 0.5, 0.3], [0.9, 0.4, 0.2, 0.15], [0.3, 0.32, 0.35], [0.6, 0.62, 0.7],
                     [0.1, 0.12, 0.14], [0.9, 0.92, 0.95], [0.5, 0.6, 0.7])
    shown = lambda acc, free=0.4: dict(sequence_length=8, final_loss=1.0, copy_accuracy=acc,
                                       heldout_teacher_forced=0.5, heldout_free_running=free)

    def controls(tr, un, on, later, exact=0.04):
        return pd.DataFrame(dict(weights=["trained", "untrained", "uniform"], sequences=[500] * 3,
                                 weight_within_one_of_antidiagonal=[tr, un, 0.236],
                                 weight_on_antidiagonal=[exact, 0.083, 0.083],
                                 argmax_on_antidiagonal=[on, 0.1, np.nan], argmax_one_step_later=[later, 0.1, np.nan]))

    probe = lambda later: pd.DataFrame(dict(lag=[0, 1], accuracy=[0.99, later], chance=[0.1, 0.1]))
    rev = lambda acc, tf, free: dict(final_loss=0.05, token_accuracy=acc, heldout_teacher_forced=tf,
                                     heldout_free_running=free)
    return {
        "seqlab.chapter.s14_45.length_claims": [lambda: (({5: 99, 5000: 99},), {}),
                                                 lambda: (({5: 99, 5000: 100},), {})],
        "seqlab.chapter.s14_46.count_claims": [lambda: ((352, 16, 4), {}), lambda: ((336, 16, 4), {})],
        "seqlab.chapter.s14_46_1.gradient_claims": [lambda: ((geometric,), {}), lambda: ((bent,), {}),
                                                     lambda: ((exploding,), {})],
        "seqlab.chapter.s14_46_1.slope_claims": [lambda: ((slopes(0.83),), {}), lambda: ((slopes(0.9),), {}),
                                                  lambda: ((slopes(0.97),), {})],  # product < 1 but no fall
        "seqlab.chapter.s14_46_1.clipping_claims": [lambda: ((clip(1.0, 1.0),), {}),
                                                     lambda: ((clip(1.0, 0.9),), {})],
        "seqlab.chapter.s14_47.match_claims": [lambda: ((1e-7, "lstm"), {}), lambda: ((1e-3, "lstm"), {}),
                                                lambda: ((1e-7, "gru"), {}), lambda: ((1e-3, "gru"), {})],
        "seqlab.chapter.s14_47.reach_claims": [
            lambda: ((reach(2.0, 1.0, 100.0), gaps(0), ratios([50, 60, 70], ordered)), {}),
            lambda: ((reach(2.0, 1.0, 0.5), gaps(0), ratios([0.5, 60, 70], {8: 0.5, 16: 2.0, 32: 0, 64: 3.0},
                                                           miss=True)), {}),
            lambda: ((reach(2.0, 1e-12, 0.5), gaps(0), ratios([50, 60, 70], ordered)), {}),
            lambda: ((reach(2.0, 1.0, 100.0), gaps(3), ratios([50, 60, 70], ordered)), {}),
            lambda: ((reach(1.0, 2.0, 100.0), gaps(0), ratios([50, 60, 70], ordered)), {}),
            lambda: ((reach(2.0, 1.0, 100.0), gaps(0), ratios([50, 60, 70], ordered, miss_all=True)), {})],
        "seqlab.chapter.s14_47.forget_claims": [
            lambda: ((forget([1e-9, 1e-7, 1e-5, 1e-3]),), {}),  # rising, a factor 1e4 against the guide's 1.6e17
            lambda: ((forget([1e-5, 1e-7, 1e-5, 1e-9]),), {}),
            lambda: ((forget([1e-30, 1e-28, 1e-14, 1e-2]),), {})],  # rising by 1e26 from a bias of 0: above it
        "seqlab.chapter.s14_47_1.count_claims": [lambda: ((formulas(300, 400),), {}),
                                                  lambda: ((formulas(350, 400),), {}),
                                                  lambda: ((formulas(300, 400, ok=False),), {})],
        "seqlab.chapter.s14_47_1.step_time_claims": [lambda: ((steps(20.0, 30.0),), {}),
                                                      lambda: ((steps(33.0, 24.0),), {}),
                                                      lambda: ((steps(25.0, 24.0, 0.1),), {})],  # overlapping
        "seqlab.chapter.s14_48.copy_claims": [lambda: ((good, shown(0.8)), {}),
                                               lambda: ((bad, shown(0.8, 0.85)), {}),
                                               lambda: ((reversed_, shown(0.8)), {}),
                                               lambda: ((good, shown(0.7)), {})],
        "seqlab.chapter.s14_49.reversal_claims": [
            lambda: ((rev(0.99, 0.95, 0.15), controls(0.7, 0.25, 0.2, 0.7), 0.99, probe(0.9)), {}),
            lambda: ((rev(0.90, 0.50, 0.30), controls(0.3, 0.25, 0.7, 0.2, exact=0.2), 0.6, probe(0.2)), {}),
            lambda: ((rev(0.99, 0.99, 0.95), controls(0.7, 0.25, 0.2, 0.7), 0.99, probe(0.9)), {})],
    }


CASES = _cases()
