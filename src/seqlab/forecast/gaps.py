"""Series with holes in their calendar: where the first hole is, and filling the missing dates.

A forecaster needs every series to step evenly (each date one period after the last). A series that
does not is refused with its first break named (:func:`first_break`: the two dates and the step the
rest of the series follows), or, asked for, filled (:func:`fill_gaps`): the missing dates are inserted
and their values made by one rule of :data:`FILL_RULES`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError

__all__ = ["FILL_RULES", "Break", "iso_date", "first_break", "common_step", "fill_gaps"]

#: how :func:`fill_gaps` makes the values of the dates it inserts
FILL_RULES = {"interpolate": "linearly interpolated between the observed values on either side",
              "ffill": "carried forward from the last observed value",
              "zero": "set to 0"}
#: votes of this many date triples decide a series' usual step; the first ones suffice
_VOTES = 400


def iso_date(t) -> str:
    """A date as ISO 8601, the date alone at midnight (2020-03-01, not 2020-03-01 00:00:00); integers as they are.

    Examples:
        >>> iso_date(pd.Timestamp("2020-03-01"))
        '2020-03-01'
        >>> iso_date(pd.Timestamp("2020-03-01 06:30"))
        '2020-03-01T06:30:00'
        >>> iso_date(7)
        '7'
    """
    if isinstance(t, (pd.Timestamp, np.datetime64)) or hasattr(t, "isoformat"):
        t = pd.Timestamp(t)
        return str(t.date()) if t == t.normalize() else t.isoformat()
    return str(t)


@dataclass(frozen=True)
class Break:
    """A series' first break: ``before`` is followed by ``after`` where its usual ``step`` expects ``expected``."""

    before: object
    after: object
    expected: object
    step: object

    def describe(self) -> str:
        return (f"its dates step by {self.step!r} until {iso_date(self.before)}, which is followed by "
                f"{iso_date(self.after)} instead of {iso_date(self.expected)}")


def _usual_step(ds: pd.Series):
    """The step most consecutive dates of ``ds`` follow: an integer, a pandas frequency string, or None."""
    if len(ds) < 2:
        return None
    if pd.api.types.is_integer_dtype(ds):
        steps, counts = np.unique(np.diff(ds.to_numpy()), return_counts=True)
        return int(steps[np.argmax(counts)])
    idx = pd.DatetimeIndex(ds)
    votes: dict = {}
    for k in range(min(len(idx) - 2, _VOTES)):
        f = pd.infer_freq(idx[k : k + 3])
        if f is not None:
            votes[f] = votes.get(f, 0) + 1
    return max(votes, key=votes.get) if votes else None


def _following(ds: pd.Series, step):
    """Each date of ``ds`` but the last, moved one ``step`` on."""
    if isinstance(step, (int, np.integer)):
        return ds.to_numpy()[:-1] + int(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas warns that calendar offsets are added date by date
        return pd.DatetimeIndex(ds)[:-1] + pd.tseries.frequencies.to_offset(step)


def first_break(ds: pd.Series, step=None) -> Break | None:
    """Where a sorted series stops stepping evenly: a :class:`Break`, or None when it never does.

    ``step`` (an integer or a pandas frequency) defaults to the step most of its dates follow.

    Examples:
        >>> ds = pd.Series(pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01", "2020-05-01", "2020-06-01"]))
        >>> first_break(ds).describe()
        "its dates step by 'MS' until 2020-03-01, which is followed by 2020-05-01 instead of 2020-04-01"
        >>> first_break(pd.Series([1, 2, 3, 5])).expected
        4
    """
    step = _usual_step(ds) if step is None else step
    if step is None or len(ds) < 2:
        return None
    expected = _following(ds, step)
    actual = ds.to_numpy()[1:]
    bad = np.flatnonzero(np.asarray(actual != np.asarray(expected)))
    if not len(bad):
        return None
    k = int(bad[0])
    plain = (lambda v: int(v)) if isinstance(step, (int, np.integer)) else pd.Timestamp
    return Break(plain(ds.iloc[k]), plain(actual[k]), plain(expected[k]), step)


def common_step(df: pd.DataFrame):
    """The step most series of a long frame follow (see :func:`first_break`), or None when no series has one."""
    votes: dict = {}
    for _, g in df.groupby("unique_id", sort=False):
        s = _usual_step(g["ds"])
        if s is not None:
            votes[s] = votes.get(s, 0) + 1
    return max(votes, key=votes.get) if votes else None


def fill_gaps(df: pd.DataFrame, freq=None, rule: str = "interpolate", columns=("y",)) -> pd.DataFrame:
    """``df`` (long, each series sorted by ``ds``) with every missing date of each series inserted.

    The inserted rows' ``columns`` (``y``, and any regressor) are made by ``rule`` (:data:`FILL_RULES`):
    ``"interpolate"`` (linear between the neighbours: the dates are evenly spaced once filled), ``"ffill"``
    (the last observed value) or ``"zero"``; an empty value in an existing row is filled the same way. ``freq``
    (a pandas frequency, or the integer step of integer ``ds``) defaults to the step most series follow.
    ``result.attrs["filled"]`` maps each series that gained values to how many. A date off ``freq``'s
    calendar is an :class:`~seqlab.errors.InvalidParameterError`.

    Examples:
        >>> df = pd.DataFrame({"unique_id": "a", "ds": [1, 2, 4, 5], "y": [1.0, 2.0, 4.0, 8.0]})
        >>> out = fill_gaps(df)
        >>> out["y"].tolist(), out.attrs["filled"]
        ([1.0, 2.0, 3.0, 4.0, 8.0], {'a': 1})
        >>> fill_gaps(df, rule="ffill")["y"].tolist()
        [1.0, 2.0, 2.0, 4.0, 8.0]
    """
    if rule not in FILL_RULES:
        raise InvalidParameterError(f"rule must be one of {', '.join(FILL_RULES)}, got {rule!r}")
    freq = common_step(df) if freq is None else freq
    if freq is None:
        raise InvalidParameterError("no series has a regular step to fill its gaps along; give freq")
    parts, filled = [], {}
    for uid, g in df.groupby("unique_id", sort=False):
        ds = g["ds"]
        if isinstance(freq, (int, np.integer)):
            full = np.arange(int(ds.iloc[0]), int(ds.iloc[-1]) + 1, int(freq), dtype=np.int64)
        else:
            full = pd.date_range(ds.iloc[0], ds.iloc[-1], freq=freq)
        off = ~pd.Index(ds).isin(full)
        if off.any():
            raise InvalidParameterError(f"series {uid!r}: ds {iso_date(ds[off].iloc[0])} is not on the calendar of "
                                        f"{freq!r}, so the gaps cannot be filled along it")
        g = g.set_index("ds").reindex(full)
        g.index.name = "ds"
        g["unique_id"] = uid
        holes = int(g[list(columns)].isna().any(axis=1).sum())
        for c in columns:
            v = g[c]
            if not pd.api.types.is_numeric_dtype(v) or pd.api.types.is_bool_dtype(v):
                continue  # words or true/false: refused as such when the frame is validated, not filled over
            if rule == "interpolate":
                v = v.interpolate(method="linear", limit_direction="both")
            elif rule == "ffill":
                v = v.ffill().bfill()
            else:
                v = v.fillna(0.0)
            g[c] = v
        if holes:
            filled[uid] = holes
        parts.append(g.reset_index())
    out = pd.concat(parts, ignore_index=True)[list(df.columns)]
    out.attrs["filled"] = filled
    return out
