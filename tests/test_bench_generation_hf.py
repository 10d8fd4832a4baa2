"""benchmarks/bench_generation_hf.py compares like with like: on each exported shape, seqlab's cached generation
and transformers' generate give the same 500 greedy tokens (the timing itself is the benchmark's, not a test's)."""
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_generation_hf.py"


@pytest.fixture(scope="module")
def bench():
    pytest.importorskip("transformers")
    spec = importlib.util.spec_from_file_location("bench_generation_hf", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("positional", ["rotary", "learned"])
def test_both_libraries_give_the_same_tokens_on_the_chapter_shape(bench, positional):
    row = bench.measure(positional, "chapter", threads=1, repeats=1)
    assert row["identical"] and row["new_tokens"] == bench.NEW
    assert row["seqlab_s"] > 0 and row["transformers_s"] > 0


def test_the_json_holds_every_row_at_full_precision(bench, tmp_path):
    out = tmp_path / "rows.json"
    rows = bench.main(["--repeats", "1", "--threads", "1", "--shapes", "chapter", "--json", str(out)])
    stored = json.loads(out.read_text())["rows"]
    assert [(r["shape"], r["positional"]) for r in stored] == [("chapter", "rotary"), ("chapter", "learned")]
    assert stored[0]["ratio"] == rows[0]["ratio"] == rows[0]["seqlab_s"] / rows[0]["transformers_s"]
