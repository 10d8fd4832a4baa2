import numpy as np
import pandas as pd
import pytest

from seqlab.errors import InvalidParameterError
from seqlab.forecast.comparison import bootstrap_pvalue, holm, holm_tests, mcb, mean_ranks
from seqlab.forecast.evaluation import bootstrap_difference


def units(shift=0.0, n=60, seed=0, models=("A", "B", "C")):
    """A unit_mase-shaped frame: model B is A plus noise plus ``shift``; C is A plus 0.5."""
    rng = np.random.default_rng(seed)
    base = rng.gamma(2.0, 0.5, n)
    noise = rng.normal(0, 0.2, n)
    values = {"A": base, "B": base + noise + shift, "C": base + 0.5}
    return pd.concat([pd.DataFrame({"unique_id": np.arange(n), "cutoff": 1, "model": m, "mase": values[m]})
                      for m in models], ignore_index=True)


def test_holm_hand_worked():
    # sorted 0.01, 0.03, 0.04 times 3, 2, 1 -> 0.03, 0.06, 0.04; the running maximum makes the last 0.06
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])
    with pytest.raises(InvalidParameterError):
        holm([0.2, 1.5])


def test_bootstrap_pvalue_shares_its_draws_with_the_interval():
    e = units(shift=0.05)
    p = bootstrap_pvalue(e, "B", "A", seed=3)
    d = bootstrap_difference(e, "B", "A", seed=3)
    assert (p["ci_low"], p["ci_high"], p["mean_difference"]) == pytest.approx(
        (d["ci_low"], d["ci_high"], d["mean_difference"]), rel=1e-12)
    far = bootstrap_pvalue(e, "C", "A", n_boot=999)
    assert far["p_value"] == 1 / 1000  # every shifted draw lies nearer zero than 0.5
    level = bootstrap_pvalue(units(shift=0.0, seed=1), "B", "A", n_boot=999)
    assert level["p_value"] > 0.05  # pure noise around zero is not told apart


def test_holm_tests_correct_over_the_whole_family():
    e = pd.concat([units(shift=0.04, seed=s).assign(family=f"set {s}") for s in range(3)], ignore_index=True)
    out = holm_tests(e, [("B", "A"), ("C", "A")], n_boot=999)
    assert len(out) == 6 and set(out.family) == {"set 0", "set 1", "set 2"}
    np.testing.assert_allclose(out.p_holm, holm(out.p_value))
    assert (out.p_holm >= out.p_value).all() and out[out.model == "C"].significant.all()
    with pytest.raises(InvalidParameterError, match="no model 'D'"):
        holm_tests(e, [("D", "A")], n_boot=999)


def test_mcb_critical_distance_matches_demsar_table():
    # Demšar (2006), table 5(a): q_0.05 = 2.343 for k = 3, CD = q sqrt(k (k + 1) / (6 N))
    rng = np.random.default_rng(0)
    scores = pd.DataFrame(rng.normal(size=(50, 3)) + [0.0, 0.3, 1.0], columns=["A", "B", "C"])
    out = mcb(scores)
    assert out.attrs["critical_distance"] == pytest.approx(2.343 * np.sqrt(12 / 300), abs=1e-3)
    assert (out.hi - out.lo).iloc[0] == pytest.approx(out.attrs["critical_distance"])
    assert out.model.iloc[0] == "A" and out.best.iloc[0]
    gap = out.set_index("model").mean_rank - out.mean_rank.min()
    assert out.set_index("model").differs_from_best.to_dict() == (gap > out.attrs["critical_distance"]).to_dict()


def test_mean_ranks_by_hand_and_gaps_refused():
    s = pd.DataFrame({"A": [1.0, 2.0, 3.0], "B": [2.0, 1.0, 3.0]})
    assert mean_ranks(s).to_dict() == {"A": (1 + 2 + 1.5) / 3, "B": (2 + 1 + 1.5) / 3}
    with pytest.raises(InvalidParameterError, match="gap"):
        mean_ranks(s.assign(B=[1.0, np.nan, 2.0]))
