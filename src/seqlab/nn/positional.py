"""Positional encodings: sinusoidal (fixed), learned, and rotary (RoPE)."""
from __future__ import annotations

import torch
import torch.nn as nn

from ..errors import InvalidParameterError, ShapeError
from ._checks import check_float, check_offset

__all__ = [
    "sinusoidal_encoding",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEncoding",
    "RotaryEmbedding",
]


def sinusoidal_encoding(t_len: int, d: int, base: float = 10000.0) -> torch.Tensor:
    """The fixed sinusoidal code: PE(pos, 2i) = sin(pos / base^{2i/d}), PE(pos, 2i+1) = cos(pos / base^{2i/d}).

    Args:
        t_len: number of positions T, >= 1.
        d: code width, even and >= 2.
        base: the wavelength base.

    Returns:
        A float32 tensor of shape (t_len, d); row ``pos`` is the code of position ``pos``.

    Raises:
        InvalidParameterError: ``t_len < 1`` or an odd or too small ``d``.

    Example:
        >>> sinusoidal_encoding(3, 4)
        tensor([[ 0.0000,  1.0000,  0.0000,  1.0000],
                [ 0.8415,  0.5403,  0.0100,  0.9999],
                [ 0.9093, -0.4161,  0.0200,  0.9998]])
    """
    if t_len < 1 or d < 2 or d % 2:
        raise InvalidParameterError(f"need t_len >= 1 and an even d >= 2, got t_len={t_len}, d={d}")
    pos = torch.arange(0, t_len, dtype=torch.float32).unsqueeze(1)  # (T, 1)
    i2 = torch.arange(0, d, 2, dtype=torch.float32)  # (d/2,)
    denom = torch.pow(torch.tensor(base), i2 / d)
    pe = torch.zeros(t_len, d)
    pe[:, 0::2] = torch.sin(pos / denom)
    pe[:, 1::2] = torch.cos(pos / denom)
    return pe


def _check_embeddings(x, d_model: int) -> None:
    check_float("x", x)
    if x.dim() != 3 or x.size(-1) != d_model:
        raise ShapeError(f"x must be (B, T, {d_model}) embeddings, got shape {tuple(x.shape)}")


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal code (:func:`sinusoidal_encoding`) to (B, T, d) embeddings; no parameters.

    ``forward(x, offset=0)`` adds the codes of positions ``offset .. offset + T - 1``
    (``offset``: the positions already decoded, with a cache).

    Args:
        d_model: embedding width d, even.
        max_len: the most positions it codes.

    Raises:
        InvalidParameterError: an odd ``d_model``; in forward, positions past ``max_len``.

    Example:
        >>> import torch
        >>> pe = SinusoidalPositionalEncoding(d_model=4, max_len=16)
        >>> pe(torch.zeros(1, 3, 4))[0, 1]
        tensor([0.8415, 0.5403, 0.0100, 0.9999])
    """

    def __init__(self, d_model: int, max_len: int = 4096):
        super().__init__()
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        _check_embeddings(x, self.pe.size(1))
        offset = check_offset(offset)
        t = x.size(1)
        if offset + t > self.pe.size(0):
            raise InvalidParameterError(f"positions up to {offset + t} exceed max_len={self.pe.size(0)}")
        return x + self.pe[offset : offset + t].to(x.dtype)


class LearnedPositionalEncoding(nn.Module):
    """Adds a trained vector per absolute position (GPT-2 style), for at most ``max_len`` positions.

    ``forward(x, offset=0)`` adds the vectors of positions ``offset .. offset + T - 1`` to ``x`` (B, T, d_model).

    Args:
        d_model: embedding width.
        max_len: number of positions with a vector.

    Raises:
        InvalidParameterError: a size below 1; in forward, positions past ``max_len``.

    Example:
        >>> import torch
        >>> pe = LearnedPositionalEncoding(d_model=8, max_len=4)
        >>> pe(torch.zeros(2, 3, 8)).shape
        torch.Size([2, 3, 8])
    """

    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        if d_model < 1 or max_len < 1:
            raise InvalidParameterError(f"d_model and max_len must be >= 1, got {d_model}, {max_len}")
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        _check_embeddings(x, self.embedding.embedding_dim)
        offset = check_offset(offset)
        t = x.size(1)
        if offset + t > self.max_len:
            raise InvalidParameterError(f"positions up to {offset + t} exceed max_len={self.max_len}")
        pos = torch.arange(offset, offset + t, device=x.device)
        return x + self.embedding(pos)


class RotaryEmbedding(nn.Module):
    """RoPE: rotate each (2i, 2i+1) pair of q and k by angle pos * base^{-2i/d}.

    Then <R(m) q, R(n) k> depends on m - n only, so attention sees relative offsets.
    A rotation keeps each vector's length.

    Args:
        head_dim: width of each head's queries and keys, even and >= 2.
        base: the wavelength base.

    Raises:
        InvalidParameterError: an odd or too small ``head_dim``.

    Example:
        >>> import torch
        >>> rope = RotaryEmbedding(head_dim=8)
        >>> q, k = torch.ones(1, 1, 8), torch.arange(8.0).view(1, 1, 8)
        >>> near = (rope(q, offset=2) * rope(k, offset=5)).sum()
        >>> far = (rope(q, offset=10) * rope(k, offset=13)).sum()
        >>> torch.allclose(near, far, atol=1e-4)  # the same offset, 3, the same score
        True
    """

    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim < 2 or head_dim % 2:
            raise InvalidParameterError(f"head_dim must be even and >= 2, got {head_dim}")
        inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        # e^{i pos freq} for positions 0 .. n - 1, grown by doubling: a decoding step slices it instead of
        # computing T x d/2 sines and cosines per layer, twice (each entry is the same float32 product either way)
        self._table: torch.Tensor | None = None

    def rotation(self, offset: int, t: int, device: torch.device | None = None) -> torch.Tensor:
        """The complex rotations (T, head_dim / 2) of positions ``offset .. offset + t - 1``."""
        device = self.inv_freq.device if device is None else device
        end = offset + t
        table = self._table
        # rebuilt where it is short, or where the frequencies moved device or dtype (a model.double())
        if table is None or table.size(0) < end or table.device != device or (
                table.real.dtype != torch.promote_types(torch.float32, self.inv_freq.dtype)):
            n = max(end, 2 * (table.size(0) if table is not None else 0), 64)
            pos = torch.arange(n, device=device, dtype=torch.float32)
            angles = torch.outer(pos, self.inv_freq.to(device))  # (n, d/2)
            table = self._table = torch.polar(torch.ones_like(angles), angles)  # (n, d/2) complex64
        return table[offset:end]

    def _rotate(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        # each (2i, 2i+1) pair is one complex number, rotated by e^{i angle}: one complex product, which costs
        # a fraction of the strided real arithmetic; half-precision inputs rotate in float32 and round once
        wide = x.dtype in (torch.float32, torch.float64)
        work = x if wide else x.to(torch.float32, memory_format=torch.contiguous_format)
        pairs = work.unflatten(-1, (-1, 2))  # (..., T, d/2, 2)
        if pairs.stride(-1) != 1 or pairs.storage_offset() % 2 or any(s % 2 for s in pairs.stride()[:-1]):
            pairs = pairs.clone(memory_format=torch.contiguous_format)  # a complex view needs pairs on even floats
        pairs = torch.view_as_complex(pairs)  # (..., T, d/2) complex
        rotation = self.rotation(offset, x.size(-2), x.device).to(pairs.dtype)  # (T, d/2)
        return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)  # (..., T, d)

    def _check(self, x: torch.Tensor) -> None:
        check_float("x", x, min_ndim=2)
        if x.size(-1) != 2 * self.inv_freq.numel():
            raise ShapeError(f"x must end in head_dim={2 * self.inv_freq.numel()}, got shape {tuple(x.shape)}")

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """``x`` (..., T, head_dim) rotated as positions ``offset .. offset + T - 1``; the same shape and dtype."""
        self._check(x)
        return self._rotate(x, check_offset(offset))

    def rotate_pair(self, q: torch.Tensor, k: torch.Tensor, offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """``(self(q, offset), self(k, offset))``, in one pass where ``q`` and ``k`` share a shape and dtype (the
        queries and keys of self-attention): half the operations of a decoding step's rotation."""
        self._check(q)
        self._check(k)
        offset = check_offset(offset)
        if q.shape != k.shape or q.dtype != k.dtype:
            return self._rotate(q, offset), self._rotate(k, offset)
        both = self._rotate(torch.stack((q, k)), offset)  # (2, ..., T, d)
        return both[0], both[1]
