"""benchmarks/bench_forecast_cost.py's code path on a few series and steps (a smoke run): every entry gets a row with
its seconds and, against Combination, a bootstrap interval; the JSON is exact and says it was a smoke run."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import patient

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_forecast_cost.py"


def test_smoke_run_scores_every_entry_and_writes_exact_json(tmp_path):
    out = tmp_path / "cost.json"
    p = subprocess.run([sys.executable, str(SCRIPT), "--sets", "M1 quarterly", "--series", "12", "--max-steps", "3",
                        "--json", str(out), "--forecasts", str(tmp_path / "f")], capture_output=True, text=True, timeout=patient(300), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "SMOKE RUN" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["smoke"] and doc["threads"] == 1
    rows = {r["entry"]: r for r in doc["rows"]}
    assert list(rows) == ["Combination", "AutoETS", "AutoTheta", "Theta", "Naive2", "N-BEATS (seqlab default)",
                          "N-BEATS (seqlab default) + Combination"]
    for name, r in rows.items():
        assert r["dataset"] == "M1 quarterly" and r["series"] == 12 and r["mase"] > 0 and r["cpu_s"] >= 0
        assert r["mase_low"] <= r["mase"] <= r["mase_high"]
        assert name == "Combination" or r["ci_low"] <= r["diff"] <= r["ci_high"]
    assert rows["N-BEATS (seqlab default)"]["seeds"] == 3
    import pandas as pd

    cv = pd.read_csv(tmp_path / "f" / "M1_quarterly.csv.gz")
    assert cv.unique_id.nunique() == 12 and {"y", "Combination", "N-BEATS s1", "N-BEATS s3"} <= set(cv.columns)
    # Combination's seconds are its three members' together, and a hybrid's its two parts'
    assert abs(rows["Combination"]["cpu_s"] - sum(rows[m]["cpu_s"] for m in ("AutoETS", "AutoTheta", "Theta"))) < 1e-9
    hybrid, nb = rows["N-BEATS (seqlab default) + Combination"], rows["N-BEATS (seqlab default)"]
    assert abs(hybrid["cpu_s"] - (nb["cpu_s"] + rows["Combination"]["cpu_s"])) < 1e-9


def test_an_unknown_set_is_one_error_and_exit_2(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT), "--sets", "M4 hourly"], capture_output=True, text=True,
                       timeout=patient(60), cwd=tmp_path)
    assert p.returncode == 2 and "--sets takes names from" in p.stderr and "M4 hourly" in p.stderr


TWO = "M1 quarterly,Tourism quarterly"


def _bench(tmp_path, *args, timeout=60):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=patient(timeout), cwd=tmp_path)


def test_an_interrupted_run_keeps_its_finished_sets_and_resume_runs_only_the_rest(tmp_path):
    out = tmp_path / "cost.json"
    smoke = ["--sets", TWO, "--series", "10", "--max-steps", "2", "--json", str(out)]
    assert _bench(tmp_path, *smoke, timeout=400).returncode == 0
    whole = json.loads(out.read_text())
    assert whole["complete"] and whole["sets_done"] == TWO.split(",") and len(whole["segments"]) == 1
    # what the file held when the run was stopped during its second set
    first = [r for r in whole["rows"] if r["dataset"] == "M1 quarterly"]
    out.write_text(json.dumps(whole | dict(rows=first, sets_done=["M1 quarterly"], complete=False)))
    p = _bench(tmp_path, *smoke, "--resume", timeout=400)
    assert p.returncode == 0, p.stderr
    assert "M1 quarterly: 10 series" not in p.stdout and "Tourism quarterly: 10 series" in p.stdout
    resumed = json.loads(out.read_text())
    assert resumed["complete"] and len(resumed["segments"]) == 2 and "in 2 parts" in p.stdout
    assert resumed["rows"][:len(first)] == first  # the finished set's rows, exactly as measured
    assert [r["entry"] for r in resumed["rows"]] == [r["entry"] for r in whole["rows"]]
    assert not (tmp_path / "cost.json.partial").exists()


def _partial(tmp_path, **changes):
    out = tmp_path / "cost.json"
    run = dict(rows=[], settings=dict(sets=TWO.split(","), peers=False, threads=1, series=10, max_steps=2),
               sets_done=[], segments=[dict(started="2026-12-07T00:00:00+00:00", seconds=1.0)], complete=False,
               machine=dict(cpu="a CPU of another kind", cores=2, torch="2.13.0+cpu"), bfloat16="none")
    out.write_text(json.dumps(run | changes) if changes.get("text") is None else changes["text"])
    return out


@pytest.mark.parametrize("args, changes, match", [
    (["--series", "10"], {}, "--resume continues the run written to --json"),
    (["--series", "10", "--max-steps", "2", "--json", "{out}"], {"text": "{"}, "cannot resume"),
    (["--series", "10", "--max-steps", "2", "--json", "{out}"], {"rows": [{"dataset": "M1 quarterly"}]},
     "cannot resume"),
    (["--series", "10", "--max-steps", "2", "--json", "{out}"], {"complete": True}, "finished run"),
    (["--series", "11", "--max-steps", "2", "--json", "{out}"], {}, "series 10 -> 11"),
    (["--series", "10", "--max-steps", "2", "--json", "{out}"], {}, "one run, one machine")])
def test_resume_refuses_what_is_not_this_runs_unfinished_file(tmp_path, args, changes, match):
    out = _partial(tmp_path, **changes)
    before = out.read_text()
    p = _bench(tmp_path, "--sets", TWO, "--resume", *[a.format(out=out) for a in args])
    last = p.stderr.strip().splitlines()[-1]
    assert p.returncode == 2 and last.startswith("bench_forecast_cost.py: error:") and match in last, p.stderr
    assert "Traceback" not in p.stderr and out.read_text() == before  # the earlier run is left as it was
