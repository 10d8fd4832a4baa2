"""Issue 56, the practitioner's second day: N-BEATS trained once for the hybrid, predict's own advice for a short
series, each model's interval kind named, nothing dropped or defaulted in silence, an irregular series' first
break named, unbounded levels refused before any fit, and the messages, CSV and --help written one way."""
from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from seqlab.cli import main


def monthly(n=40, ids=("a", "b"), **extra):
    t = np.arange(n)
    rng = np.random.default_rng(0)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": pd.date_range("2019-01-01", periods=n, freq="MS"),
                                    "y": 50 + 20 * k + 5 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n),
                                    **extra}) for k, u in enumerate(ids)], ignore_index=True)


def write(tmp_path, df, name="s.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("seqlab: error: "), err
    return lines[0]


# ------------------------------------------------------------------ 3. N-BEATS trained once for the hybrid
@pytest.fixture
def member_fits(monkeypatch):
    """Every N-BEATS member trained, counted (the members run in this process)."""
    from seqlab.forecast.nbeats import forecaster

    monkeypatch.setenv("SEQLAB_WORKERS", "1")
    fits = []
    real = forecaster._fit_member

    def counted(*a, **k):
        fits.append(1)
        return real(*a, **k)

    monkeypatch.setattr(forecaster, "_fit_member", counted)
    return fits


def test_the_hybrid_reuses_the_n_beats_it_lists_beside(capsys, tmp_path, member_fits):
    f = write(tmp_path, monthly())
    code, out, err = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "3", "--season", "12", "--models",
                         "AutoETS,N-BEATS,N-BEATS + Combination", "--max-steps", "2", "--members", "1")
    assert code == 0, err
    assert len(member_fits) == 1  # one member, one window: trained once, not once per entry
    got = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    assert list(dict.fromkeys(got.model)) == ["AutoETS", "N-BEATS", "N-BEATS + Combination"]
    member_fits.clear()
    code, out, err = run(capsys, "forecast", "evaluate", "--csv", f, "--horizon", "3", "--season", "12", "--windows",
                         "2", "--models", "N-BEATS + Combination,N-BEATS", "--max-steps", "2", "--members", "1")
    assert code == 0, err
    assert len(member_fits) == 2  # once per window, whichever entry comes first


def test_the_library_shares_one_ensemble_between_the_two_entries():
    from seqlab.forecast import Forecaster

    fc = Forecaster(["N-BEATS", "N-BEATS + Combination"], season_length=12, device="cpu")
    assert fc.models[1].members[0] is fc.models[0]


# ------------------------------------------------------------------ 4. predict's advice for a short series
def test_predict_advises_what_helps_a_forecast_once(capsys, tmp_path):
    df = pd.concat([monthly(20, ("a",)), monthly(5, ("b",))], ignore_index=True)
    line = one_error(capsys, "forecast", "predict", "--csv", write(tmp_path, df), "--horizon", "1", "--season", "12")
    assert "series 'b' has 5 observation(s); SeasonalNaive needs at least 12 to fit with --season 12" in line
    assert "leave SeasonalNaive out of --models" in line and "smaller --season" in line
    assert "window" not in line and "--horizon" not in line and line.count("drop") == 1, line
    line = one_error(capsys, "forecast", "predict", "--csv", write(tmp_path, monthly(10, ("a",))), "--horizon", "1",
                     "--season", "12")
    assert "--season 12 is longer than the longest series (10 observations)" in line and "window" not in line


def test_evaluate_says_its_advice_once(capsys, tmp_path):
    line = one_error(capsys, "forecast", "evaluate", "--csv", write(tmp_path, monthly(30)), "--horizon", "6",
                     "--windows", "4", "--season", "12", "--models", "Naive,SeasonalNaive")
    assert "SeasonalNaive needs at least 12" in line and "--min-train-length" in line
    assert line.count("window") == 2 and line.count("drop") == 0, line  # fewer --windows; the windows it can fill


# ------------------------------------------------------------------ 5. which model got which interval
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_the_interval_note_names_each_models_kind(capsys, tmp_path, command):
    f = write(tmp_path, monthly(48, ids=tuple("abcdefg")))
    code, _, err = run(capsys, "forecast", command, "--csv", f, "--horizon", "3", "--season", "12", "--models",
                       "Naive2,Naive,AutoETS", "--level", "80,95", "--intervals", "native")
    assert code == 0, err
    assert "seqlab: note: intervals at 80%, 95%: conformal for Naive2; native for Naive, AutoETS\n" in err


# ------------------------------------------------------------------ 6. nothing dropped or defaulted in silence
def test_an_unused_column_is_named(capsys, tmp_path):
    f = write(tmp_path, monthly(promo=1.0, note="x"))
    code, _, err = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "2", "--models", "Naive")
    assert code == 0, err
    assert f"seqlab: note: column(s) promo, note of {f} are not used: the models read unique_id, ds and y" in err


def test_the_season_comes_from_the_monthly_dates_with_a_note(capsys, tmp_path):
    f = write(tmp_path, monthly(48))
    code, out, err = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "12", "--models",
                         "Naive,SeasonalNaive")
    assert code == 0, err
    assert "seqlab: note: season 12 from the monthly dates (--season auto); give --season N for another" in err
    got = pd.read_csv(io.StringIO(out), float_precision="round_trip")
    naive, seasonal = (got[got.model == m].forecast.to_numpy() for m in ("Naive", "SeasonalNaive"))
    assert not np.array_equal(naive, seasonal)  # a season, not Naive twice
    code, again, err = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "12", "--models",
                           "Naive,SeasonalNaive", "--season", "12")
    assert code == 0 and again == out and "--season auto" not in err


# ------------------------------------------------------------------ 7. an irregular series: where it breaks
def test_an_irregular_series_names_its_first_break_and_the_fix(capsys, tmp_path):
    df = monthly(30)
    df = df.drop(index=df.index[(df.unique_id == "b") & (df.ds == "2020-04-01")])
    line = one_error(capsys, "forecast", "predict", "--csv", write(tmp_path, df), "--horizon", "2")
    assert "series 'b' is not evenly spaced: its dates step by 'MS' until 2020-03-01, which is followed by " \
           "2020-05-01 instead of 2020-04-01" in line
    assert "--fill-gaps" in line and "whole-number steps" in line
    ints = pd.DataFrame({"unique_id": "p", "ds": [1, 2, 3, 4, 6, 7, 8], "y": np.arange(7.0)})
    line = one_error(capsys, "forecast", "predict", "--csv", write(tmp_path, ints), "--horizon", "2")
    assert "its dates step by 1 until 4, which is followed by 6 instead of 5" in line


# ------------------------------------------------------------------ 8. unbounded levels refused before any fit
def test_a_level_the_calibration_cannot_bound_is_refused_before_any_fit(capsys, tmp_path, monkeypatch):
    from seqlab.forecast.origins import OriginRunner

    def no_fit(*a, **k):
        raise AssertionError("a model was fitted before the request was refused")

    monkeypatch.setattr(OriginRunner, "run", no_fit)
    f = write(tmp_path, monthly(18, ("a",)))  # 15 calibration origins fit before its end: 19 are needed at 95%
    line = one_error(capsys, "forecast", "predict", "--csv", f, "--horizon", "2", "--season", "1", "--models",
                     "Naive", "--level", "95")
    assert "--level: a 95% conformal interval needs at least 19 calibration errors per step" in line
    assert "Naive has 15 " in line and "ask for at most 93.7%" in line
    line = one_error(capsys, "forecast", "evaluate", "--csv", f, "--horizon", "2", "--season", "1", "--models",
                     "Naive", "--level", "80", "--calibration-windows", "3")
    assert "a 80% conformal interval needs at least 4 calibration errors per step, and Naive has 3" in line


# ------------------------------------------------------------------ 9. messages, CSV and --help written one way
def test_mixed_frequencies_under_predict_do_not_say_evaluate(capsys, tmp_path):
    daily = monthly(40, ("d",)).assign(ds=pd.date_range("2019-01-01", periods=40, freq="D"))
    f = write(tmp_path, pd.concat([monthly(40, ("a",)), daily]))
    line = one_error(capsys, "forecast", "predict", "--csv", f, "--horizon", "2")
    assert "time step 'MS'" in line and "evaluate" not in line and "forecast series of one frequency" in line


def test_dates_in_messages_are_iso_without_midnight(capsys, tmp_path):
    df = monthly(30)
    df = pd.concat([df, df.iloc[[3]]], ignore_index=True)
    line = one_error(capsys, "forecast", "predict", "--csv", write(tmp_path, df), "--horizon", "2")
    assert "duplicate timestamp 2019-04-01 in series 'a'" in line and "00:00:00" not in line


def test_predict_lists_the_models_as_models_does(capsys, tmp_path):
    f = write(tmp_path, monthly(30))
    code, out, err = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "2", "--models",
                         "SeasonalNaive,Naive2,Naive", "--season", "12")
    assert code == 0, err
    got = pd.read_csv(io.StringIO(out))
    assert list(got.model[:6]) == ["SeasonalNaive"] * 2 + ["Naive2"] * 2 + ["Naive"] * 2
    assert list(got.unique_id) == ["a"] * 6 + ["b"] * 6


def _forecast_options():
    from seqlab.cli import build_parser

    forecast = next(a for a in build_parser()._subparsers._group_actions if "forecast" in (a.choices or {}))
    commands = forecast.choices["forecast"]._subparsers._group_actions[0].choices
    return [(name, a) for name, p in commands.items() for a in p._actions if a.option_strings and a.dest != "help"]


@pytest.mark.parametrize("command,action", _forecast_options(), ids=lambda v: v if isinstance(v, str) else
                         v.option_strings[0])
def test_every_forecast_option_says_its_default_one_way(command, action):
    text = " ".join((action.help or "").split())
    said = re.findall(r"\(default: [^)]*(?:\([^)]*\)[^)]*)*\)|\(required(?: without --model)?\)", text)
    assert len(said) == 1 and text.lower().count("default") == (1 if "default" in said[0] else 0), \
        f"{command} {action.option_strings[0]}: {text!r}"
    if action.required:
        assert said == ["(required)"]


# ------------------------------------------------------------------ E. --season auto
@pytest.mark.parametrize("freq,words,season", [("QS", "quarterly", 4), ("W-SUN", "weekly", 52), ("D", "daily", 7),
                                               ("B", "business-daily", 5), ("h", "hourly", 24), ("YS", "yearly", 1)])
def test_season_auto_takes_the_calendars_season(capsys, tmp_path, freq, words, season):
    df = monthly(120, ("a",)).assign(ds=pd.date_range("2001-01-01", periods=120, freq=freq))
    code, out, err = run(capsys, "forecast", "predict", "--csv", write(tmp_path, df), "--horizon", "2", "--models",
                         "SeasonalNaive")
    assert code == 0, err
    assert f"seqlab: note: season {season} from the {words} dates (--season auto)" in err
    y = df.y.to_numpy()
    np.testing.assert_allclose(pd.read_csv(io.StringIO(out)).forecast, y[len(y) - season:][:2] if season > 1
                               else [y[-1]] * 2, rtol=1e-14)  # the CSV holds y to 15 digits


def test_season_auto_falls_back_to_none_when_no_season_fits(capsys, tmp_path):
    code, _, err = run(capsys, "forecast", "predict", "--csv", write(tmp_path, monthly(10)), "--horizon", "2",
                       "--models", "Naive")
    assert code == 0 and "season 1: the longest series (10 observations) holds no full monthly season of 12" in err


@pytest.mark.parametrize("value", ["0", "x", "1.5", "-3"])
def test_a_season_that_is_neither_auto_nor_a_count_is_one_line(capsys, tmp_path, value):
    line = one_error(capsys, "forecast", "predict", "--csv", write(tmp_path, monthly()), "--horizon", "2",
                     f"--season={value}")
    assert "--season" in line and "auto" in line


# ------------------------------------------------------------------ D. gaps filled, rows sorted
@pytest.mark.parametrize("rule", ["interpolate", "ffill", "zero"])
def test_fill_gaps_inserts_the_missing_dates_and_says_how(capsys, tmp_path, rule):
    df = monthly(30)
    gone = (df.unique_id == "b") & df.ds.isin(pd.to_datetime(["2020-04-01", "2020-05-01"]))
    f = write(tmp_path, df[~gone])
    code, out, err = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "2", "--models", "Naive",
                         "--season", "1", *(["--fill-gaps"] if rule == "interpolate" else ["--fill-gaps", rule]))
    assert code == 0, err
    assert f"seqlab: note: --fill-gaps {rule}: 2 missing date(s) or value(s) filled in 1 series ('b': 2), " in err
    assert list(pd.read_csv(io.StringIO(out)).forecast) == list(df.groupby("unique_id").y.last().repeat(2))


def test_unsorted_rows_are_sorted_with_a_note(capsys, tmp_path):
    df = monthly(30)
    f = write(tmp_path, df, "sorted.csv")
    code, want, _ = run(capsys, "forecast", "predict", "--csv", f, "--horizon", "3", "--models", "Naive,AutoETS")
    shuffled = write(tmp_path, df.sample(frac=1.0, random_state=1), "shuffled.csv")
    code, got, err = run(capsys, "forecast", "predict", "--csv", shuffled, "--horizon", "3", "--models",
                         "Naive,AutoETS")
    assert code == 0 and got == want, err
    assert "seqlab: note: the rows of series 'b' and 1 more were not in time order; they were sorted" in err \
        or "seqlab: note: the rows of series 'a' and 1 more were not in time order; they were sorted" in err
