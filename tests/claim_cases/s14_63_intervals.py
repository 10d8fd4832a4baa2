"""Inputs for §14.63's hold-out interval claims (s14_63_intervals): demo, coverage, length groups, native."""
from __future__ import annotations


def _cases():
    import pandas as pd

    from seqlab.chapter import s14_63_intervals

    P63I = "seqlab.chapter.s14_63_intervals."

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

    return {
        P63I + "demo_claims": [lambda: ((19, 68.7, 76.8), {}), lambda: ((30, 70.0, 60.0), {}),
                              lambda: ((10, 70.0, 60.0), {})],
        P63I + "interval_claims": [lambda: intervals(True), lambda: intervals(False)],
        P63I + "group_claims": [lambda: groups(True), lambda: groups(False)],
        P63I + "native_claims": [lambda: native(True), lambda: native(False)],
    }


CASES = _cases()
