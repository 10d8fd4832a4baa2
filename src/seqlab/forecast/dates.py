"""The calendar of a long frame: every series steps by ``freq``, and the dates after its end."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .data import ForecastDataError

__all__ = ["check_calendar", "future_dates"]


def future_dates(last, h: int, freq):
    """The ``h`` periods after ``last``: dates along ``freq``'s calendar, or integers ``freq`` apart."""
    if isinstance(last, (pd.Timestamp, np.datetime64)):
        offset = pd.tseries.frequencies.to_offset(freq)
        return pd.DatetimeIndex([pd.Timestamp(last) + k * offset for k in range(1, h + 1)])
    return np.arange(last + freq, last + h * freq + 1, freq)


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
            raise ForecastDataError(f"ds {off.iloc[0].date()} is not on the calendar of freq {freq!r}; pass the "
                                    "frequency the dates follow (month-end dates: 'ME', month starts: 'MS')")
        expected = df.groupby("unique_id", sort=False)["ds"].shift(1) + offset
    else:
        if not isinstance(freq, (int, np.integer)) or freq < 1:
            raise ForecastDataError(f"integer ds needs an integer freq (the step between periods), got {freq!r}")
        expected = df.groupby("unique_id", sort=False)["ds"].shift(1) + freq
    gap = expected.notna() & (ds != expected)
    if gap.any():
        row = df[gap].iloc[0]
        raise ForecastDataError(f"series {row['unique_id']!r} does not step by freq {freq!r} at {row['ds']}; "
                                "fill the gaps or pass the frequency the data follow")
