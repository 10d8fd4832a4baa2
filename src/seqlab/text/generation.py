"""Autoregressive generation, with or without a key-value (or recurrent-state) cache, and when to stop."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import torch

from ..errors import InvalidParameterError
from ..nn.decoding import GPTDecoder
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

    Args:
        stop_strings: one string or several, each non-empty.
        decode: token ids to text, such as a tokenizer's ``decode``.

    Raises:
        InvalidParameterError: no stop string, an empty one, or a ``decode`` that is not callable.

    Example:
        >>> import torch
        >>> from seqlab.text import CharTokenizer
        >>> tok = CharTokenizer().train("abc.")
        >>> stop = StopOnStrings(".", tok.decode)
        >>> stop(torch.tensor([tok.encode("ab."), tok.encode(".ab")]))  # only a new "." counts
        tensor([ True, False])
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
        # a GPT's steps run as one flat function with the model's arithmetic (None: through the modules); a
        # single new token needs no step
        step = GPTDecoder.for_model(model, idx.size(0)) if use_cache and max_new_tokens > 1 else None
        for i in range(max_new_tokens):
            last = logits[:, -1].to(draw_on)
            nxt = sample_next(last, processors, input_ids=seq.to(draw_on), greedy=greedy,
                              generator=generator).to(idx.device)
            seq = torch.cat((seq, nxt), dim=1)
            yield nxt
            for criterion in stopping:
                done |= criterion(seq, last).to(done.device)
            if stopping and done.all() or i + 1 == max_new_tokens:
                return  # the last token needs no forward pass after it
            if not use_cache:
                logits, _ = model(crop(seq))
            elif limit and cache.length + 1 > limit:
                cache = model.new_cache()  # window full: re-encode the last block_size tokens
                logits, _ = model(crop(seq), cache=cache)
            else:
                logits = step(nxt, cache) if step is not None else model(nxt, cache=cache)[0]
    finally:
        model.train(was_training)


def generate(model, idx: torch.Tensor, max_new_tokens: int, processors=(), **kwargs) -> torch.Tensor:
    """``idx`` followed by the generated tokens: ``max_new_tokens`` of them unless ``stopping`` ends it first.

    Sampling is autoregressive: each new token is drawn (:func:`~seqlab.text.sample_next`) from the model's
    last-position logits after the processors, and appended to the input of the next step. The model is put in
    eval mode while it generates. A Transformer conditions on its last ``block_size`` tokens once the text
    outgrows its context; an LSTM carries its state however long the text.

    Args:
        model: a seqlab language model (:class:`~seqlab.nn.GPT` or :class:`~seqlab.nn.LSTMLanguageModel`).
        idx: shape (B, T) token ids, T >= 1: the prompt.
        max_new_tokens: tokens to add, >= 0.
        processors: the :class:`LogitsProcessor` list (:func:`build_processors` makes one from settings).
        **kwargs: ``greedy`` (take the arg-max), ``generator`` (a ``torch.Generator``, or one per row),
            ``use_cache`` (key-value or state cache, default ``True``; without it each step reruns the whole
            context, with the same tokens) and ``stopping`` (criteria such as :class:`StopOnStrings`).

    Returns:
        The ids, shape (B, T + new tokens).

    Raises:
        InvalidParameterError: an empty prompt, a negative ``max_new_tokens``, or a processor's refusal.
        NoTokenLeftError: processors that leave a row no token.

    Example:
        >>> import torch
        >>> from seqlab.nn import GPT, GPTConfig
        >>> from seqlab.text import CharTokenizer, build_processors
        >>> tok = CharTokenizer().train("abc")
        >>> _ = torch.manual_seed(0)
        >>> model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=8, num_layers=1, num_heads=1, d_model=8))
        >>> out = generate(model, torch.tensor([tok.encode("ab")]), 10, build_processors(temperature=0.8),
        ...                generator=torch.Generator().manual_seed(0))
        >>> out.shape, tok.decode(out[0].tolist())[:2]
        (torch.Size([1, 12]), 'ab')
    """
    new = list(stream(model, idx, max_new_tokens, processors, **kwargs))
    return torch.cat([idx, *new], dim=1) if new else idx
