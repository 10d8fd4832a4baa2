"""The calendar of a long frame: every series steps by ``freq``, and the dates after its end."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError
from .data import GAP_ADVICE, ForecastDataError
from .gaps import first_break, iso_date

__all__ = ["check_calendar", "future_dates", "check_future", "FutureDateError", "season_of"]

#: the largest integer period: integer ds are int64, and numpy wraps silently past it
MAX_PERIOD = int(np.iinfo(np.int64).max)


class FutureDateError(InvalidParameterError):
    """Dates after a series that pandas cannot hold: past ``pandas.Timestamp.max``, or int64 periods past 2**63 - 1.

    Example:
        >>> from seqlab.forecast import Forecaster
        >>> ds = pd.date_range("2261-04-01", periods=12, freq="MS")
        >>> df = pd.DataFrame({"unique_id": "a", "ds": ds, "y": [float(t) for t in range(1, 13)]})
        >>> try:
        ...     Forecaster(["Naive"], freq="MS").forecast(h=3, df=df)
        ... except FutureDateError as e:
        ...     print(type(e).__name__)
        FutureDateError
    """


#: the period of each calendar's usual cycle, by the base of its pandas frequency: months and quarters in a year,
#: weeks in a year, days (and business days) in a week, hours in a day, minutes in an hour, seconds in a minute
_SEASONS = {"Y": (1, "yearly"), "A": (1, "yearly"), "Q": (4, "quarterly"), "M": (12, "monthly"),
            "SM": (24, "semi-monthly"), "W": (52, "weekly"), "D": (7, "daily"), "B": (5, "business-daily"),
            "C": (5, "business-daily"), "H": (24, "hourly"), "BH": (24, "hourly"), "T": (60, "minutely"),
            "MIN": (60, "minutely"), "S": (60, "secondly")}


def season_of(freq) -> tuple[int, str]:
    """``(season, in words)``: the seasonal period the frequency's calendar implies, and the calendar's name.

    Monthly 12, quarterly 4, weekly 52, daily 7, business-daily 5, hourly 24, yearly 1; a multiple of a step
    divides the period when it can (two-monthly: 6), else there is no season (1). Whole-number steps carry no
    calendar: 1.

    Examples:
        >>> season_of("MS"), season_of("QE-DEC"), season_of("W-SUN"), season_of("D"), season_of("h")
        ((12, 'monthly'), (4, 'quarterly'), (52, 'weekly'), (7, 'daily'), (24, 'hourly'))
        >>> season_of("YS-JAN"), season_of("2MS"), season_of(1)
        ((1, 'yearly'), (6, '2-monthly'), (1, 'whole-number steps'))
    """
    if not isinstance(freq, str):
        return 1, "whole-number steps"
    offset = pd.tseries.frequencies.to_offset(freq)
    if isinstance(offset, (pd.offsets.Milli, pd.offsets.Micro, pd.offsets.Nano)):  # "ms" is not "MS"
        return 1, f"frequency {freq!r}"
    code = offset.name.split("-")[0].upper()
    for key in (code, code.lstrip("BC"), code.rstrip("SE"), code.lstrip("BC").rstrip("SE")):
        if key in _SEASONS:
            period, words = _SEASONS[key]
            break
    else:
        return 1, f"frequency {freq!r}"
    n = abs(int(offset.n))
    if n == 1:
        return period, words
    return (period // n if period % n == 0 else 1), f"{n}-{words}"


def _steps_that_fit(last, h: int, freq) -> int:
    """How many of the ``h`` periods after ``last`` pandas (or int64) can hold; they fit up to some step, then never."""
    if not isinstance(last, (pd.Timestamp, np.datetime64)):
        return min(h, max(0, (MAX_PERIOD - int(last)) // int(freq)))
    offset, last = pd.tseries.frequencies.to_offset(freq), pd.Timestamp(last)

    def fits(k):
        try:
            end = last + k * offset
            return (end.tz_convert(None) if end.tz is not None else end) <= pd.Timestamp.max  # the limit is UTC's
        except (OverflowError, ValueError):  # OutOfBoundsDatetime is a ValueError
            return False

    lo, hi = 0, h  # fits(lo) always; find the last k that fits in O(log h) date sums, not h of them
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def check_future(last, ids, h: int, freq, label: str | None = None) -> None:
    """Refuse, before any model is fitted, a horizon whose dates after some series' last one pandas cannot hold.

    ``last``: each series' last ``ds``; ``ids``: their ``unique_id``; ``label``: how the message names the
    horizon (default ``h=<h>``).
    """
    ends, ids = list(last), list(ids)
    if not ends:
        return
    k = max(range(len(ends)), key=ends.__getitem__)  # every series steps by freq: the latest end reaches furthest
    fit = _steps_that_fit(ends[k], h, freq)
    if fit >= h:
        return
    what, end = label or f"h={h}", ends[k]
    if isinstance(end, (pd.Timestamp, np.datetime64)):
        raise FutureDateError(f"{what}: series {ids[k]!r} ends {iso_date(end)}, and {h} periods of {freq!r} after it "
                              f"reach past {pd.Timestamp.max.floor('s')}, the last time pandas can hold "
                              f"(pandas.Timestamp.max); {_fits(fit)}")
    raise FutureDateError(f"{what}: series {ids[k]!r} ends at period {int(end)}, and {h} steps of {freq} after it "
                          f"pass {MAX_PERIOD}, the largest integer period (int64); {_fits(fit)}")


def _fits(fit: int) -> str:
    return f"a horizon of at most {fit} fits" if fit else "not one period after it fits"


def future_dates(last, h: int, freq):
    """The ``h`` periods after ``last``: dates along ``freq``'s calendar, or integers ``freq`` apart."""
    if isinstance(last, (pd.Timestamp, np.datetime64)):
        offset = pd.tseries.frequencies.to_offset(freq)
        return pd.DatetimeIndex([pd.Timestamp(last) + k * offset for k in range(1, h + 1)])
    return int(last) + int(freq) * np.arange(1, h + 1, dtype=np.int64)  # check_future keeps it within int64


def check_calendar(df: pd.DataFrame, freq) -> None:
    """Every series must step by exactly ``freq``: integer periods by that number, dates along that calendar.

    Month-end dates under ``freq="MS"`` would otherwise have their future dates
    moved to month starts, one step out of line with the history.
    """
    ds = df["ds"]
    if pd.api.types.is_datetime64_any_dtype(ds):
        try:
            offset = pd.tseries.frequencies.to_offset(freq)
        except (ValueError, TypeError):
            raise ForecastDataError(f"freq {freq!r} is not a pandas frequency (such as 'MS', 'ME', 'D')") from None
        off = ds[~ds.map(offset.is_on_offset)]
        if len(off):
            raise ForecastDataError(f"ds {iso_date(off.iloc[0])} is not on the calendar of freq {freq!r}; pass the "
                                    "frequency the dates follow (month-end dates: 'ME', month starts: 'MS')")
        expected = df.groupby("unique_id", sort=False)["ds"].shift(1) + offset
    else:
        if not isinstance(freq, (int, np.integer)) or freq < 1:
            raise ForecastDataError(f"integer ds needs an integer freq (the step between periods), got {freq!r}")
        expected = df.groupby("unique_id", sort=False)["ds"].shift(1) + freq
    gap = expected.notna() & (ds != expected)
    if gap.any():
        uid = df[gap].iloc[0]["unique_id"]
        where = first_break(df.loc[df["unique_id"] == uid, "ds"], freq)
        raise ForecastDataError(f"series {uid!r} does not step by freq {freq!r}: {where.describe()}; {GAP_ADVICE}, "
                                "or pass the frequency the data follow")
