"""Claims: every claim source is held to both outcomes of every claim it makes.

``CASES`` maps each registered claim source (``module.qualname``) to the inputs that drive it:
a list of ``(args, kwargs)`` chosen so that, across them, every non-required claim the source
makes is seen once true and once false, and every required claim is seen true and, for at
least one input, raising :class:`ClaimError`. A source with no entry here fails the test, so a
paragraph can never be written for one outcome only.
"""
from __future__ import annotations

import importlib
import pkgutil

import pytest

import seqlab.chapter
from seqlab.claims import SOURCES, ClaimError, require, verdict

# import every section module so that every claim source is registered
for _m in pkgutil.iter_modules(seqlab.chapter.__path__):
    importlib.import_module(f"seqlab.chapter.{_m.name}")

from claim_cases import CASES
from test_sentences import WRITTEN


def test_a_verdict_keeps_its_value_and_evidence():
    c = verdict("x", 1 > 2, a=1.0, b=2)
    assert (c.holds, c.evidence, c.required) == (False, {"a": 1.0, "b": 2}, False)
    assert c.record() == {"name": "x", "holds": False, "required": False, "evidence": {"a": 1.0, "b": 2}}
    with pytest.raises(ValueError, match="non-empty name"):
        verdict("", True)


def test_required_claim_raises_when_false():
    assert require("ok", 1 < 2, a=1).holds
    with pytest.raises(ClaimError, match="'bound' is false .*gradient=0.00646"):
        require("bound", 0.00646 <= 0.00515, gradient=0.00646, bound=0.00515)


def test_every_claim_source_has_cases():
    missing = sorted(set(SOURCES) - set(CASES))
    assert not missing, f"claim sources with no inputs in tests/claim_cases/: {missing}"
    unknown = sorted(set(CASES) - set(SOURCES))
    assert not unknown, f"tests/claim_cases/ names sources that do not exist: {unknown}"


@pytest.mark.parametrize("source", sorted(CASES))
def test_claim_source_is_seen_in_both_outcomes(source):
    outcomes: dict[str, set] = {}
    required: set[str] = set()
    raised = False
    for make in CASES[source]:
        args, kwargs = make()
        try:
            claims = SOURCES[source](*args, **kwargs)
        except ClaimError:
            raised = True
            continue
        for c in claims:
            # a verdict's wordings stand in a page: test_sentences.py renders them for each outcome
            assert c.required or c.name in WRITTEN, f"{source}: claim {c.name!r} has no sentence in any page"
            outcomes.setdefault(c.name, set()).add(c.holds)
            if c.required:
                required.add(c.name)
    assert outcomes, f"{source}: no input produced any claim"
    one_sided = sorted(n for n, seen in outcomes.items() if n not in required and seen != {True, False})
    assert not one_sided, f"{source}: claims seen in one outcome only: {one_sided}"
    if required:
        assert raised, f"{source}: no input makes its required claims {sorted(required)} false"
