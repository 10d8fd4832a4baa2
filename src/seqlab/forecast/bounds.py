"""How much a forecasting request may ask: a horizon the history supports, and forecasts that fit in memory.

Both are checked before any model is fitted, so a request that cannot finish is one precise error at once,
not a long run that ends in a ``MemoryError``.
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["TooLargeError", "check_horizon", "check_memory", "forecast_bytes", "physical_memory", "MEMORY_SHARE"]

#: the share of the machine's memory one request may plan to use: the rest is the models', pandas' and the system's
MEMORY_SHARE = 0.5
#: bytes one forecast value costs in all: the fits' store, the result frame, and one or two copies on the way out
#: (the long frame and its CSV text in ``forecast predict``, the errors frame in ``forecast evaluate``)
BYTES_PER_VALUE = 4 * 8
#: bytes one observation of a training part costs: a stacked (id, period, value) row and statsforecast's copy
BYTES_PER_TRAINING_ROW = 2 * 3 * 8


class TooLargeError(InvalidParameterError):
    """A size beyond what the data supports or what the machine's memory holds; the message names the bound.

    Example:
        >>> import pandas as pd
        >>> from seqlab.forecast import Forecaster
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 13), "y": [float(t) for t in range(1, 13)]})
        >>> try:
        ...     Forecaster(["Naive"]).forecast(h=13, df=df)
        ... except TooLargeError as e:
        ...     print(type(e).__name__)
        TooLargeError
    """


def check_horizon(h: int, lengths, label: str | None = None) -> None:
    """Refuse a horizon longer than the longest series: no model here has a basis for forecasting further ahead
    than all the history it is given (a seasonal model repeats at most the history it has; N-BEATS' inputs of 2 to
    4 horizons would be padding almost throughout)."""
    lengths = np.asarray(lengths)
    if not len(lengths):
        return
    longest = int(lengths.max())
    if h > longest:
        raise TooLargeError(f"{label or f'h={h}'} is longer than the longest series ({longest} observations): a "
                            "forecast further ahead than the whole history has nothing in the data to rest on; "
                            f"forecast at most {longest} steps")


def physical_memory() -> int | None:
    """The machine's memory in bytes, or None where the system does not say (then nothing is refused)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), or no such name
        return None


def forecast_bytes(values: int, training_rows: int = 0, extra: int = 0) -> int:
    """A lower bound of the memory a request takes: ``values`` forecast values (origins x h x columns, over every
    copy) and ``training_rows`` observations of training parts stacked for the local models, plus ``extra`` bytes."""
    return int(values) * BYTES_PER_VALUE + int(training_rows) * BYTES_PER_TRAINING_ROW + int(extra)


def check_memory(need: int, what: str, fix: str) -> None:
    """Refuse ``need`` bytes when they exceed :data:`MEMORY_SHARE` of the machine's memory."""
    total = physical_memory()
    if total is None or need <= MEMORY_SHARE * total:
        return
    raise TooLargeError(f"{what} need about {_size(need)} of memory, more than {MEMORY_SHARE:.0%} of this "
                        f"machine's {_size(total)}: {fix}")


def _size(n: float) -> str:
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n / 2 ** 10:,.1f} KiB"
