"""Forecasters that persist (issue 56, A): ``fit`` keeps the fit, ``save`` writes it as JSON and safetensors with
a manifest, ``load`` reads it back as carefully as a checkpoint, and ``predict`` gives ``forecast``'s frame bit
for bit with no network trained."""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from seqlab.files import INCOMPLETE, MANIFEST, OutputSet
from seqlab.forecast import Combination, Forecaster, StatsForecastModel
from seqlab.forecast.nbeats import NBeatsForecaster
from seqlab.forecast.neural import NeuralConfig, NeuralForecaster
from seqlab.forecast.specs import ForecasterFileError, UnsavableModelError


def panel(n=48, ids=("a", "b")):
    t = np.arange(n)
    rng = np.random.default_rng(3)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": pd.date_range("2018-01-01", periods=n, freq="MS"),
                                    "y": 60 + 15 * k + 6 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n)})
                      for k, u in enumerate(ids)], ignore_index=True)


def models():
    """Classical, M4's, the hybrid sharing its N-BEATS, and a GRU: every kind a stored forecaster holds."""
    nb = NBeatsForecaster.default(12, max_steps=3, members=2, device="cpu", workers=1)
    gru = NeuralForecaster("gru", config=NeuralConfig(hidden_size=8, max_steps=6, val_check_steps=3),
                           season_length=12, device="cpu")
    classical = Combination([StatsForecastModel(p, 12) for p in ("AutoETS", "AutoTheta", "Theta")],
                            name="Combination")
    return ["Naive", "SeasonalNaive", "AutoETS", "Naive2", "M4 Comb", nb,
            Combination([nb, classical], name="N-BEATS + Combination"), gru]


OPTIONS = dict(level=[80, 95], calibration_windows=10, calibration_step=1)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    df = panel()
    want = Forecaster(models(), freq="MS", season_length=12).forecast(4, df, **OPTIONS)
    fc = Forecaster(models(), freq="MS", season_length=12).fit(4, df, **OPTIONS)
    folder = tmp_path_factory.mktemp("stored") / "model"
    fc.save(folder)
    return df, want, fc, folder


@pytest.fixture
def no_training(monkeypatch):
    """Any network trained from here on fails the test."""
    from seqlab.forecast.nbeats import forecaster, training

    def trained(*a, **k):
        raise AssertionError("a network was trained")

    for target, name in ((forecaster, "_fit_member"), (training, "train_member"), (NeuralForecaster, "fit"),
                         (NBeatsForecaster, "fit")):
        monkeypatch.setattr(target, name, trained)


def test_fit_predict_and_a_loaded_predict_equal_forecast_bit_for_bit(stored, no_training):
    df, want, fc, folder = stored
    assert fc.predict().equals(want)
    loaded = Forecaster.load(folder)
    got = loaded.predict()
    assert got.equals(want) and list(got.columns) == list(want.columns)
    assert got.attrs["intervals"] == want.attrs["intervals"]
    assert sorted(os.listdir(folder)) == sorted(["forecaster.json", "neural.safetensors", "series.safetensors",
                                                 MANIFEST])


def test_a_newer_history_reuses_the_weights_and_refits_the_classical_models(stored, no_training):
    df, _, _, folder = stored
    longer = panel(n=54)
    loaded = Forecaster.load(folder)
    got = loaded.predict(longer)
    assert got.ds.min() == pd.Timestamp("2022-07-01")  # after the newer history's end
    classical = Forecaster(["Naive", "SeasonalNaive", "AutoETS"], freq="MS", season_length=12).forecast(4, longer)
    for name in ("Naive", "SeasonalNaive", "AutoETS"):
        np.testing.assert_array_equal(got[name], classical[name])
    nbeats = loaded.models[5]
    np.testing.assert_array_equal(got["N-BEATS"], np.concatenate(list(nbeats.predict(longer, 4).values())))
    assert np.isfinite(got.filter(like="-hi-").to_numpy()).all()


def test_the_shared_n_beats_is_stored_once_and_shared_again(stored):
    _, _, _, folder = stored
    doc = json.loads((folder / "forecaster.json").read_text())
    assert len(doc["neural"]) == 2  # N-BEATS (alone and in the hybrid) and the GRU
    loaded = Forecaster.load(folder)
    assert loaded.models[6].members[0] is loaded.models[5]


def _copy(folder, tmp_path):
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def test_a_changed_byte_is_refused(stored, tmp_path):
    d = _copy(stored[3], tmp_path)
    data = bytearray((d / "series.safetensors").read_bytes())
    data[-1] ^= 1
    (d / "series.safetensors").write_bytes(bytes(data))
    with pytest.raises(ForecasterFileError, match=r"series\.safetensors: does not match the size and sha256"):
        Forecaster.load(d)


@pytest.mark.parametrize("name", ["forecaster.json", "neural.safetensors", MANIFEST])
def test_a_missing_file_is_refused(stored, tmp_path, name):
    d = _copy(stored[3], tmp_path)
    (d / name).unlink()
    with pytest.raises(ForecasterFileError, match="missing|manifest"):
        Forecaster.load(d)


def test_an_interrupted_write_and_a_fifo_are_refused(stored, tmp_path):
    d = _copy(stored[3], tmp_path)
    (d / INCOMPLETE).write_text("stopped")
    with pytest.raises(ForecasterFileError, match="stopped before it finished"):
        Forecaster.load(d)
    (d / INCOMPLETE).unlink()
    (d / "forecaster.json").unlink()
    os.mkfifo(d / "forecaster.json")
    with pytest.raises(ForecasterFileError, match="not a regular file"):
        Forecaster.load(d)


def test_a_non_finite_weight_is_refused_naming_the_tensor(stored, tmp_path):
    from safetensors.torch import load, save

    d = _copy(stored[3], tmp_path)
    tensors = load((d / "neural.safetensors").read_bytes())
    name = sorted(tensors)[0]
    tensors[name].view(-1)[0] = float("nan")
    with OutputSet(d, "a test that damages one weight") as out:  # a consistent manifest: only the value is wrong
        out.path("neural.safetensors").write_bytes(save(tensors))
        out.commit()
    with pytest.raises(ForecasterFileError, match=f"tensor {name} holds NaN or infinite values"):
        Forecaster.load(d)


def test_a_model_of_ones_own_cannot_be_stored(tmp_path):
    class Mean:
        name = "Mean"

        def fit(self, df, h):
            return self

        def predict(self, df, h):
            return {u: np.full(h, g.y.mean()) for u, g in df.groupby("unique_id")}

    fc = Forecaster([Mean(), "Naive"]).fit(2, panel().assign(ds=lambda d: d.groupby("unique_id").cumcount() + 1))
    assert len(fc.predict()) == 4
    with pytest.raises(UnsavableModelError, match="'Mean' is a model of one's own"):
        fc.save(tmp_path / "m")


def test_statsforecast_objects_are_stored_with_their_arguments(tmp_path, no_training):
    from statsforecast.models import AutoARIMA, AutoETS

    df = panel()
    specs = [AutoETS(season_length=12, model="AAN", damped=True, alias="Damped"), AutoARIMA(season_length=12,
                                                                                            max_p=2)]
    fc = Forecaster(specs, freq="MS", season_length=12).fit(3, df, level=[80], intervals="native")
    fc.save(tmp_path / "m")
    loaded = Forecaster.load(tmp_path / "m")
    assert loaded.models[0].spec.damped is True and loaded.models[1].spec.max_p == 2
    assert loaded.predict().equals(fc.predict())


def test_predict_before_any_fit_is_one_error():
    from seqlab.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="nothing is fitted"):
        Forecaster(["Naive"]).predict()
    with pytest.raises(ForecasterFileError, match="not a folder"):
        Forecaster.load("/nonexistent/model")
