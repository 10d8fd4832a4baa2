"""Data-parallel training (gloo on the CPU): one process and two give the same run, and checkpoints move between them.

The two-process runs go through ``seqlab lm train --nproc 2``, which starts the ranks as
torchrun --standalone does. Gradients are averaged across ranks in another order than a
single process sums them, so curves agree to floating-point tolerance, not bit for bit.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import patient, ranks_of

from seqlab.cli import main
from seqlab.text.checkpoint import load_checkpoint
from seqlab.text.corpus import load_tinyshakespeare

pytestmark = pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")

#: relative tolerance on losses between one process and two (floating-point reduction order)
RTOL = 1e-5
TINY = ["--block-size", "16", "--batch-size", "8", "--eval-interval", "20", "--d-model", "16", "--num-layers", "1",
        "--num-heads", "2", "--warmup", "20", "--max-iters", "200"]


def seqlab(*args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "seqlab", *args], capture_output=True, text=True,
                          timeout=patient(timeout), **kw)


def history(out: Path) -> list[dict]:
    return json.loads((out / "trainer_state.json").read_text())["history"]


def losses(rows, key="val_loss"):
    return torch.tensor([r[key] for r in rows], dtype=torch.float64)


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    f = tmp_path_factory.mktemp("ddp") / "t.txt"
    f.write_text(load_tinyshakespeare()[:20000], encoding="utf-8")
    return f


@pytest.fixture(scope="module")
def runs(tmp_path_factory, text):
    """200 steps in one process; the same in two; two processes stopped by Ctrl-C, then resumed in one."""
    d = tmp_path_factory.mktemp("runs")
    one = seqlab("lm", "train", "--text", str(text), "--out", str(d / "one"), *TINY)
    assert one.returncode == 0, one.stderr
    two = seqlab("lm", "train", "--text", str(text), "--out", str(d / "two"), "--nproc", "2", *TINY)
    assert two.returncode == 0, two.stderr
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(d / "stopped"),
            "--nproc", "2", *TINY]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:  # the first evaluation: training is under way on both ranks
        if line.startswith("iter "):
            break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=patient(300))
    assert p.returncode == 130, err
    stopped_at = json.loads((d / "stopped" / "trainer_state.json").read_text())["iteration"]
    resumed = seqlab("lm", "train", "--text", str(text), "--out", str(d / "stopped"), *TINY)
    assert resumed.returncode == 0, resumed.stderr
    return dict(dir=d, one=one, two=two, stopped_at=stopped_at, resumed=resumed)


def test_two_processes_give_the_same_curve_as_one(runs):
    one, two = history(runs["dir"] / "one"), history(runs["dir"] / "two")
    assert [r["iter"] for r in two] == [r["iter"] for r in one] == list(range(20, 201, 20))
    torch.testing.assert_close(losses(two), losses(one), rtol=RTOL, atol=0)
    torch.testing.assert_close(losses(two, "train_loss"), losses(one, "train_loss"), rtol=RTOL, atol=0)


def test_only_rank_0_speaks(runs):
    out = runs["two"].stdout.splitlines()
    assert sum(line.startswith("model: ") for line in out) == 1
    assert sum(line.startswith("iter ") for line in out) == 10


def test_a_stopped_two_process_run_resumes_in_one_process_on_the_same_curve(runs):
    assert 20 <= runs["stopped_at"] < 200
    assert f"resume: from iteration {runs['stopped_at']:,} of" in runs["resumed"].stdout
    resumed, whole = history(runs["dir"] / "stopped"), history(runs["dir"] / "one")
    assert [r["iter"] for r in resumed] == [r["iter"] for r in whole]
    torch.testing.assert_close(losses(resumed), losses(whole), rtol=RTOL, atol=0)
    a, _, _ = load_checkpoint(runs["dir"] / "one")
    b, _, _ = load_checkpoint(runs["dir"] / "stopped")
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        torch.testing.assert_close(x, y, rtol=1e-3, atol=1e-5, msg=name)


def test_a_one_process_checkpoint_extends_with_two(runs, text, tmp_path):
    import shutil

    out = tmp_path / "c"
    shutil.copytree(runs["dir"] / "one", out)
    longer = [a if a != "200" else "240" for a in TINY]
    p = seqlab("lm", "train", "--text", str(text), "--out", str(out), "--nproc", "2", *longer)
    assert p.returncode == 0, p.stderr
    assert "extending from 200 to 240 iterations" in p.stdout
    rows = history(out)
    assert [r["iter"] for r in rows] == list(range(20, 241, 20))
    assert rows[:10] == history(runs["dir"] / "one")


def test_a_world_size_that_does_not_divide_the_batch_is_one_line(text, tmp_path):
    args = [a if a != "8" else "5" for a in TINY]  # --batch-size 5 over 2 processes
    p = seqlab("lm", "train", "--text", str(text), "--out", str(tmp_path / "c"), "--nproc", "2", *args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "--batch-size 5 must divide evenly over 2 processes" in lines[0], p.stderr


def test_grad_accumulation_keeps_the_global_batch(text, tmp_path, capsys):
    short = [a if a != "200" else "40" for a in TINY]
    assert main(["lm", "train", "--text", str(text), "--out", str(tmp_path / "acc"), "--grad-accum-steps", "4",
                 *short]) == 0
    assert [r["iter"] for r in history(tmp_path / "acc")] == [20, 40]
    # a 40-step run has its own cosine schedule, so compare against a 40-step run without accumulation
    assert main(["lm", "train", "--text", str(text), "--out", str(tmp_path / "plain"), *short]) == 0
    torch.testing.assert_close(losses(history(tmp_path / "acc")), losses(history(tmp_path / "plain")),
                               rtol=RTOL, atol=0)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc to find the ranks")
def test_a_rank_that_dies_stops_the_run_with_one_line(text, tmp_path):
    """Rank 0 sees its peer gone as soon as the launcher does: the launcher alone speaks, naming rank 1."""
    from seqlab.text.distributed import TIMEOUT

    out = tmp_path / "c"
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(out),
            "--nproc", "2", *[a if a != "200" else "100000" for a in TINY]]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not ((out / "trainer_state.json").is_file() and len(ranks := ranks_of(p.pid)) == 2):
            assert p.poll() is None, p.stderr.read()
            time.sleep(0.2)
        os.kill(ranks[1], signal.SIGKILL)
        started = time.monotonic()
        # were the launcher to wait for rank 0's collective to time out, this would take TIMEOUT
        _, err = p.communicate(timeout=TIMEOUT.total_seconds() + 60)
        took = time.monotonic() - started
    finally:
        p.kill()
    assert took < TIMEOUT.total_seconds(), (took, err)
    iteration = load_checkpoint(out)[2]["iteration"]
    assert p.returncode == 1
    assert err.strip().splitlines() == [
        f"seqlab: error: rank 1 of 2 was killed by SIGKILL; the run stopped; the last intact checkpoint is iteration "
        f"{iteration:,} in {out} (run the same command to resume)"], err


LOST = "rank 0 of 2: another rank closed its connection (it died or stopped)"


def test_a_lost_contact_is_handed_to_the_launcher_without_a_word(tmp_path):
    """The rank's side: the message goes to the launcher's file, and the rank leaves with HANDED_OVER."""
    from seqlab.cli.launch import HANDED_OVER

    code = ("from seqlab.cli.launch import leave_for\nfrom seqlab.text.distributed import LostContact\n"
            f"leave_for(LostContact({LOST!r}))\nprint('returned')\n")
    with open(tmp_path / "report", "w+b") as report:
        env = dict(os.environ, SEQLAB_LAUNCHER_PID=str(os.getpid()), SEQLAB_LAUNCHER_REPORT_FD=str(report.fileno()))
        p = subprocess.run([sys.executable, "-c", code], env=env, pass_fds=(report.fileno(),), capture_output=True,
                           text=True, timeout=patient(120))
    assert (p.returncode, p.stdout, p.stderr) == (HANDED_OVER, "", "")
    assert (tmp_path / "report").read_text() == LOST


def test_under_torchrun_a_lost_contact_is_the_rank_s_own_line(monkeypatch, capsys):
    from seqlab.cli.launch import leave_for
    from seqlab.text.distributed import LostContact

    for name in ("SEQLAB_LAUNCHER_PID", "SEQLAB_LAUNCHER_REPORT_FD"):
        monkeypatch.delenv(name, raising=False)
    e = LostContact(LOST)
    assert leave_for(e) is None  # the CLI then prints it, as for any error
    assert str(e) == f"{LOST}; the run stopped (the last checkpoint is kept)"
    assert capsys.readouterr() == ("", "")


def test_a_port_in_use_is_one_clear_error(tmp_path):
    from seqlab.errors import SeqlabError
    from seqlab.text.distributed import DistributedError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code = ("import torch\nfrom seqlab.text.distributed import from_environment, DistributedError\n"
                "try:\n    from_environment(torch.device('cpu'))\n"
                "except DistributedError as e:\n    print('DistributedError:', e)\n")
        env = dict(os.environ, RANK="0", WORLD_SIZE="2", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=patient(180))
    assert p.stdout.startswith(f"DistributedError: rank 0 of 2: no process group formed at 127.0.0.1:{port}: the port "
                               "is in use by another program"), p.stdout + p.stderr
    assert issubclass(DistributedError, SeqlabError) and issubclass(DistributedError, RuntimeError)


def test_two_processes_share_one_clock_for_a_schedule_over_seconds(text, tmp_path):
    # each rank times itself; the schedule and the stop follow the ranks' mean clock, so both leave together
    timed = [a for i, a in enumerate(TINY) if a != "--max-iters" and TINY[i - 1] != "--max-iters"]
    p = seqlab("lm", "train", "--text", str(text), "--out", str(tmp_path / "c"), "--nproc", "2", *timed,
               "--schedule-seconds", "3")
    assert p.returncode == 0, p.stderr
    rows = history(tmp_path / "c")
    assert rows[-1]["iter"] > 20 and rows[-1]["lr"] < 0.1 * 5e-3 + 5e-4  # the time ended it, at the bottom


def test_more_processes_than_gpus_is_one_clear_error(monkeypatch):
    """NCCL needs a GPU per process: rank 1 on a one-GPU machine is refused before it joins (and waits on) a group."""
    from seqlab.text.distributed import DistributedError, from_environment

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_device", lambda i: pytest.fail("set_device reached"))
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    with pytest.raises(DistributedError, match="rank 1: local rank 1 needs GPU 1, but this machine has 1"):
        from_environment(torch.device("cuda"))


def test_nproc_beyond_the_gpus_is_refused_before_launch(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    code = main(["lm", "train", "--out", str(tmp_path / "ck"), "--nproc", "2", "--device", "cuda", *TINY])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["seqlab: error: --nproc 2 on CUDA needs a GPU per process, and this machine has 1"]
    assert not (tmp_path / "ck").exists()
