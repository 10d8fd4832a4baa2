"""benchmarks/bench_lm_gpu.py runs where it cannot be tried often (a lent GPU): its code path runs here on the CPU
(--smoke), and without a GPU it says so in one line."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import patient
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_lm_gpu.py"


def bench(*args, cwd):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=patient(600), cwd=cwd)


def test_smoke_runs_each_measurement_and_writes_full_precision_json(tmp_path):
    out = tmp_path / "r.json"
    p = bench("--smoke", "--only", "chapter,nanogpt,muon", "--json", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    runs = json.loads(out.read_text())["runs"]
    assert [r["run"] for r in runs] == ["chapter GPT float32", "chapter GPT bfloat16", "chapter LSTM float32",
                                        "chapter LSTM bfloat16", "nanoGPT recipe", "Muon recipe, half the time"]
    for r in runs:  # a few steps from a random start: near ln(66) = 4.19 nats, finite
        assert r["steps"] >= 1 and r["tokens_per_s"] > 0 and 2.0 < r["final_val_loss"] < 6.0
    nano = runs[4]
    assert nano["config"]["optimizer"] == "adamw" and nano["reference"] == 1.4697
    assert runs[5]["config"]["optimizer"] == "muon"
    assert runs[0]["cpu_val_loss"] is not None  # the chapter's CPU figure, from its artifacts
    assert list(tmp_path.iterdir()) == [out]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_without_a_gpu_it_is_one_line_and_exit_2(tmp_path):
    p = bench("--only", "nanogpt", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip().splitlines() == [
        "error: no CUDA GPU visible to torch; --smoke runs the code path on the CPU"]


def test_an_unknown_run_is_one_line_and_exit_2(tmp_path):
    p = bench("--smoke", "--only", "nanogpt,speedrun", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip().splitlines() == [
        "error: unknown run(s) speedrun; choose among chapter, nanogpt, compile, muon"]
