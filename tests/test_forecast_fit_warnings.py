"""A warning a statsforecast model raises while it fits names the model and the series, in one process, in
statsforecast's pool processes (n_jobs) and on a Dask cluster, and the CLI prints it as one line."""
import os
import socket
import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import require

from seqlab.cli import main
from seqlab.forecast import Forecaster, StatsForecastModel
from seqlab.forecast.fit_warnings import ModelWarning, Witness, fingerprint, listing
from seqlab.forecast.origins import pass_on


def panel():
    """Two series Theta cannot decompose (constant: its seasonal index divides 0 by 0) beside a regular one."""
    t = np.arange(40)
    ys = {"flat": np.full(40, 5.0), "wave": 10 + np.sin(t) + 0.1 * t, "zeros": np.zeros(40)}
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": pd.date_range("2001-01-01", periods=40, freq="MS"),
                                    "y": y}) for u, y in ys.items()], ignore_index=True)


def model_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w.message for w in caught if isinstance(w.message, ModelWarning)]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_cross_validation_names_the_model_and_the_series(n_jobs):
    fc = Forecaster(["Theta", "Naive"], freq="MS", season_length=12, n_jobs=n_jobs)
    cv, found = model_warnings(lambda: fc.cross_validation(3, panel(), n_windows=2))
    assert len(found) == 1
    (w,) = found
    assert (w.model, w.series, w.category) == ("Theta", ["flat", "zeros"], "RuntimeWarning")
    assert "divide" in w.message
    assert str(w) == f"Theta: {w.message}, on series 'flat' and 'zeros'"
    assert cv["Theta"].notna().any()


def test_a_pool_processs_warnings_come_home_and_leave_no_files():
    from statsforecast.models import Naive

    w = Witness()
    proxy = w.wrap(Naive())
    proxy.__dict__["home"] = (socket.gethostname(), -1)  # as a pool process on this machine sees it
    proxy._keep([("Naive", "RuntimeWarning", "boom", fingerprint([1.0, 2.0]))])
    folder = os.path.join(tempfile.gettempdir(), w.topic)
    assert os.listdir(folder)
    _, found = model_warnings(lambda: w.report(lambda: [("s", np.array([1.0, 2.0]))]))
    assert [(m.model, m.message, m.series) for m in found] == [("Naive", "boom", ["s"])]
    assert not os.path.exists(folder)


def test_forecast_many_names_the_callers_ids_and_keeps_quiet_on_clean_series():
    df = panel()
    m = StatsForecastModel("Theta", season_length=12)
    _, found = model_warnings(lambda: m.fit(df, 3))
    assert [w.series for w in found] == [["flat", "zeros"]]
    _, found = model_warnings(lambda: m.fit(df[df.unique_id == "wave"], 3))
    assert found == []


def test_identical_series_are_all_named():
    df = panel()
    twin = df[df.unique_id == "flat"].assign(unique_id="flat too")
    _, found = model_warnings(lambda: StatsForecastModel("Theta", season_length=12).fit(pd.concat([df, twin]), 3))
    assert found[0].series == ["flat", "flat too", "zeros"]


def test_other_warnings_pass_through_unchanged():
    with warnings.catch_warnings(record=True) as inner:
        warnings.simplefilter("always")
        warnings.warn("plain", UserWarning)
        warnings.warn(ModelWarning("M", "boom", "RuntimeWarning", [1, 0]))
    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        pass_on(inner, np.array(["a", "b"], dtype=object))
    assert [str(w.message) for w in outer] == ["plain", "M: boom, on series 'b' and 'a'"]


@pytest.mark.parametrize("ids, text", [(["a"], "'a'"), ([1, 2], "1 and 2"), (list("abcd"), "'a', 'b', 'c' and 'd'"),
                                       (list("abcdef"), "'a', 'b', 'c' and 3 more")])
def test_listing(ids, text):
    assert listing(ids) == text


def test_witness_without_warnings_reports_nothing():
    w = Witness()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w.report(lambda: iter(()))
    assert caught == []


def test_cli_prints_one_line_naming_model_and_series(tmp_path, capsys):
    f = tmp_path / "s.csv"
    panel().to_csv(f, index=False)
    code = main(["forecast", "evaluate", "--csv", str(f), "--horizon", "3", "--season", "12", "--windows", "2",
                 "--models", "Theta,Naive"])
    err = capsys.readouterr().err
    assert code == 0
    lines = [ln for ln in err.splitlines() if ln.startswith("seqlab: warning:")]
    assert len(lines) == 1 and lines[0].startswith("seqlab: warning: Theta: ")
    assert lines[0].endswith("on series 'flat' and 'zeros'")


def test_dask_workers_send_their_warnings_home(capfd):
    distributed = require("distributed")
    require("fugue_dask")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with Forecaster(["Theta"], freq="MS", season_length=12, engine="dask", address=c.scheduler_address) as fc:
            _, found = model_warnings(lambda: fc.cross_validation(3, panel(), n_windows=2))
    assert [(w.model, w.series) for w in found] == [("Theta", ["flat", "zeros"])]
    assert "RuntimeWarning" not in capfd.readouterr().err  # nothing raw from the workers
