"""Every bad language-model input ends as one clear line and exit 2, and nothing a user had is lost."""
import json
import shutil
import stat

import pytest
from conftest import held_by_another_process, patient

from seqlab.cli import main
from seqlab.text.corpus import load_tinyshakespeare

TINY = ["--max-iters", "10", "--block-size", "16", "--batch-size", "4", "--eval-interval", "5", "--d-model", "16",
        "--num-layers", "1", "--num-heads", "2", "--warmup", "2"]


def error_line(capsys, argv) -> str:
    """Run the CLI in-process; assert exit 2 and exactly one stderr line, and return it."""
    code = main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("seqlab: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("text")
    f = d / "play.txt"
    f.write_text(load_tinyshakespeare()[:6000], encoding="utf-8")
    return f


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory, corpus):
    out = tmp_path_factory.mktemp("run") / "ckpt"
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *TINY]) == 0
    return out


@pytest.fixture
def copy(ckpt, tmp_path):
    dst = tmp_path / "ckpt"
    shutil.copytree(ckpt, dst)
    return dst


@pytest.mark.parametrize("option,value,word", [
    ("--batch-size", "1000000000000", "memory"), ("--d-model", "10000000", "memory"),
    ("--lr", "1e300", "--lr"), ("--muon-lr", "1e300", "--muon-lr"), ("--lr", "1e-320", "--lr"),
    ("--muon-lr", "-inf", "--muon-lr"), ("--seed", str(2 ** 70), "--seed"), ("--vocab-size", "12", "--vocab-size"),
    ("--embedding-lr", "0", "--embedding-lr"), ("--head-lr", "nan", "--head-lr"), ("--weight-decay", "-1", "--weight-decay"),
    ("--schedule-seconds", "0", "--schedule-seconds"), ("--schedule-seconds", "inf", "--schedule-seconds"),
])
def test_bad_training_settings(capsys, corpus, tmp_path, option, value, word):
    args = [a for i, a in enumerate(TINY) if a != option and (i == 0 or TINY[i - 1] != option)]
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), *args, option, value])
    assert word in line
    assert not (tmp_path / "c" / "checkpoint.safetensors").exists()


@pytest.mark.parametrize("option,value", [("--d-model", "32"), ("--num-layers", "2"), ("--model", "lstm"),
                                          ("--positional", "learned")])
def test_resume_with_other_model_settings_names_the_option(capsys, corpus, copy, option, value):
    before = (copy / "checkpoint.safetensors").read_bytes()
    drop = {option} | ({"--num-layers", "--num-heads"} if value == "lstm" else set())  # GPT-only options
    args = [a for i, a in enumerate(TINY) if a not in drop and (i == 0 or TINY[i - 1] not in drop)]
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(copy), *args, option, value])
    assert option in line and "checkpoint" in line
    assert (copy / "checkpoint.safetensors").read_bytes() == before  # nothing lost


def test_resume_on_a_text_in_another_alphabet(capsys, copy, tmp_path):
    f = tmp_path / "cyrillic.txt"
    f.write_text("Быть или не быть, вот в чём вопрос. " * 300, encoding="utf-8")
    line = error_line(capsys, ["lm", "train", "--text", str(f), "--out", str(copy), *TINY])
    assert "was trained on" in line and "not on this text" in line  # the text's record, before its alphabet


@pytest.mark.parametrize("content,words", [("a" * 5600, "single distinct character"),
                                           ("x" * 70000 + "\x00" + "y" * 10, "NUL byte")])
def test_garbage_texts(capsys, tmp_path, content, words):
    f = tmp_path / "t.txt"
    f.write_bytes(content.encode("utf-8"))
    line = error_line(capsys, ["lm", "train", "--text", str(f), "--out", str(tmp_path / "c"), *TINY])
    assert words in line


def test_directory_as_text(capsys, tmp_path):
    assert "is a directory" in error_line(capsys, ["lm", "train", "--text", str(tmp_path), "--out",
                                                   str(tmp_path / "c"), *TINY])


def test_flipped_byte_in_the_weights(capsys, copy):
    f = copy / "checkpoint.safetensors"
    data = bytearray(f.read_bytes())
    data[-100] ^= 0x01  # inside the last tensor's bytes, past the JSON header
    f.write_bytes(bytes(data))
    assert "sha256" in error_line(capsys, ["lm", "sample", "--checkpoint", str(copy), "--max-new-tokens", "5"])


def test_tokenizer_from_another_run(capsys, copy, tmp_path):
    from seqlab.text import CharTokenizer

    CharTokenizer().train("abcdefghijklmnopqrstuvwxyz").save(copy / "tokenizer.txt")
    line = error_line(capsys, ["lm", "sample", "--checkpoint", str(copy), "--max-new-tokens", "5"])
    assert "not the tokenizer this checkpoint was trained with" in line


def test_wrong_shape_weights_are_one_line(capsys, copy):
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    f = copy / "checkpoint.safetensors"
    with safe_open(str(f), framework="pt") as h:
        meta = h.metadata()
    cfg = json.loads(meta["model_config"])
    meta["model_config"] = json.dumps(cfg | {"d_model": 32})
    save_file(load_file(str(f)), str(f), metadata=meta)
    assert "corrupt" in error_line(capsys, ["lm", "sample", "--checkpoint", str(copy), "--max-new-tokens", "5"])


def test_tiny_temperature_samples_like_greedy(capsys, ckpt):
    base = ["lm", "sample", "--checkpoint", str(ckpt), "--prompt", "ROMEO:", "--max-new-tokens", "20"]
    assert main([*base, "--temperature", "1e-300"]) == 0
    cold = capsys.readouterr().out
    assert main([*base, "--greedy"]) == 0
    assert cold == capsys.readouterr().out


def test_a_second_training_on_the_same_folder_is_refused(capsys, corpus, copy):
    with held_by_another_process(copy, "seqlab lm train --out elsewhere") as pid:
        line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(copy), *TINY])
    assert "in use" in line and f"pid {pid}, `seqlab lm train --out elsewhere`" in line
    assert not (copy / ".lock").exists()  # the holder's lock went with it, and this run took none


def test_unwritable_out_is_refused_before_training(capsys, corpus):
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", "/proc/self/seqlab-out", *TINY])
    assert "--out" in line


def test_resume_clears_orphans_and_keeps_one_file_mode(capsys, corpus, copy):
    orphan = copy / ".checkpoint.safetensors.abc123.seqlab-tmp"
    orphan.write_bytes(b"half a checkpoint")
    more = [a if a != "10" else "15" for a in TINY]
    assert main(["lm", "train", "--text", str(corpus), "--out", str(copy), *more]) == 0
    capsys.readouterr()
    assert not orphan.exists()
    modes = {str(p.relative_to(copy)): stat.S_IMODE(p.stat().st_mode) for p in copy.rglob("*")
             if p.is_file() and not p.name.startswith(".lock")}
    one = {"checkpoint.safetensors", "tokenizer.txt", "trainer_state.json"}
    assert set(modes) == one | {f"best/{name}" for name in one} | {"loss_curve.png"}
    assert set(modes.values()) == {0o644}


def test_checkpoint_is_one_unit(copy):
    """The tokenizer and trainer state live inside the one file that is replaced atomically."""
    from seqlab.text.checkpoint import load_checkpoint

    (copy / "tokenizer.txt").unlink()
    (copy / "trainer_state.json").unlink()
    model, tok, state = load_checkpoint(copy)
    assert tok is not None and tok.vocab_size == model.config.vocab_size and state["iteration"] == 10


def test_sigkill_then_resume_is_bitwise_exact(tmp_path, corpus):
    """A run killed with SIGKILL mid-training resumes (its lock died with it) to the same weights, bit for bit."""
    import signal
    import subprocess
    import sys
    import time

    from safetensors.torch import load_file

    args = [a if a != "10" else "400" for a in TINY]  # --max-iters 400, checkpoints every 5 iterations
    cmd = lambda out: [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(corpus), "--out", str(out), *args]
    assert subprocess.run(cmd(tmp_path / "whole"), capture_output=True, timeout=patient(600)).returncode == 0
    killed = tmp_path / "killed"
    proc = subprocess.Popen(cmd(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = killed / "trainer_state.json"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if state.exists() and json.loads(state.read_text() or "{}").get("iteration", 0) >= 20:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    again = subprocess.run(cmd(killed), capture_output=True, text=True, timeout=patient(600))
    assert again.returncode == 0, again.stderr
    assert "resume: from iteration" in again.stdout
    a, b = load_file(str(tmp_path / "whole" / "checkpoint.safetensors")), load_file(str(killed / "checkpoint.safetensors"))
    assert a.keys() == b.keys() and all(torch_equal(a[k], b[k]) for k in a)


def torch_equal(x, y) -> bool:
    import torch

    return x.dtype == y.dtype and x.shape == y.shape and bool(torch.equal(x, y))
