"""The recurrent baseline language model: embedding, stacked LSTM, linear head."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..devices import native_bfloat16
from ..errors import InvalidParameterError, InvalidTypeError, ShapeError
from ._checks import check_lm_inputs
from .recurrent import set_forget_bias

__all__ = ["LSTMConfig", "LSTMLanguageModel", "RecurrentState"]


@dataclass
class LSTMConfig:
    """Shape of an :class:`LSTMLanguageModel`.

    Args:
        vocab_size: number of token ids.
        d_model: embedding width.
        hidden_size: width of each LSTM layer.
        num_layers: stacked LSTM layers.
        dropout: dropout in training (on the embedding, between layers and on the outputs), in [0, 1).
        block_size: the training context; generation may run longer, carrying the state.

    Raises:
        InvalidParameterError: a size below 1, or ``dropout`` outside [0, 1).

    Example:
        >>> LSTMConfig(vocab_size=65).hidden_size
        256
    """

    vocab_size: int
    d_model: int = 128
    hidden_size: int = 256
    num_layers: int = 2
    dropout: float = 0.0
    block_size: int = 256  # training context; generation can run longer by carrying the state

    def __post_init__(self):
        if min(self.vocab_size, self.d_model, self.hidden_size, self.num_layers, self.block_size) < 1:
            raise InvalidParameterError("vocab_size, d_model, hidden_size, num_layers and block_size must be >= 1")
        if not 0.0 <= self.dropout < 1.0:
            raise InvalidParameterError(f"dropout must lie in [0, 1), got {self.dropout}")


class RecurrentState:
    """The LSTM's (h, c), carried between calls: the recurrent counterpart of a key-value cache.

    Attributes:
        hc: the states ``(h, c)``, each (num_layers, B, hidden_size), or ``None`` before the first call.
        length: tokens read so far.

    Example:
        >>> import torch
        >>> model = LSTMLanguageModel(LSTMConfig(vocab_size=5, d_model=4, hidden_size=6, num_layers=1))
        >>> state = model.new_cache()
        >>> _ = model(torch.tensor([[1, 2, 3]]), cache=state)
        >>> state.length, state.hc[0].shape
        (3, torch.Size([1, 1, 6]))
    """

    def __init__(self):
        self.hc: tuple[torch.Tensor, torch.Tensor] | None = None
        self.length = 0


class LSTMLanguageModel(nn.Module):
    """Next-token model p(x_t | x_<t) from an LSTM's hidden state: embedding, stacked LSTM, linear head.

    The forget gates' bias starts at 1 (:func:`set_forget_bias`). It has no positional limit
    (``block_size`` is ``None``), so generation can run past the training context.

    Args:
        config: the model's shape.

    Example:
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> model = LSTMLanguageModel(LSTMConfig(vocab_size=5, d_model=4, hidden_size=6, num_layers=1))
        >>> idx = torch.tensor([[1, 2, 3, 4]])
        >>> logits, loss = model(idx, targets=idx)
        >>> logits.shape, loss.item() > 0
        (torch.Size([1, 4, 5]), True)
    """

    def __init__(self, config: LSTMConfig):
        super().__init__()
        c = self.config = config
        self.embedding = nn.Embedding(c.vocab_size, c.d_model)
        self.lstm = nn.LSTM(c.d_model, c.hidden_size, num_layers=c.num_layers, batch_first=True,
                            dropout=c.dropout if c.num_layers > 1 else 0.0)
        self.drop = nn.Dropout(c.dropout)
        self.head = nn.Linear(c.hidden_size, c.vocab_size)
        set_forget_bias(self.lstm, 1.0)  # Jozefowicz et al., 2015; §14.47

    block_size = None  # no positional limit

    def new_cache(self) -> RecurrentState:
        """An empty :class:`RecurrentState` for incremental decoding."""
        return RecurrentState()

    def _recur(self, x: torch.Tensor, hc):
        if x.device.type == "cpu" and torch.is_autocast_enabled("cpu") and (
                torch.get_autocast_dtype("cpu") == torch.bfloat16 and not native_bfloat16("cpu")[0]):
            # torch 2.13's CPU kernel has no bfloat16 LSTM under autocast on a CPU without native bfloat16
            # products (it raises), and casting by hand ran some 40x slower than float32 there (width 512):
            # the recurrence runs in float32; the rest of the model stays in autocast
            with torch.autocast("cpu", enabled=False):
                hc = None if hc is None else tuple(h.float() for h in hc)
                return self.lstm(x.float(), hc)
        return self.lstm(x, hc)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, *,
                cache: RecurrentState | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``idx`` (B, T) ids in ``[0, vocab_size)`` -> ``(logits (B, T, vocab), loss)``.

        ``loss`` is the mean cross-entropy against ``targets`` (B, T), or ``None`` without them. With ``cache``
        the state carries over from the previous call and is updated. Ids outside the vocabulary raise
        :class:`~seqlab.errors.InvalidParameterError`; a cache of another kind or batch,
        :class:`~seqlab.errors.InvalidTypeError` or :class:`~seqlab.errors.ShapeError`.
        """
        idx, targets = check_lm_inputs(idx, targets, self.config.vocab_size)
        if cache is not None:
            if not isinstance(cache, RecurrentState):
                raise InvalidTypeError(f"cache must be a RecurrentState (model.new_cache()), "
                                       f"got {type(cache).__name__}")
            if cache.hc is not None and cache.hc[0].size(1) != idx.size(0):
                raise ShapeError(f"the state holds a batch of {cache.hc[0].size(1)}, idx a batch of {idx.size(0)}")
        x = self.drop(self.embedding(idx))  # (B, T, d)
        out, hc = self._recur(x, cache.hc if cache is not None else None)  # (B, T, hidden)
        if cache is not None:
            cache.hc, cache.length = hc, cache.length + idx.size(1)
        logits = self.head(self.drop(out))  # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss
