"""Inputs for the text page's claims, §14.56–§14.60 (s14_56 to s14_60, s14_57_seeds)."""
from __future__ import annotations


def _cases():
    import pandas as pd

    from seqlab.chapter import s14_59

    p = "seqlab.chapter."

    # §14.56
    def trace(merged):
        return pd.DataFrame(dict(step=range(1, len(merged) + 1), merged=merged,
                                 new_token=[m.replace(" + ", "") for m in merged]))

    reuse = trace(["t + h", "␣ + th", "a + n"])
    bytes_only = trace(["t + h", "a + n"])
    pieces_yes = ["th", "en", "␣the", "␣", "q", "u", "e", "en"]
    pieces_no = ["␣th", "e", "␣queen"]

    def rt(lossless):
        return pd.DataFrame(dict(tokenizer=["character", "word (min_freq 10)", "byte BPE (512)"], lossless=lossless))

    def tk(bpe, word):
        return pd.DataFrame(dict(tokenizer=["byte BPE (1024)", "word (min_freq 1)"], tokens=[bpe, word]))

    def bpe_results(nats, bits, seen):
        return pd.DataFrame(dict(tokenizer=["character", "byte BPE (1024)"], nats_per_token=nats,
                                 bits_per_char=bits, chars_seen=seen))

    # §14.57
    def summary(gpt_loss, lstm_loss, gpt_params=800, lstm_params=900, iters=(750, 750)):
        return pd.DataFrame(dict(model=["GPT", "LSTM"], val_loss_nats=[gpt_loss, lstm_loss],
                                 parameters=[gpt_params, lstm_params], iterations=list(iters)))

    def steps(gpt, lstm):
        return pd.DataFrame(dict(model=["GPT", "LSTM"], median_seconds=[gpt, lstm]))

    def sweep(gpt, lstm, gpt_step=0.13, lstm_step=0.12):
        rows = [dict(model=m, steps=n, val_loss_nats=v, seconds_per_step=s)
                for m, losses, s in (("GPT", gpt, gpt_step), ("LSTM", lstm, lstm_step))
                for n, v in zip((150, 750, 1500), losses)]
        return pd.DataFrame(rows)

    def cross(at, start_ahead, end_ahead):
        return dict(by="steps", at=at, start=150.0, end=1500.0, ahead_at_start=start_ahead, ahead_at_end=end_ahead,
                    gap_at_start_nats=0.05, gap_at_end_nats=0.04)

    # §14.58
    def ent(tops, entropies=(0.6, 1.9, 2.8)):
        return pd.DataFrame(dict(temperature=[0.25, 0.5, 1.0], entropy_nats=list(entropies), max_probability=tops))

    def temps(d3, nll, rep):
        return pd.DataFrame(dict(value=[0.3, 0.7, 1.5], distinct_3=d3, nll_judge=nll, repetition_rate=rep))

    # §14.59
    def kept(conf_p, unc_p):
        rows = []
        for ctx, top, kp in (("confident", 0.99, conf_p), ("uncertain", 0.16, unc_p)):
            for rule, n, mass in (("full", 66, 1.0), ("top-k 10", 10, 0.995), ("top-p 0.9", kp, 0.9),
                                  ("min-p 0.1", kp, 0.92)):
                rows.append(dict(context=ctx, strategy=rule, tokens_kept=n, mass_kept=mass, top_probability=top))
        return pd.DataFrame(rows)

    def knobs(nll_of):
        """A decoding-sweep summary where each knob's NLL is nll_of[knob](diversity)."""
        rows = []
        for knob, f in nll_of.items():
            for i, x in enumerate((0.5, 0.6, 0.7, 0.8, 0.9)):
                rows.append(dict(knob=knob, value=float(i), distinct_3=x, entropy=2 * x, nll_judge=f(x),
                                 nll_judge_se=0.01, nll_gpt=f(x), repetition_rate=(0.1 if knob == "temperature"
                                                                                   else 0.05) * (1 - x),
                                 tokens_kept=3.0))
        return pd.DataFrame(rows)

    adaptive_wins = knobs({"temperature": lambda x: x + 0.1, "top_k": lambda x: x + 0.3,
                           "top_p": lambda x: x, "min_p": lambda x: x + 0.02})
    mixed = knobs({"temperature": lambda x: x, "top_k": lambda x: x + 0.001, "top_p": lambda x: x + 0.1,
                   "min_p": lambda x: x + (0.05 if x < 0.7 else -0.05)})

    temperature_best = knobs({"temperature": lambda x: x, "top_k": lambda x: x + 0.1,
                              "top_p": lambda x: x + 0.05, "min_p": lambda x: x + 0.05})
    # min-p ahead at every level, top-p never; top-k last at low diversity, top-p at high
    min_p_leads = knobs({"temperature": lambda x: x, "top_k": lambda x: x + 0.1,
                         "top_p": lambda x: x + (0.0 if x < 0.7 else 0.2), "min_p": lambda x: x - 0.05})

    def matched_args(sw):
        m = s14_59.at_matched_diversity(sw, "distinct_3")
        e = s14_59.at_matched_diversity(sw, "entropy")
        return (s14_59.against(m), m, e), {}

    def topp_args(sw, old):
        m = s14_59.at_matched_diversity(sw, "distinct_3")
        e = s14_59.at_matched_diversity(sw, "entropy")
        new = sw[sw.knob == "top_p"]
        return (pd.Series(old, index=[0.5, 0.7, 0.9]), new, s14_59.against(m), s14_59.against(e)), {}

    def seeds_args(per_seed):
        """Three seeds; per seed, LSTM minus GPT at the smallest budget, the chapter's and the largest."""
        from seqlab.chapter import s14_57_seeds

        rows = []
        for seed, gaps in zip((1337, 1338, 1339), per_seed):
            for steps, gap in zip((150, 750, 1500), gaps):
                rows += [dict(model="GPT", steps=steps, seed=seed, val_loss_nats=2.0),
                         dict(model="LSTM", steps=steps, seed=seed, val_loss_nats=2.0 + gap)]
        sweeps = pd.DataFrame(rows)
        return (s14_57_seeds.seed_gaps(sweeps), s14_57_seeds.seed_crossings(sweeps)), {}

    def family_of(pairs):
        """A family of (difference, standard error) pairs, half held at distinct-3 and half at entropy."""
        rows = [dict(knob=("top_k", "top_p", "min_p")[i % 3], held=("distinct_3", "entropy")[i >= len(pairs) // 2],
                     target=0.3 + 0.01 * i, nll=1.0 + d, nll_base=1.0, difference=d, se=se, settled=abs(d) > 2 * se)
                for i, (d, se) in enumerate(pairs)]
        return s14_59.family(pd.DataFrame(rows[:len(rows) // 2]), pd.DataFrame(rows[len(rows) // 2:]))

    same_as_temp = knobs({"temperature": lambda x: x, "top_k": lambda x: x + 0.3,
                          "top_p": lambda x: 1.2 - x, "min_p": lambda x: x})  # top-p falls: not monotone

    # §14.60
    def ratio(mid, lo, hi):  # s14_57.step_ratio
        return dict(ratio=mid, ratio_lo=lo, ratio_hi=hi, pairs=9)

    def kv_steps(cached, speedup):
        return pd.DataFrame(dict(context=[16, 64, 256, 1024], seconds_with_cache=cached,
                                 seconds_without_cache=[c * s for c, s in zip(cached, speedup)], speedup=speedup,
                                 flops_with_cache=[1.6e6, 1.7e6, 2.1e6, 3.7e6]))

    def kv_cost(identical, speedup, per_token=3e-3):  # per_token: seconds per cached token of each run
        return pd.DataFrame(dict(new_tokens=[32, 256], context_at_end=[96, 320], identical_tokens=identical,
                                 seconds_with_cache=[32 * 2.8e-3, 256 * per_token], speedup=[2.0, speedup]))

    good_steps = kv_steps([2.7e-3, 2.8e-3, 3.3e-3, 4.4e-3], [1.5, 2.1, 5.3, 18.8])
    bad_steps = kv_steps([1e-3, 2e-3, 4e-3, 9e-3], [1.0, 0.9, 0.8, 0.7])

    return {
        p + "s14_56.merge_claims": [lambda: ((reuse, pieces_yes), {}), lambda: ((bytes_only, pieces_no), {})],
        p + "s14_56.tokenizer_claims": [
            lambda: ((rt([False, False, True]), tk(900, 1000)), {}),
            lambda: ((rt([True, False, True]), tk(1100, 1000)), {})],
        p + "s14_56.bpe_model_claims": [
            lambda: ((bpe_results([1.3, 4.0], [1.9, 1.8], [1e6, 3e6]),), {}),
            lambda: ((bpe_results([1.3, 4.0], [1.9, 2.0], [1e6, 3e6]),), {})],
        p + "s14_57.budget_claims": [
            lambda: ((summary(1.62, 1.57), steps(0.15, 0.12), ratio(1.25, 1.15, 1.3)), {}),
            lambda: ((summary(1.50, 1.57, 900, 800), steps(0.12, 0.13), ratio(0.92, 0.9, 0.98)), {}),
            # the medians a quarter apart, but one pair of repeats within the margin: not clearly cheaper
            lambda: ((summary(1.62, 1.57), steps(0.15, 0.12), ratio(1.25, 1.05, 1.3)), {}),
            lambda: ((summary(1.50, 1.57, iters=(750, 700)), steps(0.12, 0.13), ratio(0.92, 0.9, 0.98)), {})],
        p + "s14_57.here_claims": [lambda: ((steps(0.13, 0.12), steps(0.5, 0.4)), {}),
                                   lambda: ((steps(0.13, 0.12), steps(0.4, 0.5)), {})],
        p + "s14_57.sweep_claims": [
            lambda: ((sweep([2.0, 1.62, 1.56], [2.05, 1.57, 1.51]), cross(237.0, "GPT", "LSTM"),
                      dict(cross(20.0, "GPT", "LSTM"), by="seconds"), 1.62, ratio(1.12, 1.05, 1.2)), {}),
            lambda: ((sweep([2.0, 1.62, 1.66], [2.05, 1.67, 1.61], 0.12, 0.13), cross(float("nan"), "LSTM", "LSTM"),
                      dict(cross(float("nan"), "LSTM", "LSTM"), by="seconds"), 1.70, ratio(1.6, 1.5, 1.7)), {}),
            # the repeats on either side of one: neither model's steps move its curve
            lambda: ((sweep([2.0, 1.62, 1.56], [2.05, 1.57, 1.51]), cross(237.0, "GPT", "LSTM"),
                      dict(cross(20.0, "GPT", "LSTM"), by="seconds"), 1.62, ratio(0.98, 0.95, 1.02)), {}),
            # the GPT's step the cheaper; against time the two level where the range starts
            lambda: ((sweep([2.0, 1.62, 1.56], [2.05, 1.57, 1.51], 0.11, 0.12), cross(237.0, "GPT", "LSTM"),
                      dict(cross(20.0, "GPT", "LSTM"), by="seconds", gap_at_start_nats=2e-4), 1.62,
                      ratio(0.93, 0.9, 0.98)), {})],
        p + "s14_58.temperature_claims": [
            lambda: ((ent([0.95, 0.5, 0.2]), {"greedy": 0.66, "temperature 1.0": 0.0},
                      temps([0.5, 0.7, 0.9], [0.9, 1.3, 2.6], [0.08, 0.01, 0.0])), {}),
            lambda: ((ent([0.86, 0.5, 0.2]), {"greedy": 0.0, "temperature 1.0": 0.01},
                      temps([0.5, 0.8, 0.7], [1.0, 0.9, 2.6], [0.01, 0.08, 0.0])), {}),
            lambda: ((ent([0.86, 0.5, 0.6]), {"greedy": 0.0, "temperature 1.0": 0.01},
                      temps([0.5, 0.8, 0.7], [1.0, 0.9, 2.6], [0.01, 0.08, 0.0])), {})],
        p + "s14_58.library_checks": [lambda: ((), dict(temperature=True, generate=True)),
                                      lambda: ((), dict(generate=False))],
        p + "s14_59.kept_claims": [lambda: ((kept(1, 15),), {}), lambda: ((kept(12, 15),), {})],
        p + "s14_59.topp_claims": [lambda: topp_args(mixed, [1.08, 1.06, 1.3]),
                                   lambda: topp_args(adaptive_wins, [1.0, 1.1, 1.3]),
                                   lambda: topp_args(same_as_temp, [1.0, 1.1, 1.3]),
                                   lambda: topp_args(knobs({"temperature": lambda x: x, "top_k": lambda x: x + 0.3,
                                                            "top_p": lambda x: x + 0.001, "min_p": lambda x: x}),
                                                     [1.0, 1.1, 1.3])],
        p + "s14_57_seeds.seed_claims": [
            lambda: seeds_args([(0.05, -0.02, -0.04), (0.06, -0.01, -0.03), (0.04, -0.03, -0.05)]),
            lambda: seeds_args([(0.05, 0.01, -0.04), (-0.02, -0.01, 0.03), (0.04, -0.02, -0.05)])],
        p + "s14_59.family_claims": [lambda: ((family_of([(0.5, 0.1), (0.0, 0.1)] * 9),), {}),
                                    lambda: ((family_of([(0.21, 0.1)] + [(0.0, 0.1)] * 17),), {})],
        p + "s14_59.matched_claims": [lambda: matched_args(adaptive_wins), lambda: matched_args(mixed),
                                     lambda: matched_args(temperature_best), lambda: matched_args(min_p_leads)],
        p + "s14_60.kv_claims": [lambda: ((good_steps, kv_cost([True, True], 3.5)), {}),
                                 lambda: ((bad_steps, kv_cost([True, False], 0.9, per_token=2e-2)), {})],
        p + "s14_60.here_claims": [lambda: ((good_steps, kv_steps([1, 1, 1, 1], [1, 1, 1, 15.0])), {}),
                                   lambda: ((good_steps, kv_steps([1, 1, 1, 1], [1, 1, 1, 0.8])), {})],
    }


CASES = _cases()
