"""Autoregressive generation, with or without a key-value (or recurrent-state) cache."""
from __future__ import annotations

from collections.abc import Iterator

import torch

from ..errors import InvalidParameterError
from .sampling import sample_next

__all__ = ["stream", "generate"]


@torch.no_grad()
def stream(model, idx: torch.Tensor, max_new_tokens: int, processors=(), *, greedy: bool = False,
           generator: torch.Generator | None = None, use_cache: bool = True) -> Iterator[torch.Tensor]:
    """Yield (B, 1) new token ids one step at a time.

    Without a cache every step re-runs the model on the whole (cropped) context.
    With one, the prompt is encoded once and each step feeds only the newest
    token. When a Transformer's window (``model.block_size``) is full, both paths
    condition on the last ``block_size`` tokens, so they produce the same tokens.
    """
    if idx.dim() != 2 or idx.size(1) < 1:
        raise InvalidParameterError("idx must be a (B, T) tensor with at least one token")
    if max_new_tokens < 0:
        raise InvalidParameterError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    was_training = model.training
    model.eval()
    limit = getattr(model, "block_size", None)
    crop = (lambda t: t[:, -limit:]) if limit else (lambda t: t)
    try:
        seq = idx
        cache = model.new_cache() if use_cache else None
        logits, _ = model(crop(seq), cache=cache)
        for _ in range(max_new_tokens):
            nxt = sample_next(logits[:, -1], processors, greedy=greedy, generator=generator)
            seq = torch.cat((seq, nxt), dim=1)
            yield nxt
            if not use_cache:
                logits, _ = model(crop(seq))
            elif limit and cache.length + 1 > limit:
                cache = model.new_cache()  # window full: re-encode the last block_size tokens
                logits, _ = model(crop(seq), cache=cache)
            else:
                logits, _ = model(nxt, cache=cache)
    finally:
        model.train(was_training)


def generate(model, idx: torch.Tensor, max_new_tokens: int, processors=(), **kwargs) -> torch.Tensor:
    """``idx`` followed by ``max_new_tokens`` generated tokens, (B, T + max_new_tokens)."""
    new = list(stream(model, idx, max_new_tokens, processors, **kwargs))
    return torch.cat([idx, *new], dim=1) if new else idx
