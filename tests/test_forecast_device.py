"""The forecasters' device option: the CPU gives the numbers of the default, an absent device is one clear error,
and the CUDA run (where a GPU is present) forecasts like the CPU one."""
import numpy as np
import pandas as pd
import pytest
import torch

from seqlab.cli import main
from seqlab.errors import InvalidParameterError
from seqlab.forecast import Forecaster
from seqlab.forecast.nbeats import NBeatsConfig, NBeatsForecaster
from seqlab.forecast.neural import NeuralConfig, NeuralForecaster

H = 6
TINY_NBEATS = NBeatsConfig(width=32, layers=2, blocks=2, max_steps=30, batch_size=64)
TINY_NEURAL = NeuralConfig(hidden_size=16, max_steps=30, batch_size=32, val_check_steps=10)
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def panel():
    rng = np.random.default_rng(0)
    frames = []
    for k in range(4):
        n = 40 + 7 * k
        y = 100 + 10 * np.sin(np.arange(n) * 2 * np.pi / 12) + rng.normal(0, 2, n).cumsum() + 20 * k
        frames.append(pd.DataFrame({"unique_id": f"s{k}", "ds": np.arange(1, n + 1), "y": y}))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture
def no_gpu(monkeypatch):
    """This machine as one without CUDA or MPS, wherever the tests run."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    if getattr(torch.backends, "mps", None) is not None:
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


def nbeats(**kw):
    return NBeatsForecaster(TINY_NBEATS, input_multiples=(2.0, 3.0), season_length=12, workers=1, **kw)


def neural(arch, **kw):
    return NeuralForecaster(arch, config=TINY_NEURAL, season_length=12, **kw)


def forecasts(model, df):
    return np.stack([v for _, v in sorted(model.fit(df, H).predict(df, H).items())])


def assert_close_to(gpu, cpu):
    """Within 1% of the forecasts' scale: the same start and batches, only the rounding differs."""
    assert isinstance(gpu, np.ndarray) and np.isfinite(gpu).all()
    assert np.abs(gpu - cpu).max() <= 1e-2 * np.abs(cpu).max()


@pytest.mark.parametrize("make", [nbeats, lambda **kw: neural("gru", **kw), lambda **kw: neural("transformer", **kw)],
                         ids=["nbeats", "gru", "transformer"])
def test_cpu_equals_the_default_exactly(no_gpu, panel, make):
    default, cpu = forecasts(make(), panel), forecasts(make(device="cpu"), panel)
    assert np.isfinite(default).all()
    assert np.array_equal(default, cpu)  # bit for bit


def test_forecaster_passes_the_device_to_the_models_it_names():
    fc = Forecaster(["Naive", "GRU", "N-BEATS"], season_length=12, device="cpu")
    assert [getattr(m, "device", None) for m in fc.models] == [None, "cpu", "cpu"]
    assert all(m.device == "auto" for m in Forecaster(["LSTM", "N-BEATS"]).models)
    own = neural("lstm", device="cpu")
    assert Forecaster([own], device="auto").models[0].device == "cpu"  # a model object keeps its own


@pytest.mark.parametrize("make", [lambda d: nbeats(device=d), lambda d: neural("gru", device=d),
                                  lambda d: Forecaster(["Naive", "N-BEATS"], device=d)],
                         ids=["nbeats", "gru", "forecaster"])
def test_an_absent_or_unknown_device_is_refused_at_once(no_gpu, make):
    with pytest.raises(InvalidParameterError, match="no CUDA GPU"):
        make("cuda")
    with pytest.raises(InvalidParameterError, match="MPS"):
        make("mps")
    with pytest.raises(InvalidParameterError, match="device must be one of"):
        make("tpu")


def _error_line(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("seqlab: error: "), err
    return err[0]


def test_cli_device_errors_are_one_line(no_gpu, tmp_path, panel, capsys):
    csv = tmp_path / "panel.csv"
    panel.to_csv(csv, index=False)
    base = ["forecast", "evaluate", "--csv", str(csv), "--horizon", str(H), "--season", "12"]
    assert "no CUDA GPU" in _error_line(capsys, base + ["--models", "Naive,N-BEATS", "--device", "cuda"])
    assert "invalid choice" in _error_line(capsys, base + ["--models", "GRU", "--device", "tpu"])
    assert "neural models" in _error_line(capsys, base + ["--models", "Naive", "--device", "cpu"])


@cuda
@pytest.mark.parametrize("workers", [1, 2])
def test_nbeats_on_cuda_forecasts_like_the_cpu(panel, workers):
    on_gpu = nbeats(device="cuda")
    on_gpu.workers = workers  # two: the members train in spawned processes and send their weights back
    gpu = forecasts(on_gpu, panel)
    assert all(next(net.parameters()).device.type == "cuda" for _, net in on_gpu.members)
    assert_close_to(gpu, forecasts(nbeats(device="cpu"), panel))


@cuda
@pytest.mark.parametrize("arch", ["gru", "lstm", "transformer"])
def test_neural_on_cuda_forecasts_like_the_cpu(panel, arch):
    assert_close_to(forecasts(neural(arch, device="cuda"), panel), forecasts(neural(arch, device="cpu"), panel))


@cuda
def test_forecaster_cross_validation_on_cuda(panel):
    df = panel.groupby("unique_id").tail(36)
    cv = Forecaster(["Naive", "GRU"], season_length=12, device="cuda").cross_validation(H, df, n_windows=2, step_size=H)
    assert np.isfinite(cv["GRU"]).all() and len(cv) == 2 * 4 * H
