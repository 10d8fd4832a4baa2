"""Every size option has an upper bound (issue 55): from the data where the data decides (a horizon no longer than
the longest series, dates pandas can hold), from memory, or a fixed cap stated in --help. Beyond it: one line,
exit 2, before any fit, never a MemoryError, an OutOfBoundsDatetime or a long run."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from seqlab.cli import main
from seqlab.errors import InvalidParameterError
from seqlab.forecast import Forecaster, FutureDateError, TooLargeError
from seqlab.forecast import bounds

HUGE = 10 ** 20


def _frame(n=48, ids=("a", "b"), start="2000-01-01", freq="MS"):
    ds = pd.date_range(start, periods=n, freq=freq) if freq != 1 else np.arange(1, n + 1)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": ds, "y": 50 + 10 * i + np.sin(np.arange(n))})
                      for i, u in enumerate(ids)], ignore_index=True)


def _csv(folder, df, name="s.csv"):
    path = folder / name
    df.to_csv(path, index=False)
    return str(path)


def outcome(capsys, argv, limit_s=60.0):
    """Exit code, stdout and stderr; anything but (0, output) or (2, one error line), or a long run, fails."""
    t0 = time.monotonic()
    code = main(argv)
    took = time.monotonic() - t0
    out = capsys.readouterr()
    assert code in (0, 2), (argv, code, out.err[-2000:])
    if code == 2:
        lines = out.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("seqlab: error: "), (argv, out.err)
    assert took < limit_s, (argv, took)
    return code, out.out, out.err


def error_line(capsys, argv) -> str:
    code, _, err = outcome(capsys, argv, limit_s=20.0)
    assert code == 2, err
    return err.strip()


class Spy:
    """A model that fails the test if it is ever fitted: the bounds must refuse before any fit."""

    name = "Spy"

    def fit(self, df, h):
        raise AssertionError("a model was fitted before the request was refused")

    def predict(self, df, h):
        raise AssertionError("a model was asked to forecast before the request was refused")


# ------------------------------------------------------------------ the horizon: the longest series bounds it
def test_predict_refuses_a_horizon_longer_than_the_longest_series(capsys, tmp_path):
    f = _csv(tmp_path, _frame(freq=1))
    base = ["forecast", "predict", "--csv", f, "--models", "Naive"]
    code, out, _ = outcome(capsys, [*base, "--horizon", "48"])
    assert code == 0 and len(pd.read_csv(__import__("io").StringIO(out))) == 2 * 48
    line = error_line(capsys, [*base, "--horizon", "49"])
    assert "--horizon 49" in line and "longest series (48 observations)" in line and "at most 48" in line


@pytest.mark.parametrize("horizon", [100_000_000, HUGE])
def test_a_huge_horizon_is_one_line_at_once(capsys, tmp_path, horizon):
    """The tester's case: --horizon 100000000 ran 46 s to a MemoryError; 10**20 was an internal ValueError."""
    f = _csv(tmp_path, _frame(freq=1))
    line = error_line(capsys, ["forecast", "predict", "--csv", f, "--models", "Naive", "--horizon", str(horizon)])
    assert f"--horizon {horizon}" in line and "at most 48" in line


def test_the_library_bounds_the_horizon_before_any_fit():
    df = _frame(n=30, freq=1)
    with pytest.raises(TooLargeError, match=r"h=31 is longer than the longest series \(30 observations\)") as e:
        Forecaster([Spy()]).forecast(31, df)
    assert isinstance(e.value, InvalidParameterError)
    assert len(Forecaster(["Naive"]).forecast(30, df)) == 2 * 30


# ------------------------------------------------------------------ dates past pandas.Timestamp.max
@pytest.fixture
def late_csv(tmp_path):
    """Monthly series whose last month is 2261-12: four more months fit before 2262-04-11."""
    return _csv(tmp_path, _frame(start="2258-01-01"))


def test_predict_refuses_dates_pandas_cannot_hold(capsys, late_csv):
    line = error_line(capsys, ["forecast", "predict", "--csv", late_csv, "--models", "Naive", "--horizon", "12"])
    assert "--horizon 12" in line and "ends 2261-12-01" in line and "2262-04-11" in line
    assert "a horizon of at most 4 fits" in line and "OutOfBounds" not in line
    code, out, _ = outcome(capsys, ["forecast", "predict", "--csv", late_csv, "--models", "Naive", "--horizon", "4"])
    assert code == 0 and out.strip().splitlines()[-1].split(",")[1] == "2262-04-01"


def test_evaluate_on_series_ending_near_the_last_date_works(capsys, late_csv):
    code, out, _ = outcome(capsys, ["forecast", "evaluate", "--csv", late_csv, "--models", "Naive", "--horizon",
                                    "12", "--windows", "2"])
    assert code == 0 and out.splitlines()[1].split()[0] == "Naive"


def test_the_date_bound_lives_in_the_library_before_any_fit():
    df = _frame(start="2258-01-01")
    with pytest.raises(FutureDateError, match=r"h=12: series 'a' ends 2261-12-01.*at most 4 fits") as e:
        Forecaster([Spy()], freq="MS").forecast(12, df)
    assert isinstance(e.value, InvalidParameterError)
    hourly = _frame(n=9, start="2262-04-11 14:00", freq="h")  # ends 22:00; pandas' last time is 23:47:16
    assert Forecaster(["Naive"], freq="h").forecast(1, hourly).ds.max() == pd.Timestamp("2262-04-11 23:00")
    with pytest.raises(FutureDateError, match="ends 2262-04-11T22:00:00.*a horizon of at most 1 fits"):
        Forecaster(["Naive"], freq="h").forecast(2, hourly)
    with pytest.raises(FutureDateError, match="not one period after it fits"):
        Forecaster(["Naive"], freq="h").forecast(1, _frame(n=10, start="2262-04-11 14:00", freq="h"))
    zoned = df.assign(ds=df.ds.dt.tz_localize("Europe/Paris"))  # the limit is in UTC: a zone is compared there
    assert Forecaster(["Naive"], freq="MS").forecast(4, zoned).ds.max() == pd.Timestamp("2262-04-01", tz="Europe/Paris")
    with pytest.raises(FutureDateError, match="at most 4 fits"):
        Forecaster([Spy()], freq="MS").forecast(5, zoned)


def test_integer_periods_stop_at_int64():
    last = np.iinfo(np.int64).max - 3
    df = pd.DataFrame({"unique_id": "a", "ds": np.arange(last - 29, last + 1), "y": np.arange(30.0)})
    out = Forecaster(["Naive"]).forecast(3, df)
    assert out.ds.iloc[-1] == np.iinfo(np.int64).max  # no wrap-around to negative periods
    with pytest.raises(FutureDateError, match="largest integer period"):
        Forecaster([Spy()]).forecast(4, df)


# ------------------------------------------------------------------ memory
def test_forecasts_beyond_memory_are_refused_before_any_fit(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "physical_memory", lambda: 4096)  # a machine with 4 KiB
    df = _frame(freq=1)
    with pytest.raises(TooLargeError, match="of memory, more than 50% of this machine's") as e:
        Forecaster([Spy()]).forecast(24, df)
    assert "forecast fewer steps" in str(e.value)
    with pytest.raises(TooLargeError, match="of memory"):
        Forecaster([Spy()]).cross_validation(6, df, n_windows=3)
    line = error_line(capsys, ["forecast", "evaluate", "--csv", _csv(tmp_path, df), "--models", "Naive",
                               "--horizon", "6", "--windows", "3"])
    assert "memory" in line and "this machine's 4.0 KiB" in line
    monkeypatch.setattr(bounds, "physical_memory", lambda: None)  # a system that does not say: nothing refused
    assert len(Forecaster(["Naive"]).forecast(24, df)) == 48


def test_the_memory_estimate_grows_with_each_factor():
    one = bounds.forecast_bytes(values=1000)
    assert bounds.forecast_bytes(values=2000) == 2 * one
    assert bounds.forecast_bytes(values=1000, training_rows=10) > one


# ------------------------------------------------------------------ bounds the data set for other options
def test_season_longer_than_every_series(capsys, tmp_path):
    f = _csv(tmp_path, _frame(n=24, freq=1))
    base = ["forecast", "evaluate", "--csv", f, "--models", "Naive", "--horizon", "2"]
    line = error_line(capsys, [*base, "--season", str(HUGE)])
    assert f"--season {HUGE}" in line and "longest series (24 observations)" in line and "at most 24" in line
    assert outcome(capsys, [*base, "--season", "24"])[0] == 0


def test_min_train_length_longer_than_any_training_part(capsys, tmp_path):
    f = _csv(tmp_path, _frame(n=24, freq=1))
    base = ["forecast", "evaluate", "--csv", f, "--models", "Naive", "--horizon", "2"]
    line = error_line(capsys, [*base, "--min-train-length", "23"])
    assert "--min-train-length 23" in line and "leaves 22" in line
    assert outcome(capsys, [*base, "--min-train-length", "22"])[0] == 0


def test_work_notes_count_only_the_windows_the_data_hold(capsys, tmp_path, monkeypatch):
    """--windows far beyond the data with --min-train-length said 10**20 windows of training and a negative
    history; the notes now count the windows a series takes part in."""
    monkeypatch.setenv("SEQLAB_WORKERS", "1")  # members in this process: no workers to start
    f = _csv(tmp_path, _frame(n=24, ids=("a",), freq=1))
    code, _, err = outcome(capsys, ["forecast", "evaluate", "--csv", f, "--models", "N-BEATS", "--max-steps", "1",
                                    "--members", "1", "--horizon", "2", "--windows", str(HUGE),
                                    "--min-train-length", "20"])
    # 24 points, horizon 2, windows 2 apart, 20 to train on: the last two windows
    assert code == 0 and "at each of 2 window(s): 2 steps before the first forecast" in err
    assert "the shortest -" not in err


# ------------------------------------------------------------------ fixed caps, stated in --help
CAPS = [
    (["forecast", "evaluate", "--csv", "x.csv", "--horizon", "2", "--models", "N-BEATS"], "--max-steps", 1_000_000),
    (["lm", "train"], "--max-iters", 10 ** 9), (["lm", "train"], "--eval-interval", 10 ** 9),
    (["lm", "train"], "--warmup", 10 ** 9), (["lm", "train"], "--muon-momentum-warmup", 10 ** 9),
    (["lm", "train"], "--batch-size", 2 ** 20), (["lm", "train"], "--block-size", 2 ** 20),
    (["lm", "train"], "--grad-accum-steps", 2 ** 20), (["lm", "train"], "--num-layers", 1024),
    (["lm", "train"], "--num-heads", 4096), (["lm", "train"], "--d-model", 65536),
    (["lm", "sample", "--checkpoint", "nowhere"], "--top-k", 2 ** 21),
    (["lm", "sample", "--checkpoint", "nowhere"], "--no-repeat-ngram-size", 1024),
]


@pytest.mark.parametrize("command,option,cap", CAPS, ids=[c[1] for c in CAPS])
def test_every_size_option_has_a_cap(capsys, tmp_path, command, option, cap):
    argv = [a.replace("x.csv", str(tmp_path / "x.csv")) for a in command]
    for value in (cap + 1, HUGE, 10 ** 400):
        line = error_line(capsys, [*argv, option, str(value)])
        assert option in line and f"<= {cap} (" in line, line  # the bound, and why it is there
    assert not (tmp_path / "x.csv").exists() and not list(tmp_path.iterdir())


def test_a_width_too_large_for_float_is_one_line(capsys, tmp_path):
    """--d-model 10**200 overflowed the memory estimate's float: an internal error, exit 1."""
    text = tmp_path / "t.txt"
    text.write_text("the quick brown fox jumps over the lazy dog\n" * 40, encoding="utf-8")
    line = error_line(capsys, ["lm", "train", "--text", str(text), "--out", str(tmp_path / "c"), "--d-model",
                               str(10 ** 200)])
    assert "--d-model" in line


def test_the_caps_are_in_the_help(capsys):
    helps = {}
    for cmd in (["forecast", "predict"], ["lm", "train"], ["lm", "sample"]):
        with pytest.raises(SystemExit):
            main([*cmd, "--help"])
        helps[cmd[-1]] = " ".join(capsys.readouterr().out.split())
    assert "at most 1,000,000" in helps["predict"] and "longest series' length" in helps["predict"]
    assert "2262-04-11" in helps["predict"] and "half of this machine's memory" in helps["predict"]
    for words in ("at most 1,000,000,000", "at most 1,048,576", "at most 1,024", "at most 65,536"):
        assert words in helps["train"], words
    assert "at most 2,097,152" in helps["sample"] and "0: off; at most 1,024" in helps["sample"]


# ------------------------------------------------------------------ any value: valid output or one line
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _values():
    small = st.integers(1, 8).map(str)  # three times as likely: most examples should reach the data and the fits
    return st.one_of(small, small, small, st.integers(9, 10 ** 6).map(str),
                     st.sampled_from([2 ** 31, 2 ** 63 - 1, 2 ** 63, 2 ** 64, HUGE, 10 ** 400]).map(str),
                     st.sampled_from(["0", "-1", "1.5", "x", "", "1e3", " 7"]))


@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounds")
    return {"periods": _csv(d, _frame(n=24, freq=1), "p.csv"), "late": _csv(d, _frame(n=24, start="2260-01-01"),
                                                                             "late.csv")}


@PROPERTY
@given(data=st.sampled_from(["periods", "late"]), command=st.sampled_from(["evaluate", "predict"]),
       horizon=st.one_of(st.integers(1, 4).map(str), _values()), options=st.dictionaries(
           st.sampled_from(["--season", "--windows", "--step", "--min-train-length", "--calibration-windows",
                            "--calibration-step"]), _values(), max_size=3),
       level=st.booleans())
def test_any_size_gives_output_or_one_line(capsys, csvs, data, command, horizon, options, level):
    argv = ["forecast", command, "--csv", csvs[data], "--models", "Naive", "--horizon", horizon]
    for option, value in options.items():
        if option.startswith("--calibration") and not level:  # without --level: a usage error tested elsewhere
            continue
        if command == "evaluate" or option in ("--season", "--calibration-windows", "--calibration-step"):
            argv += [f"{option}={value}"]  # the = form: a value such as -1 is not read as an option
    if level:
        argv += ["--level", "80"]
    code, out, err = outcome(capsys, argv)
    event(f"exit {code}" + (f": {err.split(':')[2].strip()[:30]}" if code == 2 else ""))
    if code == 0:
        head = out.splitlines()[0]
        assert head.split()[0] == "model" if command == "evaluate" else head.startswith("unique_id,ds,model,forecast")


#: a model and run small enough to train in a second, every size option given
SMALL_RUN = {"--max-iters": "2", "--batch-size": "4", "--block-size": "8", "--d-model": "8", "--num-heads": "2",
             "--num-layers": "1", "--eval-interval": "1", "--warmup": "0", "--grad-accum-steps": "2",
             "--muon-momentum-warmup": "2"}


@settings(PROPERTY, max_examples=15)
@given(changed=st.dictionaries(st.sampled_from(sorted(SMALL_RUN)), st.one_of(
    st.integers(0, 3).map(str), st.sampled_from([2 ** 20 + 1, 2 ** 31, 2 ** 63, HUGE, 10 ** 400]).map(str),
    st.sampled_from(["-1", "1.5", "x", ""])), max_size=2))
def test_any_model_size_gives_a_run_or_one_line(capsys, tmp_path_factory, changed):
    d = tmp_path_factory.mktemp("lm")
    text = d / "t.txt"
    text.write_text("to be or not to be, that is the question\n" * 30, encoding="utf-8")
    argv = ["lm", "train", "--text", str(text), "--out", str(d / "c")]
    argv += [f"{option}={value}" for option, value in {**SMALL_RUN, **changed}.items()]
    code, _, err = outcome(capsys, argv)
    event(f"exit {code}" + (f": {err.split(':')[2].strip()[:30]}" if code == 2 else ""))
    assert (d / "c" / "checkpoint.safetensors").is_file() == (code == 0)
