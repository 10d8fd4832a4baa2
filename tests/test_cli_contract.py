"""The CLI's contract: valid JSON for every section, exit 2 for bad input, exit 1 and a traceback log for bugs."""
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest
from conftest import patient

from seqlab.cli import main
from seqlab.cli.run import jsonable, result_to_dict


def test_every_section_json_is_valid(section_results):
    """Every registered section, through the same conversion `seqlab run --json` prints."""
    from seqlab.chapter import registry

    for sid in registry():
        obj = json.loads(json.dumps(result_to_dict(section_results(sid)), allow_nan=False))
        assert obj["section"] == sid and obj["tables"], sid
        assert all({"name", "holds", "required", "evidence"} <= set(c) for c in obj["claims"]), sid
        if sid in ("14.53", "14.54", "14.57", "14.60", "14.64"):  # the verdicts their pages' sentences are chosen by
            assert obj["claims"] and all(isinstance(c["holds"], bool) for c in obj["claims"]), sid
        for name, rows in obj["tables"].items():
            assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows), (sid, name)


def test_dates_are_iso_strings_through_the_command(tmp_path):
    p = subprocess.run([sys.executable, "-m", "seqlab", "run", "14.62", "--json", "--no-figures"],
                       capture_output=True, text=True, timeout=patient(600))
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["tables"]["windows"]
    from seqlab.forecast import air_passengers

    assert rows[0]["train_from"] == air_passengers().ds.iloc[0].date().isoformat()  # a date: no time of day
    pd.Timestamp(rows[0]["test_to"])  # parses as a date


def test_json_cells():
    import numpy as np

    assert jsonable(pd.Timestamp("2020-01-31")) == "2020-01-31T00:00:00"
    assert jsonable(np.datetime64("2020-01-31")) == "2020-01-31T00:00:00"
    assert jsonable(pd.NaT) is None and jsonable(float("nan")) is None and jsonable(np.inf) is None
    assert jsonable(np.float64(1 / 3)) == 1 / 3  # full precision
    assert jsonable(np.float32(0.304)) == 0.304
    assert jsonable(np.int64(7)) == 7 and jsonable(np.bool_(True)) is True


def test_forget_bias_table_keeps_full_precision(section_results):
    fb = section_results("14.47").tables["forget_bias"]
    values = fb[["grad_at_lag_40", "grad_at_lag_70"]].to_numpy().ravel()
    assert any(float(f"{v:.3g}") != v for v in values)  # not rounded to 3 significant figures


def test_internal_errors_are_bugs_not_bad_input(capsys, monkeypatch, tmp_path):
    from seqlab.cli import run

    def broken(args):
        return 1 / 0

    monkeypatch.setattr(run, "_cmd_list", broken)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("SEQLAB_TRACEBACK", raising=False)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["list"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("seqlab: internal error: ZeroDivisionError")
    logs = list(tmp_path.glob("seqlab-crash-*.log"))
    assert len(logs) == 1 and "Traceback" in logs[0].read_text()
    monkeypatch.setenv("SEQLAB_TRACEBACK", "1")
    assert main(["list"]) == 1
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize("argv,words", [
    (["chapter", "build", "--pages", "nosuchpage"], "unknown page"),
    (["run", "14.46", "--seed", str(2 ** 70)], "--seed"),
    (["lm", "sample", "--checkpoint", "x", "--temperature", "-inf"], "--temperature"),
    (["lm"], "missing lm command"),
])
def test_one_line_errors(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_chapter_build_out_is_a_file(capsys, tmp_path):
    f = tmp_path / "file.html"
    f.write_text("keep")
    assert main(["chapter", "build", "--out", str(f), "--pages", "attention"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a directory" in err[0] and f.read_text() == "keep"


def test_tampered_artifact_stops_the_book_before_any_page_runs(capsys, monkeypatch, tmp_path):
    """Verification runs on every build, so a warm execution cache cannot serve a tampered artifact."""
    from seqlab import store

    root = tmp_path / "artifacts"
    shutil.copytree(store.ROOT, root)
    f = root / "lm" / "checkpoint.safetensors"
    data = bytearray(f.read_bytes())
    data[-10] ^= 0x01
    f.write_bytes(bytes(data))
    monkeypatch.setattr(store, "ROOT", root)
    monkeypatch.delenv("HEAVY_EVAL", raising=False)
    assert main(["chapter", "build", "--out", str(tmp_path / "site"), "--pages", "text"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lm/checkpoint.safetensors does not match its manifest" in err[0]
    assert not (tmp_path / "site").exists()


def test_fingerprint_covers_artifact_bytes(tmp_path):
    from seqlab.book import build

    pkg = tmp_path / "seqlab"
    shutil.copytree(build.Path(build.__file__).resolve().parents[1], pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "*.gz"))
    before = build.code_fingerprint(pkg)
    f = pkg / "artifacts" / "lm" / "samples.json"
    f.write_bytes(f.read_bytes() + b" ")
    assert build.code_fingerprint(pkg) != before


@pytest.mark.parametrize("files", [["a.csv"], "a.csv", {"a.csv": "sha"}, {"a.csv": {"bytes": "1", "sha256": "x"}},
                                   {"../x": {"bytes": 1, "sha256": "x"}}, {}])
def test_manifest_with_bad_files_entry(tmp_path, files):
    from seqlab.store import ArtifactError, verify_artifacts

    d = tmp_path / "set"
    d.mkdir()
    (d / "a.csv").write_text("x\n")
    (d / "manifest.json").write_text(json.dumps({"name": "set", "config": {}, "files": files}))
    with pytest.raises(ArtifactError, match="corrupt"):
        verify_artifacts("set", root=tmp_path)
