"""Inputs for §14.63's reference claims (s14_63_reference): results elsewhere, anchors and Naive2."""
from __future__ import annotations


def _cases():
    import pandas as pd

    P63R = "seqlab.chapter.s14_63_reference."

    def elsewhere(mase, smape):  # reported: MASE 0.8286 / 0.8321, sMAPE 13.11 / 13.24
        return (pd.DataFrame({"metric": ["mase", "mase", "smape", "smape"], "model": ["A", "B", "C", "D"],
                              "reported": [0.8286, 0.8321, 13.11, 13.24],
                              "seqlab_nbeats": [mase, mase, smape, smape]}),), {}

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

    return {
        P63R + "elsewhere_claims": [lambda: elsewhere(0.80, 13.0), lambda: elsewhere(0.8355, 13.58),
                                   lambda: elsewhere(0.83, 13.12)],
        P63R + "anchor_claims": [lambda: anchors(-0.001), lambda: anchors(0.08)],
        P63R + "naive2_claims": [lambda: naive2(False), lambda: naive2(True), lambda: naive2(True, readings_fit=True),
                                lambda: naive2(True, small_gap=False), lambda: naive2(True, stored=0.0),
                                lambda: naive2(True, stored=1e-6)],
    }


CASES = _cases()
