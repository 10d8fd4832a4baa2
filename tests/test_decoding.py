"""The decoding step's own paths: key-value buffers that grow in place, and (in, out) weight copies.

Each is checked against the plain computation it replaces (concatenation, ``F.linear``), including the
cases where a stale or shared buffer would give a silently wrong number: forked caches, weights changed
between two generations, and gradients flowing through the cache.
"""
import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import torch
import torch.nn.functional as F

from seqlab.errors import InvalidParameterError
from seqlab.nn import GPT, GPTConfig
from seqlab.nn.decoding import GPTDecoder
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


def _flat_and_modules(config: GPTConfig, batch: int, steps: int = 6):
    """Logits of ``steps`` decoding steps after a 5-token prompt, by GPTDecoder and by the model's forward."""
    torch.manual_seed(0)
    model = GPT(config).eval()
    ids = torch.randint(0, config.vocab_size, (batch, 5 + steps), generator=torch.Generator().manual_seed(2))
    flat_cache, module_cache = model.new_cache(), model.new_cache()
    with torch.no_grad():
        model(ids[:, :5], cache=flat_cache)
        model(ids[:, :5], cache=module_cache)
        step = GPTDecoder.for_model(model, batch)
        assert step is not None
        flat = [step(ids[:, t:t + 1], flat_cache) for t in range(5, 5 + steps)]
        modules = [model(ids[:, t:t + 1], cache=module_cache)[0] for t in range(5, 5 + steps)]
    return flat, modules, flat_cache, module_cache


@pytest.mark.parametrize("positional", ["learned", "sinusoidal", "rotary"])
@pytest.mark.parametrize("width, batch", [(32, 1), (WIDE, 1), (WIDE, DECODE_ROWS + 1)])
@pytest.mark.parametrize("bias, qk_norm, activation", [(True, False, "gelu"), (False, True, "relu2")])
def test_flat_decoding_step_equals_the_modules_bit_for_bit(positional, width, batch, bias, qk_norm, activation):
    # width 32 and more rows than a decoding step take F.linear; width 256 with one row the (in, out) copies
    config = GPTConfig(vocab_size=23, block_size=16, num_layers=2, num_heads=4, d_model=width, bias=bias,
                       positional=positional, qk_norm=qk_norm, activation=activation)
    flat, modules, flat_cache, module_cache = _flat_and_modules(config, batch)
    for a, b in zip(flat, modules):
        assert a.shape == (batch, 1, 23) and torch.equal(a, b)
    for layer in range(2):
        assert torch.equal(flat_cache.keys[layer], module_cache.keys[layer])
        assert torch.equal(flat_cache.values[layer], module_cache.values[layer])


def test_flat_decoding_steps_aside_where_the_modules_must_run():
    from seqlab.nn import LSTMConfig, LSTMLanguageModel

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, num_layers=1, num_heads=2, d_model=8)).eval()
    with torch.no_grad():
        assert GPTDecoder.for_model(model, 1) is not None
        assert GPTDecoder.for_model(LSTMLanguageModel(LSTMConfig(vocab_size=11)), 1) is None
        assert GPTDecoder.for_model(model.train(), 1) is None  # dropout may act
        model.eval()
        handle = model.blocks[0].ff.register_forward_hook(lambda *a: None)  # a hook a flat step would skip
        assert GPTDecoder.for_model(model, 1) is None
        handle.remove()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert GPTDecoder.for_model(model, 1) is None
    assert GPTDecoder.for_model(model, 1) is None  # gradients on


def test_generation_calls_a_models_hooks_on_every_step():
    from seqlab.text.generation import generate

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=32, num_layers=1, num_heads=2, d_model=8))
    calls = []
    model.register_forward_hook(lambda *a: calls.append(1))
    out = generate(model, torch.tensor([[1, 2]]), 5, greedy=True)
    assert out.shape == (1, 7) and len(calls) == 5  # the prompt, then four steps (the fifth token needs none)


def test_flat_decoding_step_refuses_another_shape_and_a_full_window():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=4, num_layers=1, num_heads=2, d_model=8)).eval()
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.tensor([[1, 2, 3, 4]]), cache=cache)
        step = GPTDecoder.for_model(model, 1)
        with pytest.raises(InvalidParameterError, match="block_size=4"):
            step(torch.tensor([[1]]), cache)
        with pytest.raises(InvalidParameterError, match=r"\(1, 1\) ids"):
            step(torch.tensor([[1], [2]]), cache)
    assert cache.length == 4  # nothing was appended


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positional=st.sampled_from(["learned", "sinusoidal", "rotary"]), heads=st.sampled_from([1, 2, 4]),
       head_width=st.sampled_from([2, 8, 64]), layers=st.integers(1, 2), batch=st.integers(1, DECODE_ROWS + 2),
       prompt=st.integers(1, 6), bias=st.booleans(), qk_norm=st.booleans(), tie=st.booleans(),
       activation=st.sampled_from(["relu", "gelu", "relu2"]), seed=st.integers(0, 2 ** 16))
def test_generation_through_the_flat_step_gives_the_modules_tokens(positional, heads, head_width, layers, batch,
                                                                     prompt, bias, qk_norm, tie, activation, seed):
    from seqlab.text.generation import generate

    torch.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=13, block_size=8, num_layers=layers, num_heads=heads,
                          d_model=heads * head_width, bias=bias, positional=positional, qk_norm=qk_norm,
                          activation=activation, tie_weights=tie))
    ids = torch.randint(0, 13, (batch, prompt), generator=torch.Generator().manual_seed(seed))
    flat = generate(model, ids, 12, greedy=True)  # 12 tokens: the window of 8 fills and is re-encoded
    model.register_forward_pre_hook(lambda *a: None)  # a hook sends every step through the modules
    assert torch.equal(flat, generate(model, ids, 12, greedy=True))
