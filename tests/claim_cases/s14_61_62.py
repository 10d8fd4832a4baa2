"""Inputs for §14.61's window, mask and residual claims (s14_61) and §14.62's cross-validation claims (s14_62)."""
from __future__ import annotations


def _cases():
    import pandas as pd

    P61, P62 = "seqlab.chapter.s14_61.", "seqlab.chapter.s14_62."

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
    }


CASES = _cases()
