"""Shared access to the language-model experiment for §14.57-§14.60 (loaded once per process)."""
from __future__ import annotations

_CACHE: dict = {}


def lm():
    """``(gpt, tokenizer, curves, samples, tradeoff, manifest, mode)``; HEAVY_EVAL=1 retrains first."""
    from ..experiments.lm import lm_results
    from ..store import heavy_eval

    key = heavy_eval()
    if key not in _CACHE:
        _CACHE[key] = lm_results()
    return _CACHE[key]
