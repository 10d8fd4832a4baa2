"""Shared access to the language-model experiments for §14.56-§14.60 (loaded once per process)."""
from __future__ import annotations

_CACHE: dict = {}


def lm():
    """``(gpt, tokenizer, curves, samples, tradeoff, manifest, mode)``; HEAVY_EVAL=1 retrains first."""
    from ..experiments.lm import lm_results
    from ..store import heavy_eval

    key = ("lm", heavy_eval())
    if key not in _CACHE:
        _CACHE[key] = lm_results()
    return _CACHE[key]


def followups() -> dict:
    """The follow-up sets ``{"sweep", "bpe", "decoding", "mode"}``; HEAVY_EVAL=1 reruns them first (after ``lm``)."""
    from ..experiments.lm import followup_results
    from ..store import heavy_eval

    key = ("followups", heavy_eval())
    if key not in _CACHE:
        if heavy_eval():
            lm()  # the follow-ups read the chapter's model: train it first
        _CACHE[key] = followup_results()
    return _CACHE[key]
