"""Autoregressive generation, with or without a key-value (or recurrent-state) cache, and when to stop."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import torch

from ..errors import InvalidParameterError
from .sampling import sample_next

__all__ = ["stream", "generate", "StopOnStrings", "first_stop", "stop_holdback"]


class StopOnStrings:
    """A stopping criterion: a row is done once the newest token completes one of ``stop_strings``.

    Hugging Face's ``StoppingCriteria`` protocol, ``criterion(input_ids, scores)``
    returns a (B,) bool tensor, and the match rule of its ``StopStringCriteria``:
    the stop string must overlap the newest token, which may run past its end
    (stop "stop" fires on the tokens "st", "opera"), so an occurrence that lies
    wholly in earlier text (the prompt, say) never fires. Only the last tokens are
    decoded, enough for the longest stop string when every token decodes to at
    least one byte (true of seqlab's character, word and byte-level BPE
    tokenizers), so a check costs the same at token 10 and at token 100,000.
    """

    def __init__(self, stop_strings, decode: Callable[[list[int]], str]):
        if isinstance(stop_strings, str):
            stop_strings = [stop_strings]
        stops = list(dict.fromkeys(stop_strings))
        if not stops or not all(isinstance(s, str) and s for s in stops):
            raise InvalidParameterError(f"stop_strings must be non-empty strings, got {stop_strings!r}")
        if not callable(decode):
            raise InvalidParameterError("decode must be a function from token ids to text")
        self.stop_strings, self.decode = stops, decode
        # the newest token, then enough bytes for the longest stop string after a partial UTF-8 character (<= 3)
        self.window = max(len(s.encode("utf-8")) for s in stops) + 4

    def _completes(self, tail: list[int]) -> bool:
        now, before = self.decode(tail), self.decode(tail[:-1])
        stable = len(os.path.commonprefix([now, before]))  # text the newest token did not change
        return any(now.find(s, max(0, stable - len(s) + 1)) >= 0 for s in self.stop_strings)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor | None = None) -> torch.Tensor:
        return torch.tensor([self._completes(row[-self.window:]) for row in input_ids.tolist()], dtype=torch.bool)

    def __repr__(self) -> str:
        return f"StopOnStrings({self.stop_strings!r})"


def first_stop(text: str, stop_strings, start: int = 0) -> int | None:
    """Where the earliest stop string in ``text`` begins, counting only those that end after ``start``; else None.

    ``start`` is the length of text that was there before generation (the prompt):
    a stop string wholly inside it does not count, one that begins in it does.
    """
    found = [i for s in stop_strings if (i := text.find(s, max(0, start - len(s) + 1))) >= 0]
    return min(found) if found else None


def stop_holdback(text: str, stop_strings) -> int:
    """How many trailing characters of ``text`` could be the start of a stop string.

    A streaming printer holds these back: if the next tokens complete the stop
    string they must not have been printed.
    """
    longest = 0
    for s in stop_strings:
        for k in range(min(len(s) - 1, len(text)), longest, -1):
            if text.endswith(s[:k]):
                longest = k
                break
    return longest


@torch.no_grad()
def stream(model, idx: torch.Tensor, max_new_tokens: int, processors=(), *, greedy: bool = False,
           generator: torch.Generator | list[torch.Generator] | None = None, use_cache: bool = True,
           stopping=()) -> Iterator[torch.Tensor]:
    """Yield (B, 1) new token ids one step at a time.

    Every processor sees the running ids (prompt and tokens so far) and the
    last-position logits. Without a cache every step re-runs the model on the whole
    (cropped) context. With one, the prompt is encoded once and each step feeds
    only the newest token. When a Transformer's window (``model.block_size``) is
    full, both paths condition on the last ``block_size`` tokens, so they produce
    the same tokens. ``stopping`` holds criteria ``criterion(input_ids, scores) ->
    (B,) bool``; the stream ends after the token that leaves every row done
    (a row that is done earlier keeps being sampled, so trim each row's text).
    """
    if idx.dim() != 2 or idx.size(1) < 1:
        raise InvalidParameterError("idx must be a (B, T) tensor with at least one token")
    if max_new_tokens < 0:
        raise InvalidParameterError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    was_training = model.training
    model.eval()
    limit = getattr(model, "block_size", None)
    crop = (lambda t: t[:, -limit:]) if limit else (lambda t: t)
    done = torch.zeros(idx.size(0), dtype=torch.bool)
    # draws happen where the generator lives (the CPU by default), so a seed gives the same text on any device
    first = generator[0] if isinstance(generator, (list, tuple)) and generator else generator
    draw_on = first.device if isinstance(first, torch.Generator) else idx.device
    try:
        seq = idx
        cache = model.new_cache() if use_cache else None
        logits, _ = model(crop(seq), cache=cache)
        for _ in range(max_new_tokens):
            last = logits[:, -1].to(draw_on)
            nxt = sample_next(last, processors, input_ids=seq.to(draw_on), greedy=greedy,
                              generator=generator).to(idx.device)
            seq = torch.cat((seq, nxt), dim=1)
            yield nxt
            for criterion in stopping:
                done |= criterion(seq, last).to(done.device)
            if stopping and done.all():
                return
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
    """``idx`` followed by the generated tokens: ``max_new_tokens`` of them unless ``stopping`` ends it first."""
    new = list(stream(model, idx, max_new_tokens, processors, **kwargs))
    return torch.cat([idx, *new], dim=1) if new else idx
