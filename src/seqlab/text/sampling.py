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

__all__ = ["LogitsProcessor", "SuppressTokens", "RepetitionPenalty", "NoRepeatNGram", "Temperature", "TopK", "TopP",
           "MinP", "build_processors", "apply_processors", "sample_next", "EntropyProbe", "distribution_entropy",
           "NoTokenLeftError"]


class NoTokenLeftError(InvalidParameterError):
    """The processors filtered out every token of a row, so there is nothing to draw."""


class LogitsProcessor:
    """``processor(input_ids, scores) -> new scores``, in Hugging Face's argument order.

    ``input_ids`` (B, T) long: the tokens so far; ``scores`` (B, V): logits of the
    next token. Processors that ignore the history also accept any leading shape.
    """

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
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


def _history(processor, input_ids, scores) -> torch.Tensor:
    """``input_ids`` as a (B, T) long tensor of ids inside the vocabulary of ``scores`` (B, V)."""
    name = type(processor).__name__
    if not isinstance(scores, torch.Tensor) or scores.dim() != 2:
        raise InvalidParameterError(f"{name}: scores must be a (B, V) tensor")
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.size(0) != scores.size(0) \
            or input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:
        raise InvalidParameterError(f"{name}: input_ids must be a (B, T) integer tensor with the B of scores "
                                    f"{tuple(scores.shape)}, got {getattr(input_ids, 'shape', type(input_ids))}")
    if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= scores.size(1)):
        raise InvalidParameterError(f"{name}: input_ids must be token ids in [0, {scores.size(1)})")
    return input_ids.long()


class SuppressTokens(LogitsProcessor):
    """Never emit the given token ids (for example a tokenizer's ``<unk>``)."""

    def __init__(self, token_ids):
        ids = sorted({int(i) for i in token_ids})
        if not ids or ids[0] < 0:
            raise InvalidParameterError(f"token_ids must be non-negative ids, got {token_ids!r}")
        self.token_ids = ids

    def __call__(self, input_ids, scores):
        if self.token_ids[-1] >= scores.size(-1):
            raise InvalidParameterError(f"SuppressTokens: id {self.token_ids[-1]} is outside the vocabulary of "
                                        f"{scores.size(-1)}")
        out = scores.clone()
        out[..., self.token_ids] = float("-inf")
        return out


class RepetitionPenalty(LogitsProcessor):
    """Make every token already in the row's history less likely (penalty > 1) or more (penalty < 1).

    Hugging Face's (and CTRL's) rule: a negative logit is multiplied by the
    penalty, a positive one divided, so either way it moves toward less likely;
    a token counts once however often it occurred. The prompt is part of the history.
    """

    def __init__(self, penalty: float):
        if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not math.isfinite(penalty) \
                or penalty <= 0:
            raise InvalidParameterError(f"penalty must be a finite number > 0, got {penalty!r}")
        self.penalty = float(penalty)

    def __call__(self, input_ids, scores):
        ids = _history(self, input_ids, scores)
        seen = scores.gather(1, ids)
        # dividing a negative logit would raise its probability: the sign decides between * and /
        moved = torch.where(seen < 0, seen * self.penalty, seen / self.penalty)
        return scores.scatter(1, ids, moved)


class NoRepeatNGram(LogitsProcessor):
    """Ban every token that would complete an n-gram already present in the row (prompt included).

    With ``ngram_size = n`` the last n - 1 tokens are looked up among the row's
    earlier windows; each earlier occurrence bans the token that followed it.
    ``ngram_size = 1`` bans every token seen so far.
    """

    def __init__(self, ngram_size: int):
        if isinstance(ngram_size, bool) or not isinstance(ngram_size, int) or ngram_size < 1:
            raise InvalidParameterError(f"ngram_size must be an integer >= 1, got {ngram_size!r}")
        self.ngram_size = ngram_size

    def __call__(self, input_ids, scores):
        ids = _history(self, input_ids, scores)
        n, length = self.ngram_size, ids.size(1)
        if length < n:  # no complete n-gram yet
            return scores
        grams = ids.unfold(1, n, 1)  # (B, windows, n)
        context = ids[:, length - n + 1:]  # the n - 1 tokens the next one would extend
        rows, windows = (grams[..., :-1] == context.unsqueeze(1)).all(dim=-1).nonzero(as_tuple=True)
        banned = torch.zeros_like(scores, dtype=torch.bool)
        banned[rows, grams[rows, windows, -1]] = True
        return scores.masked_fill(banned, float("-inf"))


class Temperature(LogitsProcessor):
    """logits / T: T < 1 sharpens, T > 1 flattens the distribution.

    The result is shifted so that its largest entry is 0, which leaves the softmax
    unchanged and keeps any T > 0, however small, free of overflow.
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
    """Keep the k largest logits (and any tied with the k-th)."""

    def __init__(self, top_k: int, min_tokens_to_keep: int = 1):
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise InvalidParameterError(f"top_k must be an integer >= 1, got {top_k!r}")
        self.top_k, self.min_tokens_to_keep = top_k, _check_keep(min_tokens_to_keep)

    def __call__(self, input_ids, scores):
        k = min(max(self.top_k, self.min_tokens_to_keep), scores.size(-1))
        kth = torch.topk(scores, k, dim=-1).values[..., -1:]
        return scores.masked_fill(scores < kth, float("-inf"))


class TopP(LogitsProcessor):
    """Nucleus sampling: keep the most probable tokens until their mass reaches p."""

    def __init__(self, top_p: float, min_tokens_to_keep: int = 1):
        self.top_p, self.min_tokens_to_keep = _fraction("top_p", top_p), _check_keep(min_tokens_to_keep)

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
    """Keep tokens whose probability is at least min_p times the largest probability."""

    def __init__(self, min_p: float, min_tokens_to_keep: int = 1):
        self.min_p, self.min_tokens_to_keep = _fraction("min_p", min_p), _check_keep(min_tokens_to_keep)

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
    """``scores`` through each processor in turn; ``input_ids`` None means no history (an empty (B, 0) one)."""
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
