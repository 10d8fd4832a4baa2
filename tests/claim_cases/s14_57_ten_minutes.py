"""Inputs for §14.57's ten minutes on a CPU (s14_57_ten_minutes.long_facts)."""
from __future__ import annotations

CASES: dict = {}


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


def _s57_five(whole):
    import pandas as pd

    return (pd.DataFrame(dict(seed=[1337, 1338, 1339], best_60s=1.7, best_120s=1.55, best_300s=1.46,
                              whole_split_loss=whole)),), {}


CASES["seqlab.chapter.s14_57_ten_minutes.five_minute_facts"] = [
    lambda: _s57_five([1.4598, 1.4625, 1.4695]),
    lambda: _s57_five([1.4598, 1.4625, 1.4705])]  # one seed above 1.47
