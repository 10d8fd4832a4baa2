"""Recurrent encoder-decoder, with or without attention over the encoder states (§14.48-§14.49)."""
from __future__ import annotations

import math
import operator

import torch
import torch.nn as nn

from ..errors import InvalidParameterError, ShapeError
from ._checks import check_tensor, check_token_ids

__all__ = ["Seq2Seq"]

_ATTENTION = (None, "general")


def _check_batches(src, tgt) -> None:
    check_tensor("src", src)
    if src.dim() >= 1 and src.size(0) != tgt.size(0):
        raise ShapeError(f"src and tgt must share the batch size, got {tuple(src.shape)} and {tuple(tgt.shape)}")


def _check_length(length) -> None:
    try:
        ok = not isinstance(length, bool) and operator.index(length) >= 1
    except TypeError:
        ok = False
    if not ok:
        raise InvalidParameterError(f"length must be an integer >= 1, got {length!r}")


class Seq2Seq(nn.Module):
    """GRU encoder-decoder for token sequences.

    Without attention the decoder sees the source only through the encoder's
    final state c = h_T (the bottleneck). With ``attention="general"`` every
    decoder step t builds its own context c_t = sum_j alpha_tj h_j from scores
    (W s_t)^T h_j / sqrt(d) and the output head reads [s_t, c_t].

    Modules are created in the order embedding, encoder, decoder, query
    projection, head, so that a seeded construction draws its initial weights
    in the same order as the chapter's code.

    Args:
        vocab_size: number of token ids (source and target share one embedding).
        embed_dim: embedding width.
        hidden_size: GRU width d.
        attention: ``None`` (the bottleneck) or ``"general"`` (scores (W s_t)^T h_j / sqrt(d)).
        init_decoder_from_encoder: start the decoder from the encoder's final state.
        start_token: the id the decoder reads first.

    Raises:
        InvalidParameterError: another ``attention``, or a ``start_token`` outside the vocabulary.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> model = Seq2Seq(vocab_size=6, embed_dim=4, hidden_size=8, attention="general")
        >>> src = torch.randint(1, 6, (2, 5))
        >>> logits, weights = model(src, src)  # teacher forcing on the copy task
        >>> logits.shape, weights.shape
        (torch.Size([2, 5, 6]), torch.Size([2, 5, 5]))
        >>> model.greedy_decode(src, length=5)[0].shape
        torch.Size([2, 5])
    """

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        *,
        attention: str | None = None,
        init_decoder_from_encoder: bool = True,
        start_token: int = 1,
    ):
        super().__init__()
        if attention not in _ATTENTION:
            raise InvalidParameterError(f"attention must be one of {_ATTENTION}, got {attention!r}")
        if not 0 <= start_token < vocab_size:
            raise InvalidParameterError(f"start_token {start_token} outside the vocabulary of {vocab_size}")
        self.vocab_size, self.hidden_size = vocab_size, hidden_size
        self.attention, self.start_token = attention, start_token
        self.init_decoder_from_encoder = init_decoder_from_encoder
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.encoder = nn.GRU(embed_dim, hidden_size, batch_first=True)
        self.decoder = nn.GRU(embed_dim, hidden_size, batch_first=True)
        self.query_proj = nn.Linear(hidden_size, hidden_size) if attention else None
        self.head = nn.Linear(2 * hidden_size if attention else hidden_size, vocab_size)

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``src`` (B, T) -> encoder states (B, T, d), final state (1, B, d)."""
        src = check_token_ids("src", src, self.vocab_size)
        return self.encoder(self.embedding(src))

    def _readout(self, S, H):
        if self.attention is None:
            return self.head(S), None
        scores = torch.bmm(self.query_proj(S), H.transpose(1, 2)) / math.sqrt(self.hidden_size)  # (B, T_out, T_in)
        alpha = scores.softmax(dim=-1)
        context = torch.bmm(alpha, H)  # (B, T_out, d)
        return self.head(torch.cat((S, context), dim=-1)), alpha

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher forcing: the decoder reads [start, y_1 .. y_{T'-1}].

        Returns logits (B, T', V) and attention weights (B, T', T) or ``None``.
        """
        tgt = check_token_ids("tgt", tgt, self.vocab_size)
        _check_batches(src, tgt)
        H, h_T = self.encode(src)
        start = torch.full((tgt.size(0), 1), self.start_token, dtype=torch.long, device=tgt.device)
        dec_in = self.embedding(torch.cat((start, tgt[:, :-1]), dim=1))  # (B, T', e)
        h0 = h_T if self.init_decoder_from_encoder else None
        S, _ = self.decoder(dec_in, h0)  # (B, T', d)
        return self._readout(S, H)

    @torch.no_grad()
    def greedy_decode(self, src: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Free-running decoding of ``length`` tokens: each step feeds back the model's own previous prediction.

        Returns the tokens (B, length) and the attention weights (B, length, T), or ``None`` without attention.
        """
        _check_length(length)
        H, h_T = self.encode(src)
        h = h_T if self.init_decoder_from_encoder else None
        token = torch.full((src.size(0), 1), self.start_token, dtype=torch.long, device=src.device)
        outputs, alphas = [], []
        for _ in range(length):
            s, h = self.decoder(self.embedding(token), h)  # (B, 1, d)
            logits, alpha = self._readout(s, H)
            token = logits.argmax(dim=-1)  # (B, 1)
            outputs.append(token)
            if alpha is not None:
                alphas.append(alpha)
        return torch.cat(outputs, dim=1), (torch.cat(alphas, dim=1) if alphas else None)
