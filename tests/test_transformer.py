import dataclasses

import pytest
import torch
import torch.nn as nn

from seqlab.analysis.params import count_parameters, decoder_layer_parameters, encoder_layer_parameters
from seqlab.nn import GPT, DecoderLayer, EncoderLayer, GPTConfig, KVCache


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu", "relu2"])
def test_encoder_layer_equals_torch(norm_first, activation):
    torch.manual_seed(0)
    ours = EncoderLayer(32, 4, 64, norm_first=norm_first, activation=activation).eval()
    ref = ours.to_torch().eval()
    assert isinstance(ref, nn.TransformerEncoderLayer) and ref is not ours
    x = torch.randn(3, 7, 32)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), atol=1e-5, rtol=1e-5)
        causal = ref(x, src_mask=nn.Transformer.generate_square_subsequent_mask(7), is_causal=True)
        torch.testing.assert_close(ours(x, is_causal=True), causal, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("d,d_ff", [(32, 128), (64, 256)])
def test_layer_parameter_formulas(d, d_ff):
    assert count_parameters(EncoderLayer(d, 4, d_ff)) == encoder_layer_parameters(d, d_ff)
    assert count_parameters(DecoderLayer(d, 4, d_ff)) == decoder_layer_parameters(d, d_ff)


def test_decoder_layer_is_causal():
    torch.manual_seed(1)
    dec = DecoderLayer(16, 2, 32).eval()
    tgt, mem = torch.randn(1, 6, 16), torch.randn(1, 4, 16)
    with torch.no_grad():
        a = dec(tgt, mem)
        tgt2 = tgt.clone()
        tgt2[:, 3:] = torch.randn(1, 3, 16)
        b = dec(tgt2, mem)
    torch.testing.assert_close(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3:], b[:, 3:])


@pytest.mark.parametrize("positional", ["learned", "sinusoidal", "rotary"])
def test_gpt_cache_equals_full_forward(positional):
    torch.manual_seed(2)
    model = GPT(GPTConfig(vocab_size=11, block_size=16, num_layers=2, num_heads=2, d_model=16, positional=positional)).eval()
    idx = torch.randint(0, 11, (2, 12))
    with torch.no_grad():
        full, _ = model(idx)
        cache = KVCache()
        parts = [model(idx[:, :5], cache=cache)[0]] + [model(idx[:, t : t + 1], cache=cache)[0] for t in range(5, 12)]
    torch.testing.assert_close(torch.cat(parts, 1), full, atol=1e-5, rtol=1e-5)


def test_gpt_loss_and_limits():
    torch.manual_seed(3)
    model = GPT(GPTConfig(vocab_size=7, block_size=8, num_layers=1, num_heads=1, d_model=8))
    idx = torch.randint(0, 7, (2, 8))
    logits, loss = model(idx, idx)
    assert logits.shape == (2, 8, 7)
    assert abs(loss.item() - torch.log(torch.tensor(7.0)).item()) < 0.2  # near uniform at initialization
    assert model.lm_head.weight is model.tok_emb.weight
    with pytest.raises(ValueError):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError):
        GPTConfig(vocab_size=5, positional="alibi")


def test_dropout_acts_in_training_and_is_skipped_in_eval():
    """The decoding speed-up skips dropout's module call in eval; training must still drop."""
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=11, block_size=8, num_layers=2, num_heads=2, d_model=16, dropout=0.5)
    model, idx = GPT(cfg), torch.randint(0, 11, (2, 8))
    a, _ = model(idx)
    b, _ = model(idx)
    assert not torch.allclose(a, b)  # two training passes draw two masks
    plain = GPT(dataclasses.replace(cfg, dropout=0.0))
    plain.load_state_dict(model.state_dict())
    model.eval(), plain.eval()
    assert torch.equal(model(idx)[0], plain(idx)[0])


def test_decoder_layer_drops_in_training_only():
    torch.manual_seed(0)
    layer, x, memory = DecoderLayer(16, 2, 32, dropout=0.5), torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    assert not torch.allclose(layer(x, memory), layer(x, memory))
    layer.eval()
    assert torch.equal(layer(x, memory), layer(x, memory))
