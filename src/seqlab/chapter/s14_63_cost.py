"""§14.63's accuracy per CPU-second: what each entry gains over Naive2 on M3 monthly's hold-out, per CPU-second of
fitting (:mod:`seqlab.experiments.forecast_cost`, measured in rounds so each cost has its range), and the
benchmark's run of seqlab's default N-BEATS beside Combination and the peers
(:mod:`seqlab.experiments.forecast_cost_run`)."""
from __future__ import annotations

import pandas as pd

from ..claims import claim_source, verdict
from ..experiments.forecast_cost import DATASET, cost_summary, forecast_cost
from ..forecast.combination import COMBINATIONS

__all__ = ["efficiency", "efficiency_claims", "default_cost_claims", "DATASET", "DEFAULT", "HYBRID", "PEERS"]

#: the stored run's entries
DEFAULT, HYBRID = "N-BEATS (seqlab default)", "N-BEATS (seqlab default) + Combination"
PEERS = ("neuralforecast NBEATS", "neuralforecast NHITS")


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
    return [verdict("s63_per_cpu", cheaper, **facts)]


@claim_source
def default_cost_claims(rows: pd.DataFrame) -> list:
    """The default N-BEATS in the benchmark's run: it gains more over Naive2 per CPU-second than Combination even
    at its worst seed's MASE; every seed of it beats every seed of both neuralforecast peers, at less CPU."""
    e = rows.set_index("entry")
    d, c, n2 = e.loc[DEFAULT], e.loc["Combination"], e.loc["Naive2"]
    peers = e.loc[list(PEERS)]
    worst_gain = 1000 * (n2.mase - d.mase_high) / d.cpu_s
    comb_gain = 1000 * (n2.mase - c.mase) / c.cpu_s
    facts = dict(dataset=d.dataset, nb_mase=d.mase, nb_cpu=d.cpu_s, nb_gain=d.gain_per_kcpu_s, nb_worst_gain=worst_gain,
                 comb_mase=c.mase, comb_cpu=c.cpu_s, comb_gain=comb_gain, nb_worst=d.mase_high,
                 peer_best=peers.mase_low.min(), peer_cpu=peers.cpu_s.min())
    return [verdict("s63_default_per_cpu", bool(worst_gain > comb_gain), **facts),
            verdict("s63_default_vs_peers", bool(d.mase_high < peers.mase_low.min() and d.cpu_s < peers.cpu_s.min()),
                    **facts)]
