"""Diversity and quality of generated text."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..threads import torch_threads

__all__ = ["distinct_n", "repetition_rate", "mean_nll"]


def distinct_n(seq, n: int) -> float:
    """Unique n-grams / all n-grams of a sequence (Li et al., 2016); 1 = no n-gram repeats.

    Args:
        seq: token ids (or characters: any sequence of hashable items).
        n: the n-gram length.

    Returns:
        The share in [0, 1]; 0 for a sequence shorter than ``n``.

    Example:
        >>> distinct_n("abab", 2)  # ab, ba, ab: two of three are distinct
        0.6666666666666666
    """
    grams = [tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def repetition_rate(seq, n: int = 8) -> float:
    """Fraction of positions whose n-gram already occurred earlier in the same sequence (loops, copying).

    Args:
        seq: token ids (or any sequence of hashable items).
        n: the n-gram length.

    Returns:
        The share in [0, 1]; 0 for a sequence shorter than ``n``.

    Example:
        >>> repetition_rate("abcabcabc", n=3)  # after the first "abc", every trigram is a repeat
        0.5714285714285714
    """
    seen, repeats, total = set(), 0, 0
    for i in range(len(seq) - n + 1):
        g = tuple(seq[i : i + n])
        repeats += g in seen
        total += 1
        seen.add(g)
    return repeats / total if total else 0.0


@torch.no_grad()
def mean_nll(model, ids: list[int], context: int | None = None, *, threads: int = 1) -> float:
    """Mean negative log-likelihood (nats/token) of ``ids[1:]`` under ``model``, in windows of ``context``.

    Each window starts afresh (no context carried over from the one before); for the loss of a whole text
    with every token scored once, see :func:`seqlab.text.scoring.score_text`. Runs on ``threads`` torch
    threads (one by default: torch's every-core default ran a small model 12x slower on a busy machine).

    Example:
        >>> from seqlab.nn import GPT, GPTConfig
        >>> model = GPT(GPTConfig(vocab_size=5, block_size=4, num_layers=1, num_heads=1, d_model=8))
        >>> mean_nll(model, [0, 1, 2, 3, 4, 0]) > 0
        True
    """
    model.eval()
    t = torch.tensor(ids, dtype=torch.long).unsqueeze(0)
    context = context or getattr(model, "block_size", None) or t.size(1)
    total, count = 0.0, 0
    with torch_threads(threads):
        for start in range(0, t.size(1) - 1, context):
            x = t[:, start : start + context]
            y = t[:, start + 1 : start + context + 1]
            x = x[:, : y.size(1)]
            logits, _ = model(x)
            total += F.cross_entropy(logits[0], y[0], reduction="sum").item()
            count += y.size(1)
    return total / count
