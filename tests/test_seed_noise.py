"""One run's difference against seed pairs (seqlab.analysis.seeds), the record page's own cell for it, and the
ablation table that reads it."""
import numpy as np
import pandas as pd
import pytest
from conftest import page_functions
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from seqlab.analysis.seeds import seed_noise, seed_noise_pvalues
from seqlab.errors import InvalidParameterError


def test_hand_worked_example():
    # s = (0.03, 0.04): rms = sqrt((0.0009 + 0.0016) / 2) = sqrt(0.00125); d = 0.05 gives t = 1.4142..., 2 df
    assert seed_noise([0.03, 0.04]) == pytest.approx(np.sqrt(0.00125), rel=1e-12)
    t = 0.05 / np.sqrt(0.00125)
    # Student's t with 2 df has the closed form P(|T| > t) = 1 - t / sqrt(2 + t^2)
    assert seed_noise_pvalues([0.05], [0.03, 0.04])[0] == pytest.approx(1 - t / np.sqrt(2 + t * t), rel=1e-12)
    assert seed_noise_pvalues([-0.05], [0.03, -0.04])[0] == seed_noise_pvalues([0.05], [0.03, 0.04])[0]


def test_p_values_are_uniform_when_the_setting_does_nothing():
    """Simulated normal seed noise: a change with no effect is called at the 5% level about 5% of the time."""
    rng = np.random.default_rng(0)
    sigma, n, trials = 0.7, 6, 20_000
    runs = rng.normal(0.0, sigma, size=(trials, 2 * n + 2))
    pairs = runs[:, 0:2 * n:2] - runs[:, 1:2 * n:2]
    d = runs[:, -1] - runs[:, -2]
    p = np.array([seed_noise_pvalues([d[k]], pairs[k])[0] for k in range(trials)])
    # binomial standard error at 5% over 20,000 trials is 0.0015: four of them either side
    assert abs(np.mean(p < 0.05) - 0.05) < 0.006
    assert abs(np.mean(p < 0.5) - 0.5) < 0.015


@pytest.mark.parametrize("pairs", [[], [0.0, 0.0], [0.01, float("nan")], [[0.01, 0.02]]])
def test_bad_seed_pairs_are_refused(pairs):
    with pytest.raises(InvalidParameterError):
        seed_noise_pvalues([0.01], pairs)


def test_a_difference_that_is_not_finite_is_refused():
    with pytest.raises(InvalidParameterError):
        seed_noise_pvalues([float("inf")], [0.01, 0.02])


@settings(max_examples=60, deadline=None)
@given(d=st.floats(-1, 1), s=st.lists(st.floats(1e-4, 1), min_size=1, max_size=12))
def test_the_record_pages_cell_equals_the_library(d, s):
    page = page_functions("forecasting_record", ("seed_noise_p",), {"np": np, "stats": stats})
    assert page["seed_noise_p"](d, s) == pytest.approx(seed_noise_pvalues([d], s)[0], rel=1e-12, abs=1e-15)


def test_ablation_tests_adjust_the_ingredients_as_one_family():
    from seqlab.chapter.s14_63_nbeats import INGREDIENTS, ablation_tests

    names = list(INGREDIENTS)[:3]
    ab = pd.DataFrame({"dataset": "M3 monthly", "steps": 2000,
                       "ingredient": ["reference: the first member", *names, "ensemble: median of 12 members"],
                       "difference": [0.0, 0.03, 0.01, -0.02, -0.03]})
    out = ablation_tests(ab, {"M3 monthly": [0.01, 0.02, 0.005]})
    raw = seed_noise_pvalues([0.03, 0.01, -0.02], [0.01, 0.02, 0.005])
    assert np.isnan(out.p[0]) and np.isnan(out.holm_p[0]) and np.isnan(out.holm_p[4])
    np.testing.assert_allclose(out.p[1:4], raw, rtol=1e-12)
    order = np.argsort(raw)
    expected = np.maximum.accumulate(np.minimum(1, raw[order] * [3, 2, 1]))
    np.testing.assert_allclose(out.holm_p[1:4].to_numpy()[order], expected, rtol=1e-12)
