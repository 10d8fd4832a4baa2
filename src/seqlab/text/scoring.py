"""How well a language model predicts a text: every token scored once, in nats and bits per token and per character.

The text is cut into consecutive windows of the model's context; each window predicts
its next tokens, so every token after the first is scored exactly once, with as much
context as its window gives it. The last, shorter stretch is scored with a full window
of context before it. This is the whole-split loss the chapter's long-run benchmark
reports (nanoGPT's ``estimate_loss`` samples random windows instead; scoring all of them
removes that sampling noise).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from ..errors import InvalidParameterError
from ..threads import torch_threads

__all__ = ["TextScore", "window_loss", "score_ids", "score_text", "spelled_characters"]


@dataclass(frozen=True)
class TextScore:
    """The summed loss of a text and what it was counted over; the rates are properties.

    Per character, losses compare across tokenizers (a BPE token spells several characters).

    Attributes:
        nats: summed negative log-likelihood of the scored tokens.
        tokens: tokens scored (all but the first).
        characters: characters those tokens spell.

    Example:
        >>> import math
        >>> s = TextScore(nats=100 * math.log(2), tokens=50, characters=200)
        >>> s.bits_per_token, s.bits_per_char, s.perplexity
        (2.0, 0.5, 4.0)
    """

    nats: float
    tokens: int
    characters: int

    @property
    def nats_per_token(self) -> float:
        """Mean loss per scored token, in nats."""
        return self.nats / self.tokens

    @property
    def bits_per_token(self) -> float:
        """Mean loss per scored token, in bits."""
        return self.nats_per_token / math.log(2)

    @property
    def nats_per_char(self) -> float:
        """Loss per character the scored tokens spell, in nats."""
        return self.nats / self.characters

    @property
    def bits_per_char(self) -> float:
        """Loss per character, in bits."""
        return self.nats_per_char / math.log(2)

    @property
    def perplexity(self) -> float:
        """Perplexity, exp(nats per token) — as many equally likely tokens would be as hard to predict."""
        return math.exp(self.nats_per_token)

    def as_dict(self) -> dict:
        """The fields and every rate, for a JSON record (what ``seqlab lm eval --json`` prints)."""
        return {**asdict(self), "nats_per_token": self.nats_per_token, "bits_per_token": self.bits_per_token,
                "nats_per_char": self.nats_per_char, "bits_per_char": self.bits_per_char,
                "perplexity": self.perplexity}


@torch.no_grad()
def window_loss(model, ids, block_size: int | None = None, batch: int = 32) -> tuple[float, int]:
    """``(summed nats, tokens scored)`` over every token of ``ids`` after the first (see the module docstring).

    Args:
        model: a seqlab language model (``model(x) -> (logits, ...)``, logits of shape (B, T, V)).
        ids: the token ids, a 1-D sequence of at least two.
        block_size: the window (default: the model's context, ``model.block_size``).
        batch: windows per forward pass; it changes the speed, not the result beyond float rounding.

    Example:
        >>> import torch
        >>> from seqlab.nn import GPT, GPTConfig
        >>> model = GPT(GPTConfig(vocab_size=5, block_size=4, num_layers=1, num_heads=1, d_model=8))
        >>> nats, n = window_loss(model, torch.tensor([0, 1, 2, 3, 4, 0, 1, 2, 3, 4]))
        >>> n
        9
    """
    ids = torch.as_tensor(ids, dtype=torch.long).reshape(-1)
    block_size = int(block_size or getattr(model, "block_size", 0) or 0)
    if block_size < 1:
        raise InvalidParameterError("block_size must be a positive whole number (the model's context)")
    if ids.numel() < 2:
        raise InvalidParameterError(f"a text of {ids.numel()} token(s) has nothing to predict; it needs at least 2")
    if batch < 1:
        raise InvalidParameterError(f"batch must be >= 1, got {batch}")
    was = model.training
    model.eval()
    n = (len(ids) - 1) // block_size
    starts = [i * block_size for i in range(n)]
    tail = len(ids) - 1 - n * block_size
    total, count = 0.0, 0
    try:
        for k in range(0, n, batch):
            x = torch.stack([ids[s:s + block_size] for s in starts[k:k + batch]])  # (B, T)
            y = torch.stack([ids[s + 1:s + block_size + 1] for s in starts[k:k + batch]])  # (B, T)
            logits = model(x)[0]  # (B, T, V)
            total += F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), y.reshape(-1),
                                     reduction="sum").item()
            count += y.numel()
        if tail:  # the last tokens, with as much context before them as the window holds
            x, y = ids[-block_size - 1:-1][None], ids[-block_size:][None]  # (1, T) each
            x, y = x[:, -min(block_size, len(ids) - 1):], y[:, -min(block_size, len(ids) - 1):]
            logits = model(x)[0]  # (1, T, V)
            total += F.cross_entropy(logits.float()[0, -tail:], y[0, -tail:], reduction="sum").item()
            count += tail
    finally:
        model.train(was)
    return total, count


def score_ids(model, tokenizer, ids, *, batch: int = 32, threads: int = 1) -> TextScore:
    """:func:`score_text` for a text already encoded (a split of a training text, say); the characters are
    counted by decoding ``ids``."""
    ids = [int(i) for i in ids]
    with torch_threads(threads):
        nats, count = window_loss(model, ids, batch=batch)
    return TextScore(nats=nats, tokens=count, characters=max(spelled_characters(tokenizer, ids[1:]), 1))


def spelled_characters(tokenizer, ids) -> int:
    """The characters ``ids`` spell; an unknown token stands for the one character it replaced."""
    from .tokenizers import UNK

    ids = [int(i) for i in ids]
    unk = tokenizer.token_to_id.get(UNK)
    return len(tokenizer.decode(ids)) - (len(UNK) - 1) * sum(i == unk for i in ids)


def score_text(model, tokenizer, text: str, *, batch: int = 32, threads: int = 1) -> TextScore:
    """Score ``text`` under ``model``: nats and bits per token and per character, and perplexity.

    Runs on ``threads`` torch threads (one by default: on a small model a second thread mostly waits, and on a
    busy machine every-core default ran many times slower); the previous setting comes back afterwards.

    Args:
        model: a seqlab language model (GPT or LSTM), for instance from :func:`load_checkpoint` or
            :func:`load_hf`.
        tokenizer: the tokenizer the model was trained with.
        text: the text to score; characters the tokenizer does not know are scored as its unknown token.
        batch: windows per forward pass.
        threads: torch threads while scoring.

    Returns:
        A :class:`TextScore`.

    Raises:
        InvalidParameterError: a text of fewer than two tokens, or a bad ``batch`` or ``threads``.

    Example:
        >>> from seqlab.nn import GPT, GPTConfig
        >>> from seqlab.text.tokenizers import CharTokenizer
        >>> tok = CharTokenizer().train("abcabc")
        >>> model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=4, num_layers=1, num_heads=1, d_model=8))
        >>> s = score_text(model, tok, "abcabcab")
        >>> s.tokens, s.characters
        (7, 7)
    """
    return score_ids(model, tokenizer, tokenizer.encode(text), batch=batch, threads=threads)
