"""Inputs for §14.63's claims beyond its own hold-outs (s14_63_fresh, s14_63_intervals' steps and fallback)."""
from __future__ import annotations


def _cases():
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


CASES = _cases()
