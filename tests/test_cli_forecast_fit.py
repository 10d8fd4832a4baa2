"""``seqlab forecast fit`` + ``forecast predict --model`` (issue 56, A): the stored forecaster's forecasts equal a
one-shot ``predict`` byte for byte, and the second command trains nothing."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from seqlab.cli import main

MODELS = "Naive,AutoETS,N-BEATS,N-BEATS + Combination"
OPTIONS = ["--horizon", "6", "--season", "12", "--models", MODELS, "--max-steps", "3", "--members", "2",
           "--level", "80,95", "--calibration-windows", "10"]


def monthly(n, ids=("a", "b", "c")):
    t = np.arange(n)
    rng = np.random.default_rng(0)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": pd.date_range("2019-01-01", periods=n, freq="MS"),
                                    "y": 50 + 20 * k + 5 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n)})
                      for k, u in enumerate(ids)], ignore_index=True)


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def csvs(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_WORKERS", "1")
    paths = {}
    for n in (42, 48):
        paths[n] = tmp_path / f"m{n}.csv"
        monthly(n).to_csv(paths[n], index=False)
    return paths


def forbid_training(monkeypatch):
    from seqlab.forecast.nbeats import forecaster, training
    from seqlab.forecast.neural import NeuralForecaster

    def trained(*a, **k):
        raise AssertionError("a network was trained")

    for target, name in ((forecaster, "_fit_member"), (training, "train_member"), (NeuralForecaster, "fit")):
        monkeypatch.setattr(target, name, trained)


def test_fit_then_predict_model_equals_one_shot_predict_without_training(capsys, csvs, tmp_path, monkeypatch):
    model = tmp_path / "model"
    code, out, err = run(capsys, "forecast", "fit", "--csv", str(csvs[42]), *OPTIONS, "--output", str(model))
    assert code == 0 and out == "", err
    assert f"forecast from it with: seqlab forecast predict --model {model}" in err
    code, once, err = run(capsys, "forecast", "predict", "--csv", str(csvs[42]), *OPTIONS)
    assert code == 0, err
    forbid_training(monkeypatch)
    code, stored, err = run(capsys, "forecast", "predict", "--model", str(model))
    assert code == 0, err
    assert stored == once  # every byte: the same numbers in the same shortest form
    assert "no model was trained" in err
    code, newer, err = run(capsys, "forecast", "predict", "--model", str(model), "--csv", str(csvs[48]))
    assert code == 0, err
    got = pd.read_csv(io.StringIO(newer))
    assert got.ds.min() == "2023-01-01" and list(dict.fromkeys(got.model)) == MODELS.split(",")
    code, written, err = run(capsys, "forecast", "predict", "--model", str(model), "--output", str(tmp_path / "o"))
    assert code == 0 and written == "" and (tmp_path / "o" / "forecasts.csv").read_text() == once


@pytest.mark.parametrize("extra,words", [
    (["--horizon", "3"], "--horizon was fixed when the forecaster"), (["--level", "80"], "--level was fixed"),
    (["--models", "Naive"], "--models was fixed"), (["--season", "4"], "--season was fixed"),
])
def test_options_the_fit_fixed_are_refused_with_model(capsys, csvs, tmp_path, extra, words):
    model = tmp_path / "model"
    assert main(["forecast", "fit", "--csv", str(csvs[42]), "--horizon", "2", "--models", "Naive", "--output",
                 str(model)]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "forecast", "predict", "--model", str(model), *extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and words in err, err


def test_predict_needs_a_csv_and_horizon_or_a_model(capsys, csvs, tmp_path):
    code, _, err = run(capsys, "forecast", "predict", "--models", "Naive")
    assert code == 2 and "required: --csv, --horizon (or --model DIR" in err
    code, _, err = run(capsys, "forecast", "predict", "--model", str(tmp_path / "none"))
    assert code == 2 and "not a folder" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "forecast", "fit", "--csv", str(csvs[42]), "--horizon", "2")
    assert code == 2 and "--output" in err


def test_a_damaged_model_folder_is_one_line(capsys, csvs, tmp_path):
    model = tmp_path / "model"
    assert main(["forecast", "fit", "--csv", str(csvs[42]), "--horizon", "2", "--models", "Naive", "--output",
                 str(model)]) == 0
    capsys.readouterr()
    data = bytearray((model / "forecaster.json").read_bytes())
    data[10] ^= 1
    (model / "forecaster.json").write_bytes(bytes(data))
    code, out, err = run(capsys, "forecast", "predict", "--model", str(model))
    assert code == 2 and out == "" and "forecaster.json: does not match the size and sha256" in err


def test_a_newer_history_of_another_frequency_is_refused(capsys, csvs, tmp_path):
    model = tmp_path / "model"
    assert main(["forecast", "fit", "--csv", str(csvs[42]), "--horizon", "2", "--models", "Naive", "--output",
                 str(model)]) == 0
    daily = monthly(40).assign(ds=lambda d: d.groupby("unique_id").cumcount().map(
        lambda k: pd.Timestamp("2020-01-01") + pd.Timedelta(days=k)))
    daily.to_csv(tmp_path / "d.csv", index=False)
    capsys.readouterr()
    code, _, err = run(capsys, "forecast", "predict", "--model", str(model), "--csv", str(tmp_path / "d.csv"))
    assert code == 2 and "steps by 'D', but the forecaster" in err
