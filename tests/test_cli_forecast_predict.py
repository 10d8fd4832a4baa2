"""``seqlab forecast predict``: the library's forecast past each series' end, as a long CSV with real future dates;
and the forecasting messages a practitioner reads: the frequency, a missing OWA, a too-short series' options."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from seqlab.cli import main
from seqlab.files import MANIFEST
from seqlab.forecast import Forecaster, read_series_csv


@pytest.fixture
def monthly(tmp_path):
    t = np.arange(40)
    rng = np.random.default_rng(0)
    rows = [(uid, pd.Timestamp("2019-01-01") + pd.DateOffset(months=int(i)), round(float(v), 2))
            for uid, base in (("a", 50.0), ("b", 80.0)) for i, v in zip(t, base + 5 * np.sin(t / 2) + rng.normal(0, 1, 40))]
    path = tmp_path / "m.csv"
    pd.DataFrame(rows, columns=["unique_id", "ds", "y"]).to_csv(path, index=False)
    return path


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_predict_prints_the_library_forecast_as_a_long_csv_with_future_dates(capsys, monthly):
    code, out, err = run(capsys, "forecast", "predict", "--csv", str(monthly), "--horizon", "4",
                         "--models", "Naive,SeasonalNaive", "--season", "12", "--level", "95,80")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    assert list(got.columns) == ["unique_id", "ds", "model", "forecast", "lo-80", "hi-80", "lo-95", "hi-95"]
    assert list(got.ds[:4]) == ["2022-05-01", "2022-06-01", "2022-07-01", "2022-08-01"]  # the 4 months after April
    want = Forecaster(["Naive", "SeasonalNaive"], freq="MS", season_length=12).forecast(
        4, read_series_csv(monthly), level=[80, 95])
    for model in ("Naive", "SeasonalNaive"):
        mine = got[got.model == model].reset_index(drop=True)
        np.testing.assert_array_equal(mine.forecast, want[model])
        np.testing.assert_array_equal(mine["lo-95"], want[f"{model}-lo-95"])
        np.testing.assert_array_equal(mine["hi-80"], want[f"{model}-hi-80"])
    assert "seqlab: note: the dates were read as pandas frequency 'MS'" in err
    assert "seqlab: note: intervals at 80%, 95%: conformal" in err


def test_numbers_are_written_in_their_shortest_exact_form(capsys, monthly):
    code, out, _ = run(capsys, "forecast", "predict", "--csv", str(monthly), "--horizon", "2", "--models", "Naive")
    assert code == 0
    last = pd.read_csv(monthly).groupby("unique_id").y.last()
    rows = out.strip().splitlines()[1:]
    assert rows[0].split(",")[3] == repr(float(last["a"])) and "00000" not in out  # 52.14, not 52.140000000000001


def test_predict_writes_one_complete_set_into_output(capsys, monthly, tmp_path):
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "forecast", "predict", "--csv", str(monthly), "--horizon", "3", "--models",
                         "Naive", "--output", str(out_dir))
    assert code == 0 and out == "", err
    assert sorted(p.name for p in out_dir.iterdir()) == ["forecasts.csv", MANIFEST]
    files = json.loads((out_dir / MANIFEST).read_text())["files"]
    assert files["forecasts.csv"]["command"].startswith("seqlab forecast predict --csv ")
    assert len(pd.read_csv(out_dir / "forecasts.csv")) == 2 * 3


def test_a_series_too_short_names_the_options_that_fix_it(capsys, monthly):
    code, _, err = run(capsys, "forecast", "evaluate", "--csv", str(monthly), "--horizon", "6", "--windows", "7",
                       "--models", "Naive")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "--min-train-length" in lines[0] and "--windows" in lines[0], err


def test_evaluate_says_why_owa_is_missing_and_how_the_dates_were_read(capsys, monthly):
    code, out, err = run(capsys, "forecast", "evaluate", "--csv", str(monthly), "--horizon", "3", "--models", "Naive")
    assert code == 0 and "owa" not in out
    assert "OWA (sMAPE and MASE relative to Naive2, the M4 score) is not shown: add Naive2 to --models" in err
    assert "the dates were read as pandas frequency 'MS'" in err
    code, out, err = run(capsys, "forecast", "evaluate", "--csv", str(monthly), "--horizon", "3", "--models",
                         "Naive,Naive2")
    assert code == 0 and "owa" in out and "OWA" not in err


@pytest.mark.parametrize("extra, words", [(["--windows", "2"], "unrecognized arguments"),
                                          (["--horizon", "0"], "--horizon"), (["--level", "101"], "between 0 and 100"),
                                          (["--models", "Nope"], "unknown model")])
def test_bad_predict_options_are_one_line(capsys, monthly, extra, words):
    argv = ["forecast", "predict", "--csv", str(monthly), "--horizon", "2", "--models", "Naive", *extra]
    code, _, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], err
