"""Devices, precision and compilation: resolved and validated on any machine; the CUDA run where a GPU is present."""
import pytest
import torch

from seqlab.errors import InvalidParameterError
from seqlab.nn import GPT, GPTConfig
from seqlab.text import CharTokenizer
from seqlab.text.checkpoint import load_checkpoint
from seqlab.text.corpus import load_tinyshakespeare, split_train_val
from seqlab.devices import autocast, resolve_device
from seqlab.text.training import TrainConfig, train_lm


@pytest.fixture(scope="module")
def data():
    text = load_tinyshakespeare()[:6000]
    tok = CharTokenizer().train(text)
    return tok, *split_train_val(torch.tensor(tok.encode(text)))


def tiny(vocab):
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=vocab, block_size=16, num_layers=1, num_heads=2, d_model=16))


def config(**kw):
    return TrainConfig(max_iters=4, batch_size=4, block_size=16, eval_interval=2, eval_iters=2, optimizer="muon",
                       **kw)


def test_auto_prefers_cuda_then_the_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    if getattr(torch.backends, "mps", None) is not None:
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == torch.device("cuda")


def test_an_absent_device_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InvalidParameterError, match="no CUDA GPU"):
        resolve_device("cuda")
    with pytest.raises(InvalidParameterError, match="device must be one of"):
        resolve_device("tpu")


@pytest.mark.parametrize("kw,word", [(dict(dtype="float16"), "dtype"), (dict(device="tpu"), "device"),
                                     (dict(grad_accum_steps=3), "grad_accum_steps")])
def test_bad_placement_settings(kw, word):
    with pytest.raises(InvalidParameterError, match=word):
        config(**kw)


def test_bfloat16_autocast_trains_float32_weights_on_the_cpu(data, tmp_path):
    tok, tr, va = data
    with autocast(torch.device("cpu"), "bfloat16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    res = train_lm(tiny(tok.vocab_size), tr, va, config(device="cpu", dtype="bfloat16"), checkpoint_dir=tmp_path,
                   tokenizer=tok)
    assert all(torch.isfinite(torch.tensor(r["val_loss"])) for r in res.history)
    model, _, _ = load_checkpoint(tmp_path)
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    # bfloat16 products round to ~3 significant digits: close to the float32 run, not equal
    full = train_lm(tiny(tok.vocab_size), tr, va, config(device="cpu"))
    assert abs(res.final_val_loss - full.final_val_loss) < 0.05


def test_compile_gives_the_eager_losses(data):
    tok, tr, va = data
    eager = train_lm(tiny(tok.vocab_size), tr, va, config(device="cpu"))
    compiled = train_lm(tiny(tok.vocab_size), tr, va, config(device="cpu", compile=True))
    torch.testing.assert_close(torch.tensor([r["val_loss"] for r in compiled.history]),
                               torch.tensor([r["val_loss"] for r in eager.history]), rtol=1e-4, atol=0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_cuda_run_samples_on_the_cpu(data, tmp_path):
    from seqlab.text.generation import generate

    tok, tr, va = data
    train_lm(tiny(tok.vocab_size), tr, va, config(device="cuda", dtype="bfloat16"), checkpoint_dir=tmp_path,
             tokenizer=tok)
    model, tok2, state = load_checkpoint(tmp_path)
    assert next(model.parameters()).device.type == "cpu"
    out = generate(model, torch.tensor([tok2.encode("RO")]), 5, greedy=True)
    assert out.shape == (1, 7)
    more = config(device="cuda")
    more.max_iters = 6
    res = train_lm(tiny(tok.vocab_size), tr, va, more, checkpoint_dir=tmp_path, tokenizer=tok)
    assert res.resumed_from == 4


@pytest.mark.parametrize("nproc", ["1", "2"])
def test_the_cli_names_an_absent_gpu_first_and_makes_nothing(monkeypatch, tmp_path, capsys, nproc):
    from seqlab.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code = main(["lm", "train", "--out", str(tmp_path / "ck"), "--device", "cuda", "--nproc", nproc, "--max-iters", "2"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "sees no CUDA GPU" in err
    assert not (tmp_path / "ck").exists()
