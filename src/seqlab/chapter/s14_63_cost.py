"""§14.63's accuracy per CPU-second: what each entry gains over Naive2 on M3 monthly's hold-out, per CPU-second of
fitting (:mod:`seqlab.experiments.forecast_cost`, measured in rounds so each cost has its range)."""
from __future__ import annotations

import pandas as pd

from ..claims import claim_source, verdict
from ..experiments.forecast_cost import DATASET, cost_summary, forecast_cost
from ..forecast.combination import COMBINATIONS

__all__ = ["efficiency", "efficiency_claims", "DATASET"]


def efficiency(summary: pd.DataFrame, cost: dict | None = None) -> pd.DataFrame:
    """Per entry: MASE on the official hold-out, its gain over Naive2, CPU seconds to fit and forecast (median
    over the rounds, lowest, highest) and the gain per 1,000 CPU seconds at the median cost (NaN for an entry
    no better than Naive2).

    A combination costs the sum of its members. ``cost``: :func:`~seqlab.experiments.forecast_cost.forecast_cost`
    (loaded when not given).
    """
    cost = forecast_cost() if cost is None else cost
    g = summary[(summary.dataset == DATASET) & (summary.scope == "official hold-out")].set_index("model").mase
    out = cost_summary(cost["entries"], COMBINATIONS)
    out = out[out.entry.isin(g.index)].copy()
    out["mase"] = out.entry.map(g)
    out["gain"] = g["Naive2"] - out.mase
    # an entry no better than Naive2 buys nothing: its gain per second is left empty, not negative
    out["gain_per_kcpu"] = (1000 * out.gain / out.cpu_seconds).where(out.gain > 0)
    return out.sort_values("mase").reset_index(drop=True)


@claim_source
def efficiency_claims(eff: pd.DataFrame) -> list:
    """Combination against N-BEATS per CPU-second, and what the hybrid's extra accuracy costs.

    "Cheaper in every round": Combination's gain per CPU-second at its slowest round beats
    N-BEATS's at its fastest.
    """
    e = eff.set_index("entry")
    c, n, hyb = e.loc["Combination"], e.loc["N-BEATS"], e.loc["N-BEATS + Combination"]
    worst_c, best_n = c.gain / c.cpu_hi, n.gain / n.cpu_lo
    cheaper = bool(n.gain <= 0 or worst_c > best_n)
    extra = (c.mase - hyb.mase) / (hyb.cpu_seconds - c.cpu_seconds) * 1000
    facts = dict(dataset=DATASET, comb=1000 * c.gain / c.cpu_seconds, comb_lo=1000 * c.gain / c.cpu_hi,
                 comb_hi=1000 * c.gain / c.cpu_lo, nbeats=1000 * n.gain / n.cpu_seconds,
                 nbeats_lo=1000 * n.gain / n.cpu_hi, nbeats_hi=1000 * n.gain / n.cpu_lo, comb_cpu=c.cpu_seconds,
                 nbeats_cpu=n.cpu_seconds,
                 ratio=(c.gain / c.cpu_seconds) / (n.gain / n.cpu_seconds) if n.gain > 0 else float("inf"),
                 hybrid_cpu=hyb.cpu_seconds, hybrid_extra=c.mase - hyb.mase, hybrid_extra_per_kcpu=extra,
                 rounds=int(e.rounds.min()))
    # the full sentence stands in the record, the brief one in §14.63's verdict
    return [verdict("s63_per_cpu", cheaper, **facts), verdict("s63_per_cpu_brief", cheaper, **facts)]
