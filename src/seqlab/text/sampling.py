"""Logits processors for decoding: one transform per class, composed in a list.

Order and boundary conventions follow Hugging Face's generate(): temperature is
applied first, then top-k, top-p, min-p. Top-k keeps every token tied with the
k-th largest logit. Top-p keeps the smallest set whose probability reaches p,
including the token that crosses the threshold, and at least
``min_tokens_to_keep``; ``top_p = 1`` filters nothing. Filtered tokens get
``-inf``. No processor edits the caller's tensor.
"""
from __future__ import annotations

import math

import torch

from ..errors import InvalidParameterError

__all__ = ["LogitsProcessor", "SuppressTokens", "Temperature", "TopK", "TopP", "MinP", "build_processors", "apply_processors",
           "sample_next", "EntropyProbe", "distribution_entropy"]


class LogitsProcessor:
    """``processor(logits) -> new logits`` over the last dimension (the vocabulary)."""

    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


def _check_keep(min_tokens_to_keep: int) -> int:
    if not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise InvalidParameterError(f"min_tokens_to_keep must be an integer >= 1, got {min_tokens_to_keep!r}")
    return min_tokens_to_keep


def _fraction(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise InvalidParameterError(f"{name} must lie in [0, 1], got {value!r}")
    return float(value)


class SuppressTokens(LogitsProcessor):
    """Never emit the given token ids (for example a tokenizer's ``<unk>``)."""

    def __init__(self, token_ids):
        ids = sorted({int(i) for i in token_ids})
        if not ids or ids[0] < 0:
            raise InvalidParameterError(f"token_ids must be non-negative ids, got {token_ids!r}")
        self.token_ids = ids

    def __call__(self, logits):
        out = logits.clone()
        out[..., self.token_ids] = float("-inf")
        return out


class Temperature(LogitsProcessor):
    """logits / T: T < 1 sharpens, T > 1 flattens the distribution.

    The result is shifted so that its largest entry is 0, which leaves the softmax
    unchanged and keeps any T > 0, however small, free of overflow.
    """

    def __init__(self, temperature: float):
        if not isinstance(temperature, (int, float)) or not math.isfinite(temperature) or temperature <= 0:
            raise InvalidParameterError(f"temperature must be a finite number > 0, got {temperature!r}")
        self.temperature = float(temperature)

    def __call__(self, logits):
        # Shifting by the maximum leaves the softmax unchanged and makes the top logit exactly 0; dividing in
        # float64 keeps a tiny T (1e-300 is 0 in float32) from turning 0 / T into NaN: the rest go to -inf.
        shifted = (logits - logits.amax(dim=-1, keepdim=True)).double()
        return (shifted / self.temperature).to(logits.dtype)


class TopK(LogitsProcessor):
    """Keep the k largest logits (and any tied with the k-th)."""

    def __init__(self, top_k: int, min_tokens_to_keep: int = 1):
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise InvalidParameterError(f"top_k must be an integer >= 1, got {top_k!r}")
        self.top_k, self.min_tokens_to_keep = top_k, _check_keep(min_tokens_to_keep)

    def __call__(self, logits):
        k = min(max(self.top_k, self.min_tokens_to_keep), logits.size(-1))
        kth = torch.topk(logits, k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))


class TopP(LogitsProcessor):
    """Nucleus sampling: keep the most probable tokens until their mass reaches p."""

    def __init__(self, top_p: float, min_tokens_to_keep: int = 1):
        self.top_p, self.min_tokens_to_keep = _fraction("top_p", top_p), _check_keep(min_tokens_to_keep)

    def __call__(self, logits):
        if self.top_p >= 1.0:
            return logits
        ascending, order = torch.sort(logits, dim=-1)
        # a token goes when it and every less likely token together hold at most 1 - p
        mass_up_to = ascending.softmax(dim=-1).cumsum(dim=-1)
        drop_sorted = mass_up_to <= 1.0 - self.top_p
        drop_sorted[..., -self.min_tokens_to_keep:] = False
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        return logits.masked_fill(drop, float("-inf"))


class MinP(LogitsProcessor):
    """Keep tokens whose probability is at least min_p times the largest probability."""

    def __init__(self, min_p: float, min_tokens_to_keep: int = 1):
        self.min_p, self.min_tokens_to_keep = _fraction("min_p", min_p), _check_keep(min_tokens_to_keep)

    def __call__(self, logits):
        probs = logits.softmax(dim=-1)
        drop = probs < self.min_p * probs.max(dim=-1, keepdim=True).values
        keep_top = torch.topk(probs, min(self.min_tokens_to_keep, probs.size(-1)), dim=-1).indices
        drop = drop.scatter(-1, keep_top, False)
        return logits.masked_fill(drop, float("-inf"))


def build_processors(temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                     min_p: float | None = None, min_tokens_to_keep: int = 1) -> list[LogitsProcessor]:
    """The processors for these settings, in Hugging Face's order; neutral settings add nothing."""
    procs: list[LogitsProcessor] = []
    if temperature != 1.0:
        procs.append(Temperature(temperature))
    else:
        Temperature(temperature)  # still validates
    if top_k is not None:
        procs.append(TopK(top_k, min_tokens_to_keep))
    if top_p is not None and top_p < 1.0:
        procs.append(TopP(top_p, min_tokens_to_keep))
    elif top_p is not None:
        TopP(top_p)
    if min_p is not None and min_p > 0.0:
        procs.append(MinP(min_p, min_tokens_to_keep))
    elif min_p is not None:
        MinP(min_p)
    return procs


def apply_processors(logits: torch.Tensor, processors) -> torch.Tensor:
    for p in processors:
        logits = p(logits)
    return logits


def sample_next(logits: torch.Tensor, processors=(), *, greedy: bool = False,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """Next token ids (B, 1) from last-position logits (B, V): arg-max if ``greedy``, else a draw."""
    if greedy:
        return logits.argmax(dim=-1, keepdim=True)
    probs = apply_processors(logits, processors).softmax(dim=-1)
    return torch.multinomial(probs, 1, generator=generator)


def distribution_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of softmax(logits) over the last dimension; filtered (-inf) tokens contribute nothing."""
    logp = logits.log_softmax(dim=-1)
    p = logp.exp()
    return -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(dim=-1)


class EntropyProbe(LogitsProcessor):
    """A processor that changes nothing and records what the sampler is about to draw from.

    Put it last in a processor list: every call appends, per row of the batch, the
    entropy (nats) of the distribution after filtering and the number of tokens still
    allowed. ``per_row()`` averages them over the calls, one value per row.
    """

    def __init__(self):
        self.entropy: list[torch.Tensor] = []
        self.kept: list[torch.Tensor] = []

    def __call__(self, logits):
        self.entropy.append(distribution_entropy(logits.detach().double()))
        self.kept.append(torch.isfinite(logits).sum(dim=-1))
        return logits

    def per_row(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean entropy, mean tokens kept) per row over every recorded step."""
        if not self.entropy:
            raise InvalidParameterError("the probe has recorded nothing yet")
        return torch.stack(self.entropy).mean(0), torch.stack(self.kept).double().mean(0)

    def __repr__(self) -> str:
        return f"EntropyProbe(steps={len(self.entropy)})"
