"""§14.63's accuracy per CPU-second: the stored cost measurement and the arithmetic on it."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from seqlab.experiments.forecast_cost import LONG, ROUNDS, SHORT, cost_summary, forecast_cost, nbeats_cost


def test_nbeats_cost_multiplies_out_each_members_cost_per_step():
    """A member that takes 2 s for SHORT steps and 5 s for LONG has a step of 3 / (LONG - SHORT) s."""
    members = pd.DataFrame({"round": [0, 0], "member": [0, 1], "short_seconds": [2.0, 1.0],
                            "long_seconds": [5.0, 2.0]})
    step0 = 3.0 / (LONG - SHORT)
    fixed0 = 2.0 - SHORT * step0
    step1 = 1.0 / (LONG - SHORT)
    fixed1 = 1.0 - SHORT * step1
    got = nbeats_cost(members, steps=1000)
    assert got.entry.tolist() == ["N-BEATS"]
    assert got.cpu_seconds.iloc[0] == pytest.approx(fixed0 + 1000 * step0 + fixed1 + 1000 * step1)


def test_cost_summary_sums_a_combinations_members_round_by_round():
    entries = pd.DataFrame({"round": [0, 0, 1, 1], "entry": ["A", "B"] * 2, "cpu_seconds": [1.0, 10.0, 3.0, 20.0]})
    s = cost_summary(entries, {"A + B": ("A", "B"), "A + C": ("A", "C")}).set_index("entry")
    assert s.loc["A + B", "cpu_seconds"] == 17.0 and (s.loc["A + B", "cpu_lo"], s.loc["A + B", "cpu_hi"]) == (11, 23)
    assert "A + C" not in s.index  # a member never timed: no cost is made up for it


def test_stored_measurement_covers_every_entry_in_every_round():
    from seqlab.experiments.forecast.settings import CLASSICAL_MODELS

    cost = forecast_cost()
    e = cost["entries"]
    expected = {*CLASSICAL_MODELS, "GRU", "Transformer", "N-BEATS"}
    assert set(e.entry) == expected
    assert (e.groupby("entry")["round"].nunique() == ROUNDS).all()
    assert (e.cpu_seconds > 0).all() and cost["machine"]["machine"]["cores"] >= 1
    m = cost["nbeats_members"]
    assert len(m) == ROUNDS * cost["members"] and (m.long_seconds > m.short_seconds).all()


def test_efficiency_leaves_no_gain_empty_and_costs_the_hybrid_as_both_parts():
    from seqlab.chapter import s14_63, s14_63_cost

    summary = s14_63.results()[0]
    eff = s14_63_cost.efficiency(summary).set_index("entry")
    assert math.isnan(eff.gain_per_kcpu["Naive2"]) and math.isnan(eff.gain_per_kcpu["SeasonalNaive"])
    parts = eff.cpu_seconds["N-BEATS"] + eff.cpu_seconds["Combination"]
    assert eff.cpu_seconds["N-BEATS + Combination"] == pytest.approx(parts, rel=0.05)  # medians of sums
    ok = eff.gain > 0
    assert (eff.gain_per_kcpu[ok] == 1000 * eff.gain[ok] / eff.cpu_seconds[ok]).all()
