"""§14.61-§14.63: windows and scaling, rolling-origin MASE, and the neural-vs-classical comparison."""
import pytest


def t(section_results, sid, name):
    df = section_results(sid).tables[name]
    assert len(df)
    return df


def test_14_61_windows(section_results):
    w = t(section_results, "14.61", "windows").iloc[0]
    assert w.windows == w.series_length - w.input_size - w.horizon + 1
    fc = t(section_results, "14.61", "forecasts")
    assert len(fc) == 12 and {"SeasonalNaive", "AutoETS", "GRU"} <= set(fc.columns)


def test_14_62_anchors_and_windows(section_results):
    s = t(section_results, "14.62", "summary").set_index("model")
    assert 0 < s.mase["AutoARIMA"] < s.mase["Naive"]  # fitted on this one series; too slow for §14.63's sets
    assert s.mase["SeasonalNaive"] == pytest.approx(1.25, abs=0.03)
    assert s.mase["AutoTheta"] == pytest.approx(0.80, abs=0.05)
    assert t(section_results, "14.62", "windows").train_length.diff().dropna().eq(12).all()
    hz = t(section_results, "14.62", "mase_by_horizon")
    assert set(hz.step) == set(range(1, 13))


def test_14_63_comparison(section_results):
    anchors = t(section_results, "14.63", "anchors")
    assert (anchors.relative_difference.abs() < 0.05).all(), anchors
    v = t(section_results, "14.63", "verdict").set_index("dataset")
    assert set(v.index) >= {"AirPassengers", "M3 monthly", "M3 yearly", "Tourism quarterly"}
    sig = t(section_results, "14.63", "significance")
    assert {"ci_low", "ci_high", "significant"} <= set(sig.columns)
    assert (sig.ci_low <= sig.mean_difference).all() and (sig.mean_difference <= sig.ci_high).all()
    notes = " ".join(section_results("14.63").notes)
    assert "M3 monthly" in notes and "within 5%" in notes


def test_14_63_significance_recomputes_from_the_stored_unit_scores():
    from seqlab.experiments.forecast import forecast_results, official_holdout
    from seqlab.forecast import bootstrap_difference

    summary, _, sig, _, units, _ = forecast_results()
    assert len(sig) == len(summary.groupby(["dataset", "scope"])) * 2
    for r in sig.itertuples():
        u = units[units.dataset == r.dataset]
        u = official_holdout(u) if r.scope == "official hold-out" else u
        got = bootstrap_difference(u, r.model, r.against)
        assert (got["series"], got["units"], got["significant"]) == (r.series, r.units, r.significant)
        assert (got["mean_difference"], got["ci_low"], got["ci_high"]) == pytest.approx(
            (r.mean_difference, r.ci_low, r.ci_high), abs=1e-4)
        # the summary's mean MASE is the mean over the same units
        assert summary.set_index(["dataset", "scope", "model"]).mase[(r.dataset, r.scope, r.model)] == pytest.approx(
            u[u.model == r.model].mase.mean(), abs=1e-5)
