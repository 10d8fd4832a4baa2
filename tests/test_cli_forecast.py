import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import patient

from seqlab.forecast import Forecaster
from seqlab.forecast.data import ForecastDataError


def cli(*args):
    return subprocess.run([sys.executable, "-m", "seqlab", *args], capture_output=True, text=True, timeout=patient(300))


def monthly(n=60, series=("a", "b")):
    t = np.arange(n)
    return pd.DataFrame({"ds": pd.date_range("2000-01-01", periods=n, freq="MS"),
                         **{s: 100 + t + 10 * np.sin(2 * np.pi * t / 12) + i for i, s in enumerate(series)}})


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_evaluate_prints_a_mase_table(tmp_path, layout):
    wide = monthly()
    df = wide if layout == "wide" else wide.melt(id_vars="ds", var_name="unique_id", value_name="y")
    f = tmp_path / "s.csv"
    df.to_csv(f, index=False)
    p = cli("forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12", "--windows", "2",
            "--models", "Naive,SeasonalNaive,Naive2")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["model", "mase", "smape"]
    assert {ln.split()[0] for ln in lines[1:]} == {"Naive", "SeasonalNaive", "Naive2"}


def _write(tmp_path, df):
    f = tmp_path / "bad.csv"
    df.to_csv(f, index=False)
    return f


@pytest.mark.parametrize("case", ["missing", "duplicate", "non_numeric", "short", "model"])
def test_bad_input_one_line_exit_2(tmp_path, case):
    long = monthly().melt(id_vars="ds", var_name="unique_id", value_name="y")[["unique_id", "ds", "y"]]
    models = "Naive,SeasonalNaive"
    if case == "missing":
        long.loc[5, "y"] = np.nan
    elif case == "duplicate":
        long = pd.concat([long, long.iloc[[3]]]).sort_values(["unique_id", "ds"], kind="stable")
    elif case == "non_numeric":
        long["y"] = long.y.astype(object)
        long.loc[7, "y"] = "n/a"
    elif case == "short":
        long = long.groupby("unique_id").head(20)
    else:
        models = "Naive,Oracle"
    p = cli("forecast", "evaluate", "--csv", str(_write(tmp_path, long)), "--horizon", "6", "--season", "12",
            "--windows", "2", "--models", models)
    assert p.returncode == 2, p.stdout
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("seqlab: error:"), p.stderr


def test_min_train_length_lets_short_series_join_the_later_windows(tmp_path):
    long = monthly(n=60).melt(id_vars="ds", var_name="unique_id", value_name="y")[["unique_id", "ds", "y"]]
    first = long.unique_id.iloc[0]
    long = long[(long.unique_id != first) | (long.ds >= long.ds.iloc[30])]  # the first series: 30 months
    f = _write(tmp_path, long)
    args = ["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12", "--windows", "4",
            "--models", "Naive,SeasonalNaive"]
    # 4 windows a horizon apart leave the first series 6 months before its first origin; SeasonalNaive needs 12.
    # The rule is the library's: the CLI refuses exactly what Forecaster.cross_validation refuses.
    strict = cli(*args)
    assert strict.returncode == 2 and "SeasonalNaive needs at least 12" in strict.stderr, strict.stderr
    assert len(strict.stderr.strip().splitlines()) == 1
    with pytest.raises(ForecastDataError, match="SeasonalNaive needs at least 12"):
        Forecaster(["Naive", "SeasonalNaive"], freq="MS", season_length=12).cross_validation(6, long, n_windows=4,
                                                                             step_size=6)
    n_series = long.unique_id.nunique()
    for min_train, windows_of_the_short_one in ((24, 1), (12, 3)):
        p = cli(*args, "--min-train-length", str(min_train))
        assert p.returncode == 0, p.stderr
        rows = {ln.split()[0]: ln.split() for ln in p.stdout.strip().splitlines()[1:]}
        header = p.stdout.splitlines()[0].split()
        # 30 months: cuts 6, 12, 18, 24 -> the last window, and the earlier ones training on >= min_train
        assert int(rows["Naive"][header.index("units")]) == 4 * (n_series - 1) + windows_of_the_short_one
    bad = cli(*args, "--min-train-length", "1")
    assert bad.returncode == 2 and "min_train_length must be >= 2" in bad.stderr, bad.stderr


def _evaluate(capsys, tmp_path, *extra):
    from seqlab.cli import main

    f = tmp_path / "m.csv"
    monthly(series=("a", "b", "c", "d", "e", "f", "g")).to_csv(f, index=False)
    code = main(["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12", "--windows", "2",
                 "--models", "Naive,SeasonalNaive,Naive2", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_level_prints_coverage_and_winkler_beside_mase(capsys, tmp_path):
    code, out, err = _evaluate(capsys, tmp_path, "--level", "80,95")
    assert code == 0, err
    header = out.splitlines()[0].split()
    assert header[:3] == ["model", "mase", "smape"]
    assert {"coverage_80", "winkler_80", "coverage_95", "winkler_95"} <= set(header)
    rows = {ln.split()[0]: dict(zip(header, ln.split())) for ln in out.strip().splitlines()[1:]}
    assert set(rows) == {"Naive", "SeasonalNaive", "Naive2"}
    assert all(0 <= float(r["coverage_95"]) <= 1 and float(r["winkler_95"]) > 0 for r in rows.values())
    code, native, err = _evaluate(capsys, tmp_path, "--level", "80,95", "--intervals", "native")
    assert code == 0, err
    # the point forecasts are the same, the intervals are not
    assert [ln.split()[:3] for ln in native.splitlines()] == [ln.split()[:3] for ln in out.splitlines()]
    assert native != out
    # fewer calibration windows: 7 series x 2 windows = 14 scores, enough at 80% but not at 95%: refused before any
    # fit, with the widest level 14 scores bound (issue 56)
    code, short, err = _evaluate(capsys, tmp_path, "--level", "80,95", "--calibration-windows", "2")
    assert code == 2 and short == "" and len(err.strip().splitlines()) == 1, err
    assert "needs at least 19 calibration errors per step" in err and "at most 93.3%" in err


@pytest.mark.parametrize("extra,words", [
    (["--level", "120"], "between 0 and 100"), (["--level", "x"], "percentages"),
    (["--level", "80,,95"], "percentages"),
    (["--level", "80,80"], "twice"), (["--level", "nan"], "between 0 and 100"), (["--intervals", "native"], "--level"),
    (["--level", "80", "--intervals", "bayes"], "invalid choice"), (["--engine", "mpi"], "invalid choice"),
    (["--address", "127.0.0.1:8786"], "--engine"), (["--calibration-windows", "3"], "--level"),
    (["--level", "80", "--calibration-windows", "0"], "calibration-windows"),
    (["--level", "80", "--calibration-step", "-1"], "calibration-step"),
])
def test_bad_interval_and_engine_options_one_line_exit_2(capsys, tmp_path, extra, words):
    code, out, err = _evaluate(capsys, tmp_path, *extra)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("seqlab: error:") and words in lines[0], err


def test_output_writes_the_tables_at_full_precision(capsys, tmp_path):
    from seqlab.forecast import Forecaster, evaluate, read_series_csv

    out_dir = tmp_path / "out"
    code, out, err = _evaluate(capsys, tmp_path, "--level", "80", "--output", str(out_dir))
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == ["cross_validation.csv", "horizon_errors.csv",
                                                         "seqlab-manifest.json", "series_errors.csv",
                                                         "summary.csv"]  # no temporary or staging folder left
    assert "sMAPE" in err and "0 (exact) to 200" in err
    df = read_series_csv(tmp_path / "m.csv")
    models = ["Naive", "SeasonalNaive", "Naive2"]
    cv = Forecaster(models, freq="MS", season_length=12).cross_validation(6, df, n_windows=2, level=[80], step_size=6)
    got = pd.read_csv(out_dir / "cross_validation.csv", float_precision="round_trip")
    assert list(got.columns) == list(cv.columns)
    assert got.ds.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all() and got.cutoff.str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    np.testing.assert_array_equal(got[cv.columns[3:]].to_numpy(), cv[cv.columns[3:]].to_numpy())
    errors = evaluate(cv, df, 12, models, level=[80])
    series = pd.read_csv(out_dir / "series_errors.csv", float_precision="round_trip")
    assert len(series) == 3 * 7 and (series.windows == 2).all()
    mine = errors[(errors.model == "Naive2") & (errors.unique_id == "c")].scaled_error.mean()
    assert series.set_index(["model", "unique_id"]).loc[("Naive2", "c"), "mase"] == pytest.approx(mine, rel=1e-14)
    horizon = pd.read_csv(out_dir / "horizon_errors.csv", float_precision="round_trip")
    assert sorted(horizon.step.unique()) == [1, 2, 3, 4, 5, 6] and (horizon.points == 14).all()
    summary = pd.read_csv(out_dir / "summary.csv", float_precision="round_trip").set_index("model")
    printed = {ln.split()[0]: float(ln.split()[1]) for ln in out.strip().splitlines()[1:]}
    assert all(abs(summary.loc[m, "mase"] - v) < 1e-6 for m, v in printed.items())


def test_output_must_be_a_folder(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = _evaluate(capsys, tmp_path, "--output", str(tmp_path / "file"))
    assert code == 2 and "--output" in err and "not a directory" in err


def test_nbeats_options_and_progress(tmp_path, monkeypatch, capsys):
    from seqlab.cli import main

    monkeypatch.setenv("SEQLAB_WORKERS", "1")  # members in this process: no workers to start
    f = tmp_path / "m.csv"
    monthly(n=48).to_csv(f, index=False)
    args = ["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12", "--windows", "2",
            "--models", "Naive,N-BEATS", "--max-steps", "4", "--members", "2"]
    code = main([*args, "--progress"])
    shown = capsys.readouterr()
    assert code == 0, shown.err
    assert {ln.split()[0] for ln in shown.out.strip().splitlines()[1:]} == {"Naive", "N-BEATS"}
    err = shown.err
    assert "fitting Naive at forecast origins, all 2 window(s) at once" in err
    for w in (1, 2):
        assert f"fitting N-BEATS at forecast origins, window {w}/2" in err
        for k in (1, 2):
            assert f"N-BEATS member {k}/2 trained (4 steps) at forecast origins, window {w}/2" in err
    assert "step/s" in err  # the bar, with its rate and time left
    assert "member 3/2" not in err and "trained (2000 steps)" not in err
    code = main(args)
    quiet = capsys.readouterr()
    assert code == 0 and "fitting" not in quiet.err  # not a terminal: no progress by default
    assert quiet.out == shown.out  # the same numbers, followed or not


@pytest.mark.parametrize("extra,words", [
    (["--max-steps", "5"], "--max-steps is an N-BEATS option"), (["--members", "0"], "--members"),
    (["--members", "61"], "<= 60"), (["--max-steps", "-1"], "--max-steps"),
    (["--connect-timeout", "0", "--engine", "dask", "--address", "127.0.0.1:1"], "--connect-timeout"),
])
def test_bad_nbeats_options_one_line(capsys, tmp_path, extra, words):
    code, out, err = _evaluate(capsys, tmp_path, *extra)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], err
