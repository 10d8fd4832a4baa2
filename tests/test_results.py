"""One measurement, one value: ``seqlab.results.once`` and the JSON store behind it."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import patient

from seqlab import results


def test_result_store_round_trips_exactly():
    frame = pd.DataFrame({"T": [16, 32], "ms": [1 / 3, np.nextafter(0.1, 1)], "layer": ["a", "b"],
                          "ds": pd.to_datetime(["2020-01-31", "2020-02-29"])}).set_index("T")
    value = {"frame": frame, "series": frame.ms, "array": np.arange(4.0).reshape(2, 2), (1, 2): ("x", 2.5),
             "n": np.int64(3)}
    back = results.decode(json.loads(json.dumps(results.encode(value))))
    pd.testing.assert_frame_equal(back["frame"], frame)
    pd.testing.assert_series_equal(back["series"], frame.ms)
    np.testing.assert_array_equal(back["array"], value["array"])
    assert back[(1, 2)] == ("x", 2.5) and back["n"] == 3


def test_result_store_refuses_what_it_cannot_hold():
    with pytest.raises(results.ResultStoreError, match="not object"):
        results.encode(object())


def test_once_refuses_data_as_an_argument():
    with pytest.raises(results.ResultStoreError, match="takes settings"):
        results.once(len, pd.DataFrame({"x": [1.0]}))


def _count_calls():
    _count_calls.n += 1
    return pd.DataFrame({"x": [0.1 * _count_calls.n]})


def test_once_measures_once_per_build(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_RESULTS", str(tmp_path))
    _count_calls.n = 0
    first, second = results.once(_count_calls), results.once(_count_calls)
    assert _count_calls.n == 1
    pd.testing.assert_frame_equal(first, second)
    stored, = tmp_path.glob("*.json")
    stored.write_text("{not json")
    with pytest.raises(results.ResultStoreError, match="cannot be read.*delete it"):
        results.once(_count_calls)


def test_once_without_a_store_computes_once_per_process_and_hands_out_copies(monkeypatch):
    monkeypatch.delenv("SEQLAB_RESULTS", raising=False)
    _count_calls.n = 100
    first = results.once(_count_calls)
    first.loc[0, "x"] = -1.0  # a caller's edit
    second = results.once(_count_calls)
    assert _count_calls.n == 101 and second.x[0] == pytest.approx(10.1)


def test_a_session_store_is_shared_by_processes(tmp_path):
    """A clock read through ``once``: a second process that measured again would print another time."""
    import os
    import subprocess
    import sys

    code = "import time\nfrom seqlab import results\nprint(results.once(time.time_ns))"
    env = dict(os.environ, SEQLAB_RESULTS=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=patient(120))
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr + runs[1].stderr
    assert runs[0].stdout == runs[1].stdout and int(runs[0].stdout) > 0
    assert len(list(tmp_path.glob("*.json"))) == 1


def _never_called():
    raise AssertionError("once() measured again what share() handed over")


@pytest.mark.parametrize("store", [True, False], ids=["session store", "process only"])
def test_share_hands_a_page_measurement_to_later_quotes(tmp_path, monkeypatch, store):
    if store:
        monkeypatch.setenv("SEQLAB_RESULTS", str(tmp_path))
    else:
        monkeypatch.delenv("SEQLAB_RESULTS", raising=False)
    value = pd.DataFrame({"heads": [1, 4], "accuracy": [0.5, 0.9]})
    assert results.share(_never_called, value, 7, store=store) is value
    pd.testing.assert_frame_equal(results.once(_never_called, 7, store=store), value)
    # a rerun elsewhere that rounds the last bits differently is the same measurement
    results.share(_never_called, value.assign(accuracy=value.accuracy * (1 + 1e-12)), 7, store=store)
    with pytest.raises(results.ResultStoreError, match="two values"):
        results.share(_never_called, value.assign(accuracy=[0.5, 0.8]), 7, store=store)
    with pytest.raises(results.ResultStoreError, match="two values"):
        results.share(_never_called, value.assign(heads=["one", "four"]), 7, store=store)
