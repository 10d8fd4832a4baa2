"""Issue 56 in the library: conformal levels refused before any fit when their bands cannot be finite
(``bounded=True``), seasons from the calendar, gaps found and filled, files sorted; and the docstrings' examples."""
from __future__ import annotations

import doctest
import importlib
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab.errors import InvalidParameterError
from seqlab.forecast import (FILL_RULES, Forecaster, ForecastDataError, UnboundedIntervalError, fill_gaps,
                             first_break, read_series_csv, season_of)


def walk(n=40, ids=("a",), seed=0, freq=None):
    rng = np.random.default_rng(seed)
    ds = pd.date_range("2000-01-01", periods=n, freq=freq) if freq else np.arange(1, n + 1)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": ds, "y": 100 + np.cumsum(rng.normal(0, 1, n))})
                      for u in ids], ignore_index=True)


class Spy:
    """Fails the test if it is ever fitted: the refusal must come first."""

    name = "Spy"

    def fit(self, df, h):
        raise AssertionError("a model was fitted before the request was refused")

    def predict(self, df, h):
        raise AssertionError("unreachable")


# ------------------------------------------------------------------ unbounded levels, before any fit
def test_bounded_refuses_before_any_fit_and_unbounded_still_gives_inf():
    df = walk(18)
    with pytest.raises(UnboundedIntervalError, match=r"needs at least 19 .* Spy has 15 .* at most 93\.7%"):
        Forecaster([Spy()]).forecast(2, df, level=[80, 95], bounded=True)
    out = Forecaster(["Naive"]).forecast(2, df, level=[95])
    assert np.isinf(out["Naive-hi-95"]).all()  # the default keeps the documented unbounded band, with its note
    with pytest.raises(UnboundedIntervalError, match="Spy has 3"):
        Forecaster([Spy()]).cross_validation(2, df, n_windows=2, level=[80], calibration_windows=3, bounded=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_series=st.integers(1, 4), length=st.integers(8, 40), level=st.sampled_from([50, 80, 90, 95, 97.5, 99]),
       windows=st.one_of(st.none(), st.integers(1, 30)), h=st.integers(1, 3))
def test_bounded_refuses_exactly_what_would_be_unbounded(n_series, length, level, windows, h):
    df = walk(length, ids=[f"s{k}" for k in range(n_series)], seed=length)
    fc = Forecaster(["Naive"])
    try:
        free = fc.forecast(h, df, level=[level], calibration_windows=windows)
    except InvalidParameterError as e:  # windows that do not fit: refused either way
        with pytest.raises(InvalidParameterError, match=re.escape(str(e))):
            fc.forecast(h, df, level=[level], calibration_windows=windows, bounded=True)
        return
    bands = free[[f"Naive-lo-{level}", f"Naive-hi-{level}"]].to_numpy()
    if np.isinf(bands).any():
        with pytest.raises(UnboundedIntervalError):
            fc.forecast(h, df, level=[level], calibration_windows=windows, bounded=True)
    else:
        kept = fc.forecast(h, df, level=[level], calibration_windows=windows, bounded=True)
        pd.testing.assert_frame_equal(kept, free)


# ------------------------------------------------------------------ seasons from the calendar
@pytest.mark.parametrize("freq,season", [("MS", 12), ("ME", 12), ("QS", 4), ("QE-DEC", 4), ("W-SUN", 52),
                                         ("D", 7), ("B", 5), ("h", 24), ("YS", 1), ("YE", 1), ("2MS", 6),
                                         ("min", 60), ("ms", 1), (1, 1)])
def test_the_season_of_each_calendar(freq, season):
    assert season_of(freq)[0] == season


# ------------------------------------------------------------------ gaps: found, and filled
def test_the_first_break_of_a_series_with_calendar_steps():
    ds = pd.Series(pd.to_datetime(["2021-01-31", "2021-02-28", "2021-03-31", "2021-05-31", "2021-06-30"]))
    b = first_break(ds)
    assert (b.step, b.before, b.after, b.expected) == ("ME", pd.Timestamp("2021-03-31"), pd.Timestamp("2021-05-31"),
                                                       pd.Timestamp("2021-04-30"))
    assert first_break(ds.iloc[:3]) is None


@pytest.mark.parametrize("rule,want", [("interpolate", [1.0, 2.0, 2 + 4 / 3, 2 + 8 / 3, 6.0]),
                                       ("ffill", [1.0, 2.0, 2.0, 2.0, 6.0]), ("zero", [1.0, 2.0, 0.0, 0.0, 6.0])])
def test_fill_gaps_rules(rule, want):
    df = pd.DataFrame({"unique_id": "a", "ds": pd.to_datetime(["2020-01-01", "2020-02-01", "2020-05-01"]),
                       "y": [1.0, 2.0, 6.0]})
    out = fill_gaps(df, "MS", rule)
    np.testing.assert_allclose(out.y, want, rtol=1e-15)
    assert list(out.ds) == list(pd.date_range("2020-01-01", "2020-05-01", freq="MS"))
    assert out.attrs["filled"] == {"a": 2} and set(FILL_RULES) == {"interpolate", "ffill", "zero"}


def test_fill_gaps_refuses_dates_off_the_calendar():
    df = pd.DataFrame({"unique_id": "a", "ds": pd.to_datetime(["2020-01-01", "2020-02-01", "2020-02-15"]),
                       "y": 1.0})
    with pytest.raises(InvalidParameterError, match="2020-02-15 is not on the calendar of 'MS'"):
        fill_gaps(df, "MS")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 40), holes=st.sets(st.integers(1, 38), max_size=10),
       rule=st.sampled_from(sorted(FILL_RULES)), freq=st.sampled_from(["MS", "D", "W-SUN", 1]))
def test_filled_series_are_regular_and_keep_every_observed_value(n, holes, rule, freq):
    from seqlab.forecast import infer_freq

    full = walk(n, freq=freq if freq != 1 else None)
    kept = full.drop(index=[k for k in holes if 0 < k < n - 1]).reset_index(drop=True)
    out = fill_gaps(kept, freq, rule)
    assert len(out) == n and infer_freq(out) == freq and np.isfinite(out.y).all()
    merged = kept.merge(out, on=["unique_id", "ds"], suffixes=("", "_filled"))
    np.testing.assert_array_equal(merged.y, merged.y_filled)


def test_a_file_is_sorted_gap_filled_and_says_what_it_left_out(tmp_path):
    df = walk(12, ids=("a", "b"), freq="MS").assign(promo=1.0)
    shuffled = df.iloc[::-1]
    path = tmp_path / "s.csv"
    shuffled.drop(index=[3]).to_csv(path, index=False)
    with pytest.raises(ForecastDataError, match="series 'a' is not evenly spaced: .* until 2000-03-01"):
        read_series_csv(path)
    got = read_series_csv(path, fill="interpolate")
    assert got.attrs == {"sorted": ["b", "a"], "unused": ["promo"], "filled": {"a": 1}}
    assert list(got.unique_id.unique()) == ["b", "a"] and got.groupby("unique_id").ds.is_monotonic_increasing.all()
    assert list(got.columns) == ["unique_id", "ds", "y"]


# ------------------------------------------------------------------ the docstrings' examples run
MODULES = ["seqlab.forecast.gaps", "seqlab.forecast.dates", "seqlab.forecast.data", "seqlab.forecast.reading",
           "seqlab.forecast.checks", "seqlab.forecast.core", "seqlab.forecast.exog"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' folders and files go under tmp_path
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0, result
