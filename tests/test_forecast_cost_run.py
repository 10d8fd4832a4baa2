"""The stored side-by-side cost run: a benchmark run is stored exactly and read back verified; a smoke run, a run of
other sets or threads, rows without the benchmark's columns and a changed file are refused with one clear error."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import patient
from seqlab.experiments.forecast_cost_run import NAME, SETS, store_run, stored_run
from seqlab.store import ArtifactError, artifact_dir

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_forecast_cost.py"
ENTRIES = ["Combination", "Naive2", "N-BEATS (seqlab default)", "neuralforecast NBEATS", "neuralforecast NHITS"]


def _run(**changes) -> dict:
    rows = [dict(dataset="M3 monthly", entry=e, seeds=3 if "N" in e[:2] or "neural" in e else 1,
                 mase=0.8 + k / 3, mase_low=0.8 + k / 3 - 1e-3, mase_high=0.8 + k / 3 + 1e-3, cpu_s=60.1 * k + 0.3,
                 wall_s=60.2 * k + 0.3, series=1428, gain_per_kcpu_s=1 / 7 + k) for k, e in enumerate(ENTRIES)]
    return dict(rows=rows, threads=1, cpus=2, bfloat16="CPU flag avx512_bf16", smoke=False, load_average=[0.5, 1.0],
                torch="2.13.0+cpu") | changes


def test_a_run_is_stored_and_read_back_exactly(tmp_path):
    run = _run()
    store_run(run, "2026-12-07T18:26:48+00:00", root=tmp_path)
    rows, meta = stored_run(root=tmp_path)
    expected = pd.DataFrame(run["rows"])
    pd.testing.assert_frame_equal(rows[list(expected.columns)], expected, check_exact=True)
    assert meta["measured_at"] == "2026-12-07T18:26:48+00:00" and meta["cpus"] == 2 and meta["threads"] == 1


@pytest.mark.parametrize("run, match", [
    (_run(smoke=True), "smoke run"),
    (_run(complete=False), "unfinished run"),
    (_run(threads=2), "2 thread"),
    (_run(rows=[r | {"dataset": "M1 monthly"} for r in _run()["rows"]]), "M1 monthly"),
    (_run(rows=[r for r in _run()["rows"] if not r["entry"].startswith("neural")]), "peers False"),
    (_run(rows=[{k: v for k, v in r.items() if k != "cpu_s"} for r in _run()["rows"]]), "lack cpu_s"),
    (_run(rows=[]), "lack dataset")])
def test_a_run_that_is_not_the_stored_kind_is_refused(tmp_path, run, match):
    with pytest.raises(ArtifactError, match=match):
        store_run(run, "2026-12-07T00:00:00+00:00", root=tmp_path)
    assert not (tmp_path / NAME).exists()


def test_a_changed_file_is_refused_with_how_to_store_it_again(tmp_path):
    store_run(_run(), "2026-12-07T00:00:00+00:00", root=tmp_path)
    f = artifact_dir(NAME, tmp_path) / "rows.csv"
    f.write_text(f.read_text().replace("1428", "1429"))
    with pytest.raises(ArtifactError, match="does not match its manifest.*--store"):
        stored_run(root=tmp_path)


def test_the_committed_run_holds_the_benchmarks_entries():
    rows, meta = stored_run()
    assert tuple(rows.dataset.unique()) == SETS and meta["threads"] == 1
    assert {"Combination", "Naive2", "N-BEATS (seqlab default)", "neuralforecast NBEATS",
            "neuralforecast NHITS"} <= set(rows.entry)
    assert (rows.mase_low <= rows.mase).all() and (rows.mase <= rows.mase_high).all() and (rows.cpu_s > 0).all()


@pytest.mark.parametrize("content, match", [(json.dumps(_run(smoke=True)), "smoke run"), ("[1, 2]", "JSON object"),
                                            ("not json", "cannot store")])
def test_the_benchmark_stores_only_a_real_run_from_json(tmp_path, content, match):
    path = tmp_path / "run.json"
    path.write_text(content)
    p = subprocess.run([sys.executable, str(SCRIPT), "--store-json", str(path)], capture_output=True, text=True,
                       timeout=patient(60), cwd=tmp_path)
    last = p.stderr.strip().splitlines()[-1]  # argparse's usage, then one error line
    assert p.returncode == 2 and last.startswith("bench_forecast_cost.py: error: cannot store") and match in last, p.stderr
    assert "Traceback" not in p.stderr
