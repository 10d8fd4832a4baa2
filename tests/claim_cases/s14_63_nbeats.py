"""Inputs for §14.63's N-BEATS claims (s14_63_nbeats): selection, members, ablation, rounds and padding."""
from __future__ import annotations

from .s14_63_verdicts import summary


def _cases():
    import pandas as pd

    from seqlab.chapter import s14_63, s14_63_nbeats

    P63N = "seqlab.chapter.s14_63_nbeats."

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

    def round3(ok, last=None):
        recipe = pd.DataFrame({"dataset": "M3 monthly", "ingredient": ["a", "b", "c"], "change": ["x=1", "y=2", "z"],
                               "validation_mase": [0.86, 0.88, 0.85], "reference_mase": 0.87,
                               "considered": [True, True, False], "adopted": [ok, False, False]})
        last = (0.83 if ok else 0.84) if last is None else last
        rounds = pd.DataFrame({"dataset": "M3 monthly", "round": [1, 2, 3], "validation_mase": [0.85, 0.84, 0.83],
                               "last_window_mase": [0.846, 0.835, last]})
        return (rounds, recipe, 0.002), {}

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

    return {
        P63N + "selection_claims": [lambda: selection(True), lambda: selection(False)],
        P63N + "member_claims": [lambda: members(True), lambda: members(False)],
        P63N + "ablation_claims": [lambda: ablation(0.05), lambda: ablation(0.02), lambda: ablation(0.0, e=0.0),
                                  lambda: ablation(-0.02), lambda: ablation(-0.05),
                                  lambda: ablation(0.05, steps=1500)],
        P63N + "round3_claims": [lambda: round3(True), lambda: round3(False), lambda: round3(False, last=0.8352)],
        P63N + "pad_claims": [lambda ok=ok: ((pd.DataFrame({"ingredient": ["short histories padded with their first value"],
                                                     "adopted": [ok]}),
                                       pd.DataFrame({"dataset": "M3 yearly", "round": [2, 3],
                                                     "last_window_mase": [2.7, 2.6]})), {})
                             for ok in (True, False)],
        P63N + "round3_member_claims": [lambda: r3_member(0.8976), lambda: r3_member(0.872)],
        P63N + "validation_claims": [lambda: validation(0.842), lambda: validation(0.99)],
    }


CASES = _cases()
