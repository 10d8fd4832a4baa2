"""The claims of :mod:`seqlab.claims`, under the name pages use (``from seqlab.book.claims import ...``).

Section modules import :mod:`seqlab.claims` directly: it sits in the bottom layer, below the chapter.
"""
from ..claims import SOURCES, Claim, ClaimError, claim, claim_source, jsonable, require

__all__ = ["Claim", "ClaimError", "claim", "require", "claim_source", "SOURCES", "jsonable"]
