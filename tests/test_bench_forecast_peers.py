"""benchmarks/bench_forecast_peers.py needs the optional peers extra, which CI does not install: without it the
benchmark says so in one line that names the install command, and exits with status 2."""
import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_forecast_peers.py"


def test_missing_peers_is_one_line_naming_the_extra_and_exit_2(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("bench_forecast_peers", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setitem(sys.modules, "lightgbm", None)  # as if it were not installed, whatever is
    with pytest.raises(SystemExit) as stop:
        bench.main(["--series", "10"])
    assert stop.value.code == 2
    err = capsys.readouterr()
    assert err.out == ""
    lines = err.err.strip().splitlines()
    assert len(lines) == 1 and 'pip install -e ".[peers]"' in lines[0] and "lightgbm" in lines[0]
