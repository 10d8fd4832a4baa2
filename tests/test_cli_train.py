"""`seqlab lm train`: start-up header, stops that keep progress, resumes that say what changed, clear write errors."""
import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import patient
import torch

from seqlab.cli import main
from seqlab.text.checkpoint import load_checkpoint, read_checkpoint_state
from seqlab.text.corpus import CorpusError, load_tinyshakespeare, read_text_file

from test_cli_errors_lm import TINY, error_line  # the same tiny run and one-line error check


def with_option(argv, option, value):
    """``argv`` with ``option`` set to ``value`` (replaced where present)."""
    out = [a for i, a in enumerate(argv) if a != option and (i == 0 or argv[i - 1] != option)]
    return [*out, option, value]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    f = tmp_path_factory.mktemp("text") / "play.txt"
    f.write_text(load_tinyshakespeare()[:6000], encoding="utf-8")
    return f


@pytest.fixture
def trained(tmp_path, corpus, capsys):
    out = tmp_path / "ckpt"
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *TINY]) == 0
    return out, capsys.readouterr().out


def test_header_and_summary_describe_the_run(trained):
    out, stdout = trained
    lines = stdout.splitlines()
    n_params = sum(p.numel() for p in load_checkpoint(out)[0].parameters())
    assert lines[0].startswith(f"model: gpt, {n_params:,} parameters (1 layers, 2 heads, width 16, context 16")
    assert "char tokenizer" in lines[1] and "training /" in lines[1]
    assert lines[2].startswith("training: 10 iterations x 4 x 16 = 64 tokens per step; optimizer muon, Newton-Schulz "
                               "in ")
    assert "; 1 thread" in lines[2]
    history = read_checkpoint_state(out)["train_config"] and load_checkpoint(out)[2]["history"]
    best = min(history, key=lambda r: r["val_loss"])
    summary = next(line for line in lines if line.startswith("done: "))
    assert summary.startswith("done: iteration 10 (its 10 iterations were reached); ")
    assert f"{history[-1]['val_loss']:.4f} nats/char last" in summary  # a char model: a token is a character
    assert f"{best['val_loss']:.4f} best at iteration {best['iter']}" in summary
    # the best checkpoint holds the weights of the best evaluation
    assert load_checkpoint(out / "best")[2]["iteration"] == best["iter"]


def test_threads_are_restored_after_training(corpus, tmp_path, capsys):
    before = torch.get_num_threads()
    assert main(["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), *with_option(TINY, "--threads",
                                                                                                    "2")]) == 0
    assert "2 threads" in capsys.readouterr().out
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("option,value", [("--num-layers", "2"), ("--num-heads", "2"), ("--positional", "learned"),
                                          ("--untied-head", None), ("--qk-norm", None)])
def test_gpt_options_with_the_lstm_are_refused(capsys, corpus, tmp_path, option, value):
    base = ["--max-iters", "10", "--block-size", "16", "--batch-size", "4", "--d-model", "16"]
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), "--model", "lstm",
                               *base, option, *([value] if value else [])])
    assert option in line and "GPT only" in line
    assert not (tmp_path / "c").exists()


def test_vocab_size_needs_bpe(capsys, corpus, tmp_path):
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), *TINY,
                               "--vocab-size", "300"])
    assert "--tokenizer bpe" in line


@pytest.mark.parametrize("option,value", [("--lr", "0.001"), ("--seed", "7"), ("--optimizer", "adamw"),
                                          ("--muon-lr", "0.01"), ("--batch-size", "8"), ("--tokenizer", "bpe"),
                                          ("--warmup", "3"), ("--embedding-lr", "0.05"), ("--weight-decay", "0"),
                                          ("--muon-momentum-warmup", "5"), ("--schedule-seconds", "30")])
def test_resume_with_another_training_setting_names_it(capsys, corpus, trained, option, value):
    out, _ = trained
    before = (out / "checkpoint.safetensors").read_bytes()
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(out),
                               *with_option(TINY, option, value)])
    assert option in line and "trained with" in line and "corrupt" not in line
    assert (out / "checkpoint.safetensors").read_bytes() == before


def test_an_untied_head_and_part_rates_train_and_resume_only_as_they_were(capsys, corpus, tmp_path):
    out = tmp_path / "ckpt"
    untied = [*TINY, "--untied-head", "--embedding-lr", "0.05", "--head-lr", "0.004", "--weight-decay", "0"]
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *untied]) == 0
    capsys.readouterr()
    model, _, state = load_checkpoint(out)
    assert not model.config.tie_weights and model.lm_head.weight is not model.tok_emb.weight
    saved = state["train_config"]
    assert (saved["embedding_lr"], saved["head_lr"], saved["weight_decay"]) == (0.05, 0.004, 0.0)
    # a resume that leaves out the untied head, or changes a rate, is refused by name; the same command extends
    tied = [a for i, a in enumerate(untied) if a not in ("--untied-head", "--head-lr") and untied[i - 1] != "--head-lr"]
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(out), *tied])
    assert "--untied-head" in line and "add --untied-head" in line
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(out),
                               *with_option(untied, "--head-lr", "0.01")])
    assert "--head-lr 0.01" in line and "--head-lr 0.004" in line
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *with_option(untied, "--max-iters", "12")]) == 0
    assert read_checkpoint_state(out)["iteration"] == 12


def test_a_run_fitted_to_seconds_needs_no_step_count_and_ends_within_them(capsys, corpus, tmp_path):
    out = tmp_path / "ckpt"
    timed = [a for i, a in enumerate(TINY) if a != "--max-iters" and TINY[i - 1] != "--max-iters"]
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *timed, "--schedule-seconds", "1.5"]) == 0
    printed = capsys.readouterr().out
    assert "training: 1.5 s of steps (cosine over the time) x 4 x 16" in printed
    assert "(its 1.5 s schedule of training was spent)" in printed
    import shutil

    # run again, it says the run is finished and how to extend it; with more seconds, it extends
    shutil.copytree(out, tmp_path / "again")
    more = ["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "again"), *timed, "--schedule-seconds"]
    assert main([*more, "1.5"]) == 0
    again = capsys.readouterr().out
    assert "(nothing was left to train)" in again and "a larger schedule_seconds (--schedule-seconds) extends it" in again
    assert main([*more, "2"]) == 0
    assert "resume: extending the schedule from 1.5 s to 2 s" in capsys.readouterr().out
    model, _, state = load_checkpoint(out)
    history = state["history"]
    assert state["train_config"]["schedule_seconds"] == 1.5 and state["iteration"] == history[-1]["iter"] > 10
    assert history[-1]["lr"] < 0.1 * state["train_config"]["learning_rate"] + state["train_config"]["min_lr"]
    # a step count given with it caps the run; the header says so
    capped = tmp_path / "capped"
    assert main(["lm", "train", "--text", str(corpus), "--out", str(capped), *TINY, "--schedule-seconds", "60"]) == 0
    assert "60 s of steps (cosine over the time, at most 10 iterations)" in capsys.readouterr().out
    assert read_checkpoint_state(capped)["iteration"] == 10


def test_qk_norm_trains_and_resumes_only_as_it_was(capsys, corpus, tmp_path):
    out = tmp_path / "ckpt"
    normed = [*TINY, "--qk-norm", "--muon-momentum-warmup", "4"]
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *normed]) == 0
    capsys.readouterr()
    model, _, state = load_checkpoint(out)
    assert model.config.qk_norm and all(b.self_attn.q_norm is not None for b in model.blocks)
    assert state["train_config"]["muon_momentum_warmup"] == 4
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(out), *TINY,
                               "--muon-momentum-warmup", "4"])
    assert "add --qk-norm" in line
    plain = tmp_path / "plain"
    assert main(["lm", "train", "--text", str(corpus), "--out", str(plain), *TINY]) == 0
    capsys.readouterr()
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(plain), *TINY, "--qk-norm"])
    assert "--qk-norm" in line and "trained without it" in line
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *with_option(normed, "--max-iters", "12")]) == 0
    assert read_checkpoint_state(out)["iteration"] == 12


@pytest.mark.parametrize("flags, setting, dtype, says", [
    ({"avx512_bf16"}, "auto", "bfloat16", "Newton-Schulz in bfloat16 (CPU flag avx512_bf16)"),
    ({"avx2"}, "auto", "bfloat16", "Newton-Schulz in float32 (no bfloat16 flag among the CPU's)"),
    ({"avx512_bf16"}, "auto", "float32", "Newton-Schulz in float32, as the run is"),
    ({"avx512_bf16"}, "float32", "bfloat16", "Newton-Schulz in float32, as asked"),
])
def test_the_header_says_which_newton_schulz_runs(capsys, corpus, tmp_path, monkeypatch, flags, setting, dtype,
                                                  says):
    from seqlab import devices

    devices.native_bfloat16.cache_clear()
    monkeypatch.setattr(devices, "_cpu_flags", lambda: flags)
    try:
        assert main(["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), *TINY, "--device", "cpu",
                     "--muon-ns-dtype", setting, "--dtype", dtype]) == 0
    finally:
        devices.native_bfloat16.cache_clear()
    assert f"optimizer muon, {says}; " in capsys.readouterr().out.splitlines()[2]


def test_dropout_trains_and_resumes_only_as_it_was(capsys, corpus, tmp_path):
    for model in ("gpt", "lstm"):
        out = tmp_path / model
        extra = ["--dropout", "0.2"] if model == "gpt" else ["--dropout", "0.2", "--model", "lstm"]
        argv = ["lm", "train", "--text", str(corpus), "--out", str(out), *TINY, *extra]
        if model == "lstm":
            argv = [a for i, a in enumerate(argv) if a not in ("--num-layers", "--num-heads")
                    and argv[i - 1] not in ("--num-layers", "--num-heads")]
        assert main(argv) == 0
        capsys.readouterr()
        assert load_checkpoint(out)[0].config.dropout == 0.2
        line = error_line(capsys, with_option(argv, "--dropout", "0.1"))
        assert "--dropout 0.1" in line and "--dropout 0.2" in line
    assert "expected a number in [0, 0.9]" in error_line(capsys, ["lm", "train", "--text", str(corpus), "--out",
                                                                  str(tmp_path / "x"), *TINY, "--dropout", "1"])


def test_a_head_rate_for_a_tied_head_is_refused(capsys, corpus, tmp_path):
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), *TINY,
                               "--head-lr", "0.01"])
    assert "--untied-head" in line and "--embedding-lr" in line
    assert not (tmp_path / "c").exists()


def test_resume_extends_then_reports_complete(capsys, corpus, trained):
    out, _ = trained
    longer = with_option(TINY, "--max-iters", "15")
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *longer]) == 0
    assert "resume: extending from 10 to 15 iterations" in capsys.readouterr().out
    assert read_checkpoint_state(out)["iteration"] == 15
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *longer]) == 0
    assert "already complete at iteration 15 of 15" in capsys.readouterr().out


def test_max_time_stops_with_an_evaluation_and_a_checkpoint(capsys, corpus, tmp_path):
    out = tmp_path / "c"
    argv = with_option(with_option(TINY, "--max-iters", "100000"), "--eval-interval", "100000")
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *argv, "--max-time", "0.5"]) == 0
    state = load_checkpoint(out)[2]
    assert 0 < state["iteration"] < 100000
    assert state["history"][-1]["iter"] == state["iteration"]


def test_disk_full_during_a_checkpoint_is_one_line_and_keeps_the_previous_one(capsys, corpus, trained, monkeypatch):
    import seqlab.text.checkpoint as ckpt_mod

    out, _ = trained
    before = (out / "checkpoint.safetensors").read_bytes()
    real = ckpt_mod.atomic_write

    def full(path, data, *a, **k):
        if str(path).endswith("checkpoint.safetensors") and "best" not in str(path):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data, *a, **k)

    monkeypatch.setattr(ckpt_mod, "atomic_write", full)
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", str(out),
                               *with_option(TINY, "--max-iters", "15")])
    assert "No space left on device" in line and "checkpoint.safetensors" in line and "intact" in line
    assert (out / "checkpoint.safetensors").read_bytes() == before
    assert load_checkpoint(out)[2]["iteration"] == 10


def test_the_cli_imports_without_fcntl():
    code = ("import sys; sys.modules['fcntl'] = None\n"
            "import seqlab.cli, seqlab.cli.lm\n"
            "from pathlib import Path; import tempfile\n"
            "d = Path(tempfile.mkdtemp())\n"
            "with seqlab.cli.lm.output_lock(d): print('locked')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=patient(120))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "locked"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_writes_a_checkpoint_and_exits_130(tmp_path, corpus, sig):
    out = tmp_path / "c"
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(corpus), "--out", str(out),
            *with_option(with_option(TINY, "--max-iters", "100000"), "--eval-interval", "20")]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:  # wait until training is under way (the first evaluation)
        if line.startswith("iter "):
            break
    p.send_signal(sig)
    try:
        rest, err = p.communicate(timeout=patient(120))
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    assert p.returncode == 130, err
    state = read_checkpoint_state(out)
    assert state["iteration"] >= 20
    assert f"stopped at iteration {state['iteration']:,}" in err
    # the summary names the reason, and how old the quoted loss is when the stop fell between evaluations
    summary = next(line for line in rest.splitlines() if line.startswith("stopped: "))
    history = load_checkpoint(out)[2]["history"]
    assert summary.startswith(f"stopped: iteration {state['iteration']:,} (interrupted); validation loss "
                              f"{history[-1]['val_loss']:.4f} nats/char last")
    old = state["iteration"] - history[-1]["iter"]
    assert (f"(at iteration {history[-1]['iter']:,}, {old:,} step" in summary) == (old > 0), summary


def test_stop_then_resume_continues_the_same_run(tmp_path):
    from seqlab.nn import GPT, GPTConfig
    from seqlab.text import CharTokenizer
    from seqlab.text.corpus import split_train_val
    from seqlab.text.training import TrainConfig, train_lm

    text = load_tinyshakespeare()[:6000]
    tok = CharTokenizer().train(text)
    tr, va = split_train_val(torch.tensor(tok.encode(text)))
    c = TrainConfig(max_iters=12, batch_size=4, block_size=16, eval_interval=4, eval_iters=2, optimizer="muon")

    def make():
        torch.manual_seed(0)
        return GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=16))

    full = train_lm(make(), tr, va, c)
    calls = iter(range(100))
    first = train_lm(make(), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok, should_stop=lambda: next(calls) == 5)
    assert first.stopped and first.iterations == 6 and first.reason == "interrupted"
    assert read_checkpoint_state(tmp_path)["iteration"] == 6
    rest = train_lm(make(), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    assert rest.resumed_from == 6
    got = [r["val_loss"] for r in rest.history]
    want = [r["val_loss"] for r in full.history]
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want))


def test_a_library_resume_with_other_settings_is_refused(tmp_path):
    from seqlab.nn import GPT, GPTConfig
    from seqlab.text import CharTokenizer
    from seqlab.text.checkpoint import CheckpointMismatchError
    from seqlab.text.training import TrainConfig, train_lm

    text = load_tinyshakespeare()[:3000]
    tok = CharTokenizer().train(text)
    ids = torch.tensor(tok.encode(text))
    tr, va = ids[:2500], ids[2500:]

    def model():
        return GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=16))

    c = TrainConfig(max_iters=4, batch_size=2, block_size=16, eval_interval=2, eval_iters=1)
    train_lm(model(), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    other = TrainConfig(max_iters=4, batch_size=2, block_size=16, eval_interval=2, eval_iters=1, learning_rate=5e-4)
    with pytest.raises(CheckpointMismatchError, match="learning_rate"):
        train_lm(model(), tr, va, other, checkpoint_dir=tmp_path, tokenizer=tok)


def test_text_is_checked_before_it_is_read_whole(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * 5000)
    with pytest.raises(CorpusError, match="fits in memory"):
        read_text_file(big, max_bytes=4000)
    assert read_text_file(big, max_bytes=5000) == "a" * 5000
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok " * 10 + b"\xff" + b"more")
    with pytest.raises(CorpusError, match="UTF-8"):
        read_text_file(bad)
    split = tmp_path / "split.txt"  # a multi-byte character across the first MiB's edge is valid UTF-8
    split.write_bytes(b"a" * (2 ** 20 - 1) + "é".encode())
    assert read_text_file(split).endswith("é")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_or_device_is_not_a_text_file(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/null"):
        with pytest.raises(CorpusError, match="not a regular file"):
            read_text_file(path)
    line = error_line(capsys, ["lm", "train", "--text", str(fifo), "--out", str(tmp_path / "c"), *TINY])
    assert "not a regular file" in line


def test_load_checkpoint_reads_the_file_once(trained, monkeypatch):
    from pathlib import Path

    out, _ = trained
    reads = []
    real = Path.read_bytes

    def counting(self):
        reads.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    import safetensors

    monkeypatch.setattr(safetensors, "safe_open", None)  # a second, header-only open would fail
    load_checkpoint(out)
    assert reads.count("checkpoint.safetensors") == 1


def test_an_unreadable_checkpoint_says_so(trained, capsys):
    out, _ = trained
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    (out / "checkpoint.safetensors").chmod(0)
    line = error_line(capsys, ["lm", "sample", "--checkpoint", str(out), "--max-new-tokens", "3"])
    assert "permission denied" in line


def test_train_without_text_uses_the_bundled_corpus(tmp_path, capsys):
    argv = with_option(with_option(TINY, "--max-iters", "2"), "--eval-interval", "2")
    assert main(["lm", "train", "--out", str(tmp_path / "c"), *argv]) == 0
    assert "text: the bundled tinyshakespeare, 1,115,394 characters" in capsys.readouterr().out
    assert json.loads((tmp_path / "c" / "trainer_state.json").read_text())["iteration"] == 2


def test_progress_is_reported_on_a_tty(tmp_path, corpus):
    """The bar (iterations, elapsed < remaining) goes to stderr; evaluation rows stay whole lines on stdout."""
    pty = pytest.importorskip("pty")

    import fcntl
    import struct
    import termios

    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a new pty is 0 columns wide
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(corpus), "--out", str(tmp_path / "c"), *TINY]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=secondary, text=True, timeout=patient(120))
    os.close(secondary)
    time.sleep(0.1)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert p.returncode == 0
    assert "10/10 [" in err and "<" in err and "tok/s" in err
    assert [line for line in p.stdout.splitlines() if line.startswith("iter ")] == \
        [line for line in p.stdout.splitlines() if line.startswith("iter ") and line.endswith("tok/s")]


def test_an_empty_out_is_refused(capsys, corpus):
    line = error_line(capsys, ["lm", "train", "--text", str(corpus), "--out", "", *TINY])
    assert "--out is empty" in line


def test_a_bpe_run_reports_its_loss_per_character_beside_per_token(corpus, tmp_path, capsys):
    from seqlab.text.corpus import split_train_val

    out = tmp_path / "bpe"
    assert main(["lm", "train", "--text", str(corpus), "--out", str(out), *TINY, "--tokenizer", "bpe",
                 "--vocab-size", "300"]) == 0
    printed = capsys.readouterr().out
    model, tok, state = load_checkpoint(out)
    row = state["history"][-1]
    _, val = split_train_val(torch.tensor(tok.encode(corpus.read_text(encoding="utf-8"))))
    chars = len(tok.decode(val.tolist()))
    assert chars > len(val)  # a BPE token spells more than one character
    assert row["val_nats_per_char"] == pytest.approx(row["val_loss"] * len(val) / chars)
    assert f"val {row['val_loss']:.4f} nats/token = {row['val_nats_per_char']:.4f} nats/char" in printed
    assert f"{row['val_loss']:.4f} nats/token = {row['val_nats_per_char']:.4f} nats/char last" in printed
