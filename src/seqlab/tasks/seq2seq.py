"""Copy and reversal tasks for the encoder-decoder experiments of §14.48-§14.49."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import InvalidParameterError
from ..nn.seq2seq import Seq2Seq

__all__ = ["random_tokens", "Seq2SeqFit", "fit_seq2seq", "token_accuracy", "after_first_error"]


def random_tokens(n: int, length: int, vocab: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """(n, length) tokens uniform on 1..vocab (index 0 stays free, as in the chapter's 1-based R code).

    Args:
        n: sequences, >= 1.
        length: tokens per sequence, >= 2.
        vocab: distinct tokens, >= 2.
        generator: draws the tokens (default: torch's global generator).

    Returns:
        A long tensor of shape (n, length).

    Raises:
        InvalidParameterError: sizes out of range.

    Example:
        >>> import torch
        >>> random_tokens(2, 4, vocab=5, generator=torch.Generator().manual_seed(0))
        tensor([[5, 5, 4, 1],
                [4, 5, 3, 4]])
    """
    if n < 1 or length < 2 or vocab < 2:
        raise InvalidParameterError(f"need n >= 1, length >= 2, vocab >= 2; got {n}, {length}, {vocab}")
    return torch.randint(1, vocab + 1, (n, length), dtype=torch.long, generator=generator)


def token_accuracy(pred: torch.Tensor, target: torch.Tensor) -> float:
    """Fraction of positions where ``pred`` equals ``target`` (tensors of one shape).

    Example:
        >>> import torch
        >>> round(token_accuracy(torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2, 4]])), 4)
        0.6667
    """
    return (pred == target).float().mean().item()


def after_first_error(free: torch.Tensor, forced: torch.Tensor, target: torch.Tensor) -> dict:
    """Accuracy at the positions after each sequence's first free-running mistake: decoding freely (``free``, the
    model's own guesses fed back) and with the true prefix (``forced``, teacher-forced predictions), on the same
    positions. A free-running accuracy far below the teacher-forced one there says that a mistake, fed back,
    spoils the steps after it. ``one_behind`` and ``one_ahead`` score the same free-running guesses against the
    target moved one step (the token before, the token after): a decoder that merely slipped a step, repeating or
    skipping a token and copying on, would score high on one of them. ``positions`` is the share of all positions
    that come after a first mistake (NaN accuracies where there are none).

    Args:
        free: shape (n, T), free-running predictions.
        forced: shape (n, T), teacher-forced predictions.
        target: shape (n, T), the right tokens.

    Returns:
        A dict of ``free_running``, ``teacher_forced``, ``one_behind``, ``one_ahead`` and ``positions``.

    Raises:
        InvalidParameterError: tensors that are not (n, T) of one shape.

    Example:
        >>> import torch
        >>> target = torch.tensor([[1, 2, 3, 4]])
        >>> after_first_error(torch.tensor([[1, 9, 2, 3]]), target, target)  # a slip: the rest one step behind
        {'free_running': 0.0, 'teacher_forced': 1.0, 'one_behind': 1.0, 'one_ahead': 0.0, 'positions': 0.5}
    """
    if not (free.shape == forced.shape == target.shape) or free.dim() != 2:
        raise InvalidParameterError(f"need three (n, T) tensors of one shape, got {tuple(free.shape)}, "
                                    f"{tuple(forced.shape)}, {tuple(target.shape)}")
    wrong = free != target  # (n, T)
    seen = wrong.long().cumsum(dim=1)
    after = (seen - wrong.long()) > 0  # a mistake strictly before this position
    n = int(after.sum())
    acc = (lambda pred: (pred == target)[after].float().mean().item()) if n else (lambda pred: math.nan)

    def shifted(k: int) -> float:  # free[:, j] against target[:, j + k] where j is after a mistake and j + k exists
        hit = free[:, max(0, -k): free.size(1) - max(0, k)] == target[:, max(0, k): target.size(1) - max(0, -k)]
        mask = after[:, max(0, -k): after.size(1) - max(0, k)]
        return hit[mask].float().mean().item() if mask.any() else math.nan

    return dict(free_running=acc(free), teacher_forced=acc(forced), one_behind=shifted(-1), one_ahead=shifted(1),
                positions=n / target.numel())


@dataclass
class Seq2SeqFit:
    """What :func:`fit_seq2seq` returns.

    Attributes:
        model: the trained model, in eval mode.
        losses: the loss of every epoch, computed before its step.

    Example:
        >>> Seq2SeqFit(model=None, losses=[2.0, 1.5]).final_loss
        1.5
    """

    model: Seq2Seq
    losses: list[float]

    @property
    def final_loss(self) -> float:
        """The last epoch's loss."""
        return self.losses[-1]


def fit_seq2seq(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor, epochs: int, lr: float,
                warmup: int = 0) -> Seq2SeqFit:
    """Full-batch Adam on teacher-forced cross-entropy, one step per epoch (the chapter's loop).

    The recorded loss of an epoch is the one computed before that epoch's step. With
    ``warmup`` > 0, step ``s`` (from 0) uses ``lr * min(1, (s + 1) / warmup)``. A loss that
    becomes NaN or infinite stops the run; it is the last loss recorded.

    Args:
        model: a :class:`~seqlab.nn.Seq2Seq` or :class:`~seqlab.nn.Seq2SeqTransformer`, trained in place.
        src: shape (n, T), the source sequences.
        tgt: shape (n, T'), the targets.
        epochs: full-batch steps, >= 1.
        lr: Adam's learning rate, > 0.
        warmup: steps of linear warm-up (0: none).

    Returns:
        A :class:`Seq2SeqFit`.

    Raises:
        InvalidParameterError: ``epochs < 1``, ``lr <= 0`` or ``warmup < 0``.

    Example:
        >>> import torch
        >>> from seqlab.nn import Seq2Seq
        >>> _ = torch.manual_seed(0)
        >>> src = random_tokens(16, 5, vocab=4, generator=torch.Generator().manual_seed(0))
        >>> fit = fit_seq2seq(Seq2Seq(5, 8, 16, attention="general"), src, src, epochs=20, lr=0.01)  # copy
        >>> len(fit.losses), fit.final_loss < fit.losses[0]
        (20, True)
    """
    if epochs < 1 or lr <= 0 or warmup < 0:
        raise InvalidParameterError(f"need epochs >= 1, lr > 0 and warmup >= 0; got {epochs}, {lr}, {warmup}")
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup)) if warmup else None
    losses = []
    model.train()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        logits, _ = model(src, tgt)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1))
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            break
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
    model.eval()
    return Seq2SeqFit(model, losses)
