"""Recall-by-offset: the target at position t is the pair of earlier tokens (x_{t-a}, x_{t-b}) (§14.51).

One causal self-attention layer with learned positions and a linear readout can solve
it only if it retrieves both tokens *and keeps them apart*. A single head returns one
weighted average of value vectors; the value map is linear, so an even average of the
two tokens is symmetric in them and cannot say which came first. With several heads,
each head can attend to one offset and the concatenation keeps the tokens separate.
The parameter count does not depend on the number of heads (d_k = d_model / h).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import InvalidParameterError
from ..nn.multihead import MultiHeadAttention
from ..nn.positional import LearnedPositionalEncoding
from ..threads import single_threaded

__all__ = ["IGNORE", "OffsetAttention", "OffsetFit", "accuracy_by_position", "attention_by_offset", "fit_offset_model",
           "offset_accuracy", "offset_task"]

#: target value at positions that have no token at one of the offsets (skipped by the loss and the accuracy)
IGNORE = -100


def offset_task(n: int, length: int, vocab: int, offsets=(1, 3),
                generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` random sequences and their targets: at each position, the tokens ``offsets`` steps back.

    Args:
        n: sequences, >= 1.
        length: tokens per sequence, more than ``max(offsets)``.
        vocab: distinct tokens, >= 2.
        offsets: the offsets, each >= 1.
        generator: draws the tokens (default: torch's global generator).

    Returns:
        ``(x, y)``, ``x`` (n, length) with tokens uniform on 0..vocab-1, and ``y`` (n, length, len(offsets)) with
        ``y[:, t, i] = x[:, t - offsets[i]]``; positions with ``t < max(offsets)`` hold :data:`IGNORE`.

    Raises:
        InvalidParameterError: sizes out of range.

    Example:
        >>> import torch
        >>> x, y = offset_task(1, 5, vocab=5, offsets=(1, 3), generator=torch.Generator().manual_seed(0))
        >>> x[0].tolist(), y[0, 3].tolist()  # at t = 3: the tokens at t = 2 and t = 0
        ([4, 4, 3, 0, 3], [3, 4])
    """
    offsets = tuple(int(o) for o in offsets)
    if n < 1 or vocab < 2 or not offsets or min(offsets) < 1 or length <= max(offsets):
        raise InvalidParameterError(f"need n >= 1, vocab >= 2, offsets >= 1 and length > max(offsets); "
                                    f"got n={n}, length={length}, vocab={vocab}, offsets={offsets}")
    x = torch.randint(0, vocab, (n, length), generator=generator)
    y = torch.full((n, length, len(offsets)), IGNORE, dtype=torch.long)
    start = max(offsets)
    for i, o in enumerate(offsets):
        y[:, start:, i] = x[:, start - o:length - o]
    return x, y


class OffsetAttention(nn.Module):
    """Token embedding + learned position -> one causal multi-head attention layer -> a linear readout per target.

    There is no residual path and no feed-forward block, so whatever the readout sees at
    position t was fetched by attention. Only ``num_heads`` changes between models; every
    other size, and so the parameter count, stays the same. ``positions=False`` drops the
    learned position vectors (the ablation of §14.52).

    Args:
        vocab: distinct tokens.
        length: the sequences' length (the learned positions).
        d_model: model width, divisible by ``num_heads``.
        num_heads: attention heads.
        n_targets: tokens to recall per position.
        positions: add learned position vectors.

    Example:
        >>> import torch
        >>> model = OffsetAttention(vocab=5, length=8, d_model=16, num_heads=2)
        >>> logits, weights = model(torch.zeros(3, 8, dtype=torch.long), need_weights=True)
        >>> logits.shape, weights.shape
        (torch.Size([3, 8, 2, 5]), torch.Size([3, 2, 8, 8]))
    """

    def __init__(self, vocab: int, length: int, d_model: int, num_heads: int, n_targets: int = 2,
                 positions: bool = True):
        super().__init__()
        self.vocab, self.n_targets = vocab, n_targets
        self.embed = nn.Embedding(vocab, d_model)
        self.position = LearnedPositionalEncoding(d_model, length) if positions else None
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.readout = nn.Linear(d_model, n_targets * vocab)

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        """``x`` (B, T) -> logits (B, T, n_targets, vocab) and, if asked, weights (B, h, T, T)."""
        h = self.embed(x)
        if self.position is not None:
            h = self.position(h)
        z, w = self.attn(h, is_causal=True, need_weights=need_weights)
        B, T, _ = z.shape
        return self.readout(z).view(B, T, self.n_targets, self.vocab), w


@dataclass
class OffsetFit:
    """What :func:`fit_offset_model` returns.

    Attributes:
        model: the trained model, in eval mode.
        losses: the loss of every step.

    Example:
        >>> OffsetFit(model=None, losses=[1.6, 1.2]).losses[-1]
        1.2
    """

    model: OffsetAttention
    losses: list[float]


def fit_offset_model(model: OffsetAttention, x: torch.Tensor, y: torch.Tensor, *, steps: int, batch: int,
                     lr: float, seed: int) -> OffsetFit:
    """Adam on the summed cross-entropy of the targets, minibatches drawn from ``seed``; one torch thread.

    Args:
        model: an :class:`OffsetAttention`, trained in place.
        x: shape (n, T), the sequences (:func:`offset_task`).
        y: shape (n, T, n_targets), their targets.
        steps: Adam steps, >= 1.
        batch: sequences per step, >= 1.
        lr: Adam's learning rate, > 0.
        seed: seeds the minibatches' draws.

    Returns:
        An :class:`OffsetFit`.

    Raises:
        InvalidParameterError: ``steps`` or ``batch`` below 1, or ``lr <= 0``.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> x, y = offset_task(64, 8, vocab=5, generator=torch.Generator().manual_seed(0))
        >>> fit = fit_offset_model(OffsetAttention(5, 8, d_model=16, num_heads=2), x, y, steps=10, batch=16,
        ...                        lr=0.01, seed=0)
        >>> len(fit.losses), fit.losses[-1] < fit.losses[0]
        (10, True)
    """
    if steps < 1 or batch < 1 or lr <= 0:
        raise InvalidParameterError(f"need steps >= 1, batch >= 1, lr > 0; got {steps}, {batch}, {lr}")
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    with single_threaded():
        for _ in range(steps):
            idx = torch.randint(0, x.size(0), (batch,), generator=g)
            logits, _ = model(x[idx])
            loss = F.cross_entropy(logits.reshape(-1, model.vocab), y[idx].reshape(-1), ignore_index=IGNORE)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    return OffsetFit(model, losses)


@torch.no_grad()
def offset_accuracy(model: OffsetAttention, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    """Accuracy per target (``target_1``, ``target_2``, ...) and ``both`` (every target right) over scored positions.

    Args:
        model: an :class:`OffsetAttention`.
        x: shape (n, T), sequences.
        y: shape (n, T, n_targets), their targets; :data:`IGNORE` positions are not scored.

    Returns:
        A dict of accuracies in [0, 1].

    Example:
        >>> import torch
        >>> x, y = offset_task(8, 8, vocab=5, generator=torch.Generator().manual_seed(0))
        >>> sorted(offset_accuracy(OffsetAttention(5, 8, d_model=16, num_heads=2), x, y))
        ['both', 'target_1', 'target_2']
    """
    logits, _ = model(x)
    pred = logits.argmax(-1)  # (B, T, n_targets)
    keep = (y != IGNORE).all(-1)  # (B, T)
    right = (pred == y)[keep]  # (N, n_targets)
    out = {f"target_{i + 1}": right[:, i].float().mean().item() for i in range(right.size(1))}
    out["both"] = right.all(-1).float().mean().item()
    return out


@torch.no_grad()
def accuracy_by_position(model: OffsetAttention, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Accuracy per query position and target, (T, n_targets); positions without a full target are NaN.

    Example:
        >>> import torch
        >>> x, y = offset_task(8, 8, vocab=5, offsets=(1, 3), generator=torch.Generator().manual_seed(0))
        >>> acc = accuracy_by_position(OffsetAttention(5, 8, d_model=16, num_heads=2), x, y)
        >>> acc.shape, acc[:3].isnan().all().item()  # positions 0..2 have no token 3 steps back
        (torch.Size([8, 2]), True)
    """
    logits, _ = model(x)
    right = (logits.argmax(-1) == y).float().mean(0)  # (T, n_targets)
    keep = (y != IGNORE).all(-1).any(0)  # (T,)
    return right.masked_fill(~keep.unsqueeze(-1), float("nan"))


@torch.no_grad()
def attention_by_offset(model: OffsetAttention, x: torch.Tensor, max_offset: int) -> torch.Tensor:
    """Mean attention weight of each head on the key ``offset`` steps back, offsets 0..max_offset: (h, max_offset + 1).

    Averaged over the sequences in ``x`` and over query positions t >= max_offset (where every offset exists).
    A head that has learned one offset puts most of its weight in that column.

    Example:
        >>> import torch
        >>> x, _ = offset_task(8, 8, vocab=5, generator=torch.Generator().manual_seed(0))
        >>> attention_by_offset(OffsetAttention(5, 8, d_model=16, num_heads=2), x, max_offset=3).shape
        torch.Size([2, 4])
    """
    _, w = model(x, need_weights=True)  # (B, h, T, T)
    T = w.size(-1)
    t = torch.arange(max_offset, T)
    cols = [w[:, :, t, t - k].mean(dim=(0, 2)) for k in range(max_offset + 1)]
    return torch.stack(cols, dim=1)
