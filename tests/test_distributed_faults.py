"""``lm train --nproc`` under faults: it fails and stops like one process.

A rank killed without a word is named by the launcher; the ranks die with a killed
launcher; one Ctrl-C to the terminal's process group is one stop; a rendezvous that
cannot form gives up within its deadline; a malformed torchrun variable is one line.
Tiny models, a few seconds each.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch
from conftest import patient, ranks_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
        ranks = ranks_of(p.pid)
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
        _, err = p.communicate(timeout=patient(60))
    finally:
        p.kill()
    assert p.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    iteration = json.loads((out / "trainer_state.json").read_text())["iteration"]
    assert lines[0] == (f"seqlab: error: rank 0 of 2 was killed by SIGKILL; the run stopped; the last intact "
                        f"checkpoint is iteration {iteration:,} in {out} (run the same command to resume)")
    assert not _alive(ranks[1])


def _stop_waiting(pids, seconds: float = 60) -> None:
    end = time.time() + seconds
    while time.time() < end and any(_alive(pid) for pid in pids):
        time.sleep(0.2)


def test_the_ranks_stop_with_a_killed_launcher_and_keep_a_checkpoint(text, tmp_path):
    out = tmp_path / "c"
    p = _start(text, out)
    try:
        ranks = _wait_for_checkpoint(p, out)
        p.kill()  # SIGKILL: the launcher can pass nothing on
        p.wait()
        _stop_waiting(ranks.values(), 30)
        assert not any(_alive(pid) for pid in ranks.values()), "a rank trains on without its launcher"
        err = p.stderr.read()  # rank 0's stderr is the launcher's: this pipe
    finally:
        for pid in ranks.values():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        p.stderr.close()
    # they stopped as after Ctrl-C: the step finished and its checkpoint was written (it loads)
    _, _, state = load_checkpoint(out)
    assert state["iteration"] == json.loads((out / "trainer_state.json").read_text())["iteration"]
    # and rank 0 says why, once, without offering a second Ctrl-C to nobody
    assert err.strip().splitlines() == [
        f"seqlab: interrupted: the launcher (pid {p.pid}) is gone; the run stopped; the last intact checkpoint is "
        f"iteration {state['iteration']:,} in {out} (run the same command to resume)"], err


def test_a_rank_whose_launcher_dies_before_training_says_so(text, tmp_path):
    """Rank 1 waits at the rendezvous for a rank 0 that never comes; its launcher is killed meanwhile."""
    out, log = tmp_path / "c", tmp_path / "rank1.err"
    launcher = ("import os, subprocess, sys, time\n"
                "env = dict(os.environ, SEQLAB_LAUNCHER_PID=str(os.getpid()))\n"
                f"with open({str(log)!r}, 'w') as err:\n"
                "    p = subprocess.Popen(sys.argv[1:], env=env, stdout=subprocess.DEVNULL, stderr=err)\n"
                "print(p.pid, flush=True)\n"
                "time.sleep(600)\n")
    env = dict(os.environ, RANK="1", WORLD_SIZE="2", LOCAL_RANK="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(_free_port()), SEQLAB_RENDEZVOUS_TIMEOUT="600")
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(out), *TINY]
    parent = subprocess.Popen([sys.executable, "-c", launcher, *argv], env=env, stdout=subprocess.PIPE, text=True)
    rank = int(parent.stdout.readline())
    try:
        end = time.time() + 120
        while not out.is_dir() and time.time() < end:  # its folder is made after it starts watching the launcher
            time.sleep(0.1)
        parent.kill()
        parent.wait()
        _stop_waiting([rank])
        assert not _alive(rank), "a rank waits on without its launcher"
    finally:
        parent.kill()
        parent.stdout.close()
        if _alive(rank):
            os.kill(rank, signal.SIGKILL)
    assert log.read_text().strip().splitlines() == [
        f"seqlab: interrupted: the launcher (pid {parent.pid}) is gone; the run stopped; {out} holds no checkpoint "
        "yet"]


def test_one_ctrl_c_to_the_process_group_is_one_stop_with_a_checkpoint(text, tmp_path):
    out = tmp_path / "c"
    p = _start(text, out, start_new_session=True)  # the launcher leads a group, as a terminal's foreground job
    try:
        _wait_for_checkpoint(p, out)
        os.killpg(p.pid, signal.SIGINT)  # what a terminal does with Ctrl-C: the whole foreground group
        _, err = p.communicate(timeout=patient(60))
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert err.count("stopping after this step") == 1, err
    assert "interrupted" not in err  # a second Ctrl-C would stop at once, without a checkpoint of the stop
    stopped = json.loads((out / "trainer_state.json").read_text())["iteration"]
    assert f"stopped at iteration {stopped:,}; checkpoint written" in err
    assert load_checkpoint(out)[2]["iteration"] == stopped


def _rank_process(text, out, port: int, rank: int, timeout: str = "3", addr: str = "127.0.0.1") -> subprocess.Popen:
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR=addr,
               MASTER_PORT=str(port), SEQLAB_RENDEZVOUS_TIMEOUT=timeout)
    argv = [sys.executable, "-m", "seqlab", "lm", "train", "--text", str(text), "--out", str(out), *TINY]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _one_rank(text, out, port: int, rank: int, timeout: str = "3") -> subprocess.CompletedProcess:
    stdout, stderr = (p := _rank_process(text, out, port, rank, timeout)).communicate(timeout=patient(120))
    return subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)


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


#: a rendezvous that cannot form, and the one line that says what the rank found (six tries at once, rank 0 and 1 taking
#: turns where both can meet it: one try in six once ended in a native abort and a C++ stack after the line)
RENDEZVOUS_FAILURES = {
    "unresolvable host": ((0, 1), r"no process group formed at no-such-host\.invalid:{port}: MASTER_ADDR "
                                  r"no-such-host\.invalid does not resolve to an address \([^()]+\); nothing was trained"),
    "connection refused": ((1,), r"no process group formed at 127\.0\.0\.1:{port} within 2 s: the connection was "
                                 r"refused: nothing listens there \(rank 0, which hosts it, never came\); nothing was "
                                 r"trained"),
    "port in use": ((0,), r"no process group formed at 127\.0\.0\.1:{port}: the port is in use by another program; "
                          r"nothing was trained"),
}


@pytest.mark.parametrize("case", sorted(RENDEZVOUS_FAILURES))
def test_a_rendezvous_that_cannot_form_says_what_it_found_in_one_line_every_time(case, text, tmp_path):
    ranks, says = RENDEZVOUS_FAILURES[case]
    addr = "no-such-host.invalid" if case == "unresolvable host" else "127.0.0.1"
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        # refused: a port nobody listens at (this one was free a moment ago); in use: the held one
        port = held.getsockname()[1] if case == "port in use" else _free_port()
        procs = [(ranks[i % len(ranks)], _rank_process(text, tmp_path / f"c{i}", port, ranks[i % len(ranks)], "2",
                                                       addr)) for i in range(6)]
        ended = [(rank, p, *p.communicate(timeout=patient(300))) for rank, p in procs]
    for rank, p, out, err in ended:
        assert p.returncode == 2, (p.returncode, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and re.fullmatch(f"seqlab: error: rank {rank} of 2: " + says.format(port=port),
                                                lines[0]), err
        for native in ("[c10d]", "frame #", "terminate called", "Exception raised from"):
            assert native not in out + err, out + err


class _Rank:
    """A rank as the launcher sees it: ended with ``code``, or (None) running until killed."""

    def __init__(self, code):
        self.returncode = code

    def poll(self, timeout=None):
        return self.returncode

    wait = poll

    def kill(self):
        self.returncode = -signal.SIGKILL if self.returncode is None else self.returncode


def _decide(codes, said, logged, monkeypatch, out):
    """What the launcher prints and returns for ranks that ended with ``codes``, handed over ``said``, logged ``logged``."""
    from seqlab.cli import launch

    monkeypatch.setattr(launch, "_PEER_GRACE_S", 0.0)
    reports, logs = [], [None]
    for r in range(len(codes)):
        reports.append(tempfile.TemporaryFile("w+b"))
        reports[-1].write(said.get(r, "").encode())
        reports[-1].flush()
        if r:
            logs.append(tempfile.TemporaryFile("w+", encoding="utf-8"))
            logs[-1].write(logged.get(r, ""))
    try:
        return launch._one_line([_Rank(c) for c in codes], logs, reports, len(codes), out)
    finally:
        for f in (*reports, *logs[1:]):
            f.close()


LOST = "rank 0 of 2: another rank closed its connection (it died or stopped)"
STALLED = "rank 0 of 2: another rank did not answer for 120 s (stalled?)"


@pytest.mark.parametrize("codes, said, logged, line, code", [
    # rank 0 saw its peer die: the launcher names the dead rank, whichever noticed first
    ((3, -9), {0: LOST}, {}, "rank 1 of 2 was killed by SIGKILL", 1),
    # the dead rank is rank 0; rank 1 handed its loss over
    ((-9, 3), {1: LOST.replace("rank 0", "rank 1")}, {}, "rank 0 of 2 was killed by SIGKILL", 1),
    # rank 1 stopped on an error of its own, which rank 0 only saw as a closed connection
    ((3, 2), {0: LOST}, {1: "seqlab: error: bad text\n"}, "rank 1 of 2 exited with code 2: bad text", 2),
    # no rank died (rank 1 stalled, and was killed by the launcher): rank 0's own message
    ((3, None), {0: STALLED}, {}, STALLED, 2),
    # rank 0 ended on an error of its own and said why itself: nothing more
    ((2, 2), {}, {1: "seqlab: error: bad text\n"}, None, 2),
])
def test_the_launcher_prints_one_line_naming_the_rank_that_failed(codes, said, logged, line, code, monkeypatch,
                                                                    tmp_path, capsys):
    assert _decide(codes, said, logged, monkeypatch, tmp_path) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ([] if line is None else [f"seqlab: error: {line}; the run stopped; {tmp_path} holds no checkpoint "
                                            "yet"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(codes=st.lists(st.sampled_from([None, 0, 130, 1, 2, 3, -9, -15]), min_size=2, max_size=4).filter(
    lambda cs: any(c not in (None, 0, 130) for c in cs)))
def test_the_launcher_speaks_once_unless_rank_0_has(codes, monkeypatch, tmp_path, capsys):
    said = {r: f"rank {r} of {len(codes)}: another rank closed its connection" for r, c in enumerate(codes) if c == 3}
    _decide(codes, said, {}, monkeypatch, tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    rank_0_spoke = codes[0] in (1, 2)  # an error of its own, in its own line (130 is a clean stop)
    assert len(err) == (0 if rank_0_spoke else 1), (codes, err)
    dead = [r for r, c in enumerate(codes) if c is not None and c not in (0, 130, 3)]
    if err and dead:  # the line names the first rank that ended in failure on its own
        assert err[0].startswith(f"seqlab: error: rank {dead[0]} of {len(codes)} "), (codes, err)


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
        _, err = p.communicate(timeout=patient(60))
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
    p = subprocess.run(argv, capture_output=True, text=True, timeout=patient(120))
    assert p.returncode == 0, p.stderr
    assert "(its --max-time of 2 s of training was spent, counted across resumes; rerun with a larger --max-time to go on)" in p.stdout
