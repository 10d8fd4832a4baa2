"""Verdicts on measured numbers: the predicates a page's sentences rest on, evaluated on every build.

A page never states an interpretation of a measured number as fixed text. Its Markdown writes
both wordings of the sentence (a ``{claim}`` role, :mod:`seqlab.book.sentences`), and the
section's *claim source*, a function in its module, takes the numbers and returns :class:`Claim`
verdicts: the predicate's value and the numbers, labels and yes/no facts the wordings quote
(:func:`verdict`). The page reads the wording that holds on this build; a *required* claim
(:func:`require`) that is false stops the build with :class:`ClaimError` instead of printing a
false sentence. ``seqlab run`` prints the same verdicts, and ``--json`` carries them.

Every claim source is registered with :func:`claim_source`; the test suite feeds each one
numbers for both outcomes of every claim it makes and renders the page's wordings for each, so
no paragraph is written for one outcome only. The build report lists every claim a page made,
its value, its evidence and the sentence the page read.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import SeqlabError

__all__ = ["CLAIM_PREFIX", "join_and", "Claim", "ClaimError", "verdict", "require", "reporting", "claim_source",
           "SOURCES", "jsonable", "fmt"]

#: the glue names under which a page keeps each claim's record (its verdict and evidence) for the build report
CLAIM_PREFIX = "seqlab-claim:"

#: thousands separator in prose: the comma the tables and the fixed text use too
_THOUSANDS = ","


def join_and(items) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list in a sentence."""
    items = list(items)
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def fmt(value, spec: str = ".3g") -> str:
    """``value`` for prose: numbers by ``spec`` (``","`` groups thousands), anything else as ``str``."""
    if isinstance(value, (bool, str)) or not hasattr(value, "__float__"):
        return str(value)
    if spec == "," or spec.endswith("d"):
        return format(int(value), spec).replace(",", _THOUSANDS)
    text = format(float(value), spec).replace(",", _THOUSANDS)
    return text.replace("e-0", "e-").replace("e+0", "e+")


class ClaimError(SeqlabError, AssertionError):
    """A required claim whose predicate is false for the numbers measured: the sentence would be untrue."""


@dataclass(frozen=True)
class Claim:
    """One predicate over measured numbers, with the numbers its sentences quote."""

    name: str
    holds: bool
    evidence: dict[str, Any] = field(default_factory=dict)
    required: bool = False

    def record(self) -> dict:
        """The verdict as plain data (what ``seqlab run --json`` carries): name, holds, required, evidence."""
        return {"name": self.name, "holds": self.holds, "required": self.required, "evidence": self.evidence}


def jsonable(value):
    """``value`` with numpy and pandas scalars and containers turned into plain JSON values (full precision)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, pandas Series
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "__float__"):
        return float(value)
    return str(value)


def verdict(name: str, holds, **evidence) -> Claim:
    """A two-outcome claim whose wordings stand in the page (a ``{claim}`` role, see :mod:`seqlab.book.sentences`):
    the verdict and the numbers the wordings quote, by name."""
    if not name or not isinstance(name, str):
        raise ValueError("a claim needs a non-empty name")
    return Claim(name, bool(holds), jsonable(evidence))


#: set inside :func:`reporting`: a false required claim is returned as a verdict rather than raised
_REPORTING = contextvars.ContextVar("seqlab_claims_reporting", default=False)


@contextlib.contextmanager
def reporting():
    """Within the block a false :func:`require` claim is returned (holds false, required true) instead of raising.

    For numbers the pages do not state: ``seqlab run --seed N`` measures at other seeds than the chapter's, where a
    premise of the chapter's prose may not hold; the run reports that verdict beside its tables.
    """
    token = _REPORTING.set(True)
    try:
        yield
    finally:
        _REPORTING.reset(token)


def require(name: str, holds, **evidence) -> Claim:
    """A claim the prose states unconditionally: false raises :class:`ClaimError` (the build fails), or within
    :func:`reporting` is returned as a false required verdict."""
    holds = bool(holds)
    if not holds and _REPORTING.get():
        return Claim(name, False, jsonable(evidence), required=True)
    if not holds:
        shown = ", ".join(f"{k}={v!r}" for k, v in jsonable(evidence).items())
        raise ClaimError(f"claim {name!r} is false for the numbers measured ({shown})")
    return Claim(name, True, jsonable(evidence), required=True)


#: every registered claim source, by ``module.qualname``
SOURCES: dict[str, Callable[..., list[Claim]]] = {}


def claim_source(fn: Callable[..., list[Claim]]) -> Callable[..., list[Claim]]:
    """Register ``fn`` (numbers in, a list of claims out) so the tests can hold it to both outcomes."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs) -> list[Claim]:
        out = fn(*args, **kwargs)
        out = [out] if isinstance(out, Claim) else list(out)
        names = [c.name for c in out]
        if len(set(names)) != len(names):
            raise ValueError(f"{fn.__qualname__} made two claims with one name: {names}")
        return out

    SOURCES[f"{fn.__module__}.{fn.__qualname__}"] = wrapped
    return wrapped
