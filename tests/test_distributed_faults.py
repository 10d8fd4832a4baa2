"""``lm train --nproc`` under faults: it fails and stops like one process.

A rank killed without a word is named by the launcher; the ranks die with a killed
launcher; one Ctrl-C to the terminal's process group is one stop; a rendezvous that
cannot form gives up within its deadline; a malformed torchrun variable is one line.
Tiny models, a few seconds each.
"""
from __future__ import annotations

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

from seqlab.cli import main
from seqlab.text.checkpoint import load_checkpoint
from seqlab.text.corpus import load_tinyshakespeare

pytestmark = [pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed"),
              pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc to find the ranks")]

TINY = ["--block-size", "16", "--batch-size", "8", "--eval-interval", "20", "--d-model", "16", "--num-layers", "1",
        "--num-heads", "2", "--warmup", "20", "--max-iters", "100000"]


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    f = tmp_path_factory.mktemp("faults") / "t.txt"
    f.write_text(load_tinyshakespeare()[:20000], encoding="utf-8")
    return f


def _ranks(launcher: int) -> dict[int, int]:
    """rank -> pid of the launcher's children, read from each child's environment."""
    path = Path(f"/proc/{launcher}/task/{launcher}/children")
    out = {}
    for pid in (int(c) for c in path.read_text().split()) if path.exists() else ():
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        rank = [e for e in env if e.startswith(b"RANK=")]
        if rank:
            out[int(rank[0][5:])] = pid
    return out


def _alive(pid: int) -> bool:
    try:
        state = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State:")]
    except OSError:
        return False
    return bool(state) and "Z" not in state[0].split()[1]  # a zombie has stopped; only its parent's wait is left


def _start(text, out: Path, **kw) -> subprocess.Popen:
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(out), "--nproc", "2",
            *TINY]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)


def _wait_for_checkpoint(p: subprocess.Popen, out: Path, timeout: float = 120) -> dict[int, int]:
    """Wait until the run has written a checkpoint; returns its ranks."""
    end = time.time() + timeout
    while time.time() < end:
        assert p.poll() is None, p.stderr.read()
        ranks = _ranks(p.pid)
        if (out / "trainer_state.json").is_file() and len(ranks) == 2:
            return ranks
        time.sleep(0.2)
    raise AssertionError("no checkpoint within the timeout")


def test_rank_0_killed_is_named_with_the_last_intact_checkpoint(text, tmp_path):
    out = tmp_path / "c"
    p = _start(text, out)
    try:
        ranks = _wait_for_checkpoint(p, out)
        os.kill(ranks[0], signal.SIGKILL)
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    iteration = json.loads((out / "trainer_state.json").read_text())["iteration"]
    assert lines[0] == (f"seqlab: error: rank 0 of 2 was killed by SIGKILL; the run stopped; the last intact "
                        f"checkpoint is iteration {iteration:,} in {out} (run the same command to resume)")
    assert not _alive(ranks[1])


def test_the_ranks_stop_with_a_killed_launcher_and_keep_a_checkpoint(text, tmp_path):
    out = tmp_path / "c"
    p = _start(text, out)
    try:
        ranks = _wait_for_checkpoint(p, out)
        p.kill()  # SIGKILL: the launcher can pass nothing on
        p.wait()
        end = time.time() + 30
        while time.time() < end and any(_alive(pid) for pid in ranks.values()):
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in ranks.values()), "a rank trains on without its launcher"
    finally:
        for pid in ranks.values():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        p.stderr.close()
    # they stopped as after Ctrl-C: the step finished and its checkpoint was written (it loads)
    _, _, state = load_checkpoint(out)
    assert state["iteration"] == json.loads((out / "trainer_state.json").read_text())["iteration"]


def test_one_ctrl_c_to_the_process_group_is_one_stop_with_a_checkpoint(text, tmp_path):
    out = tmp_path / "c"
    p = _start(text, out, start_new_session=True)  # the launcher leads a group, as a terminal's foreground job
    try:
        _wait_for_checkpoint(p, out)
        os.killpg(p.pid, signal.SIGINT)  # what a terminal does with Ctrl-C: the whole foreground group
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert err.count("stopping after this step") == 1, err
    assert "interrupted" not in err  # a second Ctrl-C would stop at once, without a checkpoint of the stop
    stopped = json.loads((out / "trainer_state.json").read_text())["iteration"]
    assert f"stopped at iteration {stopped:,}; checkpoint written" in err
    assert load_checkpoint(out)[2]["iteration"] == stopped


def _one_rank(text, out, port: int, rank: int, timeout: str = "3") -> subprocess.CompletedProcess:
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port), SEQLAB_RENDEZVOUS_TIMEOUT=timeout)
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(out), *TINY]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def test_a_rank_facing_a_port_held_by_another_program_gives_up_within_the_deadline(text, tmp_path):
    with socket.socket() as s:  # a listener that accepts and never answers, as another program's server
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        started = time.time()
        p = _one_rank(text, tmp_path / "c", port, rank=1)
        took = time.time() - started
    assert p.returncode == 2 and took < 60, (took, p.stderr)
    assert p.stderr.strip().splitlines() == [
        f"seqlab: error: rank 1 of 2: no process group formed at 127.0.0.1:{port} within 3 s (is another program "
        "using the port?); nothing was trained"]


def test_rank_0_on_a_port_in_use_says_so_at_once(text, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = _one_rank(text, tmp_path / "c", port, rank=0, timeout="60")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        f"seqlab: error: rank 0 of 2: no process group formed at 127.0.0.1:{port}: the port is in use by another "
        "program; nothing was trained"]


def test_rank_0_without_the_other_rank_gives_up_within_the_deadline(text, tmp_path):
    port = _free_port()
    p = _one_rank(text, tmp_path / "c", port, rank=0)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"seqlab: error: rank 0 of 2: no process group formed at 127.0.0.1:{port} within 3 s (a rank missing"), lines


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("env, says", [
    ({"WORLD_SIZE": "abc"}, "environment variable WORLD_SIZE='abc' is not a whole number"),
    ({"WORLD_SIZE": "2", "RANK": "x1"}, "environment variable RANK='x1' is not a whole number"),
    ({"WORLD_SIZE": "2", "RANK": "2"}, "environment variable RANK=2 is not a place in a run of WORLD_SIZE=2"),
    ({"WORLD_SIZE": "0"}, "environment variable WORLD_SIZE=0 must be at least 1"),
    ({"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "one"}, "environment variable LOCAL_RANK='one' is not a whole"),
    ({"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "http"},
     "environment variable MASTER_PORT='http' is not a port number"),
    ({"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "70000"},
     "environment variable MASTER_PORT=70000 is not a port number"),
    ({"WORLD_SIZE": "2", "RANK": "1", "MASTER_PORT": "29500"}, "environment variable MASTER_ADDR is not set"),
    ({"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "h", "MASTER_PORT": "1", "SEQLAB_RENDEZVOUS_TIMEOUT": "-1"},
     "environment variable SEQLAB_RENDEZVOUS_TIMEOUT='-1' must be a number of seconds"),
])
def test_a_malformed_torchrun_variable_is_one_line_naming_it(env, says, monkeypatch, tmp_path, capsys):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SEQLAB_RENDEZVOUS_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # the launcher reads the same three variables before it starts a rank (it sets the address itself)
    launcher = [["--nproc", "2"]] if not any(k.startswith(("MASTER", "SEQLAB")) for k in env) else []
    for extra in ([], *launcher):
        assert main(["lm", "train", "--out", str(tmp_path / "c"), *TINY, *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("seqlab: error: ") and says in err[0], err
    assert not (tmp_path / "c").exists()  # refused before any folder was made


def test_a_stalled_rank_cannot_hold_the_run_past_a_second_ctrl_c(text, tmp_path):
    out = tmp_path / "c"
    p = _start(text, out)
    try:
        ranks = _wait_for_checkpoint(p, out)
        os.kill(ranks[1], signal.SIGSTOP)  # rank 0 now waits in a collective for a peer that never answers
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        started = time.time()
        _, err = p.communicate(timeout=60)
        took = time.time() - started
    finally:
        p.kill()
        for pid in ranks.values():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert p.returncode == 130 and took < 30, (took, err)
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert lines[-1].startswith("seqlab: interrupted: the ranks did not stop within 5 s of the second Ctrl-C"), err
    assert "the last intact checkpoint is iteration" in lines[-1]
    assert not any(_alive(pid) for pid in ranks.values())


def test_a_time_budget_ends_two_processes_for_the_same_reason(text, tmp_path):
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(tmp_path / "c"),
            "--nproc", "2", *TINY, "--max-time", "2"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "(its --max-time of 2 s of training was spent, counted across resumes)" in p.stdout
