"""Inputs for §14.63's verdict claims (s14_63_verdicts) and its cost per CPU-second (s14_63_cost)."""
from __future__ import annotations

import pandas as pd

from seqlab.experiments.forecast import CLASSICAL_MODELS

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


def _cases():
    from scipy.stats import norm

    from seqlab.analysis.multiple import holm
    from seqlab.chapter import s14_63, s14_63_verdicts

    P63V = "seqlab.chapter.s14_63_verdicts."

    def comparison(kind):
        if kind == "true":
            s = summary({"M3 yearly": 1.04})
        elif kind == "false":
            s = summary({("M3 monthly", HO): 1.02, ("M3 monthly", ALL): 0.97, "Tourism quarterly": 1.02,
                         "M1 yearly": 1.02, "M3 yearly": 0.96, "AirPassengers": 0.9}, sn={"AirPassengers": 0.8})
        else:  # the Transformer ahead of every classical model on M3 monthly
            s = summary({"M3 yearly": 1.04}, neural={("M3 monthly", HO): {"Transformer": 0.97}})
        return (s14_63.verdict(s), s), {}

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

    def verdict_sig(all_significant):
        """Set B's best neural model (GRU) is settled only where all_significant; A's N-BEATS always is."""
        sets = ("A", "B")
        v = pd.DataFrame({"dataset": sets, "scope": "official hold-out", "best_neural": ["N-BEATS", "GRU"]})
        family = pd.DataFrame({"dataset": ["A", "A", "B"], "model": ["N-BEATS", "GRU", "GRU"],
                               "mean_difference": [-0.02, -0.01, 0.03], "ci_low": [-0.03, -0.02, 0.01],
                               "ci_high": [-0.01, 0.005, 0.05], "p_holm": [0.01, 0.4, 0.02 if all_significant else 0.2],
                               "significant": [True, False, all_significant]})
        return (family, v), {"sets": sets}

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

    def side_by_side(nb_cpu, nb_worst):  # the benchmark's rows: Naive2 1.04, Combination 0.842 in 86 CPU-s
        rows = [("Combination", 0.842, 0.842, 0.842, 86.0), ("Naive2", 1.04, 1.04, 1.04, 0.3),
                ("N-BEATS (seqlab default)", 0.844, 0.8415, nb_worst, nb_cpu),
                ("neuralforecast NBEATS", 0.848, 0.8455, 0.850, 167.0),
                ("neuralforecast NHITS", 0.866, 0.860, 0.873, 168.0)]
        df = pd.DataFrame(rows, columns=["entry", "mase", "mase_low", "mase_high", "cpu_s"]).assign(dataset="M3 monthly")
        df["gain_per_kcpu_s"] = 1000 * (1.04 - df.mase) / df.cpu_s
        return (df,), {}

    return {
        P63V + "comparison_claims": [lambda: comparison("true"), lambda: comparison("false"),
                                    lambda: comparison("transformer")],
        P63V + "cost_claims": [lambda: cost(100.0), lambda: cost(314.0)],
        # Combination far cheaper per CPU-second; then N-BEATS's fastest round as good as Combination's slowest
        "seqlab.chapter.s14_63_cost.efficiency_claims": [lambda: efficiency(100.0, 5000.0),
                                                         lambda: efficiency(100.0, 110.0)],
        # seqlab's default cheaper per gain and ahead of both peers; then dearer than Combination and behind NBEATS
        "seqlab.chapter.s14_63_cost.default_cost_claims": [lambda: side_by_side(60.0, 0.845),
                                                           lambda: side_by_side(200.0, 0.850)],
        P63V + "bias_claims": [lambda: bias(True), lambda: bias(False),
                               lambda: bias(True, se=0.2)],  # no mean clear of twice its standard error
        P63V + "significance_claims": [lambda: significance("sig"), lambda: significance("not"),
                                      lambda: significance("wrong flag"), lambda: significance("holm")],
        P63V + "verdict_significance_claims": [lambda: verdict_sig(True), lambda: verdict_sig(False)],
        P63V + "entry_claims": [lambda: entries(True), lambda: entries(False),
                                lambda: entries(True, holm_keeps=False), lambda: entries(True, behind=True)],
        P63V + "horizon_claims": [lambda: horizon(True), lambda: horizon(False)],
        P63V + "yearly_claims": [lambda: yearly(True), lambda: yearly(False),
                                lambda: ((*yearly(True)[0][:5], 0.1, yearly(True)[0][6]), {}),
                                lambda: yearly(True, m1_length=25.0), lambda: yearly(True, m1_neural=False),
                                lambda: yearly(True, se=0.2)],  # the direction within twice the s.e.
    }


CASES = _cases()
