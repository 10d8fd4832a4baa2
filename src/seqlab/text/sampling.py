"""Logits processors for decoding: one transform per class, composed in a list.

Every processor follows Hugging Face's protocol, ``processor(input_ids, scores)``:
``input_ids`` (B, T) long holds the tokens so far (prompt included) and ``scores``
(B, V) the logits of the next one. Order and boundary conventions follow Hugging
Face's generate(): the history processors (repetition penalty, no-repeat n-gram)
come first, then temperature, top-k, top-p, min-p. Top-k keeps every token tied
with the k-th largest logit. Top-p keeps the smallest set whose probability
reaches p, including the token that crosses the threshold, and at least
``min_tokens_to_keep``; ``top_p = 1`` filters nothing. Filtered tokens get
``-inf``. No processor edits the caller's tensor, and every argument is checked
when the processor is built.
"""
from __future__ import annotations

import math

import torch

from ..errors import InvalidParameterError
from .processors import (LogitsProcessor, NoRepeatNGram, NoTokenLeftError, RepetitionPenalty, SuppressTokens,
                         check_keep, fraction)

__all__ = ["LogitsProcessor", "SuppressTokens", "RepetitionPenalty", "NoRepeatNGram", "Temperature", "TopK", "TopP",
           "MinP", "build_processors", "apply_processors", "sample_next", "EntropyProbe", "distribution_entropy",
           "NoTokenLeftError"]


class Temperature(LogitsProcessor):
    """logits / T: T < 1 sharpens, T > 1 flattens the distribution.

    The result is shifted so that its largest entry is 0, which leaves the softmax
    unchanged and keeps any T > 0, however small, free of overflow.

    Args:
        temperature: T, a finite number > 0.

    Raises:
        InvalidParameterError: another temperature.

    Example:
        >>> import torch
        >>> none = torch.zeros(1, 0, dtype=torch.long)  # no history
        >>> Temperature(0.5)(none, torch.tensor([[1.0, 3.0, 2.0]]))
        tensor([[-4.,  0., -2.]])
    """

    def __init__(self, temperature: float):
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature) \
                or temperature <= 0:
            raise InvalidParameterError(f"temperature must be a finite number > 0, got {temperature!r}")
        self.temperature = float(temperature)

    def __call__(self, input_ids, scores):
        # Shifting by the maximum leaves the softmax unchanged and makes the top logit exactly 0; dividing in
        # float64 keeps a tiny T (1e-300 is 0 in float32) from turning 0 / T into NaN: the rest go to -inf.
        shifted = (scores - scores.amax(dim=-1, keepdim=True)).double()
        return (shifted / self.temperature).to(scores.dtype)


class TopK(LogitsProcessor):
    """Keep the k largest logits (and any tied with the k-th).

    Args:
        top_k: k, an integer >= 1; a k above the vocabulary keeps every token.
        min_tokens_to_keep: keep at least this many, whatever k.

    Raises:
        InvalidParameterError: a k or ``min_tokens_to_keep`` that is not an integer >= 1.

    Example:
        >>> import torch
        >>> none = torch.zeros(1, 0, dtype=torch.long)  # no history
        >>> TopK(2)(none, torch.tensor([[1.0, 3.0, 2.0, 0.0]]))
        tensor([[-inf, 3., 2., -inf]])
    """

    def __init__(self, top_k: int, min_tokens_to_keep: int = 1):
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise InvalidParameterError(f"top_k must be an integer >= 1, got {top_k!r}")
        self.top_k, self.min_tokens_to_keep = top_k, check_keep(min_tokens_to_keep)

    def __call__(self, input_ids, scores):
        k = min(max(self.top_k, self.min_tokens_to_keep), scores.size(-1))
        kth = torch.topk(scores, k, dim=-1).values[..., -1:]
        return scores.masked_fill(scores < kth, float("-inf"))


class TopP(LogitsProcessor):
    """Nucleus sampling: keep the most probable tokens until their mass reaches p.

    Args:
        top_p: p in [0, 1]; 1 filters nothing.
        min_tokens_to_keep: keep at least this many, whatever p.

    Raises:
        InvalidParameterError: p outside [0, 1], or ``min_tokens_to_keep`` not an integer >= 1.

    Example:
        >>> import torch
        >>> none = torch.zeros(1, 0, dtype=torch.long)  # no history
        >>> scores = torch.tensor([[1.0, 3.0, 2.0, 0.0]])  # probabilities 0.09, 0.64, 0.24, 0.03
        >>> TopP(0.7)(none, scores)  # 0.64 is short of 0.7: the next token is kept too
        tensor([[-inf, 3., 2., -inf]])
    """

    def __init__(self, top_p: float, min_tokens_to_keep: int = 1):
        self.top_p, self.min_tokens_to_keep = fraction("top_p", top_p), check_keep(min_tokens_to_keep)

    def __call__(self, input_ids, scores):
        if self.top_p >= 1.0:
            return scores
        ascending, order = torch.sort(scores, dim=-1)
        # a token goes when it and every less likely token together hold at most 1 - p
        mass_up_to = ascending.softmax(dim=-1).cumsum(dim=-1)
        drop_sorted = mass_up_to <= 1.0 - self.top_p
        drop_sorted[..., -self.min_tokens_to_keep:] = False
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        return scores.masked_fill(drop, float("-inf"))


class MinP(LogitsProcessor):
    """Keep tokens whose probability is at least min_p times the largest probability.

    Args:
        min_p: the share of the top probability a token needs, in [0, 1]; 0 filters nothing.
        min_tokens_to_keep: keep at least this many, whatever min_p.

    Raises:
        InvalidParameterError: min_p outside [0, 1], or ``min_tokens_to_keep`` not an integer >= 1.

    Example:
        >>> import torch
        >>> none = torch.zeros(1, 0, dtype=torch.long)  # no history
        >>> MinP(0.3)(none, torch.tensor([[1.0, 3.0, 2.0, 0.0]]))  # 0.24 / 0.64 is above 0.3; 0.09 / 0.64 is not
        tensor([[-inf, 3., 2., -inf]])
    """

    def __init__(self, min_p: float, min_tokens_to_keep: int = 1):
        self.min_p, self.min_tokens_to_keep = fraction("min_p", min_p), check_keep(min_tokens_to_keep)

    def __call__(self, input_ids, scores):
        probs = scores.softmax(dim=-1)
        drop = probs < self.min_p * probs.max(dim=-1, keepdim=True).values
        keep_top = torch.topk(probs, min(self.min_tokens_to_keep, probs.size(-1)), dim=-1).indices
        drop = drop.scatter(-1, keep_top, False)
        return scores.masked_fill(drop, float("-inf"))


def build_processors(temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                     min_p: float | None = None, min_tokens_to_keep: int = 1, *,
                     repetition_penalty: float | None = None,
                     no_repeat_ngram_size: int | None = None) -> list[LogitsProcessor]:
    """The processors for these settings, in Hugging Face's order; neutral settings add nothing.

    Neutral: temperature 1, top_p 1, min_p 0, repetition_penalty 1, no_repeat_ngram_size 0 (or None).
    These are the options of ``seqlab lm sample`` (``--temperature``, ``--top-k``, ...).

    Args:
        temperature: see :class:`Temperature`.
        top_k: see :class:`TopK` (default: off).
        top_p: see :class:`TopP` (default: off).
        min_p: see :class:`MinP` (default: off).
        min_tokens_to_keep: for top-k, top-p and min-p.
        repetition_penalty: see :class:`RepetitionPenalty` (default: off).
        no_repeat_ngram_size: see :class:`NoRepeatNGram` (default: off).

    Returns:
        A list of processors, history processors first, then temperature, top-k, top-p, min-p.

    Raises:
        InvalidParameterError: any setting its processor refuses, neutral or not.

    Example:
        >>> build_processors(temperature=0.8, top_k=40)
        [Temperature(temperature=0.8), TopK(top_k=40, min_tokens_to_keep=1)]
        >>> build_processors(temperature=1.0, top_p=1.0)
        []
    """
    procs: list[LogitsProcessor] = []
    if repetition_penalty is not None:
        penalty = RepetitionPenalty(repetition_penalty)
        if penalty.penalty != 1.0:
            procs.append(penalty)
    if no_repeat_ngram_size is not None and no_repeat_ngram_size != 0:
        procs.append(NoRepeatNGram(no_repeat_ngram_size))
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


def apply_processors(scores: torch.Tensor, processors, input_ids: torch.Tensor | None = None) -> torch.Tensor:
    """``scores`` through each processor in turn.

    Args:
        scores: shape (B, V), the next token's logits.
        processors: a sequence of :class:`LogitsProcessor`.
        input_ids: shape (B, T), the tokens so far (default: no history, an empty (B, 0) one).

    Returns:
        The processed scores, shape (B, V).

    Example:
        >>> import torch
        >>> apply_processors(torch.tensor([[1.0, 3.0, 2.0]]), build_processors(temperature=0.5, top_k=1))
        tensor([[-inf, 0., -inf]])
    """
    if input_ids is None:
        input_ids = torch.zeros((*scores.shape[:-1], 0), dtype=torch.long, device=scores.device)
    for p in processors:
        scores = p(input_ids, scores)
    return scores


def sample_next(scores: torch.Tensor, processors=(), *, input_ids: torch.Tensor | None = None, greedy: bool = False,
                generator: torch.Generator | list[torch.Generator] | None = None) -> torch.Tensor:
    """Next token ids (B, 1) from last-position logits (B, V) and the history ``input_ids`` (B, T).

    The processors run in both modes; ``greedy`` then takes the arg-max, else one
    token is drawn. A row whose every token was filtered out raises
    :class:`NoTokenLeftError` rather than yielding an arbitrary token. ``generator``
    may be a list with one generator per row: row i then draws from its own, as it
    would alone, so a batch of samples gives each the text its seed gives by itself.

    Args:
        scores: shape (B, V), the last position's logits.
        processors: the :class:`LogitsProcessor` list to apply first.
        input_ids: shape (B, T), the history the processors see (default: none).
        greedy: take the arg-max instead of drawing.
        generator: a ``torch.Generator``, or one per row (default: torch's global one).

    Returns:
        The next token ids, shape (B, 1).

    Raises:
        NoTokenLeftError: a row whose every token was filtered out.
        InvalidParameterError: NaN or +inf scores after the processors, or a list of generators that is not one
            per row.

    Example:
        >>> import torch
        >>> scores = torch.tensor([[1.0, 3.0, 2.0, 0.0]])
        >>> sample_next(scores, [TopK(2)], generator=torch.Generator().manual_seed(0))
        tensor([[1]])
        >>> sample_next(scores, greedy=True)
        tensor([[1]])
    """
    if isinstance(generator, (list, tuple)) and len(generator) != scores.size(0):
        raise InvalidParameterError(f"{len(generator)} generators for {scores.size(0)} rows: give one per row")
    scores = apply_processors(scores, processors, input_ids)
    if torch.isnan(scores).any() or torch.isposinf(scores).any():
        raise InvalidParameterError(f"the processors {list(processors)} made scores that are NaN or +inf (an "
                                    "extreme temperature or penalty overflows the logits)")
    alive = torch.isfinite(scores).any(dim=-1)
    if not alive.all():
        row = int((~alive).nonzero()[0, 0])
        raise NoTokenLeftError(f"the processors {list(processors)} left no token to choose in row {row}")
    if greedy:
        return scores.argmax(dim=-1, keepdim=True)
    probs = scores.softmax(dim=-1)
    if isinstance(generator, (list, tuple)):
        return torch.cat([torch.multinomial(probs[i:i + 1], 1, generator=g) for i, g in enumerate(generator)])
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

    def __call__(self, input_ids, scores):
        self.entropy.append(distribution_entropy(scores.detach().double()))
        self.kept.append(torch.isfinite(scores).sum(dim=-1))
        return scores

    def per_row(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean entropy, mean tokens kept) per row over every recorded step."""
        if not self.entropy:
            raise InvalidParameterError("the probe has recorded nothing yet")
        return torch.stack(self.entropy).mean(0), torch.stack(self.kept).double().mean(0)

    def __repr__(self) -> str:
        return f"EntropyProbe(steps={len(self.entropy)})"
