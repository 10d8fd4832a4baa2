import pytest
import torch

from seqlab.analysis.params import count_parameters, multihead_parameters
from seqlab.nn import KVCache, MultiHeadAttention, causal_mask


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads", [1, 4])
def test_equals_torch_multihead_attention(fused, causal, heads):
    torch.manual_seed(0)
    d, T = 32, 9
    ours = MultiHeadAttention(d, heads, bias=True, fused=fused).eval()
    ref = ours.to_torch().eval()
    x = torch.randn(3, T, d)
    with torch.no_grad():
        got, _ = ours(x, is_causal=causal)
        # torch's attn_mask polarity is the opposite: True = blocked
        want, _ = ref(x, x, x, attn_mask=~causal_mask(T) if causal else None, need_weights=False)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)


def test_cross_attention_equals_torch():
    torch.manual_seed(1)
    ours = MultiHeadAttention(16, 2, bias=True).eval()
    ref = ours.to_torch().eval()
    q, mem = torch.randn(2, 4, 16), torch.randn(2, 7, 16)
    with torch.no_grad():
        torch.testing.assert_close(ours(q, mem, mem)[0], ref(q, mem, mem, need_weights=False)[0], atol=1e-6, rtol=0)


def test_weights_are_returned_per_head_and_match_torch_average():
    torch.manual_seed(2)
    ours = MultiHeadAttention(16, 4, bias=True).eval()
    ref = ours.to_torch().eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        _, w = ours(x, need_weights=True)
        _, w_ref = ref(x, x, x, need_weights=True, average_attn_weights=True)
    assert w.shape == (2, 4, 5, 5)
    torch.testing.assert_close(w.mean(1), w_ref, atol=1e-6, rtol=0)


@pytest.mark.parametrize("heads", [1, 2, 4, 8, 16])
def test_parameters_do_not_depend_on_head_count(heads):
    assert count_parameters(MultiHeadAttention(256, heads)) == multihead_parameters(256) == 262144


@pytest.mark.parametrize("qk_norm", [False, True])
@pytest.mark.parametrize("rotary", [False, True])
@pytest.mark.parametrize("fused", [False, True])
def test_kv_cache_decoding_equals_full_causal_pass(rotary, fused, qk_norm):
    torch.manual_seed(3)
    m = MultiHeadAttention(24, 3, rotary=rotary, fused=fused, qk_norm=qk_norm).eval()
    x = torch.randn(2, 10, 24)
    with torch.no_grad():
        full, _ = m(x, is_causal=True)
        cache = KVCache()
        first, _ = m(x[:, :4], is_causal=True, cache=cache)  # a prompt of 4, then one token at a time
        steps = [first] + [m(x[:, t : t + 1], is_causal=True, cache=cache)[0] for t in range(4, 10)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-6, rtol=1e-5)
    assert cache.length == 10


def test_chunked_decoding_with_cache_needs_bottom_right_mask():
    torch.manual_seed(4)
    m = MultiHeadAttention(16, 2).eval()
    x = torch.randn(1, 8, 16)
    with torch.no_grad():
        full, _ = m(x, is_causal=True)
        cache = KVCache()
        a, _ = m(x[:, :5], is_causal=True, cache=cache)
        b, _ = m(x[:, 5:], is_causal=True, cache=cache)  # 3 queries against 8 keys
    torch.testing.assert_close(torch.cat([a, b], 1), full, atol=1e-6, rtol=1e-5)


def test_qk_norm_normalises_each_heads_queries_and_keys():
    """QK-norm: q_h <- g * LN(q_h) per head (likewise k), so the scores no longer grow with |W^Q| or |W^K|."""
    torch.manual_seed(5)
    d, h, T = 24, 3, 7
    m = MultiHeadAttention(d, h, qk_norm=True, fused=False).eval()
    with torch.no_grad():
        m.q_norm.weight.uniform_(0.5, 2.0)
        m.k_norm.weight.uniform_(0.5, 2.0)
    x = torch.randn(2, T, d)
    with torch.no_grad():
        _, weights = m(x, is_causal=True, need_weights=True)
        q = m.Wq(x).view(2, T, h, d // h).transpose(1, 2)  # (B, h, T, d_k)
        k = m.Wk(x).view(2, T, h, d // h).transpose(1, 2)
        ln = lambda z: (z - z.mean(-1, keepdim=True)) * torch.rsqrt(z.var(-1, unbiased=False, keepdim=True) + 1e-5)
        scores = (ln(q) * m.q_norm.weight) @ (ln(k) * m.k_norm.weight).transpose(-2, -1) / (d // h) ** 0.5
        want = scores.masked_fill(~causal_mask(T), float("-inf")).softmax(-1)
        torch.testing.assert_close(weights, want, atol=1e-6, rtol=1e-5)
        out, _ = m(x, is_causal=True)
        m.Wq.weight.mul_(10.0)
        m.Wk.weight.mul_(4.0)  # upwards: LayerNorm's eps, not the scale, is what differs
        torch.testing.assert_close(m(x, is_causal=True)[0], out, atol=1e-4, rtol=1e-3)
    plain = MultiHeadAttention(d, h).eval()
    with torch.no_grad():
        before, _ = plain(x, is_causal=True)
        plain.Wq.weight.mul_(10.0)
        plain.Wk.weight.mul_(4.0)
        assert (plain(x, is_causal=True)[0] - before).abs().max() > 0.01  # without QK-norm the scores grow 40-fold
    assert sum(p.numel() for p in m.parameters()) == sum(p.numel() for p in plain.parameters()) + 2 * (d // h)


def test_bad_arguments():
    with pytest.raises(ValueError):
        MultiHeadAttention(30, 4)
    with pytest.raises(ValueError):
        MultiHeadAttention(32, 4, dropout=1.5)
    with pytest.raises(ValueError):
        MultiHeadAttention(32, 4)(torch.randn(2, 3, 16))


def test_bfloat16_training_on_the_cpu_takes_the_explicit_path_and_computes_the_same_attention(monkeypatch):
    from seqlab.nn import multihead

    torch.manual_seed(2)
    m = MultiHeadAttention(32, 4, rotary=True)
    x = torch.randn(3, 10, 32)
    taken = []
    real = multihead.scaled_dot_product_attention

    def spy(*args, **kwargs):
        taken.append(kwargs["fused"])
        return real(*args, **kwargs)

    monkeypatch.setattr(multihead, "scaled_dot_product_attention", spy)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = m(x, is_causal=True)  # training, with gradients: explicit
        with torch.no_grad():
            fused_out, _ = m(x, is_causal=True)  # no gradients: the fused kernel stays
    assert taken == [False, True]
    torch.testing.assert_close(out.float(), fused_out.float(), atol=0.02, rtol=0.02)  # bfloat16's ~3 digits
    out.float().sum().backward()
    assert m.Wq.weight.grad is not None and torch.isfinite(m.Wq.weight.grad).all()
    taken.clear()
    m(x, is_causal=True)  # float32 training keeps the fused kernel
    assert taken == [True]


def test_fused_is_slow_only_for_bfloat16_with_gradients_on_the_cpu():
    from seqlab.nn.multihead import fused_is_slow

    q = torch.randn(2, 3, requires_grad=True)
    assert not fused_is_slow(q)
    assert fused_is_slow(q.bfloat16())
    assert not fused_is_slow(q.detach().bfloat16())
    with torch.no_grad():
        assert not fused_is_slow(q.bfloat16())
