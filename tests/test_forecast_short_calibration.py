"""Calibration origins too short for a model are left out of its intervals (with a note); forecast origins too
short for it are refused before any fit. On M3 quarterly's series, whose early origins leave 5 or 6 points."""
import numpy as np
import pytest

from seqlab.cli import main
from seqlab.forecast import ForecastDataError, Forecaster
from seqlab.forecast import min_fit_length
from seqlab.forecast.data import competition

H, SEASON = 8, 4


@pytest.fixture(scope="module")
def short_m3():
    """Three M3 quarterly series of 29, 30 and 16 quarters, with their official hold-out appended."""
    import pandas as pd

    train, test, season, h = competition("M3", "quarterly")
    assert (season, h) == (SEASON, H)
    n = train.groupby("unique_id").size()
    ids = [n[n == 29].index[0], n[n == 30].index[0], n[n == 16].index[0]]
    df = pd.concat([train[train.unique_id.isin(ids)], test[test.unique_id.isin(ids)]])
    return df.sort_values(["unique_id", "ds"], kind="stable").reset_index(drop=True)


def test_statsforecast_minimums():
    from statsforecast.models import AutoETS

    fc = Forecaster(["Naive", "AutoETS", "AutoTheta"], season_length=SEASON)
    assert [min_fit_length(m) for m in fc.models] == [1, 7, 4]
    assert min_fit_length(Forecaster(["SeasonalNaive"], season_length=12).models[0]) == 12
    assert min_fit_length(Forecaster([AutoETS(model="AAN", damped=True)]).models[0]) == 10


def test_calibration_origins_too_short_for_autoets_are_dropped(short_m3):
    both = Forecaster(["Naive", "AutoETS"], season_length=SEASON).cross_validation(H, short_m3, level=[80])
    # 37 and 38 quarters: cutoffs at 29 and 30, calibration origins 8, 16 and 24 before them leave 21, 13, 5 and
    # 22, 14, 6 points (the 24-quarter series' last origin, 0 points, is below any model's reach)
    notes = [n for n in both.attrs["notes"] if "AutoETS" in n]
    assert len(notes) == 1 and notes[0].startswith("2 calibration origin(s)") and "7 observations" in notes[0]
    alone = Forecaster(["Naive"], season_length=SEASON).cross_validation(H, short_m3, level=[80])
    np.testing.assert_array_equal(both[["Naive", "Naive-lo-80", "Naive-hi-80"]].to_numpy(),
                                  alone[["Naive", "Naive-lo-80", "Naive-hi-80"]].to_numpy())
    assert np.isfinite(both[["AutoETS-lo-80", "AutoETS-hi-80"]].to_numpy()).all()


def test_forecast_origin_too_short_for_autoets_is_refused(short_m3):
    tiny = short_m3.groupby("unique_id").head(6)
    with pytest.raises(ForecastDataError, match="AutoETS needs at least 7"):
        Forecaster(["Naive", "AutoETS"], season_length=1).forecast(2, tiny)


def test_cli_on_short_m3_series(short_m3, tmp_path, capsys):
    f = tmp_path / "q.csv"
    short_m3.to_csv(f, index=False)
    code = main(["forecast", "evaluate", "--csv", str(f), "--horizon", "8", "--season", "4", "--models",
                 "Naive,AutoETS", "--level", "80"])  # 95% would need more errors than 3 short series give
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "calibration origin(s) left out of AutoETS" in out.err
    assert "AutoETS" in out.out and "internal error" not in out.err
