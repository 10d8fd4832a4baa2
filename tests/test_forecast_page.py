"""The forecasting page's own algorithm cells (windows, MASE, rolling origins, the paired bootstrap, Holm's rule,
split conformal), compiled from the page and held equal to the library functions every table uses."""
import math

import numpy as np
import pandas as pd
import pytest
from conftest import page_functions
from hypothesis import given, settings
from hypothesis import strategies as st

PAGE_FUNCTIONS = ("mase_by_hand", "rolling_origins", "paired_bootstrap", "holm_by_hand", "split_conformal")


@pytest.fixture(scope="module")
def page_code():
    return page_functions("forecasting", PAGE_FUNCTIONS, {"np": np, "math": math})


@settings(max_examples=60, deadline=None)
@given(n=st.integers(14, 60), h=st.integers(1, 12), m=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_page_mase_equals_the_library(page_code, n, h, m, seed):
    from seqlab.forecast import mase

    rng = np.random.default_rng(seed)
    y = 100 + rng.normal(size=n + h).cumsum()
    train, test, guess = y[:n], y[n:], y[n:] + rng.normal(size=h)
    assert page_code["mase_by_hand"](test, guess, train, m) == pytest.approx(mase(test, guess, train, m), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(10, 400), h=st.integers(1, 24), windows=st.integers(1, 6))
def test_page_origins_equal_the_library(page_code, n, h, windows):
    from seqlab.errors import SeqlabError
    from seqlab.forecast import rolling_origin_splits

    try:
        lib = rolling_origin_splits(n, h, windows)
    except SeqlabError:
        return  # too short a series: the library refuses, the page's one-liner is not asked
    assert page_code["rolling_origins"](n, h, windows) == lib


def test_page_bootstrap_equals_the_library(page_code):
    from seqlab.forecast import bootstrap_difference

    rng = np.random.default_rng(0)
    ids = [f"s{k:03d}" for k in range(80)]
    a, b = rng.gamma(2, 0.5, 80), rng.gamma(2, 0.5, 80)
    units = pd.DataFrame({"unique_id": ids * 2, "cutoff": 1, "model": ["A"] * 80 + ["B"] * 80,
                          "mase": np.r_[a, b]})
    lib = bootstrap_difference(units, "A", "B", seed=4)
    mean, (lo, hi) = page_code["paired_bootstrap"](a - b, seed=4)
    assert (mean, lo, hi) == pytest.approx((lib["mean_difference"], lib["ci_low"], lib["ci_high"]), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(p=st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_page_holm_equals_the_library(page_code, p):
    from seqlab.forecast.comparison import holm

    assert page_code["holm_by_hand"](p) == pytest.approx(holm(np.asarray(p)), abs=1e-12)


def test_page_windows_equal_the_library():
    """The page's sliding windows (inputs of 2 seasons, a target of one) are the library's windows and scales."""
    from seqlab.chapter.s14_61 import H, SEASON, split, window_table

    _, train, _ = split()
    y = train.y.to_numpy()
    X = np.lib.stride_tricks.sliding_window_view(y, 2 * SEASON + H)
    scale = np.abs(X[:, : 2 * SEASON]).mean(axis=1)
    lib = window_table(y, input_size=2 * SEASON, h=H).iloc[0]
    assert len(X) == lib.windows
    # the library windows in float32
    assert (scale[0], scale[-1]) == pytest.approx((lib.scale_first, lib.scale_last), rel=1e-6)


def test_page_split_conformal_equals_the_library(page_code):
    from seqlab.forecast.intervals import conformal_band

    rng = np.random.default_rng(1)
    for n_scores, level in ((3, 0.8), (4, 0.8), (19, 0.95), (18, 0.95), (50, 0.9)):
        scores = rng.gamma(2, 1, size=(n_scores, 1))
        point, scale = np.array([[10.0]]), np.array([2.5])
        lo, hi, _ = conformal_band(point, scale, scores, level * 100)
        mine = page_code["split_conformal"](10.0, 2.5, scores[:, 0], level)
        assert mine == pytest.approx((lo[0, 0], hi[0, 0]))


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 8), n=st.integers(2, 3000))
def test_the_records_critical_distance_equals_mcb(k, n):
    """The record's written-out Nemenyi distance is the width of every interval that ``mcb`` draws."""
    from scipy.stats import studentized_range

    from seqlab.forecast.comparison import mcb

    cell = page_functions("forecasting_record", ("critical_distance",),
                          {"np": np, "studentized_range": studentized_range})["critical_distance"]
    scores = pd.DataFrame(np.random.default_rng(k * n).random((n, k)), columns=[f"m{j}" for j in range(k)])
    out = mcb(scores)
    assert cell(k, n) == pytest.approx(out.attrs["critical_distance"], rel=1e-12)
    assert (out.hi - out.lo).to_numpy() == pytest.approx([cell(k, n)] * k, rel=1e-12)


def test_series_bias_means_over_series_are_the_residual_checks_means():
    """The standard error rests on per-series means whose average is the stored residual check's own mean."""
    from seqlab.chapter import s14_63

    summary, _, _, _, _, nb, _ = s14_63.results()
    check = s14_63.residual_check(nb, summary, scope="official hold-out")
    check = check[check.dataset.isin(["M3 yearly", "Tourism quarterly"])]
    out = s14_63.series_bias(check)
    assert list(out.mean_scaled_error) == list(check.mean_scaled_error) and (out.series > 100).all()
    assert (out.mean_scaled_error_se > 0).all() and out.mean_scaled_error_se.notna().all()
    # the same per-series means, recomputed here from the stored forecasts
    from seqlab.experiments.forecast import DATASETS
    from seqlab.experiments.forecast.results import stored_forecasts
    from seqlab.experiments.forecast.scoring import add_combinations
    from seqlab.experiments.forecast.sets import _load, official_holdout
    from seqlab.forecast.metrics import mase_scale

    f = stored_forecasts()
    x = add_combinations(official_holdout(f[f.dataset == "Tourism quarterly"].drop(columns="dataset")))
    src = _load(DATASETS["Tourism quarterly"][0])
    hist = {str(u): h for u, h in src.history.groupby("unique_id")}
    per = []
    for (u, c), w in x.groupby(["unique_id", "cutoff"]):
        scale = mase_scale(hist[str(u)].loc[hist[str(u)].ds <= c, "y"].to_numpy(float), src.season)
        per.append(float(np.mean((w["N-BEATS"] - w.y) / scale)))
    row = out[(out.dataset == "Tourism quarterly") & (out.model == "N-BEATS")].iloc[0]
    assert math.isclose(np.mean(per), row.mean_scaled_error, rel_tol=1e-9)
    assert math.isclose(np.std(per, ddof=1) / math.sqrt(len(per)), row.mean_scaled_error_se, rel_tol=1e-9)
