"""Inputs for every claim source (see test_claims.py): ``CASES[module.qualname] = [make, ...]``.

Each ``make()`` returns ``(args, kwargs)`` for one call. Build the numbers by hand (small frames
and dicts), one set per outcome, so every claim the source makes is seen true and false.
"""
from __future__ import annotations

CASES: dict = {}
