"""``--exog`` and ``--future`` (issue 56, B) on the command line: the library's forecasts with ``X_df``, a note on
which models read the regressors, one line for every way the options can disagree, and a stored fit that keeps
the horizon's regressors."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from seqlab.cli import main
from seqlab.forecast import Forecaster, read_series_csv
from seqlab.forecast.reading import read_future_csv

H = 6


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    frames = []
    for k, u in enumerate(("a", "b")):
        t = np.arange(48 + H)
        promo = (rng.random(48 + H) < 0.3).astype(float)
        frames.append(pd.DataFrame({"unique_id": u, "ds": pd.date_range("2015-01-01", periods=48 + H, freq="MS"),
                                    "y": 80 + 10 * k + 6 * np.sin(2 * np.pi * t / 12) + 5 * promo
                                    + rng.normal(0, 1, 48 + H), "promo": promo, "note": "x"}))
    full = pd.concat(frames, ignore_index=True)
    paths = {"train": tmp_path / "train.csv", "future": tmp_path / "future.csv"}
    full.groupby("unique_id").head(48).to_csv(paths["train"], index=False)
    full.groupby("unique_id").tail(H)[["unique_id", "ds", "promo"]].to_csv(paths["future"], index=False)
    return {k: str(v) for k, v in paths.items()}


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_predict_with_exog_is_the_librarys_forecast_with_x_df(capsys, files):
    code, out, err = run(capsys, "forecast", "predict", "--csv", files["train"], "--horizon", str(H), "--models",
                         "AutoARIMA,Naive", "--exog", "promo", "--future", files["future"])
    assert code == 0, err
    assert "seqlab: note: regressors promo: read by AutoARIMA; Naive forecast from y alone" in err
    assert "column(s) note of" in err  # the column left out is still named
    got = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    df = read_series_csv(files["train"], exog=["promo"])
    want = Forecaster(["AutoARIMA", "Naive"], freq="MS", season_length=12).forecast(
        H, df, read_future_csv(files["future"], ["promo"]))
    np.testing.assert_array_equal(got[got.model == "AutoARIMA"].forecast, want.AutoARIMA)


@pytest.mark.parametrize("extra,words", [
    (["--exog", "promo"], "--exog needs --future CSV"),
    (["--future", "F"], "--future gives the values of --exog's regressors"),
    (["--exog", "promo", "--future", "F", "--engine", "dask"], "leave out --engine"),
    (["--exog", "price", "--future", "F"], "no regressor column 'price'"),
    (["--exog", "note", "--future", "F"], "regressor 'note' has the value 'x'"),
    (["--exog", "promo,promo", "--future", "F"], "lists 'promo' twice"),
    (["--exog", "y", "--future", "F"], "key column"),
])
def test_options_that_disagree_are_one_line(capsys, files, extra, words):
    extra = [files["future"] if e == "F" else e for e in extra]
    code, out, err = run(capsys, "forecast", "predict", "--csv", files["train"], "--horizon", str(H), "--models",
                         "AutoARIMA", *extra)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and words in lines[0], err


def test_a_stored_fit_keeps_its_regressors(capsys, files, tmp_path):
    args = ["--csv", files["train"], "--horizon", str(H), "--models", "AutoARIMA,Naive", "--exog", "promo",
            "--future", files["future"]]
    code, once, err = run(capsys, "forecast", "predict", *args)
    assert code == 0, err
    assert main(["forecast", "fit", *args, "--output", str(tmp_path / "m")]) == 0
    capsys.readouterr()
    code, stored, err = run(capsys, "forecast", "predict", "--model", str(tmp_path / "m"))
    assert code == 0 and stored == once, err
    code, _, err = run(capsys, "forecast", "predict", "--model", str(tmp_path / "m"), "--csv", files["train"])
    assert code == 2 and "give their values after the new history with --future" in err


def test_evaluate_reads_each_windows_regressors_from_the_csv(capsys, files):
    base = ["forecast", "evaluate", "--csv", files["train"], "--horizon", str(H), "--windows", "2", "--models",
            "AutoARIMA"]
    code, with_x, err = run(capsys, *base, "--exog", "promo")
    assert code == 0, err
    code, without, _ = run(capsys, *base)
    assert code == 0
    mase = [float(t.splitlines()[1].split()[1]) for t in (with_x, without)]
    assert mase[0] < mase[1], mase
