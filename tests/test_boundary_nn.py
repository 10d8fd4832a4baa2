"""Bad input to the neural modules raises a precise seqlab error; valid input still gives the same numbers.

Each property has two halves: valid draws must succeed (finite, right shape, fused == explicit),
and draws that may be invalid must either succeed that way or raise a SeqlabError, never torch's own.
"""
from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab.errors import InvalidParameterError, InvalidTypeError, SeqlabError, ShapeError
from seqlab.nn import (
    GPT,
    AdditiveAttention,
    GPTConfig,
    KVCache,
    LearnedPositionalEncoding,
    LSTMConfig,
    LSTMLanguageModel,
    MultiHeadAttention,
    RotaryEmbedding,
    Seq2Seq,
    Seq2SeqTransformer,
    causal_mask,
    dot_attention,
    padding_mask,
    scaled_dot_product_attention,
    source_mask,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.float64: dict(atol=1e-10, rtol=1e-8)}


def _randn(shape, dtype, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _mask(draw, kind, full_shape, seed):
    """A mask of ``kind`` whose shape broadcasts to ``full_shape`` (some dims dropped or set to 1)."""
    keep_lead = draw(st.integers(0, len(full_shape) - 2))
    shape = [draw(st.sampled_from([1, n])) for n in full_shape[len(full_shape) - 2 - keep_lead:-2]]
    shape += [draw(st.sampled_from([1, full_shape[-2]])), full_shape[-1]]
    allowed = torch.rand(shape, generator=torch.Generator().manual_seed(seed)) > 0.4
    if kind == "bool":
        return allowed
    bias = _randn(shape, torch.float32, seed + 1)
    return bias.masked_fill(~allowed, float("-inf"))


@st.composite
def sdpa_case(draw):
    """Valid inputs to scaled_dot_product_attention, batch dimensions broadcasting included."""
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    t_q, t_k = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    d, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    # k and v may broadcast against q: a leading dim of 1, or fewer leading dims
    kv_batch = [draw(st.sampled_from([1, n])) for n in batch][draw(st.integers(0, len(batch))):]
    seed = draw(st.integers(0, 2**16))
    q = _randn((*batch, t_q, d), dtype, seed)
    k = _randn((*kv_batch, t_k, d), dtype, seed + 1)
    v = _randn((*kv_batch, t_k, d_v), dtype, seed + 2)
    kind = draw(st.sampled_from(["none", "bool", "additive"]))
    mask = None if kind == "none" else _mask(draw, kind, (*batch, t_q, t_k), seed + 3)
    if mask is not None and mask.is_floating_point():
        mask = mask.to(dtype)
    is_causal = draw(st.booleans()) and t_q <= t_k
    return q, k, v, mask, is_causal, (*batch, t_q, d_v)


@SETTINGS
@given(sdpa_case())
def test_valid_attention_succeeds_and_fused_equals_explicit(case):
    q, k, v, mask, is_causal, shape = case
    explicit, w = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal)
    fused, none = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal, fused=True)
    assert explicit.shape == shape
    assert none is None
    assert w.shape == (*shape[:-1], k.size(-2))
    assert torch.isfinite(explicit).all()
    torch.testing.assert_close(fused, explicit, **TOL[q.dtype])


# one corruption of a valid case each; the error class is part of the contract
def _kv_lengths_differ(q, k, v, m):
    return q, k, torch.cat((v, v[..., :1, :]), dim=-2), m


def _d_k_differs(q, k, v, m):
    return q, torch.cat((k, k[..., :1]), dim=-1), v, m


CORRUPTIONS = {
    "kv_lengths_differ": (_kv_lengths_differ, ShapeError),
    "d_k_differs": (_d_k_differs, ShapeError),
    "no_keys": (lambda q, k, v, m: (q, k[..., :0, :], v[..., :0, :], None), ShapeError),
    "q_one_dim": (lambda q, k, v, m: (q.reshape(-1), k, v, None), ShapeError),
    "mask_too_wide": (lambda q, k, v, m: (q, k, v, torch.ones(q.size(-2), k.size(-2) + 1, dtype=torch.bool)),
                      ShapeError),
    "mask_extra_dim": (lambda q, k, v, m: (q, k, v, torch.ones(2, *q.shape[:-1], k.size(-2), dtype=torch.bool)),
                       ShapeError),
    "integer_q": (lambda q, k, v, m: (q.long(), k, v, m), InvalidTypeError),
    "mixed_dtypes": (lambda q, k, v, m: (q, k.double() if k.dtype == torch.float32 else k.float(), v, m),
                     InvalidTypeError),
    "list_q": (lambda q, k, v, m: (q.tolist(), k, v, m), InvalidTypeError),
    "integer_mask": (lambda q, k, v, m: (q, k, v, torch.ones(q.size(-2), k.size(-2), dtype=torch.long)),
                     InvalidTypeError),
    "list_mask": (lambda q, k, v, m: (q, k, v, [[True] * k.size(-2)] * q.size(-2)), InvalidTypeError),
}


@SETTINGS
@given(sdpa_case(), st.sampled_from(sorted(CORRUPTIONS)), st.booleans())
def test_each_corruption_raises_its_seqlab_error(case, name, fused):
    q, k, v, mask, is_causal, _ = case
    corrupt, error = CORRUPTIONS[name]
    q, k, v, mask = corrupt(q, k, v, mask)
    with pytest.raises(error):
        scaled_dot_product_attention(q, k, v, mask, is_causal=False, fused=fused)


def test_batch_dims_that_do_not_broadcast_raise():
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(3, 3, 5, 8), torch.randn(3, 3, 5, 8)
    for fused in (False, True):
        with pytest.raises(ShapeError, match="do not broadcast"):
            scaled_dot_product_attention(q, k, v, fused=fused)


@st.composite
def loose_shapes(draw):
    """Shapes near a valid attention, each dim and dtype perturbed at random: invalid often, valid often."""
    def perturb(shape):
        return tuple(draw(st.integers(0, 3)) if draw(st.integers(0, 5)) == 0 else n for n in shape)

    def dtype(usual):
        if draw(st.integers(0, 5)):
            return usual
        return draw(st.sampled_from([torch.float64, torch.int64, torch.bool]))

    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    t_q, d_v = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    t_k, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    q = torch.ones(perturb((*batch, t_q, d)), dtype=dtype(torch.float32))
    k = torch.ones(perturb((*batch, t_k, d)), dtype=dtype(torch.float32))
    v = torch.ones(perturb((*batch, t_k, d_v)), dtype=dtype(torch.float32))
    mask = None
    if draw(st.booleans()):
        mask = torch.ones(perturb((*batch, t_q, t_k)), dtype=dtype(torch.bool))
    return q, k, v, mask, draw(st.booleans())


@SETTINGS
@given(loose_shapes(), st.booleans())
def test_any_shapes_give_attention_or_a_seqlab_error(case, fused):
    q, k, v, mask, is_causal = case
    try:
        out, _ = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal, fused=fused)
    except SeqlabError:
        return
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    assert out.shape == (*batch, q.size(-2), v.size(-1))
    assert torch.isfinite(out).all()
    other, _ = scaled_dot_product_attention(q, k, v, mask, is_causal=is_causal, fused=not fused)
    torch.testing.assert_close(out, other, **TOL[q.dtype])


def test_fused_kernel_no_longer_accepts_keys_and_values_of_different_lengths():
    # torch's fused kernel returns a tensor for this, attention over neither sequence
    q, k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 7, 4)
    for fused in (False, True):
        with pytest.raises(ShapeError, match="same number of positions"):
            scaled_dot_product_attention(q, k, v, fused=fused)


def test_additive_mask_of_another_float_dtype_works_in_both_paths():
    q, k, v = (torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    bias = torch.randn(3, 3, dtype=torch.float64)
    explicit, _ = scaled_dot_product_attention(q, k, v, bias)
    fused, _ = scaled_dot_product_attention(q, k, v, bias, fused=True)
    reference, _ = scaled_dot_product_attention(q, k, v, bias.float())
    assert explicit.dtype == torch.float32
    torch.testing.assert_close(explicit, reference)
    torch.testing.assert_close(fused, reference, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------- multi-head attention

@st.composite
def mha_case(draw):
    h, d_k = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    B, t_q = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    cross = draw(st.booleans())
    t_k = draw(st.integers(1, 5)) if cross else t_q
    seed = draw(st.integers(0, 2**16))
    torch.manual_seed(seed)
    mha = MultiHeadAttention(h * d_k, h, bias=draw(st.booleans()), rotary=d_k % 2 == 0 and draw(st.booleans())).eval()
    query = _randn((B, t_q, h * d_k), torch.float32, seed)
    memory = _randn((B, t_k, h * d_k), torch.float32, seed + 1) if cross else None
    kind = draw(st.sampled_from(["none", "bool", "additive"]))
    mask = None
    if kind != "none":
        mask = _mask(draw, kind, (B, h, t_q, t_k), seed + 2)
        if mask.dim() == 3 and mask.size(0) != B:
            mask = mask[0]  # a 3-D mask is read as (B, T_q, T_k)
    is_causal = draw(st.booleans()) and t_q <= t_k
    return mha, query, memory, mask, is_causal


@SETTINGS
@given(mha_case())
def test_valid_multihead_attention_succeeds_and_fused_equals_explicit(case):
    mha, query, memory, mask, is_causal = case
    with torch.no_grad():
        fused, _ = mha(query, memory, memory, mask=mask, is_causal=is_causal)
        explicit, w = mha(query, memory, memory, mask=mask, is_causal=is_causal, need_weights=True)
    t_k = query.size(1) if memory is None else memory.size(1)
    assert fused.shape == query.shape
    assert w.shape == (query.size(0), mha.num_heads, query.size(1), t_k)
    assert torch.isfinite(fused).all()
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=1e-4)


MHA_CORRUPTIONS = {
    "value_longer": (lambda q, m: dict(query=q, key=m, value=torch.cat((m, m[:, :1]), 1)), ShapeError),
    "batch_differs": (lambda q, m: dict(query=q, key=torch.cat((m, m)), value=torch.cat((m, m))), ShapeError),
    "wrong_d_model": (lambda q, m: dict(query=torch.cat((q, q[..., :1]), -1)), ShapeError),
    "query_2d": (lambda q, m: dict(query=q[0]), ShapeError),
    "integer_query": (lambda q, m: dict(query=q.long()), InvalidTypeError),
    "double_query": (lambda q, m: dict(query=q.double()), InvalidTypeError),
    "list_query": (lambda q, m: dict(query=q.tolist()), InvalidTypeError),
    "mask_wrong_keys": (lambda q, m: dict(query=q, key=m, value=m,
                                          mask=torch.ones(q.size(1), m.size(1) + 1, dtype=torch.bool)), ShapeError),
    "mask_wrong_batch": (lambda q, m: dict(query=q, key=m, value=m,
                                           mask=torch.ones(q.size(0) + 1, 1, 1, m.size(1), dtype=torch.bool)),
                         ShapeError),
    "list_mask": (lambda q, m: dict(query=q, mask=[[True]]), InvalidTypeError),
    "cache_wrong_type": (lambda q, m: dict(query=q, cache={}), InvalidTypeError),
}


@SETTINGS
@given(mha_case(), st.sampled_from(sorted(MHA_CORRUPTIONS)), st.booleans())
def test_each_multihead_corruption_raises_its_seqlab_error(case, name, need_weights):
    mha, query, memory, _, _ = case
    memory = query if memory is None else memory
    corrupt, error = MHA_CORRUPTIONS[name]
    kwargs = corrupt(query, memory)
    with pytest.raises(error):
        mha(kwargs.pop("query"), kwargs.pop("key", None), kwargs.pop("value", None), need_weights=need_weights,
            **kwargs)


MHA_LOOSE = MultiHeadAttention(4, 2).eval()


@st.composite
def loose_mha_inputs(draw):
    def perturb(shape):
        return tuple(draw(st.integers(0, 5)) if draw(st.integers(0, 5)) == 0 else n for n in shape)

    B, t_q, t_k = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**16))
    query = _randn(perturb((B, t_q, 4)), torch.float32, seed)
    key = _randn(perturb((B, t_k, 4)), torch.float32, seed + 1)
    value = _randn(perturb((B, t_k, 4)), torch.float32, seed + 2)
    mask = None
    if draw(st.booleans()):
        full = (B, 2, t_q, t_k)
        mask = torch.rand(perturb(full[draw(st.integers(0, 2)):])) > 0.3
    return query, key, value, mask


@SETTINGS
@given(loose_mha_inputs(), st.booleans())
def test_any_multihead_inputs_give_attention_or_a_seqlab_error(case, is_causal):
    query, key, value, mask = case
    with torch.no_grad():
        try:
            out, _ = MHA_LOOSE(query, key, value, mask=mask, is_causal=is_causal)
        except SeqlabError:
            return
        explicit, _ = MHA_LOOSE(query, key, value, mask=mask, is_causal=is_causal, need_weights=True)
    assert out.shape == query.shape
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, explicit, atol=1e-5, rtol=1e-4)


def test_default_fused_multihead_attention_rejects_values_of_another_length():
    mha = MultiHeadAttention(8, 2)
    assert mha.fused
    x, k, v = torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 6, 8)
    with pytest.raises(ShapeError, match="same length"):
        mha(x, k, v)


def test_a_three_dimensional_mask_is_reported_as_the_caller_gave_it():
    mha = MultiHeadAttention(8, 2)
    as_given = r"mask of shape \(2, 4, 3\) does not broadcast to \(B, T_q, T_k\) \(2, 3, 3\)"
    with pytest.raises(ShapeError, match=as_given):
        mha(torch.randn(2, 3, 8), mask=torch.ones(2, 4, 3, dtype=torch.bool))
    with pytest.raises(InvalidTypeError):
        causal_mask("3")


def test_a_cache_from_another_batch_is_refused_and_left_intact():
    mha = MultiHeadAttention(8, 2).eval()
    cache = KVCache()
    mha(torch.randn(2, 3, 8), cache=cache)
    with pytest.raises(ShapeError, match="another batch"):
        mha(torch.randn(3, 1, 8), cache=cache)
    assert cache.keys[0].shape == (2, 2, 3, 4)


# ---------------------------------------------------------------- language models

VOCAB, BLOCK = 11, 8
torch.manual_seed(0)
GPTS = {p: GPT(GPTConfig(VOCAB, block_size=BLOCK, num_layers=1, num_heads=2, d_model=8, positional=p)).eval()
        for p in ("learned", "sinusoidal", "rotary")}
LSTM = LSTMLanguageModel(LSTMConfig(VOCAB, d_model=6, hidden_size=8, num_layers=1)).eval()


def _explicit(model):
    """A copy of ``model`` with every attention on the explicit path."""
    model = copy.deepcopy(model)
    for block in model.blocks:
        block.self_attn.fused = False
    return model


EXPLICIT_GPTS = {p: _explicit(m) for p, m in GPTS.items()}


@st.composite
def token_case(draw):
    B, T = draw(st.integers(1, 3)), draw(st.integers(1, BLOCK))
    ids = draw(st.lists(st.integers(0, VOCAB - 1), min_size=B * T, max_size=B * T))
    dtype = draw(st.sampled_from([torch.int64, torch.int32, torch.uint8, torch.int16]))
    idx = torch.tensor(ids).view(B, T).to(dtype)
    targets = torch.tensor(ids).view(B, T).roll(-1, dims=1)
    ignored = draw(st.lists(st.booleans(), min_size=B * T, max_size=B * T))
    targets = targets.masked_fill(torch.tensor(ignored).view(B, T), -100)
    targets[0, 0] = ids[1 % len(ids)]  # at least one target counts, so the loss is a number
    return idx, targets


@SETTINGS
@given(token_case(), st.sampled_from(sorted(GPTS)))
def test_valid_gpt_forward_succeeds_and_fused_equals_explicit(case, positional):
    idx, targets = case
    model = GPTS[positional]
    with torch.no_grad():
        logits, loss = model(idx, targets)
        ref_logits, ref_loss = EXPLICIT_GPTS[positional](idx, targets)
    assert logits.shape == (*idx.shape, VOCAB)
    assert torch.isfinite(logits).all()
    assert torch.isfinite(loss)
    torch.testing.assert_close(logits, ref_logits, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(loss, ref_loss, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(logits, model(idx.long())[0])


@SETTINGS
@given(token_case())
def test_valid_lstm_forward_succeeds(case):
    idx, targets = case
    with torch.no_grad():
        logits, loss = LSTM(idx, targets)
        assert logits.shape == (*idx.shape, VOCAB)
        assert torch.isfinite(logits).all()
        assert torch.isfinite(loss)
        torch.testing.assert_close(logits, LSTM(idx.long())[0])


LM_CORRUPTIONS = {
    "id_too_large": (lambda i, t: (i.long().index_fill(1, torch.tensor([0]), VOCAB), None), InvalidParameterError),
    "negative_id": (lambda i, t: (i.long().index_fill(1, torch.tensor([0]), -1), None), InvalidParameterError),
    "float_ids": (lambda i, t: (i.float(), None), InvalidTypeError),
    "bool_ids": (lambda i, t: (i > 0, None), InvalidTypeError),
    "list_ids": (lambda i, t: (i.tolist(), None), InvalidTypeError),
    "one_dim": (lambda i, t: (i.reshape(-1), None), ShapeError),
    "three_dim": (lambda i, t: (i.unsqueeze(0), None), ShapeError),
    "empty": (lambda i, t: (i[:, :0], None), ShapeError),
    "targets_shape": (lambda i, t: (i, t[:, :-1] if t.size(1) > 1 else t.repeat(1, 2)), ShapeError),
    "targets_range": (lambda i, t: (i, t.clamp(min=0) + VOCAB), InvalidParameterError),
    "targets_float": (lambda i, t: (i, t.float()), InvalidTypeError),
}


@SETTINGS
@given(token_case(), st.sampled_from(sorted(LM_CORRUPTIONS)), st.sampled_from([*GPTS, "lstm"]))
def test_each_language_model_corruption_raises_its_seqlab_error(case, name, which):
    idx, targets = case
    corrupt, error = LM_CORRUPTIONS[name]
    idx, targets = corrupt(idx, targets)
    model = LSTM if which == "lstm" else GPTS[which]
    with pytest.raises(error):
        model(idx, targets)


@SETTINGS
@given(st.lists(st.lists(st.integers(-3, VOCAB + 2), min_size=1, max_size=BLOCK + 2), min_size=1, max_size=3),
       st.sampled_from(sorted(GPTS)))
def test_token_ids_give_logits_exactly_when_valid(rows, positional):
    width = min(map(len, rows))
    idx = torch.tensor([r[:width] for r in rows])
    valid = width <= BLOCK and 0 <= int(idx.min()) and int(idx.max()) < VOCAB
    if not valid:
        with pytest.raises(SeqlabError):
            GPTS[positional](idx)
        return
    logits, _ = GPTS[positional](idx)
    assert logits.shape == (*idx.shape, VOCAB)
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("positional", sorted(GPTS))
def test_gpt_longer_than_block_size_raises(positional):
    with pytest.raises(InvalidParameterError, match="block_size"):
        GPTS[positional](torch.zeros(1, BLOCK + 1, dtype=torch.long))


def test_gpt_cache_of_another_batch_and_of_the_wrong_type_raise():
    model = GPTS["learned"]
    cache = model.new_cache()
    model(torch.zeros(2, 2, dtype=torch.long), cache=cache)
    with pytest.raises(ShapeError):
        model(torch.zeros(3, 1, dtype=torch.long), cache=cache)
    with pytest.raises(InvalidTypeError):
        model(torch.zeros(1, 1, dtype=torch.long), cache=LSTM.new_cache())


def test_lstm_state_of_another_batch_raises():
    state = LSTM.new_cache()
    LSTM(torch.zeros(2, 2, dtype=torch.long), cache=state)
    with pytest.raises(ShapeError, match="batch"):
        LSTM(torch.zeros(3, 1, dtype=torch.long), cache=state)


# ---------------------------------------------------------------- positions, small attention, seq2seq

def test_positional_encodings_reject_bad_inputs():
    pos = LearnedPositionalEncoding(4, max_len=5)
    assert pos(torch.zeros(2, 5, 4)).shape == (2, 5, 4)
    with pytest.raises(InvalidParameterError, match="max_len"):
        pos(torch.zeros(2, 6, 4))
    with pytest.raises(InvalidParameterError, match="max_len"):
        pos(torch.zeros(2, 3, 4), offset=3)
    with pytest.raises(ShapeError):
        pos(torch.zeros(2, 3, 5))
    with pytest.raises(InvalidParameterError):
        pos(torch.zeros(2, 3, 4), offset=-1)
    with pytest.raises(InvalidTypeError):
        pos(torch.zeros(2, 3, 4, dtype=torch.long))
    rope = RotaryEmbedding(4)
    with pytest.raises(ShapeError):
        rope(torch.zeros(1, 3, 6))
    with pytest.raises(InvalidTypeError):
        rope(torch.zeros(1, 3, 4), offset=1.5)


def test_small_attention_functions_reject_bad_shapes():
    s, H = torch.randn(2, 4), torch.randn(2, 5, 4)
    assert dot_attention(s, H)[0].shape == (2, 4)
    with pytest.raises(ShapeError):
        dot_attention(torch.randn(3, 4), H)
    with pytest.raises(ShapeError):
        dot_attention(torch.randn(2, 3), H)
    add = AdditiveAttention(4, 4, 6)
    assert add(s, H)[0].shape == (2, 4)
    with pytest.raises(ShapeError):
        add(s, torch.randn(2, 5, 3))
    with pytest.raises(InvalidTypeError):
        add(s.long(), H)
    with pytest.raises(InvalidTypeError):
        padding_mask("three", 4)
    with pytest.raises(ShapeError):
        padding_mask(torch.tensor([[1, 2]]), 4)


@pytest.fixture(scope="module")
def seq2seq_models():
    torch.manual_seed(0)
    return {"gru": Seq2Seq(VOCAB, 6, 8, attention="general").eval(),
            "transformer": Seq2SeqTransformer(VOCAB, d_model=8, num_heads=2, d_ff=16, max_len=10).eval()}


SEQ2SEQ_CORRUPTIONS = {
    "src_one_dim": (lambda s, t: (s[0], t), ShapeError),
    "batch_differs": (lambda s, t: (s, t[:1]), ShapeError),
    "float_src": (lambda s, t: (s.float(), t), InvalidTypeError),
    "tgt_out_of_vocab": (lambda s, t: (s, t + VOCAB), InvalidParameterError),
    "negative_src": (lambda s, t: (s - VOCAB, t), InvalidParameterError),
    "list_tgt": (lambda s, t: (s, t.tolist()), InvalidTypeError),
}


@pytest.mark.parametrize("which", ["gru", "transformer"])
@pytest.mark.parametrize("name", sorted(SEQ2SEQ_CORRUPTIONS))
def test_seq2seq_models_reject_bad_inputs(seq2seq_models, which, name):
    model = seq2seq_models[which]
    src, tgt = torch.tensor([[3, 4, 5, 0], [6, 7, 0, 0]]), torch.tensor([[5, 4, 3], [7, 6, 2]])
    with torch.no_grad():
        logits, _ = model(src, tgt)
        free, _ = model.greedy_decode(src, 3)
    assert logits.shape == (2, 3, VOCAB)
    assert free.shape == (2, 3)
    corrupt, error = SEQ2SEQ_CORRUPTIONS[name]
    with pytest.raises(error):
        model(*corrupt(src, tgt))


@pytest.mark.parametrize("which", ["gru", "transformer"])
def test_greedy_decode_rejects_a_bad_length(seq2seq_models, which):
    with pytest.raises(InvalidParameterError, match="length"):
        seq2seq_models[which].greedy_decode(torch.tensor([[3, 4]]), 0)


def test_source_lengths_must_match_the_batch(seq2seq_models):
    src, tgt = torch.tensor([[3, 4, 5], [6, 7, 8]]), torch.tensor([[5, 4], [7, 6]])
    with pytest.raises(ShapeError, match="one length per source"):
        seq2seq_models["transformer"](src, tgt, torch.tensor([3, 2, 1]))
    assert source_mask(src, lengths=[3, 1]).shape == (2, 1, 1, 3)
    with pytest.raises(InvalidParameterError, match="max_len"):
        seq2seq_models["transformer"](torch.full((1, 11), 3), tgt[:1])


@pytest.mark.parametrize("fused", [False, True])
def test_a_batch_with_an_empty_axis_broadcasts_to_an_empty_result(fused):
    """q (1, 0, 1), k (0, 1, 1), v (1, 1, 0): the batch broadcasts to (0,), so the output is (0, 0, 0) on both paths."""
    out, _ = scaled_dot_product_attention(torch.ones(1, 0, 1), torch.ones(0, 1, 1), torch.ones(1, 1, 0), fused=fused)
    assert out.shape == (0, 0, 0)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("q_shape, k_shape, v_shape, expected", [
    ((1, 0, 1), (1, 1, 1), (2, 1, 0), (2, 0, 0)),  # no queries and d_v = 0: the batch still broadcasts to 2
    ((1, 3, 2), (2, 1, 2), (1, 1, 0), (2, 3, 0)),  # d_v = 0 only
    ((1, 0, 2), (3, 2, 2), (1, 2, 4), (3, 0, 4)),  # no queries only
])
def test_an_empty_result_still_broadcasts_its_batch(q_shape, k_shape, v_shape, expected, fused):
    # torch's fused kernel returned batch 1 here; found by the property test above
    q, k, v = torch.ones(q_shape), torch.ones(k_shape), torch.ones(v_shape)
    out, _ = scaled_dot_product_attention(q, k, v, fused=fused)
    assert out.shape == expected
