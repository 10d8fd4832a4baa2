"""The logits-processor protocol, and the processors that read the history: suppressed tokens, a repetition
penalty, no repeated n-grams.

``seqlab.text.sampling`` composes them with the processors that reshape the distribution (temperature, top-k,
top-p, min-p); its docstring gives the order and the boundary conventions, which are Hugging Face's.
"""
from __future__ import annotations

import math

import torch

from ..errors import InvalidParameterError

__all__ = ["NoTokenLeftError", "LogitsProcessor", "SuppressTokens", "RepetitionPenalty", "NoRepeatNGram",
           "check_keep", "fraction"]


class NoTokenLeftError(InvalidParameterError):
    """The processors filtered out every token of a row, so there is nothing to draw.

    Example:
        >>> import torch
        >>> from seqlab.text import sample_next
        >>> sample_next(torch.zeros(1, 2), [SuppressTokens([0, 1])])
        Traceback (most recent call last):
        ...
        seqlab.text.processors.NoTokenLeftError: the processors [SuppressTokens(token_ids=[0, 1])] left no token to choose in row 0
    """


class LogitsProcessor:
    """``processor(input_ids, scores) -> new scores``, in Hugging Face's argument order.

    ``input_ids`` (B, T) long: the tokens so far; ``scores`` (B, V): logits of the
    next token. Processors that ignore the history also accept any leading shape.
    A processor returns new scores and never edits the ones it is given; a filtered
    token gets ``-inf``. Subclass it and define ``__call__`` to add one.

    Example:
        >>> import torch
        >>> class OnlyEven(LogitsProcessor):
        ...     def __call__(self, input_ids, scores):
        ...         return scores.masked_fill(torch.arange(scores.size(-1)) % 2 == 1, float("-inf"))
        >>> from seqlab.text import apply_processors
        >>> apply_processors(torch.zeros(1, 4), [OnlyEven()])
        tensor([[0., -inf, 0., -inf]])
    """

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


def check_keep(min_tokens_to_keep: int) -> int:
    if not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise InvalidParameterError(f"min_tokens_to_keep must be an integer >= 1, got {min_tokens_to_keep!r}")
    return min_tokens_to_keep


def fraction(name: str, value) -> float:
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
    """Never emit the given token ids (for example a tokenizer's ``<unk>``).

    Args:
        token_ids: the ids to ban, non-negative.

    Raises:
        InvalidParameterError: no ids, or a negative one; when called, an id outside the vocabulary.

    Example:
        >>> import torch
        >>> none = torch.zeros(1, 0, dtype=torch.long)  # no history
        >>> SuppressTokens([1])(none, torch.tensor([[1.0, 3.0, 2.0]]))
        tensor([[1., -inf, 2.]])
    """

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

    Args:
        penalty: a finite number > 0 (1 changes nothing).

    Raises:
        InvalidParameterError: another penalty; when called, a history that is not (B, T) ids of the vocabulary.

    Example:
        >>> import torch
        >>> seen = torch.tensor([[1, 3]])  # tokens 1 and 3 occurred
        >>> RepetitionPenalty(2.0)(seen, torch.tensor([[1.0, 3.0, 2.0, -1.0]]))
        tensor([[ 1.0000,  1.5000,  2.0000, -2.0000]])
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

    Args:
        ngram_size: n, an integer >= 1.

    Raises:
        InvalidParameterError: another size; when called, a history that is not (B, T) ids of the vocabulary.

    Example:
        >>> import torch
        >>> NoRepeatNGram(2)(torch.tensor([[1, 2, 1]]), torch.zeros(1, 4))  # "1 2" occurred: no 2 after this 1
        tensor([[0., 0., -inf, 0.]])
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
