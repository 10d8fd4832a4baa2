"""The fresh test's plan and verdict rule (docs/forecast-fresh-sets.md); its trainings run under the protocol only."""
import pandas as pd
import pytest

from seqlab.errors import InvalidParameterError
from seqlab.experiments.forecast_fresh import (
    DONORS, FRESH_SETS, SEED_SETS, artifact_name, fresh_plan, fresh_verdicts, round3_plan,
)


def test_fresh_plan_is_round3_with_the_donors_grids():
    r3, plan = round3_plan(), fresh_plan()
    assert plan.configs == r3.configs and plan.seeds == SEED_SETS[0] == r3.seeds and plan.losses == r3.losses
    for label, donor in DONORS.items():
        assert plan.grid(label) == r3.grid(donor) and plan.inputs[label] == r3.inputs[donor]
    assert set(FRESH_SETS) == set(DONORS)


def test_artifact_names_and_unknown_sets():
    assert artifact_name("M1 monthly") == "fresh_m1_monthly"
    with pytest.raises(InvalidParameterError, match="no fresh set"):
        artifact_name("M4 hourly")


def _tests(diffs, significant):
    return pd.DataFrame([dict(dataset="S", model="N-BEATS", against="Combination", best_classical="Theta",
                              seeds=f"seed set {k}", mean_difference=d, ci_low=d - 0.01, ci_high=d + 0.01,
                              p_holm=0.01 if s else 0.2, significant=s)
                         for k, (d, s) in enumerate(zip(diffs, significant))])


@pytest.mark.parametrize("diffs, significant, verdict", [
    ((-0.03, -0.02, -0.04), (True, True, True), "ahead"),
    ((-0.03, -0.02, -0.04), (True, False, True), "not told apart"),  # one seed set is not enough
    ((0.03, 0.02, 0.04), (True, True, True), "behind"),
    ((-0.03, 0.02, -0.04), (True, True, True), "not told apart"),  # the seed sets disagree
])
def test_a_verdict_holds_for_every_seed_set_or_is_not_made(diffs, significant, verdict):
    v = fresh_verdicts(_tests(diffs, significant)).iloc[0]
    assert v.verdict == verdict and v.seed_sets == 3
    assert (v.ci_low, v.ci_high) == pytest.approx((min(diffs) - 0.01, max(diffs) + 0.01))  # the union


def test_heavy_eval_trains_every_fresh_set_again(monkeypatch):
    """HEAVY_EVAL=1 regenerates the seed sets and the four fresh sets before §14.63 reads them; off, nothing runs."""
    from seqlab.chapter import s14_63_fresh
    from seqlab.experiments.forecast_fresh import FRESH_SETS, SEEDS_SET, run

    ran = []
    monkeypatch.setattr(run, "run_fresh_set", lambda label, **kw: ran.append(label))
    assert s14_63_fresh._trained.__wrapped__(False) is False and ran == []
    assert s14_63_fresh._trained.__wrapped__(True) is True
    assert ran == [SEEDS_SET, *FRESH_SETS]


def test_verdict_grid_keeps_every_comparison():
    import pandas as pd

    from seqlab.chapter.s14_63_fresh import verdict_grid

    v = pd.DataFrame(dict(dataset=["B", "B", "A", "A"], model=["N-BEATS", "N-BEATS + Combination"] * 2,
                          against="Combination", verdict=["ahead", "behind", "not told apart", "ahead"]))
    g = verdict_grid(v)
    assert g.columns.tolist() == ["dataset", "N-BEATS vs Combination", "hybrid vs Combination"]
    assert g.dataset.tolist() == ["B", "A"]  # the protocol's order, not sorted
    assert g.iloc[0, 1:].tolist() == ["ahead", "behind"] and g.iloc[1, 1:].tolist() == ["not told apart", "ahead"]
