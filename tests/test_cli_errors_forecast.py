"""Bad series end as one clear line and exit 2; valid series in any order give the same numbers."""
import numpy as np
import pandas as pd
import pytest
from conftest import patient

from seqlab.cli import main
from seqlab.forecast import ForecastDataError, Forecaster

BASE = ["--horizon", "6", "--season", "12", "--models", "Naive,SeasonalNaive"]


def seasonal(n=48, level=100.0, phase=0.0):
    t = np.arange(n)
    return level + t + 10 * np.sin(2 * np.pi * t / 12 + phase)


def long_frame(ids=("a", "b"), n=48, freq="MS"):
    ds = pd.date_range("2000-01-01", periods=n, freq=freq)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": ds, "y": seasonal(n, 100 + 50 * i, i)})
                      for i, u in enumerate(ids)], ignore_index=True)


def write(tmp_path, df, name="s.csv"):
    f = tmp_path / name
    df.to_csv(f, index=False)
    return f


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def error_line(capsys, argv) -> str:
    code, _, err = run(capsys, argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("seqlab: error: "), err
    return lines[0]


def _mutations():
    def text_ds(df):
        return df.assign(ds=[f"day {i}" for i in range(len(df))])

    def huge(df):
        df = df.copy()
        df.loc[3, "y"] = 1e308
        return df

    def mixed_freq(df):
        daily = long_frame(("d",), n=48, freq="D")
        return pd.concat([df[df.unique_id == "a"], daily])

    def empty_id(df):
        df = df.astype({"unique_id": object}).copy()
        df.loc[5, "unique_id"] = ""
        return df

    def boolean_y(df):
        return df.assign(y=np.arange(len(df)) % 2 == 0)

    def irregular_int(df):
        return df.assign(ds=df.groupby("unique_id").cumcount().map(lambda i: (i + 1) ** 2))

    def mixed_formats(df):
        s = df.ds.dt.strftime("%Y-%m-%d").tolist()
        s[10] = pd.Timestamp(s[10]).strftime("%d/%m/%Y")
        return df.assign(ds=s)

    def mixed_zones(df):
        s = df.ds.dt.strftime("%Y-%m-%dT00:00:00+01:00").tolist()
        s[7] = s[7].replace("+01:00", "+05:00")
        return df.assign(ds=s)

    return {"non-date strings in ds": (text_ds, "neither a date"), "1e308": (huge, "too large"),
            "monthly beside daily": (mixed_freq, "time step"), "empty unique_id": (empty_id, "no unique_id"),
            "boolean y": (boolean_y, "true/false"), "irregular integer ds": (irregular_int, "evenly spaced"),
            "mixed date formats": (mixed_formats, "date formats"), "mixed time zones": (mixed_zones, "time zone")}


@pytest.mark.parametrize("case", list(_mutations()))
def test_garbage_series_are_refused(capsys, tmp_path, case):
    mutate, words = _mutations()[case]
    f = write(tmp_path, mutate(long_frame()))
    assert words in error_line(capsys, ["forecast", "evaluate", "--csv", str(f), *BASE])


def test_csv_without_header(capsys, tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("\n".join(f"2000-{m:02d}-01,{v}" for m, v in zip(range(1, 13), range(12))))
    assert "header" in error_line(capsys, ["forecast", "evaluate", "--csv", str(f), *BASE])


def test_directory_as_csv(capsys, tmp_path):
    assert "is a directory" in error_line(capsys, ["forecast", "evaluate", "--csv", str(tmp_path), *BASE])


def test_duplicate_model_names(capsys, tmp_path):
    f = write(tmp_path, long_frame())
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12",
                               "--models", "Naive,Naive"])
    assert "twice" in line and "alias" not in line


def test_a_constant_series_is_explained(capsys, tmp_path):
    df = long_frame()
    df.loc[df.unique_id == "b", "y"] = 7.0
    code, out, err = run(capsys, ["forecast", "evaluate", "--csv", str(write(tmp_path, df)), *BASE])
    assert code == 0 and "nan" not in out.lower()
    assert "scale" in err and "'b'" in err and "undefined" in err


def test_series_order_does_not_change_the_scores(capsys, tmp_path):
    """statsforecast returns series sorted by id; forecasts must still reach their own series."""
    wide_zz = pd.DataFrame({"ds": pd.date_range("2000-01-01", periods=48, freq="MS"), "zz": seasonal(48, 100),
                            "aa": seasonal(48, 5000, 1.0)})
    tables = []
    for order in (["ds", "zz", "aa"], ["ds", "aa", "zz"]):
        f = write(tmp_path, wide_zz[order], "o.csv")
        code, out, err = run(capsys, ["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12",
                                      "--models", "Naive,SeasonalNaive,AutoETS"])
        assert code == 0, err
        tables.append(out)
    assert tables[0] == tables[1]


def test_shuffled_ids_forecast_their_own_series():
    df = long_frame(("zz", "mm", "aa"))
    fc = Forecaster(["SeasonalNaive"], freq="MS", season_length=12).forecast(12, df)
    for uid, g in df.groupby("unique_id"):
        got = fc.loc[fc.unique_id == uid, "SeasonalNaive"].to_numpy()
        np.testing.assert_allclose(got, g.y.to_numpy()[-12:])  # the seasonal naive repeats the last season


def test_month_end_dates():
    df = long_frame(("a",), freq="ME")
    with pytest.raises(ForecastDataError, match="calendar"):
        Forecaster(["Naive"], freq="MS", season_length=12).forecast(3, df)
    fc = Forecaster(["Naive"], freq="ME", season_length=12).forecast(3, df)
    last = df.ds.iloc[-1]
    assert list(fc.ds) == [last + pd.offsets.MonthEnd(k) for k in (1, 2, 3)]


def test_warnings_never_precede_the_error_line(capsys, monkeypatch):
    import warnings

    from seqlab.cli import forecast as forecast_cli

    def noisy(args):
        warnings.warn("something a library said")
        raise ForecastDataError("the real problem")

    monkeypatch.setattr(forecast_cli, "_cmd_evaluate", noisy)  # the parser is built afresh by every main()
    line = error_line(capsys, ["forecast", "evaluate", "--csv", "x.csv", "--horizon", "3"])
    assert "the real problem" in line


# ------------------------------------------------------------------ files that are not what they seem
def test_long_file_with_other_column_names(capsys, tmp_path):
    df = long_frame().rename(columns={"unique_id": "id", "ds": "date", "y": "value"})
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(write(tmp_path, df)), *BASE])
    assert "unique_id, ds, y" in line and "found id, date, value" in line


def test_long_file_missing_one_column(capsys, tmp_path):
    df = long_frame().rename(columns={"y": "value"})
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(write(tmp_path, df)), *BASE])
    assert "missing column 'y'" in line and "found unique_id, ds, value" in line


def test_day_first_dates_are_named(capsys, tmp_path):
    df = long_frame().assign(ds=lambda d: d.ds.dt.strftime("%d/%m/%Y"))
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(write(tmp_path, df)), *BASE])
    assert "day-first" in line and "'01/02/2000'" in line and "YYYY-MM-DD" in line


def test_ids_differing_only_in_spaces(capsys, tmp_path):
    df = long_frame(("a", " a"))
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(write(tmp_path, df)), *BASE])
    assert "'a' and ' a' differ only in spaces" in line
    apart = long_frame(("a", " b"))
    code, out, err = run(capsys, ["forecast", "evaluate", "--csv", str(write(tmp_path, apart)), *BASE])
    assert code == 0 and "stripped (' b' is read as 'b')" in err


@pytest.mark.parametrize("kind", ["fifo", "devnull"])
def test_not_a_regular_file(capsys, tmp_path, kind):
    import os

    if kind == "fifo":
        path = tmp_path / "pipe.csv"
        os.mkfifo(path)
    else:
        path = os.devnull
    assert "not a regular file" in error_line(capsys, ["forecast", "evaluate", "--csv", str(path), *BASE])


# ------------------------------------------------------------------ calibration bounds
@pytest.mark.parametrize("extra,words", [
    (["--calibration-windows", "1000"], "1000 calibration window(s) 1 period(s) apart do not fit"),
    (["--calibration-windows", str(10 ** 15)], "ask for at most"),
    (["--calibration-step", "1000"], "1000 period(s) apart do not fit"),
])
def test_calibration_that_does_not_fit_is_refused(capsys, tmp_path, extra, words):
    f = write(tmp_path, long_frame())
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(f), *BASE, "--level", "80,95", *extra])
    assert words in line and "the longest series (48 observations) holds" in line


def test_calibration_windows_that_fit_are_used(capsys, tmp_path):
    f = write(tmp_path, long_frame())
    # 48 observations, the last 6 tested: 42 - 6 - 13 (a season plus one to train on) = 23, so 24 windows fit
    # (two series at 95% need 10 windows: by default they are one period apart)
    code, out, err = run(capsys, ["forecast", "evaluate", "--csv", str(f), *BASE, "--level", "80,95",
                                  "--calibration-windows", "24"])
    assert code == 0, err
    line = error_line(capsys, ["forecast", "evaluate", "--csv", str(f), *BASE, "--level", "80,95",
                               "--calibration-windows", "25"])
    assert "holds 24" in line


# ------------------------------------------------------------------ a scheduler address that is not one
def _server(kind):
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    held = []

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            held.append(c)  # kept open: the silent server accepts and never answers
            reply = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            if kind == "http":  # a web server answers once it has read a request
                threading.Thread(target=lambda c=c: c.recv(1 << 16) and c.sendall(reply), daemon=True).start()
            elif kind == "banner":  # some servers speak first
                c.sendall(reply)

    threading.Thread(target=loop, daemon=True).start()
    return srv


@pytest.mark.parametrize("kind,words", [("silent", "sent no dask handshake within 1 s"),
                                        ("http", "sent no dask handshake within 1 s"),
                                        ("banner", "not as a dask scheduler (its first bytes were b'HTTP/1.1')")])
def test_a_server_that_is_not_a_scheduler_is_one_line(capsys, tmp_path, kind, words):
    pytest.importorskip("distributed")
    import time

    srv = _server(kind)
    try:
        f = write(tmp_path, long_frame())
        t0 = time.monotonic()
        line = error_line(capsys, ["forecast", "evaluate", "--csv", str(f), *BASE, "--engine", "dask",
                                   "--address", f"127.0.0.1:{srv.getsockname()[1]}", "--connect-timeout", "1"])
        assert words in line and time.monotonic() - t0 < patient(15)  # a hang guard: the words say 1 s
    finally:
        srv.close()


def test_connect_timeout_needs_an_address(capsys, tmp_path):
    f = write(tmp_path, long_frame())
    assert "--connect-timeout needs --address" in error_line(
        capsys, ["forecast", "evaluate", "--csv", str(f), *BASE, "--connect-timeout", "3"])
