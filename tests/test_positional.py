import math

import pytest
import torch

from seqlab.errors import ShapeError
from seqlab.nn import LearnedPositionalEncoding, RotaryEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding


def test_sinusoidal_hand_worked_values():
    pe = sinusoidal_encoding(3, 4)
    # position 1: sin(1), cos(1), sin(1/100), cos(1/100)
    torch.testing.assert_close(pe[1], torch.tensor([math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]))
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]))


@pytest.mark.parametrize("k", [1, 7, 30])
def test_sinusoidal_shift_is_a_rotation(k):
    d = 32
    pe = sinusoidal_encoding(100, d).double()
    for j in range(d // 2):
        th = k / 10000 ** (2 * j / d)
        # (sin, cos)(a + th) = (sin a, cos a) @ [[cos th, -sin th], [sin th, cos th]]
        R = torch.tensor([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]], dtype=torch.float64)
        pair = pe[:, 2 * j : 2 * j + 2]
        torch.testing.assert_close(pair[:-k] @ R, pair[k:], atol=2e-5, rtol=0)


def test_rope_dot_product_depends_only_on_offset():
    rope = RotaryEmbedding(16)
    torch.manual_seed(0)
    q, k = torch.randn(1, 16), torch.randn(1, 16)
    dots = [(rope(q, m) * rope(k, m - 4)).sum() for m in (4, 9, 40, 200)]
    for d in dots[1:]:
        torch.testing.assert_close(d, dots[0], atol=1e-4, rtol=1e-5)
    assert not torch.allclose((rope(q, 10) * rope(k, 3)).sum(), dots[0])


def test_rope_preserves_norm_and_is_identity_at_zero():
    rope = RotaryEmbedding(8)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(rope(x).norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(rope(x[:, :1]), x[:, :1])


def test_modules_add_positions_and_check_length():
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(SinusoidalPositionalEncoding(8, 16)(x)[0], sinusoidal_encoding(6, 8))
    learned = LearnedPositionalEncoding(8, 6)
    assert learned(x).shape == x.shape
    with pytest.raises(ValueError):
        learned(x, offset=1)
    with pytest.raises(ValueError):
        sinusoidal_encoding(4, 7)
    with pytest.raises(ValueError):
        RotaryEmbedding(5)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-6), (torch.bfloat16, 1e-2)])
def test_rope_rotates_each_pair_by_position_times_frequency(dtype, tol):
    """A hand-written rotation of pair (2i, 2i+1) by m * 10000^(-2i/d), on a strided (B, h, T, d) view as attention makes."""
    torch.manual_seed(4)
    d, offset = 8, 3
    x = torch.randn(2, 5, 3, d, dtype=torch.float64).transpose(1, 2)  # (B, h, T, d), not contiguous
    m = torch.arange(offset, offset + 5, dtype=torch.float64)[:, None]  # (T, 1)
    theta = m * 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (T, d/2)
    even, odd = x[..., 0::2], x[..., 1::2]
    want = torch.stack((even * theta.cos() - odd * theta.sin(), even * theta.sin() + odd * theta.cos()), -1).flatten(-2)
    got = RotaryEmbedding(d)(x.to(dtype), offset)
    assert got.dtype == dtype and got.shape == x.shape
    torch.testing.assert_close(got.double(), want, atol=tol * 4, rtol=tol)


def test_rope_takes_any_layout():
    """Views whose pairs do not sit on even floats (a transposed last axis, an odd storage offset) rotate alike."""
    rope = RotaryEmbedding(8)
    torch.manual_seed(6)
    for x in (torch.randn(3, 8, 5).transpose(1, 2), torch.randn(1, 41)[:, 1:].view(1, 5, 8)):
        assert not (x.is_contiguous() and x.storage_offset() % 2 == 0)
        torch.testing.assert_close(rope(x), rope(x.contiguous().clone()), atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rotary_pair_and_its_cached_table_equal_the_rotation_computed_afresh(dtype):
    """A decoding step rotates queries and keys in one pass, with rotations sliced from a table grown as positions
    are reached: the rotation of each position computed on its own, to the last bit or two of the dtype (a complex
    product may round differently in a vectorised loop's body and its tail)."""
    torch.manual_seed(0)
    rope = RotaryEmbedding(head_dim=8)
    q = torch.randn(2, 5, 3, 8, dtype=dtype).transpose(1, 2)  # (B, h, T, d), not contiguous, as after a split
    k = torch.randn(2, 3, 5, 8, dtype=dtype)

    def afresh(x, offset):
        pos = torch.arange(offset, offset + x.size(-2), dtype=torch.float32)
        angles = torch.outer(pos, rope.inv_freq)
        wide = x if dtype in (torch.float32, torch.float64) else x.float()
        pairs = torch.view_as_complex(wide.unflatten(-1, (-1, 2)).contiguous())
        rotation = torch.polar(torch.ones_like(angles), angles).to(pairs.dtype)
        return torch.view_as_real(pairs * rotation).flatten(-2).to(dtype)

    tol = {"rtol": 2 * torch.finfo(dtype).eps, "atol": 4 * torch.finfo(dtype).eps}

    def same(a, b):
        return a.dtype == b.dtype and torch.allclose(a.double(), b.double(), **tol)

    for offset in (0, 3, 63, 64, 500, 70):  # past the first table, then back inside it
        rq, rk = rope.rotate_pair(q, k, offset)
        assert same(rq, afresh(q, offset)) and same(rk, afresh(k, offset))
        assert same(rope(q, offset), rq) and rq.dtype == dtype
    assert rope._table.size(0) >= 503
    wide = torch.randn(2, 3, 4, 8, dtype=dtype)  # a key of another length: rotated on its own
    rq, rk = rope.rotate_pair(q, wide, 2)
    assert same(rk, afresh(wide, 2)) and same(rq, afresh(q, 2))
    with pytest.raises(ShapeError):
        rope.rotate_pair(q, torch.randn(2, 3, 5, 6), 0)
