import subprocess
import sys

import pytest
from conftest import patient

from seqlab.text.corpus import load_tinyshakespeare

SMALL = ["--max-iters", "30", "--block-size", "16", "--batch-size", "4", "--eval-interval", "10", "--d-model", "16",
         "--num-layers", "1", "--num-heads", "2", "--warmup", "5"]


def cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "seqlab", *args], capture_output=True, text=True, timeout=patient(timeout))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("lm")
    text = d / "play.txt"
    text.write_text(load_tinyshakespeare()[:8000], encoding="utf-8")
    p = cli("lm", "train", "--text", str(text), "--out", str(d / "ckpt"), *SMALL)
    assert p.returncode == 0, p.stderr
    return d, text, p.stdout


def test_train_reports_losses_and_writes_a_checkpoint(trained):
    d, _, out = trained
    assert "iter     30" in out and "bits/char" in out
    assert (d / "ckpt" / "checkpoint.safetensors").is_file() and (d / "ckpt" / "tokenizer.txt").is_file()


def test_sample_streams_and_is_deterministic(trained):
    d, _, _ = trained
    args = ["lm", "sample", "--checkpoint", str(d / "ckpt"), "--prompt", "ROMEO:", "--max-new-tokens", "40",
            "--seed", "3", "--top-k", "10", "--temperature", "0.8"]
    a, b = cli(*args), cli(*args)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout and a.stdout.startswith("ROMEO:") and len(a.stdout) == len("ROMEO:") + 40 + 1


def test_train_resumes_from_the_checkpoint(trained, tmp_path):
    d, text, _ = trained
    import shutil

    shutil.copytree(d / "ckpt", tmp_path / "ckpt")
    more = [a if a != "30" else "40" for a in SMALL]
    p = cli("lm", "train", "--text", str(text), "--out", str(tmp_path / "ckpt"), *more)
    assert p.returncode == 0, p.stderr
    assert "resume: from iteration 30 of" in p.stdout and "iter     40" in p.stdout
    assert p.stdout.index("resume: from iteration 30") < p.stdout.index("iter     40")  # said as it starts


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02binary", b"\xff\xfe bad utf8", b"too short"])
def test_bad_text_files(tmp_path, content):
    f = tmp_path / "t.txt"
    f.write_bytes(content)
    p = cli("lm", "train", "--text", str(f), "--out", str(tmp_path / "c"), *SMALL, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "c" / "checkpoint.safetensors").exists()


@pytest.mark.parametrize("bad", [["--temperature", "0"], ["--temperature", "-1"], ["--top-k", "0"],
                                 ["--top-p", "1.5"], ["--top-p", "-0.2"], ["--min-p", "3"]])
def test_bad_decoding_parameters(trained, bad):
    d, _, _ = trained
    p = cli("lm", "sample", "--checkpoint", str(d / "ckpt"), *bad, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_missing_and_corrupt_checkpoints(tmp_path, trained):
    p = cli("lm", "sample", "--checkpoint", str(tmp_path / "nothing"), timeout=60)
    assert p.returncode == 2 and "not a seqlab checkpoint" in p.stderr
    import shutil

    d, _, _ = trained
    shutil.copytree(d / "ckpt", tmp_path / "bad")
    f = tmp_path / "bad" / "checkpoint.safetensors"
    f.write_bytes(f.read_bytes()[:200])
    p = cli("lm", "sample", "--checkpoint", str(tmp_path / "bad"), timeout=60)
    assert p.returncode == 2 and "corrupt" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_train_defaults_are_the_chapters():
    from seqlab.cli import build_parser
    from seqlab.experiments.lm import CHAPTER_TRAIN, chapter_gpt_config

    from seqlab.cli.lm import _resolve_model_options, _warmup

    a = build_parser().parse_args(["lm", "train", "--text", "x.txt"])
    _resolve_model_options(a)  # options left unset take the chapter's values here
    a.warmup = _warmup(a, None)
    g = chapter_gpt_config(65)
    assert (a.max_iters, a.batch_size, a.block_size, a.lr, a.muon_lr, a.warmup, a.eval_interval, a.optimizer, a.seed) == (
        CHAPTER_TRAIN.max_iters, CHAPTER_TRAIN.batch_size, CHAPTER_TRAIN.block_size, CHAPTER_TRAIN.learning_rate,
        CHAPTER_TRAIN.muon_lr, CHAPTER_TRAIN.warmup_iters, CHAPTER_TRAIN.eval_interval, CHAPTER_TRAIN.optimizer,
        CHAPTER_TRAIN.seed)
    assert (a.num_layers, a.num_heads, a.d_model, a.positional) == (g.num_layers, g.num_heads, g.d_model, g.positional)


@pytest.mark.parametrize("bad", [["--lr", "0"], ["--lr", "nan"], ["--muon-lr", "-1"], ["--optimizer", "sgd"],
                                 ["--warmup", "-3"], ["--positional", "alibi"]])
def test_bad_training_parameters(tmp_path, bad):
    f = tmp_path / "t.txt"
    f.write_text(load_tinyshakespeare()[:5000], encoding="utf-8")
    p = cli("lm", "train", "--text", str(f), "--out", str(tmp_path / "c"), *SMALL, *bad, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "c").exists()
