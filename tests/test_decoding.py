"""The decoding step's own paths: key-value buffers that grow in place, and (in, out) weight copies.

Each is checked against the plain computation it replaces (concatenation, ``F.linear``), including the
cases where a stale or shared buffer would give a silently wrong number: forked caches, weights changed
between two generations, and gradients flowing through the cache.
"""
import copy

import pytest
import torch
import torch.nn.functional as F

from seqlab.nn import GPT, GPTConfig
from seqlab.nn.linear import DECODE_ROWS, MIN_WEIGHTS, Linear
from seqlab.nn.multihead import KVCache, MultiHeadAttention

WIDE = 256  # 3 * 256**2 and 256 * 1024 reach MIN_WEIGHTS, so the copies are taken
assert 3 * WIDE * WIDE >= MIN_WEIGHTS and WIDE * WIDE < MIN_WEIGHTS


def _gpt(positional: str, bias: bool) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=17, block_size=96, num_layers=2, num_heads=4, d_model=WIDE, bias=bias,
                         positional=positional)).eval()


@pytest.mark.parametrize("positional, bias", [("rotary", False), ("learned", True)])
def test_cached_decoding_gives_the_full_forward_as_the_buffers_grow(positional, bias):
    model = _gpt(positional, bias)
    ids = torch.randint(0, 17, (2, 80), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full, _ = model(ids)
        cache = model.new_cache()
        steps = [model(ids[:, :5], cache=cache)[0]]
        for t in range(5, 80):  # the buffers double from 16 past 20, 40 and 80 positions
            steps.append(model(ids[:, t:t + 1], cache=cache)[0])
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=2e-5, rtol=1e-5)
    assert cache.length == 80


def _encoded(model, length: int, seed: int):
    """A prompt of ``length`` tokens and a cache that holds it."""
    ids = torch.randint(0, 17, (1, length), generator=torch.Generator().manual_seed(seed))
    cache = model.new_cache()
    with torch.no_grad():
        model(ids, cache=cache)
    return ids, cache


def _step(model, cache, token: int) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([[token]]), cache=cache)[0][:, -1]


def _after(model, ids, *tokens: int) -> torch.Tensor:
    """The full forward's last logits for ``ids`` followed by ``tokens``."""
    with torch.no_grad():
        return model(torch.cat((ids, torch.tensor([tokens])), 1))[0][:, -1]


def test_forked_caches_write_their_own_positions():
    model = _gpt("rotary", False)
    ids, cache = _encoded(model, 12, seed=2)
    fork = KVCache(keys=list(cache.keys), values=list(cache.values))
    got = [_step(model, cache, 3), _step(model, fork, 9), _step(model, cache, 5)]
    for g, w in zip(got, [_after(model, ids, 3), _after(model, ids, 9), _after(model, ids, 3, 5)]):
        assert torch.allclose(g, w, atol=2e-5, rtol=1e-5)


def test_a_shallow_copy_with_its_own_lists_shares_no_position():
    """copy.copy keeps the buffers' bookkeeping shared: each cache must see that the other wrote past it."""
    model = _gpt("learned", True)
    ids, cache = _encoded(model, 10, seed=5)
    fork = copy.copy(cache)
    fork.keys, fork.values = list(cache.keys), list(cache.values)
    got = [_step(model, cache, 1), _step(model, fork, 2), _step(model, cache, 3), _step(model, fork, 4)]
    want = [_after(model, ids, *tail) for tail in ([1], [2], [1, 3], [2, 4])]
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=2e-5, rtol=1e-5)


def test_a_deep_copied_cache_decodes_on_its_own():
    model = _gpt("learned", True)
    ids, cache = _encoded(model, 10, seed=3)
    twin = copy.deepcopy(cache)
    one, two = _step(model, cache, 1), _step(model, twin, 2)
    assert torch.allclose(two, _after(model, ids, 2), atol=2e-5)
    assert torch.allclose(one, _after(model, ids, 1), atol=2e-5)


def test_gradients_flow_through_the_cache_as_through_the_full_forward():
    model = _gpt("rotary", False).train()
    ids = torch.randint(0, 17, (1, 8), generator=torch.Generator().manual_seed(4))
    cache = model.new_cache()
    out = torch.cat([model(ids[:, :4], cache=cache)[0]] + [model(ids[:, t:t + 1], cache=cache)[0] for t in range(4, 8)], 1)
    out.square().mean().backward()
    stepped = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(ids)[0].square().mean().backward()
    for g, p in zip(stepped, model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_decoding_copy_gives_f_linear_and_follows_weight_changes(bias):
    torch.manual_seed(0)
    layer = Linear(WIDE, 4 * WIDE, bias=bias)
    x = torch.randn(DECODE_ROWS, WIDE)
    with torch.no_grad():
        assert torch.allclose(layer(x), F.linear(x, layer.weight, layer.bias), atol=1e-5)
        assert layer._by_row is not None  # the copy was taken
        layer.weight.mul_(-2.0)  # an in-place edit bumps the version counter
        assert torch.allclose(layer(x), F.linear(x, layer.weight, layer.bias), atol=1e-5)
    torch.optim.SGD(layer.parameters(), lr=0.5).zero_grad()
    layer(torch.randn(3, WIDE)).sum().backward()
    torch.optim.SGD(layer.parameters(), lr=0.5).step()
    with torch.no_grad():
        assert torch.allclose(layer(x[:1]), F.linear(x[:1], layer.weight, layer.bias), atol=1e-5)
        layer.load_state_dict({k: torch.randn_like(v) for k, v in layer.state_dict().items()})
        assert torch.allclose(layer(x[:1]), F.linear(x[:1], layer.weight, layer.bias), atol=1e-5)
    assert sorted(layer.state_dict()) == (["bias", "weight"] if bias else ["weight"])


def test_more_rows_than_a_decoding_step_take_f_linear():
    layer = Linear(WIDE, 4 * WIDE)
    with torch.no_grad():
        layer(torch.randn(DECODE_ROWS + 1, WIDE))
    assert layer._by_row is None


def test_the_decoding_projection_of_queries_keys_values_is_the_training_ones():
    torch.manual_seed(0)
    attn = MultiHeadAttention(WIDE, num_heads=4, bias=True)
    x = torch.randn(2, 1, WIDE)
    with torch.no_grad():
        fast = attn(x)[0]
    assert attn._qkv_by_row is not None
    assert torch.allclose(fast, attn(x)[0].detach(), atol=1e-5)
