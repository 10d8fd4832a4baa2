"""benchmarks/bench_forecast_cost.py's code path on a few series and steps (a smoke run): every entry gets a row with
its seconds and, against Combination, a bootstrap interval; the JSON is exact and says it was a smoke run."""
import json
import subprocess
import sys
from pathlib import Path

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
