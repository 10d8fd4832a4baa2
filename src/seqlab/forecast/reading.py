"""A user's series file: long or wide CSV, dates in one format and zone, rows sorted, regressor columns kept
when named, holes refused with their place named or filled when asked."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .data import ForecastDataError, _check_ds, infer_freq, validate_long
from .gaps import FILL_RULES, common_step, fill_gaps, iso_date

__all__ = ["read_series_csv", "read_future_csv", "check_exog"]


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



_KEYS = ("unique_id", "ds", "y")


def check_exog(df: pd.DataFrame, exog, where: str = "df") -> pd.DataFrame:
    """``df`` with each regressor column of ``exog`` as float: present, numeric, finite and never empty.

    Examples:
        >>> check_exog(pd.DataFrame({"unique_id": "a", "ds": [1, 2], "promo": [0, 1]}), ["promo"]).promo.tolist()
        [0.0, 1.0]
    """
    out = df.copy()
    for c in exog:
        if c in _KEYS:
            raise ForecastDataError(f"{c!r} is a key column, not a regressor; name the extra columns only")
        if c not in df.columns:
            found = ", ".join(map(str, df.columns[:8])) + (", ..." if df.shape[1] > 8 else "")
            raise ForecastDataError(f"{where} has no regressor column {c!r} (found {found})")
        raw = df[c]
        if pd.api.types.is_bool_dtype(raw):
            out[c] = raw.astype(float)  # a 0/1 dummy written as true/false
            continue
        v = pd.to_numeric(raw, errors="coerce")
        bad = v.isna() | ~np.isfinite(v.to_numpy(float, na_value=np.nan))
        if bad.any():
            row = df[bad.to_numpy()].iloc[0]
            what = "an empty" if pd.isna(row[c]) else f"the value {row[c]!r} as"
            raise ForecastDataError(f"{where}: regressor {c!r} has {what} value in series {row['unique_id']!r} at "
                                    f"{iso_date(row['ds'])}; a regressor needs a finite number at every date")
        out[c] = v.astype(float)
    return out


def _sort(df: pd.DataFrame) -> tuple[pd.DataFrame, list]:
    """Rows in time order within each series, the series in their order of first appearance; the ids that moved."""
    if not (pd.api.types.is_datetime64_any_dtype(df["ds"]) or pd.api.types.is_numeric_dtype(df["ds"])):
        return df, []  # not dates or numbers: refused by the checks that follow
    codes = pd.factorize(df["unique_id"], sort=False)[0]
    order = np.lexsort((df["ds"].to_numpy(), codes))
    if (order == np.arange(len(df))).all():
        return df, []
    moved = df.groupby(codes, sort=True)["ds"].apply(lambda d: not d.is_monotonic_increasing)
    uids = pd.unique(df["unique_id"])
    return df.iloc[order].reset_index(drop=True), [uids[k] for k in moved.index[moved.to_numpy()]]


def read_series_csv(path, exog=(), fill: str | None = None) -> pd.DataFrame:
    """A user's CSV: long (``unique_id, ds, y``) or wide (first column the time, one column per series).

    The rows are put in time order within each series (the series keep their order of first appearance), and
    ``result.attrs["sorted"]`` lists the series whose rows were not. A long file's columns beyond the three
    are kept when ``exog`` names them (future-known numeric regressors, checked by :func:`check_exog`) and
    otherwise listed in ``result.attrs["unused"]``: never dropped unnoticed. A series with a hole in its calendar
    is refused with its first break named, unless ``fill`` (a rule of
    :data:`~seqlab.forecast.gaps.FILL_RULES`) inserts the missing dates (:func:`~seqlab.forecast.gaps.fill_gaps`,
    along the step most series follow); ``result.attrs["filled"]`` then counts the values made per series.

    Examples:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "s.csv")
        >>> _ = open(path, "w").write("unique_id,ds,y,promo\\na,3,7.0,1\\na,1,5.0,0\\na,2,6.0,0\\n")
        >>> df = read_series_csv(path)
        >>> df.ds.tolist(), df.attrs["sorted"], df.attrs["unused"]
        ([1, 2, 3], ['a'], ['promo'])
        >>> read_series_csv(path, exog=["promo"]).promo.tolist()
        [0.0, 0.0, 1.0]
    """
    path = Path(path)
    exog = list(dict.fromkeys(exog))
    if fill is not None and fill not in FILL_RULES:
        raise ForecastDataError(f"fill must be one of {', '.join(FILL_RULES)}, got {fill!r}")
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
    unused = []
    if present == {"unique_id", "ds", "y"}:
        missing = [c for c in exog if c not in raw.columns]
        if missing:
            raise ForecastDataError(f"{path}: no regressor column {missing[0]!r} (found {found})")
        df, wide = raw[[*_KEYS, *exog]], False
        unused = [c for c in raw.columns if c not in (*_KEYS, *exog)]
    elif len(present) >= 2:
        missing = sorted({"unique_id", "ds", "y"} - present)
        raise ForecastDataError(f"{path}: missing column {missing[0]!r}; a long file needs unique_id, ds, y "
                                f"(found {found})")
    else:
        if raw.shape[1] < 2:
            raise ForecastDataError(f"{path}: expected columns unique_id, ds, y or a time column plus series "
                                    f"columns (found: {found})")
        if exog:
            raise ForecastDataError(f"{path}: regressors need a long file (unique_id, ds, y and one column per "
                                    "regressor); this one reads as wide, one column per series")
        time_col = raw.columns[0]
        df = raw.melt(id_vars=time_col, var_name="unique_id", value_name="y").rename(columns={time_col: "ds"})
        df, wide = df[["unique_id", "ds", "y"]], True
    df, merged = _strip_ids(df.copy(), path)
    text, unparsed = df["ds"], df.copy()
    try:
        df["ds"] = _parse_dates(text)
        if pd.api.types.is_float_dtype(df["ds"]) or pd.api.types.is_integer_dtype(df["ds"]):
            df["ds"] = _check_ds(df["ds"])
        df, moved = _sort(df)
        filled = {}
        if fill is not None:
            df = fill_gaps(df, common_step(df), fill, ("y", *exog))
            filled = df.attrs["filled"]
        df = validate_long(df)
        df = check_exog(df, exog, str(path))
        infer_freq(df)  # a user's file must be regular, with one frequency for all its series
    except ForecastDataError as e:
        why = _day_first(unparsed, text) if not pd.api.types.is_datetime64_any_dtype(text) else None
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
    df.attrs.update(sorted=moved, unused=unused, filled=filled)
    return df


def read_future_csv(path, exog) -> pd.DataFrame:
    """The regressors' values over the horizon from a long CSV (``unique_id, ds`` and each of ``exog``): the
    ``X_df`` of :meth:`~seqlab.forecast.Forecaster.forecast`, its dates read as :func:`read_series_csv` reads them."""
    path = Path(path)
    if not path.is_file():
        raise ForecastDataError(f"{path}: no such file" if not path.exists() else f"{path}: not a regular file")
    try:
        raw = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as e:
        raise ForecastDataError(f"{path}: not a readable CSV ({type(e).__name__})") from None
    missing = [c for c in ("unique_id", "ds", *exog) if c not in raw.columns]
    if missing:
        raise ForecastDataError(f"{path}: no column {missing[0]!r}; the future regressors need unique_id, ds and "
                                f"{', '.join(exog)}")
    df, _ = _strip_ids(raw[["unique_id", "ds", *exog]].copy(), path)
    df["ds"] = _parse_dates(df["ds"])
    return check_exog(df, exog, str(path))
