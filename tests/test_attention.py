import math

import pytest
import torch

from seqlab.errors import ShapeError
from seqlab.nn.attention import (
    AdditiveAttention,
    causal_mask,
    dot_attention,
    padding_mask,
    scaled_dot_product_attention,
)


def qkv(B=2, h=3, Tq=5, Tk=5, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, h, Tq, d, generator=g), torch.randn(B, h, Tk, d, generator=g),
            torch.randn(B, h, Tk, d, generator=g))


def test_causal_mask_hand_worked():
    expected = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(3), expected)


def test_causal_mask_aligns_bottom_right_against_a_cache():
    # two new queries after three cached positions: absolute positions 3 and 4
    m = causal_mask(2, 5)
    assert torch.equal(m, torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool))


@pytest.mark.parametrize("bad", [(0, 3), (4, 3)])
def test_causal_mask_rejects_bad_lengths(bad):
    with pytest.raises(ValueError):
        causal_mask(*bad)


def test_explicit_matches_the_equation():
    q, k, v = qkv()
    out, w = scaled_dot_product_attention(q, k, v)
    ref_w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    torch.testing.assert_close(w, ref_w)
    torch.testing.assert_close(out, ref_w @ v)


def _masks(Tq=5, Tk=5, B=2):
    g = torch.Generator().manual_seed(1)
    rand_bool = torch.rand(B, 1, Tq, Tk, generator=g) > 0.3
    rand_bool[..., 0] = True  # keep every row alive here
    additive = torch.zeros(B, 1, Tq, Tk).masked_fill(~rand_bool, float("-inf"))
    return {"none": (None, False), "causal": (None, True), "bool": (rand_bool, False), "additive": (additive, False),
            "bool+causal": (rand_bool, True), "padding": (padding_mask(torch.tensor([5, 3]), Tk), False)}


@pytest.mark.parametrize("name", list(_masks()))
def test_fused_path_equals_explicit_path(name):
    mask, is_causal = _masks()[name]
    q, k, v = qkv()
    explicit, _ = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal)
    fused, w = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal, fused=True)
    assert w is None
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=1e-5)


def test_bool_and_additive_masks_agree():
    q, k, v = qkv()
    m = _masks()["bool"][0]
    add = torch.zeros(m.shape).masked_fill(~m, float("-inf"))
    a, _ = scaled_dot_product_attention(q, k, v, m)
    b, _ = scaled_dot_product_attention(q, k, v, add)
    torch.testing.assert_close(a, b)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("kind", ["bool", "additive"])
def test_fully_masked_row_gives_zeros_not_nan(fused, kind):
    q, k, v = qkv(Tq=4, Tk=4)
    m = torch.ones(4, 4, dtype=torch.bool)
    m[2] = False  # query 2 may attend to nothing
    mask = m if kind == "bool" else torch.zeros(4, 4).masked_fill(~m, float("-inf"))
    out, w = scaled_dot_product_attention(q, k, v, mask, fused=fused)
    assert not torch.isnan(out).any()
    assert torch.count_nonzero(out[..., 2, :]) == 0
    assert torch.count_nonzero(out[..., 1, :]) > 0
    if w is not None:
        assert torch.count_nonzero(w[..., 2, :]) == 0
        torch.testing.assert_close(w[..., 1, :].sum(-1), torch.ones(2, 3))


def test_masked_weights_are_exactly_zero_and_rows_sum_to_one():
    q, k, v = qkv()
    _, w = scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.count_nonzero(w[..., ~causal_mask(5)]) == 0
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))


def test_rejects_integer_mask_and_bad_dropout():
    q, k, v = qkv()
    with pytest.raises(TypeError):
        scaled_dot_product_attention(q, k, v, torch.ones(5, 5, dtype=torch.long))
    with pytest.raises(ValueError):
        scaled_dot_product_attention(q, k, v, dropout_p=1.0)


def test_dot_attention_hand_worked():
    # s = (1, 0): scores are the first coordinates of H: 0 and log 3 -> weights 1/4, 3/4
    H = torch.tensor([[[0.0, 2.0], [math.log(3.0), 4.0]]])
    s = torch.tensor([[1.0, 0.0]])
    ctx, w = dot_attention(s, H)
    torch.testing.assert_close(w, torch.tensor([[0.25, 0.75]]))
    torch.testing.assert_close(ctx, torch.tensor([[0.75 * math.log(3.0), 3.5]]))


def test_additive_attention_matches_its_equation():
    torch.manual_seed(0)
    att = AdditiveAttention(6, 5, 7)
    s, H = torch.randn(3, 6), torch.randn(3, 4, 5)
    ctx, w = att(s, H)
    scores = (torch.tanh((s @ att.W_s.weight.T).unsqueeze(1) + H @ att.W_h.weight.T) @ att.v.weight.T).squeeze(-1)
    torch.testing.assert_close(w, torch.softmax(scores, -1))
    torch.testing.assert_close(ctx, (w.unsqueeze(-1) * H).sum(1))


def test_padding_mask_validates():
    with pytest.raises(ValueError):
        padding_mask(torch.tensor([6]), 5)
    m = padding_mask(torch.tensor([2]), 4)
    assert m.shape == (1, 1, 1, 4) and m.sum() == 2


@pytest.mark.parametrize("fused", [False, True])
def test_leading_dimensions_broadcast_as_in_torch(fused):
    """Keys and values shared over a batch of queries give the attention of the expanded tensors."""
    g = torch.Generator().manual_seed(3)
    q, k, v = torch.randn(2, 3, 4, 8, generator=g), torch.randn(1, 3, 5, 8, generator=g), torch.randn(1, 3, 5, 6, generator=g)
    out, _ = scaled_dot_product_attention(q, k, v, fused=fused)
    ref, _ = scaled_dot_product_attention(q, k.expand(2, -1, -1, -1), v.expand(2, -1, -1, -1), fused=fused)
    assert out.shape == (2, 3, 4, 6) and torch.allclose(out, ref, atol=1e-6)
    with pytest.raises(ShapeError, match="do not broadcast"):
        scaled_dot_product_attention(q, torch.randn(3, 3, 5, 8), torch.randn(3, 3, 5, 6), fused=fused)
