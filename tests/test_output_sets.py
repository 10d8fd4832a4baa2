"""Folders of several outputs are written as a whole: the previous complete set, or a folder marked incomplete.

``OutputSet`` on its own, then the two commands that write several files: ``forecast
evaluate --output`` and ``seqlab run --out``, each interrupted between files.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import held_by_another_process, patient

from seqlab.cli import main
from seqlab.files import INCOMPLETE, LOCK, MANIFEST, OutputSet, sha256_file


def _snapshot(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_committed_set_appears_whole_with_its_manifest(tmp_path):
    (tmp_path / "mine.txt").write_text("a user's file")
    with OutputSet(tmp_path, "seqlab test") as out:
        out.path("a.csv").write_text("1")
        out.path("sub/b.csv").write_text("22")
        assert not (tmp_path / "a.csv").exists()  # nothing in place before the commit
        moved = out.commit()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in moved) == ["a.csv", "sub/b.csv"]
    assert sorted(_snapshot(tmp_path)) == ["a.csv", "mine.txt", MANIFEST, "sub/b.csv"]  # no staging left
    files = json.loads((tmp_path / MANIFEST).read_text())["files"]
    assert sorted(files) == ["a.csv", "sub/b.csv"]  # the user's own file is not claimed
    assert files["sub/b.csv"]["bytes"] == 2 and files["sub/b.csv"]["sha256"] == sha256_file(tmp_path / "sub/b.csv")
    assert files["a.csv"]["command"] == "seqlab test" and files["a.csv"]["written"].endswith("+00:00")


def test_a_set_never_committed_leaves_the_folder_as_it_was(tmp_path):
    with OutputSet(tmp_path, "first") as out:
        out.path("a.csv").write_text("old a")
        out.path("b.csv").write_text("old b")
        out.commit()
    before = _snapshot(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        with OutputSet(tmp_path, "second") as out:
            out.path("a.csv").write_text("new a")
            raise KeyboardInterrupt
    assert _snapshot(tmp_path) == before


def test_a_commit_cut_short_leaves_the_folder_marked_incomplete(tmp_path, monkeypatch):
    with OutputSet(tmp_path, "first") as out:
        out.path("a.csv").write_text("old a")
        out.path("b.csv").write_text("old b")
        out.commit()
    real, calls = os.replace, []

    def dies_after_one_move(src, dst):
        calls.append(dst)
        if str(dst).endswith("b.csv"):
            raise OSError("the disk went away")
        return real(src, dst)

    with OutputSet(tmp_path, "second") as out:
        out.path("a.csv").write_text("new a")
        out.path("b.csv").write_text("new b")
        monkeypatch.setattr(os, "replace", dies_after_one_move)
        with pytest.raises(OSError):
            out.commit()
        monkeypatch.setattr(os, "replace", real)
    assert (tmp_path / "a.csv").read_text() == "new a" and (tmp_path / "b.csv").read_text() == "old b"
    assert "stopped" in (tmp_path / INCOMPLETE).read_text()  # the mix is marked, not silent
    assert json.loads((tmp_path / MANIFEST).read_text())["files"]["a.csv"]["command"] == "first"
    with OutputSet(tmp_path, "third") as out:  # the next complete set clears the mark
        out.path("a.csv").write_text("3")
        out.path("b.csv").write_text("3")
        out.commit()
    assert not (tmp_path / INCOMPLETE).exists()


def test_the_staging_folder_of_a_killed_writer_is_cleared(tmp_path):
    code = ("import os, sys\nfrom seqlab.files import OutputSet\nout = OutputSet(sys.argv[1], 'x')\n"
            "out.path('a.csv').write_text('half')\nos._exit(9)\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False, timeout=patient(60))
    # its staging folder, and its lock file, which locks nothing once its process is gone
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left[0] == LOCK and left[1].startswith(".seqlab-staging-") and len(left) == 2
    with OutputSet(tmp_path, "next"):
        pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["/etc/passwd", "../up.csv", MANIFEST, INCOMPLETE, ""])
def test_names_outside_the_set_are_refused(tmp_path, name):
    with OutputSet(tmp_path, "x") as out, pytest.raises(ValueError):
        out.path(name)


@pytest.fixture
def series_csv(tmp_path):
    t = np.arange(36)
    path = tmp_path / "s.csv"
    pd.DataFrame({"ds": t + 1, "a": 50 + np.sin(t), "b": 80 + np.cos(t / 2)}).to_csv(path, index=False)
    return path


def test_forecast_evaluate_interrupted_between_files_keeps_the_previous_set(series_csv, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    args = ["forecast", "evaluate", "--csv", str(series_csv), "--horizon", "3", "--models", "Naive,SeasonalNaive",
            "--season", "4", "--output", str(out)]
    assert main(args) == 0
    before = _snapshot(out)
    assert sorted(before) == ["cross_validation.csv", "horizon_errors.csv", MANIFEST, "series_errors.csv",
                              "summary.csv"]
    real, written = pd.DataFrame.to_csv, []

    def ctrl_c_on_the_third(self, *a, **k):
        written.append(1)
        if len(written) == 3:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(pd.DataFrame, "to_csv", ctrl_c_on_the_third)
    assert main([*args[:-4], "--models", "Naive", "--output", str(out)]) == 130
    assert _snapshot(out) == before
    assert "Traceback" not in capsys.readouterr().err


def test_seqlab_run_interrupted_in_a_section_writes_none_of_its_figures(tmp_path, monkeypatch):
    import seqlab.chapter as chapter

    def half_a_section(sid, out, **kw):
        (out / "first.png").write_bytes(b"png")
        raise KeyboardInterrupt

    monkeypatch.setattr(chapter, "run_section", half_a_section)
    assert main(["run", "14.50.2", "--out", str(tmp_path)]) == 130
    assert list(tmp_path.iterdir()) == []


def test_a_signal_during_the_move_waits_until_the_set_is_whole(tmp_path, monkeypatch):
    import signal
    import threading

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        real = os.replace

        def replace_then_signal(src, dst):
            real(src, dst)
            if str(dst).endswith("a.csv"):  # from another thread, as a terminal's or kill's signal may arrive
                t = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGTERM))
                t.start()
                t.join()

        with OutputSet(tmp_path, "first") as out:
            out.path("a.csv").write_text("old a")
            out.path("b.csv").write_text("old b")
            out.commit()
        with OutputSet(tmp_path, "second") as out:
            out.path("a.csv").write_text("new a")
            out.path("b.csv").write_text("new b")
            monkeypatch.setattr(os, "replace", replace_then_signal)
            with pytest.raises(Stopped):  # delivered, but only once the set was whole
                out.commit()
            monkeypatch.setattr(os, "replace", real)
            assert out.committed and "moved into" in out.fate()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (tmp_path / "a.csv").read_text() == "new a" and (tmp_path / "b.csv").read_text() == "new b"
    assert not (tmp_path / INCOMPLETE).exists()
    assert {f["command"] for f in json.loads((tmp_path / MANIFEST).read_text())["files"].values()} == {"second"}


@pytest.mark.parametrize("blocker", ["b.csv", "sub", MANIFEST])
def test_a_name_held_by_a_folder_or_file_is_refused_before_anything_moves(tmp_path, blocker):
    from seqlab.files import OutputFolderError

    if blocker == "sub":
        (tmp_path / "sub").write_text("a file where the set needs a folder")
    else:
        (tmp_path / blocker).mkdir()
    before = _snapshot(tmp_path)
    with OutputSet(tmp_path, "x") as out:
        out.path("a.csv").write_text("a")
        out.path("b.csv").write_text("b")
        out.path("sub/c.csv").write_text("c")
        with pytest.raises(OutputFolderError, match=f"{tmp_path / blocker} is a (folder|file).*nothing was moved in"):
            out.commit()
    assert _snapshot(tmp_path) == before and [p.name for p in tmp_path.iterdir()] == [blocker]


def test_seqlab_run_into_a_folder_with_a_blocking_folder_is_one_line(tmp_path, capsys):
    (tmp_path / "grad_through_time.png").mkdir()  # one of the figures §14.47 writes
    assert main(["run", "14.47", "--out", str(tmp_path)]) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("running §")]
    assert len(err) == 1 and f"{tmp_path / 'grad_through_time.png'} is a folder" in err[0], err
    assert [p.name for p in tmp_path.iterdir()] == ["grad_through_time.png"]  # nothing moved in, no mark


def test_the_folder_lock_refuses_a_second_process_at_once_and_leaves_no_trace(tmp_path):
    from seqlab.files import FolderInUseError, folder_lock

    with held_by_another_process(tmp_path, "seqlab forecast evaluate --output x") as pid:
        with pytest.raises(FolderInUseError, match=f"in use by another writer \\(pid {pid}, `seqlab forecast "):
            OutputSet(tmp_path, "second")
        assert (tmp_path / LOCK).is_file()
    assert list(tmp_path.iterdir()) == []  # a finished writer leaves no lock file
    with folder_lock(tmp_path, "outer"), OutputSet(tmp_path, "inner") as out:  # re-entrant in one process
        out.path("a.csv").write_text("1")
        out.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", MANIFEST]


def _hf_checkpoint(folder):
    import torch

    from seqlab.nn import GPT, GPTConfig
    from seqlab.text.checkpoint import save_checkpoint
    from seqlab.text.tokenizers import CharTokenizer

    tok = CharTokenizer().train("ROMEO: But soft")
    torch.manual_seed(0)
    save_checkpoint(folder, GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=8, num_layers=1, num_heads=2,
                                          d_model=8)), tokenizer=tok)


@pytest.mark.parametrize("command", ["run", "export", "build"])
def test_every_output_folder_takes_one_writer(tmp_path, capsys, command):
    out = tmp_path / "out"
    argv = {"run": ["run", "14.50.2", "--out", str(out)],
            "export": ["lm", "export", "--checkpoint", str(tmp_path / "ckpt"), "--out", str(out)],
            "build": ["chapter", "build", "--pages", "attention", "--out", str(out), "--cache", str(tmp_path / "c")]}
    if command == "export":
        _hf_checkpoint(tmp_path / "ckpt")
    if command == "build":
        pytest.importorskip("sphinx")
    with held_by_another_process(out) as pid:
        assert main(argv[command]) == 2
        err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out} is in use by another writer (pid {pid}, `seqlab test holder`)" in err[0], err
    assert list(out.iterdir()) == []  # refused before anything was written


@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_a_second_forecast_writer_is_refused_before_any_fit(tmp_path, capsys, monkeypatch, command):
    from seqlab.forecast import Forecaster

    csv = tmp_path / "s.csv"
    pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=36, freq="MS"),
                  "y": np.arange(36.0)}).to_csv(csv, index=False)
    monkeypatch.setattr(Forecaster, "__init__", lambda *a, **k: pytest.fail("a model was set up"))
    out = tmp_path / "out"
    with held_by_another_process(out, "seqlab forecast evaluate --output out") as pid:
        code = main(["forecast", command, "--csv", str(csv), "--horizon", "6", "--models", "Naive",
                     "--output", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert f"{out} is in use by another writer (pid {pid}, `seqlab forecast evaluate --output out`)" in err[0]
    assert list(out.iterdir()) == []
