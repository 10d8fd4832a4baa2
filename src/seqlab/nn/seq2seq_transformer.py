"""An encoder-decoder Transformer for token sequences, built from :class:`EncoderLayer` and :class:`DecoderLayer`.

It has the interface of the recurrent :class:`~seqlab.nn.seq2seq.Seq2Seq`: ``model(src, tgt)`` returns
teacher-forced logits and ``model.greedy_decode(src, length)`` decodes free-running, so the same
training loop (``seqlab.tasks.seq2seq.fit_seq2seq``) and the same scoring serve both.

Token conventions: id ``pad_token`` (default 0) is padding, and the decoder starts from a
``start_token`` that is not a content token (default: the last id of the vocabulary).
Masks follow seqlab's polarity (``True`` = may attend):

- the encoder's self-attention and the decoder's cross-attention get a key mask that hides
  padded source positions (:func:`source_mask`);
- the decoder's self-attention is causal, so position ``i`` sees decoder inputs ``0..i`` only;
- the decoder input is the target shifted right by one, ``[start, y_1, ..., y_{T'-1}]``
  (:func:`shift_right`): position ``i`` is trained to predict ``y_{i+1}`` from ``y_1..y_i``.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from ..errors import InvalidParameterError, ShapeError
from ._checks import check_tensor, check_token_ids
from .attention import padding_mask
from .positional import SinusoidalPositionalEncoding
from .seq2seq import _check_batches, _check_length
from .transformer import DecoderLayer, EncoderLayer

__all__ = ["Seq2SeqTransformer", "shift_right", "source_mask"]


def shift_right(tgt: torch.Tensor, start_token: int) -> torch.Tensor:
    """Teacher-forcing decoder input: the target moved one step right behind a start token.

    Args:
        tgt: shape (B, T') token ids, T' >= 1.
        start_token: the id put first.

    Returns:
        ``[start, tgt[:, 0], ..., tgt[:, -2]]``, shape (B, T').

    Raises:
        InvalidTypeError: ``tgt`` is not a tensor.
        ShapeError: ``tgt`` is not (B, T') with T' >= 1.

    Example:
        >>> import torch
        >>> shift_right(torch.tensor([[3, 4, 5]]), start_token=9)
        tensor([[9, 3, 4]])
    """
    check_tensor("tgt", tgt)
    if tgt.dim() != 2 or tgt.size(1) < 1:
        raise ShapeError(f"tgt must be (B, T') token ids with T' >= 1, got {tuple(tgt.shape)}")
    start = torch.full((tgt.size(0), 1), start_token, dtype=tgt.dtype, device=tgt.device)
    return torch.cat((start, tgt[:, :-1]), dim=1)


def source_mask(src: torch.Tensor, pad_token: int = 0, lengths: torch.Tensor | None = None) -> torch.Tensor:
    """Key mask ``(B, 1, 1, T)``, ``True`` at real source tokens.

    Args:
        src: shape (B, T) token ids.
        pad_token: the padding id, used when ``lengths`` is not given.
        lengths: shape (B,), each sequence's real length (:func:`padding_mask`); positions at or past it are
            padding whatever they hold.

    Returns:
        A bool tensor of shape (B, 1, 1, T).

    Raises:
        InvalidTypeError: ``src`` is not a tensor.
        ShapeError: ``src`` is not (B, T), or ``lengths`` has another batch size.

    Example:
        >>> import torch
        >>> source_mask(torch.tensor([[3, 4, 0]]))[:, 0, 0]
        tensor([[ True,  True, False]])
    """
    check_tensor("src", src)
    if src.dim() != 2:
        raise ShapeError(f"src must be (B, T) token ids, got shape {tuple(src.shape)}")
    if lengths is not None:
        mask = padding_mask(lengths, src.size(1)).to(src.device)
        if mask.size(0) != src.size(0):
            raise ShapeError(f"lengths must hold one length per source sequence ({src.size(0)}), got {mask.size(0)}")
        return mask
    return (src != pad_token)[:, None, None, :]


class Seq2SeqTransformer(nn.Module):
    """Embedding (shared by source and target) x sqrt(d) + sinusoidal positions, N encoder and M decoder layers.

    ``norm_first=True`` builds pre-LN layers and adds the final LayerNorm each pre-LN stack
    needs; ``norm_first=False`` builds the original post-LN Transformer.

    Args:
        vocab_size: number of token ids, >= 3 (padding, a start token and content).
        d_model: model width.
        num_heads: attention heads per layer.
        d_ff: feed-forward width.
        num_encoder_layers: encoder layers N, >= 1.
        num_decoder_layers: decoder layers M, >= 1.
        dropout: dropout in training.
        norm_first: pre-LN (``True``) or post-LN layers.
        max_len: the most positions of the sinusoidal code.
        pad_token: the padding id.
        start_token: the id the decoder starts from (default: the last id, ``vocab_size - 1``).

    Raises:
        InvalidParameterError: a vocabulary below 3, a token outside it, equal pad and start tokens, or no layers.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> model = Seq2SeqTransformer(vocab_size=8)
        >>> src, tgt = torch.tensor([[1, 2, 3, 0]]), torch.tensor([[3, 2, 1]])  # the last source id is padding
        >>> logits, _ = model(src, tgt)
        >>> logits.shape, model.greedy_decode(src, length=3)[0].shape
        (torch.Size([1, 3, 8]), torch.Size([1, 3]))
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 32,
        num_heads: int = 4,
        d_ff: int = 64,
        num_encoder_layers: int = 1,
        num_decoder_layers: int = 1,
        *,
        dropout: float = 0.0,
        norm_first: bool = True,
        max_len: int = 512,
        pad_token: int = 0,
        start_token: int | None = None,
    ):
        super().__init__()
        start_token = vocab_size - 1 if start_token is None else start_token
        if vocab_size < 3:
            raise InvalidParameterError(f"vocab_size must count padding, a start token and content: >= 3, got {vocab_size}")
        for name, tok in (("pad_token", pad_token), ("start_token", start_token)):
            if not 0 <= tok < vocab_size:
                raise InvalidParameterError(f"{name} {tok} outside the vocabulary of {vocab_size}")
        if pad_token == start_token:
            raise InvalidParameterError("pad_token and start_token must differ")
        if num_encoder_layers < 1 or num_decoder_layers < 1:
            raise InvalidParameterError("need at least one encoder and one decoder layer")
        self.vocab_size, self.d_model = vocab_size, d_model
        self.pad_token, self.start_token, self.norm_first = pad_token, start_token, norm_first
        self.embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model ** -0.5)  # x sqrt(d) below: unit-variance inputs
        self.pos = SinusoidalPositionalEncoding(d_model, max_len)
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first=norm_first)
                                     for _ in range(num_encoder_layers))
        self.decoder = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first=norm_first)
                                     for _ in range(num_decoder_layers))
        # a pre-LN stack's output is an un-normalized residual sum: normalize it once at the end
        self.enc_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.dec_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.head = nn.Linear(d_model, vocab_size)

    def _embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.drop(self.pos(self.embedding(tokens) * math.sqrt(self.d_model)))

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``src`` (B, T) -> memory (B, T, d); ``src_mask`` (B, 1, 1, T) hides padded keys."""
        x = self._embed(check_token_ids("src", src, self.vocab_size))
        for layer in self.encoder:
            x = layer(x, src_mask)
        return self.enc_norm(x)

    def decode(self, dec_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Decoder inputs (B, T') and memory -> logits (B, T', V); causal self-attention, masked cross-attention."""
        return self._decode(check_token_ids("dec_in", dec_in, self.vocab_size), memory, src_mask)

    def _decode(self, dec_in, memory, src_mask):
        y = self._embed(dec_in)
        for layer in self.decoder:
            y = layer(y, memory, src_mask)
        return self.head(self.dec_norm(y))

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, src_lengths: torch.Tensor | None = None,
                ) -> tuple[torch.Tensor, None]:
        """Teacher forcing: the decoder reads ``shift_right(tgt)``. Returns logits (B, T', V) and ``None``.

        ``src_lengths`` (B,) marks positions at or beyond each length as padding; without
        it, positions holding ``pad_token`` are padding.
        """
        tgt = check_token_ids("tgt", tgt, self.vocab_size)
        _check_batches(src, tgt)
        mask = source_mask(src, self.pad_token, src_lengths)
        memory = self.encode(src, mask)
        return self._decode(shift_right(tgt, self.start_token), memory, mask), None

    @torch.no_grad()
    def cross_attention(self, src: torch.Tensor, tgt: torch.Tensor, src_lengths: torch.Tensor | None = None,
                        ) -> list[torch.Tensor]:
        """Cross-attention weights of each decoder layer under teacher forcing: a list of (B, h, T', T).

        Each decoder layer's cross-attention is re-run on the inputs it received in a
        normal forward pass, with ``need_weights=True``; nothing is recomputed by hand.
        """
        maps: list[torch.Tensor] = []

        def keep(module, args, kwargs, _out):
            maps.append(module.forward(*args, **{**kwargs, "need_weights": True})[1])

        handles = [layer.cross_attn.register_forward_hook(keep, with_kwargs=True) for layer in self.decoder]
        try:
            self(src, tgt, src_lengths)
        finally:
            for h in handles:
                h.remove()
        return maps

    @torch.no_grad()
    def greedy_decode(self, src: torch.Tensor, length: int, src_lengths: torch.Tensor | None = None,
                      ) -> tuple[torch.Tensor, None]:
        """Free-running decoding of ``length`` tokens: each step appends the model's own argmax and reruns the decoder.

        Returns the tokens (B, length) and ``None`` (the recurrent model's weights).
        """
        _check_length(length)
        mask = source_mask(src, self.pad_token, src_lengths)
        memory = self.encode(src, mask)
        dec_in = torch.full((src.size(0), 1), self.start_token, dtype=torch.long, device=src.device)
        for _ in range(length):
            token = self._decode(dec_in, memory, mask)[:, -1:].argmax(dim=-1)  # (B, 1)
            dec_in = torch.cat((dec_in, token), dim=1)
        return dec_in[:, 1:], None
