"""Shared access to the language-model experiments for §14.56-§14.60 (loaded once per process)."""
from __future__ import annotations

import functools

__all__ = ["lm", "followups"]


def lm():
    """``(gpt, tokenizer, curves, samples, tradeoff, manifest, mode)``; HEAVY_EVAL=1 retrains first."""
    from ..store import heavy_eval

    return _lm(heavy_eval())


def followups() -> dict:
    """The follow-up sets ``{"sweep", "bpe", "decoding", "mode"}``; HEAVY_EVAL=1 reruns them first (after ``lm``)."""
    from ..store import heavy_eval

    return _followups(heavy_eval())


# keyed by the HEAVY_EVAL setting, so that a process that changes it does not get the other mode's results
@functools.cache
def _lm(heavy: bool):
    from ..experiments.lm import lm_results

    return lm_results()


@functools.cache
def _followups(heavy: bool) -> dict:
    from ..experiments.lm_followups import followup_results

    if heavy:
        lm()  # the follow-ups read the chapter's model: train it first
    return followup_results()
