"""Inputs for every claim source (see test_claims.py): ``CASES[module.qualname] = [make, ...]``.

Each ``make()`` returns ``(args, kwargs)`` for one call. Build the numbers by hand (small frames
and dicts), one set per outcome, so every claim the source makes is seen true and false.
"""
from __future__ import annotations

CASES: dict = {}


# --- §14.61–§14.63 (the forecasting page) ---
def _s61_63_cases():
    import pandas as pd
    from scipy.stats import norm

    from seqlab.analysis.multiple import holm
    from seqlab.chapter import s14_63, s14_63_intervals, s14_63_nbeats, s14_63_verdicts
    from seqlab.experiments.forecast import CLASSICAL_MODELS

    P61, P62, P63V = "seqlab.chapter.s14_61.", "seqlab.chapter.s14_62.", "seqlab.chapter.s14_63_verdicts."
    P63N, P63I, P63R = ("seqlab.chapter.s14_63_nbeats.", "seqlab.chapter.s14_63_intervals.",
                        "seqlab.chapter.s14_63_reference.")
    HO, ALL = "official hold-out", "all windows"
    SETS = {"AirPassengers": 1.0, "M3 monthly": 0.86, "M3 yearly": 2.6, "Tourism quarterly": 1.6, "M1 yearly": 3.5}

    def summary(nb, neural=None, sn=None):
        """AutoTheta at each set's base, other classical models 10% behind, N-BEATS at base * nb[(set, scope)]."""
        rows = []
        for d, base in SETS.items():
            for scope in ([ALL] if d == "AirPassengers" else [ALL, HO]):
                mase = {m: base * 1.1 for m in CLASSICAL_MODELS}
                mase["AutoTheta"] = base
                mase["SeasonalNaive"] = base * (sn or {}).get(d, 1.3)
                mase["GRU"], mase["Transformer"] = base * 1.05, base * 1.06
                mase.update({m: base * f for m, f in (neural or {}).get((d, scope), {}).items()})
                mase["N-BEATS"] = base * nb.get((d, scope), nb.get(d, 0.95))
                rows += [dict(dataset=d, scope=scope, model=m, mase=x, series=10, units=30) for m, x in mase.items()]
        return pd.DataFrame(rows)

    def comparison(kind):
        if kind == "true":
            s = summary({"M3 yearly": 1.04})
        elif kind == "false":
            s = summary({("M3 monthly", HO): 1.02, ("M3 monthly", ALL): 0.97, "Tourism quarterly": 1.02,
                         "M1 yearly": 1.02, "M3 yearly": 0.96, "AirPassengers": 0.9}, sn={"AirPassengers": 0.8})
        else:  # the Transformer ahead of every classical model on M3 monthly
            s = summary({"M3 yearly": 1.04}, neural={("M3 monthly", HO): {"Transformer": 0.97}})
        return (s14_63.verdict(s), s), {}

    def selection(ok):
        rounds = pd.DataFrame([
            dict(dataset="M3 monthly", pool="generic", pool_size=6, steps=1500, members=6, validation_mase=0.85,
                 last_window_mase=0.846, chosen=False),
            dict(dataset="M3 monthly", pool="generic + interpretable", pool_size=12, steps=2000, members=12,
                 validation_mase=0.84, last_window_mase=0.835 if ok else 0.85, chosen=True)]
            + [dict(dataset="Tourism quarterly", pool=p, pool_size=n, steps=100, members=1, validation_mase=2.0,
                    last_window_mase=1.5, chosen=True) for p, n in (("generic", 6), ("generic + interpretable", 12))
               if ok or p == "generic"]
            + ([] if ok else [dict(dataset="Tourism quarterly", pool="generic + interpretable", pool_size=12,
                                   steps=250, members=2, validation_mase=1.9, last_window_mase=1.5, chosen=True)]))
        grid = pd.DataFrame({"members": [1, 2, 3], "added": ["a", "b", "c"],
                             "steps_2000": [0.9, 0.86, 0.84] if ok else [0.9, 0.84, 0.85]})
        picked = pd.DataFrame({"dataset": ["M3 monthly", "Tourism quarterly"], "steps": [2000, 100 if ok else 250],
                               "members": [3 if ok else 2, 1], "validation_mase": [0.84, 2.0]})
        val = pd.DataFrame({"dataset": "M3 monthly", "model": ["N-BEATS", "Theta", "AutoTheta"],
                            "validation_mase": [0.84, 0.86, 0.87] if ok else [0.88, 0.86, 0.87]})
        v = s14_63.verdict(summary({"M3 yearly": 1.04}))
        ab = pd.DataFrame({"dataset": "M3 monthly", "ingredient": ["interpretable basis (trend, seasonality)"],
                           "difference": [-0.004 if ok else 0.004], "steps": [2000]})
        grids = {"M3 monthly": [1000, 2000], "Tourism quarterly": [100, 250]}
        return (rounds, grid, picked, val, v, ab, grids), {}

    def members(ok):
        m = pd.DataFrame({"stack": ["generic", "generic", "generic", "generic"], "input_multiple": [2.0, 3.0] * 2,
                          "seed": [1000, 1001, 2000, 2001],
                          "validation_mase": [0.86, 0.87, 0.88, 0.85] if ok else [0.86, 0.87, 0.861, 0.871]})
        m["ensemble_mase"] = 0.84 if ok else 0.865
        pairs = pd.DataFrame({"difference": [0.005, 0.004] if ok else [0.02, 0.03]})
        return (m, pairs), {}

    def ablation(d, e=-0.05, steps=2000):
        """Every ingredient at difference d, the ensemble at e, against six seed pairs of rms 0.01 per set."""
        rows = [dict(dataset=where, ingredient=row, difference=d, steps=steps if where == "M3 monthly" else 100)
                for row, where in [(r, "M3 monthly") for r in list(s14_63_nbeats.INGREDIENTS)[:7]]
                + [(list(s14_63_nbeats.INGREDIENTS)[7], "Tourism quarterly"),
                   (list(s14_63_nbeats.INGREDIENTS)[8], "M3 yearly")]]
        rows.append(dict(dataset="M3 monthly", ingredient="ensemble: median of 12 members", difference=e,
                         steps=steps))
        pairs = {k: [0.01] * 6 for k in ("M3 monthly", "Tourism quarterly", "M3 yearly")}
        tested = s14_63_nbeats.ablation_tests(pd.DataFrame(rows), pairs)
        return (tested, {"M3 monthly": 2000, "Tourism quarterly": 100, "M3 yearly": 100},
                {k: 0.01 for k in pairs}), {}

    def efficiency(comb_cpu, nbeats_cpu):  # s14_63_cost.efficiency: Naive2 0.9, spreads of 10 percent
        rows = [("Combination", 0.84, comb_cpu), ("N-BEATS", 0.835, nbeats_cpu),
                ("N-BEATS + Combination", 0.814, comb_cpu + nbeats_cpu)]
        e = pd.DataFrame([dict(entry=n, mase=m, gain=0.9 - m, cpu_seconds=c, cpu_lo=0.9 * c, cpu_hi=1.1 * c,
                               rounds=3) for n, m, c in rows])
        return (e.assign(gain_per_kcpu=1000 * e.gain / e.cpu_seconds),), {}

    def cost(fin):
        c = pd.DataFrame({"dataset": ["M3 monthly"], "windows": [3], "gru_per_window": [25.0],
                          "transformer_per_window": [116.0], "nbeats_validation": [849.0], "nbeats_ablation": [427.0],
                          "round3_validation": [849.0], "nbeats_final": [fin]})
        e = pd.DataFrame([dict(entry=n, cpu_seconds=v, cpu_lo=0.95 * v, cpu_hi=1.05 * v)
                          for n, v in (("N-BEATS", fin), ("Transformer", 124.0))])
        return (e, c, 12), {}

    def bias(ok, se=0.02):  # se: every mean's standard error over 100 series; p and Holm as series_bias gives them
        rows = []
        for d, nn, cl in (("M3 monthly", -0.1, -0.09 if ok else 0.05), ("M3 yearly", 0.2 if ok else -0.2, -0.3),
                          ("Tourism quarterly", 0.3, -0.3 if ok else 0.1)):
            rows += [dict(dataset=d, role="best neural", model="N-BEATS", mean_scaled_error=nn, share_over=0.48),
                     dict(dataset=d, role="best classical", model="AutoTheta", mean_scaled_error=cl,
                          share_over=0.46)]
        if not ok:  # another neural model leads on M3 yearly, so N-BEATS has a row of its own
            rows[2] = dict(rows[2], model="GRU", mean_scaled_error=-0.4)
            rows.append(dict(dataset="M3 yearly", role="N-BEATS", model="N-BEATS", mean_scaled_error=-0.2,
                             share_over=0.4))
        frame = pd.DataFrame(rows).assign(mean_scaled_error_se=se, series=100)
        p = 2 * norm.sf((frame.mean_scaled_error / se).abs().to_numpy())
        return (frame.assign(p=p, p_holm=holm(p)),), {}

    def elsewhere(mase, smape):  # reported: MASE 0.8286 / 0.8321, sMAPE 13.11 / 13.24
        return (pd.DataFrame({"metric": ["mase", "mase", "smape", "smape"], "model": ["A", "B", "C", "D"],
                              "reported": [0.8286, 0.8321, 13.11, 13.24],
                              "seqlab_nbeats": [mase, mase, smape, smape]}),), {}

    def verdict_sig(all_significant):
        """Set B's best neural model (GRU) is settled only where all_significant; A's N-BEATS always is."""
        sets = ("A", "B")
        v = pd.DataFrame({"dataset": sets, "scope": "official hold-out", "best_neural": ["N-BEATS", "GRU"]})
        family = pd.DataFrame({"dataset": ["A", "A", "B"], "model": ["N-BEATS", "GRU", "GRU"],
                               "mean_difference": [-0.02, -0.01, 0.03], "ci_low": [-0.03, -0.02, 0.01],
                               "ci_high": [-0.01, 0.005, 0.05], "p_holm": [0.01, 0.4, 0.02 if all_significant else 0.2],
                               "significant": [True, False, all_significant]})
        return (family, v), {"sets": sets}

    def round3(ok, last=None):
        recipe = pd.DataFrame({"dataset": "M3 monthly", "ingredient": ["a", "b", "c"], "change": ["x=1", "y=2", "z"],
                               "validation_mase": [0.86, 0.88, 0.85], "reference_mase": 0.87,
                               "considered": [True, True, False], "adopted": [ok, False, False]})
        last = (0.83 if ok else 0.84) if last is None else last
        rounds = pd.DataFrame({"dataset": "M3 monthly", "round": [1, 2, 3], "validation_mase": [0.85, 0.84, 0.83],
                               "last_window_mase": [0.846, 0.835, last]})
        return (rounds, recipe, 0.002), {}

    def entries(ok, holm_keeps=None, behind=False):
        """ok: every difference settled; holm_keeps=False: intervals exclude zero but Holm does not keep them;
        behind: N-BEATS settled behind the best entry."""
        rows = []
        for d in ("M3 monthly", "M3 yearly", "Tourism quarterly", "M1 yearly"):
            rows.append(dict(dataset=d, best_entry="Combination", best_entry_mase=0.84, best_single="AutoTheta",
                             best_single_mase=0.86, combination_mase=0.84 if ok else 0.87, m4_comb_mase=0.9,
                             nbeats_mase=0.83, nbeats_difference=-0.01, nbeats_ci_low=-0.02 if ok else -0.03,
                             nbeats_ci_high=-0.001 if ok else 0.01, nbeats_significant=ok, nbeats_share_won=0.52,
                             both_mase=0.82 if ok else 0.85, both_difference=-0.02 if ok else 0.01,
                             both_ci_low=-0.03, both_ci_high=-0.01, both_significant=ok, both_share_won=0.55,
                             nbeats_p_holm=0.01 if ok else 0.3, both_p_holm=0.01 if ok else 0.3))
        frame = pd.DataFrame(rows)
        if holm_keeps is False:
            frame = frame.assign(nbeats_p_holm=0.2, both_p_holm=0.2)
        if behind:
            frame = frame.assign(nbeats_mase=0.85, nbeats_difference=0.01, nbeats_ci_low=0.001, nbeats_ci_high=0.02)
        return (frame, 9), {}

    def groups(ok):
        rows = []
        for kind, cov in (("conformal", {"short": 0.9, "medium": 0.8, "long": 0.7} if ok else
                           {"short": 0.81, "medium": 0.8, "long": 0.82}),
                          ("conformal by length group", {"short": 0.82, "medium": 0.8, "long": 0.79} if ok else
                           {"short": 0.9, "medium": 0.8, "long": 0.7})):
            for g, c in cov.items():
                rows.append(dict(dataset="M3 monthly", model="N-BEATS", kind=kind, by="length", group=g,
                                 coverage_80=c))
        return (pd.DataFrame(rows),), {}

    def native(ok):
        rows = [dict(dataset=d, model=m, kind="native", coverage_80=c80, coverage_95=c95)
                for d in ("M3 monthly", "M3 yearly")
                for m, c80, c95 in (("AutoETS", 0.7, 0.85), ("Naive", 0.85 if ok else 0.7, 0.96 if ok else 0.9))]
        return (pd.DataFrame(rows),), {}

    def significance(kind):
        rows = []
        for d, scope, _ in s14_63_verdicts.SIGNIFICANCE_READ:
            lo, hi = (-0.04, -0.01) if kind in ("sig", "holm") else (-0.01, 0.2)
            for baseline in ("best classical entry", "best classical model"):
                rows.append(dict(model="N-BEATS", dataset=d, scope=scope, ci_low=lo, ci_high=hi,
                                 mean_difference=(lo + hi) / 2, testable=True, baseline=baseline,
                                 significant=(kind in ("sig", "holm")) != (kind == "wrong flag")))
        # "holm": the intervals exclude zero, but Holm's correction over the family does not keep them
        family = pd.DataFrame([dict(dataset=d, scope=scope, p_holm=0.2 if kind == "holm" else 0.01)
                               for d, scope, _ in s14_63_verdicts.SIGNIFICANCE_READ])
        return (pd.DataFrame(rows), family), {}

    def intervals(ok):
        rows = []
        for d in ("M3 monthly", "M3 yearly", "M1 yearly"):
            for m in ("N-BEATS", "AutoTheta", "AutoETS"):
                c80 = (0.85 if d == "M3 yearly" else 0.81) if ok else 0.6
                rows.append(dict(dataset=d, model=m, kind="conformal", coverage_80=c80,
                                 coverage_95=0.95 if ok else (0.7 if d == "M3 monthly" else 0.99),
                                 winkler_95=6.0 if m == "N-BEATS" else 7.0, scrps=0.07))
                if m != "N-BEATS":
                    rows.append(dict(dataset=d, model=m, kind="native", coverage_80=0.6 if ok else 0.8,
                                     coverage_95=0.8 if ok else 0.95, winkler_95=8.0,
                                     scrps=0.06 if (ok and m == "AutoETS") else 0.08))
        iv = pd.DataFrame(rows)
        return (iv, s14_63_intervals.coverage_summary(iv)), {}

    def naive2(reproduced, readings_fit=False, small_gap=True, stored=None):
        b = pd.DataFrame({"group": ["yearly", "quarterly", "monthly", "other"], "season_length": [1, 4, 12, 1],
                          "share_adjusted": [0.0, 0.73, 0.54, 0.0],
                          "smape": [17.88 if reproduced else 17.7, 10.03, 16.91 - (0.1 if small_gap else 0.4), 6.30],
                          "published": [17.88, 9.95, 16.91, 6.30]})
        b["difference"] = b.smape - b.published
        v = pd.DataFrame({"variant": ["test at 80%", "test at 90% (the definition)", "every series adjusted"],
                          "quarterly": [9.951, 10.03, 9.99], "monthly": [16.912 if readings_fit else 16.78, 16.76, 17.4]})
        a = None if stored is None else pd.DataFrame({"dataset": ["M3 monthly"], "model": ["Naive2"],
                                                      "measured": [b.smape[2] + stored]})
        return (b, v, a), {}

    def anchors(off):
        a = pd.DataFrame({"dataset": ["M1 yearly", "M3 yearly"], "model": ["AutoTheta", "Naive"],
                          "measured": [3.609, 17.88], "relative_difference": [-0.0002, off]})
        return (a,), {}

    def horizon(ok):
        rows = []
        for m, first, last in (("N-BEATS", 0.58 if ok else 0.5, 1.18 if ok else 1.3), ("AutoTheta", 0.55, 1.25)):
            end = last if ok else first * (0.9 if m == "N-BEATS" else 0.5)
            for step, x in ((1, first), (2, (first + last) / 2), (3, end)):
                rows.append(dict(dataset="M3 monthly", scope=HO, model=m, step=step, mase=x))
        return (pd.DataFrame(rows), "N-BEATS", "AutoTheta"), {}

    def yearly(ok, m1_length=15.0, m1_neural=True, se=0.05):
        val = pd.DataFrame({"dataset": "M3 yearly", "model": ["N-BEATS", "AutoTheta"],
                            "validation_mase": [3.58, 3.54] if ok else [3.5, 3.54]})
        coll = pd.DataFrame({"dataset": ["M3 yearly", "M3 monthly", "M1 yearly"],
                             "median_length": [19.0 if ok else 120.0, 115.0, m1_length], "cuts": [9934, 114726, 1500]})
        verdict = pd.DataFrame({"dataset": ["M1 yearly"], "scope": [HO], "neural_beats_best_classical": [m1_neural]})
        picked = pd.DataFrame({"dataset": ["M3 yearly", "M1 yearly"], "steps": [100, 100 if ok else 200]})
        grids = {"M3 yearly": [100, 200], "M1 yearly": [100, 200]}
        check = pd.DataFrame({"dataset": "M3 yearly", "role": ["best neural", "best classical"],
                              "mean_scaled_error": [0.22, -0.32] if ok else [-0.22, -0.32],
                              "mean_scaled_error_se": [se, se], "model": ["N-BEATS", "AutoTheta"]})
        check["p_holm"] = holm(2 * norm.sf((check.mean_scaled_error / se).abs().to_numpy()))
        return (val, coll, picked, grids, check, 0.02, verdict), {}

    def r3_member(r3):
        members = pd.DataFrame({"dataset": "M3 monthly", "member": 0, "stack": "generic", "input_multiple": 2,
                                "seed": 1000, "steps": 2000, "round": [2, 3], "validation_mase": [0.8755, r3]})
        ablation = pd.DataFrame({"dataset": "M3 monthly", "steps": 2000, "window": [1, 2, 1, 2],
                                 "ingredient": ["reference: the first member"] * 2 + ["windows drawn uniformly"] * 2,
                                 "validation_mase": [0.897, 0.854, 0.893, 0.8435]})
        recipe_ = pd.DataFrame({"dataset": ["M3 monthly", "M3 yearly"],
                                "ingredient": ["windows drawn uniformly", "short histories padded"],
                                "adopted": [True, True]})
        return (members, ablation, recipe_, 0.0104), {}

    def validation(nb):
        return (pd.DataFrame({"dataset": "M3 monthly", "model": ["N-BEATS", "Transformer"],
                              "validation_mase": [nb, 0.959]}),), {}

    def window_scales(first, last):
        return (pd.DataFrame({"scale_first": [first], "scale_last": [last]}),), {}

    def resid(under, bias):
        return (pd.DataFrame({"model": ["SeasonalNaive", "AutoETS"], "months_under": [under, 6],
                              "mean_error": [bias, 1.0]}),), {}

    def cv(ok):
        s = pd.DataFrame({"model": ["SeasonalNaive", "AutoTheta", "AutoARIMA"],
                          "mase": [1.254, 0.804, 0.812] if ok else [1.4, 0.9, 0.85]})
        bw = pd.DataFrame({"window 1": [1.3, 0.6, 0.4], "window 2": [0.4, 0.6, 0.6] if ok else [1.3, 0.6, 0.4]},
                          index=["SeasonalNaive", "AutoTheta", "AutoARIMA"])
        return (s, bw), {}

    return {
        P61 + "windows_claims": [lambda: window_scales(133.0, 375.0), lambda: window_scales(375.0, 133.0)],
        P61 + "mask_claims": [lambda: ((0.0,), {}), lambda: ((0.3,), {})],
        P61 + "residual_claims": [lambda: resid(12, -47.8), lambda: resid(3, 10.0)],
        P62 + "cv_claims": [lambda: cv(True), lambda: cv(False)],
        P63V + "comparison_claims": [lambda: comparison("true"), lambda: comparison("false"),
                                    lambda: comparison("transformer")],
        P63N + "selection_claims": [lambda: selection(True), lambda: selection(False)],
        P63N + "member_claims": [lambda: members(True), lambda: members(False)],
        P63N + "ablation_claims": [lambda: ablation(0.05), lambda: ablation(0.02), lambda: ablation(0.0, e=0.0),
                                  lambda: ablation(-0.02), lambda: ablation(-0.05),
                                  lambda: ablation(0.05, steps=1500)],
        P63V + "cost_claims": [lambda: cost(100.0), lambda: cost(314.0)],
        # Combination far cheaper per CPU-second; then N-BEATS's fastest round as good as Combination's slowest
        "seqlab.chapter.s14_63_cost.efficiency_claims": [lambda: efficiency(100.0, 5000.0),
                                                         lambda: efficiency(100.0, 110.0)],
        P63V + "bias_claims": [lambda: bias(True), lambda: bias(False),
                               lambda: bias(True, se=0.2)],  # no mean clear of twice its standard error
        P63V + "significance_claims": [lambda: significance("sig"), lambda: significance("not"),
                                      lambda: significance("wrong flag"), lambda: significance("holm")],
        P63V + "verdict_significance_claims": [lambda: verdict_sig(True), lambda: verdict_sig(False)],
        P63R + "elsewhere_claims": [lambda: elsewhere(0.80, 13.0), lambda: elsewhere(0.8355, 13.58),
                                   lambda: elsewhere(0.83, 13.12)],
        P63I + "demo_claims": [lambda: ((19, 68.7, 76.8), {}), lambda: ((30, 70.0, 60.0), {}),
                              lambda: ((10, 70.0, 60.0), {})],
        P63I + "interval_claims": [lambda: intervals(True), lambda: intervals(False)],
        P63N + "round3_claims": [lambda: round3(True), lambda: round3(False), lambda: round3(False, last=0.8352)],
        P63V + "entry_claims": [lambda: entries(True), lambda: entries(False),
                                lambda: entries(True, holm_keeps=False), lambda: entries(True, behind=True)],
        P63I + "group_claims": [lambda: groups(True), lambda: groups(False)],
        P63I + "native_claims": [lambda: native(True), lambda: native(False)],
        P63R + "anchor_claims": [lambda: anchors(-0.001), lambda: anchors(0.08)],
        P63N + "pad_claims": [lambda ok=ok: ((pd.DataFrame({"ingredient": ["short histories padded with their first value"],
                                                     "adopted": [ok]}),
                                       pd.DataFrame({"dataset": "M3 yearly", "round": [2, 3],
                                                     "last_window_mase": [2.7, 2.6]})), {})
                             for ok in (True, False)],
        P63R + "naive2_claims": [lambda: naive2(False), lambda: naive2(True), lambda: naive2(True, readings_fit=True),
                                lambda: naive2(True, small_gap=False), lambda: naive2(True, stored=0.0),
                                lambda: naive2(True, stored=1e-6)],
        P63V + "horizon_claims": [lambda: horizon(True), lambda: horizon(False)],
        P63V + "yearly_claims": [lambda: yearly(True), lambda: yearly(False),
                                lambda: ((*yearly(True)[0][:5], 0.1, yearly(True)[0][6]), {}),
                                lambda: yearly(True, m1_length=25.0), lambda: yearly(True, m1_neural=False),
                                lambda: yearly(True, se=0.2)],  # the direction within twice the s.e.
        P63N + "round3_member_claims": [lambda: r3_member(0.8976), lambda: r3_member(0.872)],
        P63N + "validation_claims": [lambda: validation(0.842), lambda: validation(0.99)],
    }


CASES.update(_s61_63_cases())
# --- end §14.61–§14.63 ---


# --- §14.45–§14.49 (recurrence page) ---
def _h4_cases():
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


CASES.update(_h4_cases())


# --- §14.56–§14.60 (the text page) ---
def _text_cases():
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


CASES.update(_text_cases())
# --- end §14.56–§14.60 ---


# --- §14.50–§14.52 (attention page) ---
def _h4_attention_cases():
    import numpy as np
    import pandas as pd
    import torch

    from seqlab.chapter.s14_50 import SCALED, UNSCALED

    spread = lambda r: pd.DataFrame(dict(d_k=[8, 512], sd_unscaled=[2.83 * r, 22.6 * r], sqrt_d_k=[2.83, 22.6]))

    def sat(ok):
        rows = []
        for d, mw, ent, g, q in ((8, 0.9, 1.9, 2.0, 4.9), (512, 1.0, 0.1, 0.5, 12.0)):
            if not ok:
                mw, ent, g, q = 1.5 - mw, 2.0 - ent, 2.5 - g, 17.0 - q
            rows.append(dict(d_k=d, scaled=UNSCALED, max_attention_weight=mw, attention_entropy=ent,
                             logit_gradient_norm=g, query_gradient_norm=q, gradient_norm=1e-6))
            rows.append(dict(d_k=d, scaled=SCALED, max_attention_weight=0.3 if ok else 0.9,
                             attention_entropy=3.0 if ok else 1.0, logit_gradient_norm=1.3, query_gradient_norm=1.3,
                             gradient_norm=1e-6))
        return pd.DataFrame(rows)

    probe_bad = sat(True).assign(gradient_norm=1.0)

    def curves(good):
        """Two widths, two seeds, the last step only: unscaled loses (good) or wins at the narrow width."""
        rows = []
        for d, u in ((8, 0.1 if good else 0.01), (128, 1.0 if good else 0.005)):
            for seed in (1, 2):
                rows += [dict(d_k=d, scaled=UNSCALED, seed=seed, step=150, loss=u),
                         dict(d_k=d, scaled=SCALED, seed=seed, step=150, loss=0.02)]
        return pd.DataFrame(rows)
    ridge = lambda lo, hi: pd.DataFrame(dict(d_k=[4, 512], divisor=[2.0, 22.6], entropy=[lo, hi]))
    W_diag = torch.tensor([[1.0, 0, 0], [0.3, 0.7, 0], [0.1, 0.2, 0.7]])
    W_off = torch.tensor([[1.0, 0, 0], [0.7, 0.3, 0], [0.1, 0.2, 0.7]])
    checks = lambda post, fused, above=0.0: pd.DataFrame([dict(max_above_diagonal=above, row_sums_min=1.0,
                                                               row_sums_max=1.0, fused_vs_explicit_max_abs=fused,
                                                               mask_after_softmax_row_sum_min=post)])
    leak = lambda a, b: pd.DataFrame(dict(mask=["causal", "none"], max_change_before=[a, b]))

    params = lambda counts: pd.DataFrame(dict(parameters=counts, formula_4_d_model_sq=[262144] * len(counts)))
    div = lambda m, x: pd.DataFrame([dict(mean_pairwise_correlation=m, max_pairwise_correlation=x)])

    def heads(good):
        summary = pd.DataFrame(dict(n_heads=[1, 2, 4], parameters=[100] * 3,
                                    mean_accuracy_both=[0.17, 1.0, 1.0] if good else [0.6, 0.7, 0.8],
                                    worst_accuracy_both=[0.15, 1.0, 1.0] if good else [0.55, 0.6, 0.7],
                                    best_accuracy_both=[0.18, 1.0, 1.0] if good else [0.65, 0.8, 0.9]))
        split = pd.DataFrame(dict(seed=[1, 2], weight_first_offset=[0.41, 0.48] if good else [0.9, 0.1],
                                  weight_second_offset=[0.47, 0.42] if good else [0.05, 0.8],
                                  accuracy_first_target=[0.2, 0.9] if good else [0.3, 0.6],
                                  accuracy_second_target=[0.9, 0.2] if good else [0.4, 0.7]))
        roles = pd.DataFrame(dict(n_heads=[2, 2, 4, 4, 4, 4], head=[0, 1, 0, 1, 2, 3],
                                  main_offset=[1, 3, 1, 3, 1, 3] if good else [1, 1, 1, 1, 1, 1],
                                  main_weight=[0.999, 0.999, 0.9, 0.9, 0.9, 0.9] if good else [0.6] * 6))
        # two seeds; when good, the second is the first again, when not, the second alone would pass
        second = roles.assign(main_offset=[1, 3, 1, 3, 1, 3], main_weight=[0.999] * 2 + [0.9] * 4)
        roles = pd.concat([roles.assign(seed=1), second.assign(seed=2)], ignore_index=True)
        return summary, split, roles

    def order(good):
        o = pd.DataFrame(dict(max_abs_difference=[6e-8, 0.2] if good else [0.1, 1e-4]))
        rot = pd.DataFrame(dict(offset=[7], max_rotation_error=[3e-6 if good else 1e-2]))
        sim = pd.DataFrame(dict(offset=[0, 1, 2], dot_max=[32.0, 28.0, 20.0],
                                dot_min=[32.0, 28.0, 12.0 if good else 1.0], spread=[1e-5, 1e-5, 1e-5 if good else 1e-2]))
        return o, rot, sim, (1e-6 if good else 1e-2)

    def ablation(good, steady=True):
        """Two seeds per setting; ``steady``: every seed's accuracy falls at each step (else one rises once)."""
        ab = pd.DataFrame(dict(positions=["learned", "learned", "none", "none"], seed=[1, 2, 1, 2], n_heads=[4] * 4,
                               accuracy_first_target=[1.0, 1.0, 0.23, 0.24], accuracy_second_target=[1.0, 1.0, 0.23, 0.22],
                               accuracy_both=[1.0, 0.99, 0.03, 0.04] if good else [0.6, 0.7, 0.55, 0.5]))
        curve = [0.35, 0.3, 0.17] if good else [0.17, 0.3, 0.35]
        bump = [0.35, 0.36, 0.17] if not steady else curve
        by = pd.DataFrame(dict(positions=["none"] * 6, seed=[1] * 3 + [2] * 3, position=[4, 5, 6] * 2,
                               accuracy=curve + bump))
        return ab, by

    return {
        "seqlab.chapter.s14_50.spread_claims": [lambda: ((spread(1.001),), {"n": 4000}),
                                                 lambda: ((spread(1.2),), {"n": 4000})],
        "seqlab.chapter.s14_50.saturation_claims": [lambda: ((sat(True),), {"T": 32}),
                                                     lambda: ((sat(False),), {"T": 32}),
                                                     lambda: ((probe_bad,), {"T": 32})],
        "seqlab.chapter.s14_50.training_claims": [lambda: ((curves(True),), {}), lambda: ((curves(False),), {})],
        "seqlab.chapter.s14_50.temperature_claims": [lambda: ((ridge(2.97, 3.15), np.array([0.02, 3.46])), {"T": 32}),
                                                      lambda: ((ridge(1.0, 3.0), np.array([1.0, 2.0])), {"T": 32})],
        "seqlab.chapter.s14_50_2.mask_claims": [lambda: ((W_diag, checks(0.78, 0.0), leak(0.0, 0.5)), {}),
                                                 lambda: ((W_diag, checks(0.78, 0.0), leak(1e-8, 0.5)), {}),
                                                 lambda: ((W_off, checks(0.999, 1e-3), leak(0.1, 0.5)), {}),
                                                 lambda: ((W_diag, checks(0.78, 0.0, above=0.1), leak(0.0, 0.5)), {})],
        "seqlab.chapter.s14_51.parameter_claims": [lambda: ((params([262144] * 3), div(0.0618, 0.202)), {}),
                                                    lambda: ((params([262144] * 3), div(0.1, 0.3)), {}),
                                                    lambda: ((params([262144, 1]), div(0.0618, 0.202)), {})],
        "seqlab.chapter.s14_51.heads_claims": [
            lambda: (heads(True), {"offsets": (1, 3)}), lambda: (heads(False), {"offsets": (1, 3)}),
            lambda: ((heads(True)[0].assign(parameters=[100, 200, 300]), *heads(True)[1:]), {"offsets": (1, 3)})],
        "seqlab.chapter.s14_52.order_claims": [lambda: (order(True), {}), lambda: (order(False), {})],
        "seqlab.chapter.s14_52.ablation_claims": [lambda: (ablation(True), {}), lambda: (ablation(False), {}),
                                                   lambda: (ablation(True, steady=False), {})],
    }


CASES.update(_h4_attention_cases())


# --- §14.64 (the summary) ---
def _s64_cases() -> dict:
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


CASES.update(_s64_cases())
# --- end §14.64 ---


# --- §14.53–§14.55 (the Transformer page) ---
def _h1_frames():
    import numpy as np
    import pandas as pd

    return np, pd


def _s55_cross(fwd, trn, d=(32, 64), band=None):
    """``band``: (forward lo, forward hi, training lo, training hi), the rounds' band of each width's crossover."""
    _, pd = _h1_frames()
    out = pd.DataFrame(dict(d=list(d), measured_T_star=[float(v) for v in fwd],
                            training_T_star=[float(v) for v in trn], flop_T_star=[2.0 * v for v in d]))
    if band is not None:
        for col, vals in zip(("measured_T_lo", "measured_T_hi", "training_T_lo", "training_T_hi"), band):
            out[col] = [float(v) for v in vals]
    return out


CASES["seqlab.chapter.s14_55_claims.crossover_claims"] = [
    lambda: ((_s55_cross([40, 90], [30, 100]),), {}),           # every crossover before 2d
    lambda: ((_s55_cross([80, 200], [70, float("nan")]),), {}),  # every one after (one never)
    lambda: ((_s55_cross([40, 200], [30, 300]),), {}),          # mixed
    # the rounds' bands: one width's forward band spans 2d (not placed), the rest before it
    lambda: ((_s55_cross([40, 90], [30, 100], band=([35, 80], [45, 140], [25, 90], [35, 110])), 9), {}),
    # every band wholly after 2d, one with a round that never crossed
    lambda: ((_s55_cross([80, 200], [70, 300], band=([75, 180], [90, float("nan")], [68, 260], [72, 320])), 9), {}),
]


def _s55_equal(ratios):
    _, pd = _h1_frames()
    return pd.DataFrame(dict(T=[64, 128], d=[32, 64], attention_gflops=[10.0 / r for r in ratios],
                             lstm_gflops=[10.0, 10.0], ratio_attention_to_lstm=list(ratios)))


CASES["seqlab.chapter.s14_55_claims.equal_work_claims"] = [
    lambda: ((_s55_equal([1.5, 2.0]),), {}),
    lambda: ((_s55_equal([0.5, 0.9]),), {}),
    lambda: ((_s55_equal([1.5, 0.9]),), {}),
    # the medians say slower at both widths, but one width's rounds reach below one: not settled there
    lambda: ((_s55_equal([1.5, 1.2]).assign(ratio_attention_to_lstm_lo=[1.4, 0.97],
                                            ratio_attention_to_lstm_hi=[1.6, 1.3]),), {}),
]


def _s55_parts(gain=3.0, rnn_us=5.0, core_rel=(0.3, 0.5), ns=None):
    _, pd = _h1_frames()
    n = len(core_rel)
    d = [32 * 2 ** i for i in range(n)]
    return pd.DataFrame(dict(T=256, d=d, d_k=[v // 4 for v in d], projections_gflops=[20.0] * n,
                             core_gflops=[20.0 * r for r in core_rel], lstm_gflops=[10.0 * gain] * n,
                             lstm_generic_gflops=[10.0] * n, rnn_gflops=[3.0] * n, lstm_us_per_step=[4.0] * n,
                             lstm_generic_us_per_step=[12.0] * n, rnn_us_per_step=[rnn_us] * n,
                             core_ns_per_score=ns if ns is not None else [2.0 + 0.1 * v // 4 for v in d]))


CASES["seqlab.chapter.s14_55_claims.parts_claims"] = [
    lambda: ((_s55_parts(),), {}),                                      # fused gain, step overhead, slow core
    lambda: ((_s55_parts(gain=1.2, rnn_us=2.0, core_rel=(0.9, 1.1)),), {}),  # core level with projections
    lambda: ((_s55_parts(core_rel=(1.5, 2.0)),), {}),                   # core faster
    lambda: ((_s55_parts(core_rel=(0.5, 1.0)),), {}),                   # mixed
    # one timing strays up to 3-fold: a 2.5-fold gain and a 1.5-fold longer RNN step are not carried
    lambda: ((_s55_parts(gain=2.5, rnn_us=6.0), 3.0), {}),
]

CASES["seqlab.chapter.s14_55_claims.score_claims"] = [
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[3 + 0.1 * k for k in (8, 16, 32, 64)]),), {}),    # line, a > 0
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[-0.5 + 0.2 * k for k in (8, 16, 32, 64)]),), {}),  # a < 0
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[2.0, 2.0, 2.0, 10.0]),), {}),                     # no line
    # one timing strays up to 3-fold: neither the sublinear growth nor the miss of the line is carried
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[3 + 0.1 * k for k in (8, 16, 32, 64)]), 3.0), {}),
    lambda: ((_s55_parts(core_rel=(1,) * 4, ns=[2.0, 2.0, 2.0, 3.0]), 3.0), {}),
]


def _s55_grid(ratios, T=(16, 64, 256), d=32):
    _, pd = _h1_frames()
    flop = [(8 * t * d * d + 4 * t * t * d) / (16 * t * d * d) for t in T]
    return pd.DataFrame(dict(T=list(T), d=d, ratio_attention_to_lstm=list(ratios), flop_ratio_attention_to_lstm=flop))


CASES["seqlab.chapter.s14_55_claims.growth_claims"] = [
    lambda: ((_s55_grid([0.5, 1.0, 20.0]),), {}),
    lambda: ((_s55_grid([0.5, 0.6, 0.9]),), {}),
    # the medians grow faster than the FLOP ratio, the least growth the rounds allow does not
    lambda: ((_s55_grid([0.5, 1.0, 3.5]).assign(ratio_attention_to_lstm_lo=[0.45, 0.9, 2.0],
                                                ratio_attention_to_lstm_hi=[0.6, 1.1, 4.0]),), {}),
]


def _s55_verdict(fwd, trn, core_rel, ratios, spread=1.0):
    _, pd = _h1_frames()
    grid = pd.concat([_s55_grid(ratios, d=32), _s55_grid(ratios, d=64)], ignore_index=True)
    return (_s55_cross(fwd, trn), _s55_parts(core_rel=core_rel), grid, spread), {}


CASES["seqlab.chapter.s14_55_claims.verdict_claims"] = [
    lambda: _s55_verdict([40, 90], [30, 100], (0.3, 0.5), [0.5, 1.5, 3.0]),             # early, slow core, growing
    lambda: _s55_verdict([40, 90], [30, 100], (0.9, 1.0), [0.5, 3.0, 1.5]),             # early, core keeps pace
    lambda: _s55_verdict([80, float("nan")], [70, 300], (0.3, 0.5), [0.5, 0.8, 1.5]),  # late (one never)
    lambda: _s55_verdict([40, 200], [30, 300], (0.3, 0.5), [0.5, 1.5, 3.0]),            # mixed
    # early everywhere, but one timing strays 2.5-fold: the core's gap is carried at d = 32 only
    lambda: _s55_verdict([40, 90], [30, 100], (0.3, 0.5), [0.5, 1.5, 3.0], spread=2.5),
]


def _s55_threads(gauge, attn, lstm, share=0.01, rounds=None):
    """One timing per point, or ``rounds`` rounds of them (a ``round`` column)."""
    _, pd = _h1_frames()
    rows = [("linear map (gauge)", "forward", gauge), ("self-attention", "forward", attn),
            ("self-attention", "training", attn), ("LSTM", "forward", lstm), ("LSTM", "training", lstm)]
    one = pd.DataFrame([dict(layer=la, mode=m, d=64, T=256, one_thread_ms=s, two_threads_ms=1.0, speedup=s,
                             others_share=share) for la, m, s in rows])
    return one if rounds is None else pd.concat([one.assign(round=r) for r in range(rounds)], ignore_index=True)


CASES["seqlab.chapter.s14_55_claims.thread_claims"] = [
    lambda: ((_s55_threads(1.9, 1.6, 1.2),), {}),
    lambda: ((_s55_threads(1.0, 0.95, 1.0, share=0.3),), {}),
    lambda: ((_s55_threads(0.5, 0.95, 1.0, share=0.3),), {}),  # two threads slower than one
    lambda: ((_s55_threads(1.9, 1.6, 1.2, rounds=3),), {}),     # every point of three rounds agrees
    lambda: ((_s55_threads(1.9, 1.0, 0.9, rounds=3),), {}),     # three rounds, the LSTM slower with two threads
]


def _s55_memory(explicit, fused):
    _, pd = _h1_frames()
    rows = []
    for i, T in enumerate((512, 2048)):
        w = 4 * T * T * 4 / 2 ** 20
        rows += [dict(T=T, d=64, path="explicit", peak_mb=explicit[i], weights_matrix_mb=w),
                 dict(T=T, d=64, path="fused", peak_mb=fused[i], weights_matrix_mb=w),
                 dict(T=T, d=64, path="LSTM", peak_mb=0.1 * (i + 1), weights_matrix_mb=0.0)]
    return pd.DataFrame(rows)


CASES["seqlab.chapter.s14_55_claims.memory_claims"] = [
    lambda: ((_s55_memory([4.5, 70.0], [0.5, 2.0]),), {}),    # quadratic vs linear
    lambda: ((_s55_memory([4.5, 9.0], [0.5, 8.0]),), {}),     # neither
    lambda: ((_s55_memory([4.5, 70.0], [0.5, 100.0]),), {}),  # fused above the weights: raises
]


def _s55_here(here_ratios, ref_ratios):
    _, pd = _h1_frames()
    T = [32, 64, 128, 256, 512]
    here = pd.DataFrame(dict(T=T, d=64, ratio_attention_to_lstm=here_ratios))
    ref = pd.Series(ref_ratios, dtype=float)
    grid = pd.DataFrame(dict(T=T, d=64, ratio_attention_to_lstm=ref, ratio_attention_to_lstm_lo=ref / 1.5,
                             ratio_attention_to_lstm_hi=ref * 1.5))  # the rounds' band around the reference
    return (here, grid), {}


CASES["seqlab.chapter.s14_55_claims.here_claims"] = [
    lambda: _s55_here([0.2, 0.5, 1.5, 3, 6], [0.3, 0.6, 1.2, 2, 4]),     # here inside the reference's band
    lambda: _s55_here([0.2, 0.3, 0.4, 3, 6], [0.3, 0.6, 1.2, 2, 4]),     # here past the band
    lambda: _s55_here([0.2, 0.5, 0.8, 0.9, 0.95], [0.3, 0.6, 1.2, 2, 4]),  # here: never within the lengths
]


def _s53_summary(post0, postw, pre0, post0_lo, acc0=0.13, n=3):
    _, pd = _h1_frames()
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
    _, pd = _h1_frames()
    return pd.DataFrame(dict(variant=["pre-LN", "post-LN"], last_over_first=[pre, post]))


CASES["seqlab.chapter.s14_53.spread_claims"] = [
    lambda: ((_s53_spread(1.25, 0.8),), {}),
    lambda: ((_s53_spread(0.7, 0.8),), {}),
]


def _s53_steps(worst):
    _, pd = _h1_frames()
    return pd.DataFrame(dict(step=["LN(x)", "y"], shape=["2 x 10 x 64"] * 2, max_abs_difference=[1e-8, worst]))


CASES["seqlab.chapter.s14_53.walkthrough_claims"] = [
    lambda: ((_s53_steps(4e-7),), {}),
    lambda: ((_s53_steps(1e-3),), {}),
]


def _s53_block(std_min, std_max, counted=100, diff=1e-7):
    _, pd = _h1_frames()
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


def _s54_masks(leak=0.0, padded=0.0):
    _, pd = _h1_frames()
    causal = pd.DataFrame([dict(future_leak_max_abs=leak, causal_weights_above_diagonal=0.0)])
    checks = pd.DataFrame(dict(check=list("abcd"), max_abs_logit_change=[padded, 0.3, 0.0, 1.4]))
    return (causal, checks), {}


CASES["seqlab.chapter.s14_54.mask_claims"] = [
    lambda: _s54_masks(),
    lambda: _s54_masks(leak=1e-7),
    lambda: _s54_masks(padded=1e-3),
]


def _s54_comparison(tf=1.0, gru=0.17, train_tf=0.99, heldout_tf=0.87, free=0.22):
    _, pd = _h1_frames()
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
# --- end §14.53–§14.55 ---


def _s54_share(copy, rev):
    import pandas as pd

    return (pd.DataFrame(dict(task=["copy", "reverse"], aligned_weight=[copy, rev], uniform=[1 / 16, 1 / 16])),), {}


CASES["seqlab.chapter.s14_54.alignment_claims"] = [lambda: _s54_share(0.9, 0.8), lambda: _s54_share(0.9, 0.3)]


def _s54_rerun(stored, now):
    import pandas as pd

    return (pd.DataFrame(dict(run=["chapter's run", "trained now"], final_loss=[stored, now])),), {}


def _s54_recap(within, exact, late):
    """§14.49's alignment controls as §14.54 recalls them (trained, untrained, uniform)."""
    import numpy as np
    import pandas as pd

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
# --- end §14.54 alignment ---


def _s57_cpu(best, whole, half=(1.465, 1.48, 1.478)):
    """Runs of three seeds with best losses ``half`` by 300 s and ``best`` by 600 s, ending at ``whole``."""
    import pandas as pd

    rows = []
    for k, (b, w, m) in enumerate(zip(best, whole, half)):
        rows.append(dict(seed=1337 + k, best_60s=1.70, best_120s=1.55, best_300s=m, best_600s=b, whole_split_loss=w))
    return (pd.DataFrame(rows),), {}


CASES["seqlab.chapter.s14_57_ten_minutes.long_facts"] = [
    lambda: _s57_cpu([1.45, 1.455, 1.452], [1.46, 1.475, 1.465]),
    lambda: _s57_cpu([1.45, 1.48, 1.452], [1.46, 1.485, 1.465]),  # a seed above the GPU figure
    lambda: _s57_cpu([1.45, 1.455, 1.452], [1.46, 1.475, 1.465], (1.48, 1.49, 1.475)),  # none there by 300 s
    lambda: _s57_cpu([1.45, 1.455, 1.452], [1.44, 1.445, 1.465])]  # a whole-split loss below its estimate
# --- end §14.57 ten minutes on a CPU ---


# --- §14.63 beyond its own hold-outs (s14_63_fresh) ---
def _s63_fresh_cases():
    import pandas as pd

    P = "seqlab.chapter.s14_63_fresh."

    def targets(*met):
        return (pd.DataFrame([dict(target=f"t{k}", goal=1.0, measured=0.9 if m else 1.1, met=m)
                              for k, m in enumerate(met)]),), {}

    def averaging(nb_alone, others=(0.86, 0.87)):
        """Combination at 0.84; N-BEATS alone at ``nb_alone``, with Combination at 0.814; GRU, Transformer alone
        0.9 and with Combination at ``others``."""
        rows = [dict(model="N-BEATS", alone=nb_alone, with_combination=0.814),
                dict(model="GRU", alone=0.9, with_combination=others[0]),
                dict(model="Transformer", alone=0.9, with_combination=others[1])]
        t = pd.DataFrame(rows).assign(combination=0.84)
        return (t.assign(lead_alone=0.84 - t.alone, lead_with=0.84 - t.with_combination),), {}

    def seeds(nb, hybrid_verdict, alone_difference=-0.0066, hybrid=(0.814, 0.816, 0.815)):
        s = pd.DataFrame({"seeds": ["a", "b", "c"], "N-BEATS": nb, "N-BEATS + Combination": list(hybrid)})
        v = pd.DataFrame([dict(model="N-BEATS", verdict="not told apart", ci_low=-0.02, ci_high=0.01,
                               mean_difference_lowest=alone_difference, p_holm_highest=0.4),
                          dict(model="N-BEATS + Combination", verdict=hybrid_verdict, ci_low=-0.034, ci_high=-0.02,
                               mean_difference_lowest=-0.03, p_holm_highest=0.001)])
        return (s, v), {}

    def fresh(verdicts, missing=False, apart=(False, True, True, True)):
        sets = ["M1 quarterly", "Tourism quarterly"] + ([] if missing else ["M1 monthly", "Tourism monthly"])
        rows = [dict(dataset=d, model=m, against="Combination", verdict=verdicts[k % len(verdicts)])
                for k, d in enumerate(sets) for m in ("N-BEATS", "N-BEATS + Combination")]
        ranks = pd.DataFrame(dict(dataset="all sets", model=["Combination", "N-BEATS + Combination", "best classical",
                                                             "N-BEATS"], best=[True, False, False, False],
                                  differs_from_best=list(apart)))
        return (pd.DataFrame(rows), ranks), {}

    def fallback(fell, borrowed):
        groups = pd.DataFrame([dict(dataset="M3 yearly", kind="conformal by length group", by="length", group=g,
                                    calibrated_on_80="own group",
                                    calibrated_on_95="every series" if fell and g == "short" else "own group")
                               for g in ("short", "medium", "long")])
        iv = pd.DataFrame([dict(dataset="M3 yearly", kind="conformal", scope="official hold-out", model=m,
                                borrowed_series=borrowed, series=645) for m in ("Naive", "N-BEATS")])
        return (groups, iv), {}

    def steps(native):
        by_step = pd.DataFrame({"step": [1, 2, 3], "N-BEATS conformal": [0.79, 0.81, 0.80],
                                "AutoETS conformal": [0.80, 0.78, 0.82], "AutoETS native": list(native)})
        return (by_step,), {}

    def again(lo, hi, stored=True):
        summary = pd.DataFrame([dict(dataset="Tourism quarterly", scope="official hold-out", model="N-BEATS",
                                     mase=1.4856)])
        fm = pd.DataFrame([dict(dataset="Tourism quarterly", model="N-BEATS", lowest=lo, highest=hi)] if stored
                          else [], columns=["dataset", "model", "lowest", "highest"])
        return (fm, summary), {}

    return {
        P + "again_claims": [lambda: again(1.48, 1.49), lambda: again(1.49, 1.50), lambda: again(0, 0, False)],
        "seqlab.chapter.s14_63_intervals.step_claims": [lambda: steps((0.78, 0.72, 0.65)),
                                                         lambda: steps((0.80, 0.805, 0.795))],
        "seqlab.chapter.s14_63_intervals.fallback_claims": [lambda: fallback(True, 313), lambda: fallback(False, 0)],
        P + "target_claims": [lambda: targets(True, True), lambda: targets(False, True, False)],
        P + "averaging_claims": [lambda: averaging(0.835), lambda: averaging(0.82, others=(0.86, 0.85)),
                                 lambda: averaging(0.835, others=(0.83, 0.835))],
        P + "seed_claims": [lambda: seeds([0.835, 0.85, 0.84], "ahead"),
                            lambda: seeds([0.835, 0.837, 0.836], "not told apart", hybrid=(0.81, 0.82, 0.815))],
        P + "fresh_claims": [lambda: fresh(["ahead"]), lambda: fresh(["ahead", "behind", "not told apart"]),
                             lambda: fresh(["not told apart"], missing=True, apart=(False, False, False, False)),
                             lambda: ((pd.DataFrame(), pd.DataFrame()), {})],
    }


CASES.update(_s63_fresh_cases())
# --- end §14.63 beyond its own hold-outs ---
