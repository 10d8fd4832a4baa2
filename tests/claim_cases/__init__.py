"""Inputs for every claim source (see test_claims.py): ``CASES[module.qualname] = [make, ...]``.

Each ``make()`` returns ``(args, kwargs)`` for one call. Build the numbers by hand (small frames
and dicts), one set per outcome, so every claim the source makes is seen true and false.

One module per chapter section or page part holds its sources' cases in a ``CASES`` dict of its own;
this package merges them, and a source may have its cases in one module only.
"""
from __future__ import annotations

from . import (attention, recurrence, s14_53, s14_54, s14_55, s14_57_ten_minutes, s14_61_62, s14_63_fresh,
               s14_63_intervals, s14_63_nbeats, s14_63_reference, s14_63_verdicts, s14_64, text)

PARTS = (s14_61_62, s14_63_verdicts, s14_63_nbeats, s14_63_intervals, s14_63_reference, recurrence, text, attention,
         s14_64, s14_55, s14_53, s14_54, s14_57_ten_minutes, s14_63_fresh)


def _merged(parts) -> dict:
    cases: dict = {}
    for part in parts:
        twice = sorted(set(cases) & set(part.CASES))
        if twice:
            raise ValueError(f"{part.__name__} gives cases for sources another module already has: {twice}")
        cases.update(part.CASES)
    return cases


CASES: dict = _merged(PARTS)
