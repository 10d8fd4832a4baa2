import copy

import pytest
import torch

from seqlab.nn import GPT, GPTConfig
from seqlab.text.optim import Muon, newton_schulz, split_muon_params
from seqlab.text.training import TrainConfig, make_optimizer


def exact_orth(g):
    u, _, vh = torch.linalg.svd(g, full_matrices=False)
    return u @ vh


@pytest.mark.parametrize("shape", [(32, 64), (64, 32), (48, 48)])
def test_newton_schulz_approximates_the_polar_factor(shape):
    g = torch.randn(*shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    o = newton_schulz(g)
    assert o.shape == g.shape
    cos = (o * exact_orth(g)).sum() / (o.norm() * exact_orth(g).norm())
    assert cos > 0.95
    # the iteration drives the singular values into a band around 1 (it is not meant to hit 1 exactly)
    sv = torch.linalg.svdvals(o)
    assert sv.max() < 1.3 and torch.quantile(sv, 0.1) > 0.5


def test_newton_schulz_of_a_transpose_is_the_transpose():
    g = torch.randn(20, 50, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    torch.testing.assert_close(newton_schulz(g.T), newton_schulz(g).T)


def test_newton_schulz_rejects_vectors():
    with pytest.raises(ValueError, match="matrix"):
        newton_schulz(torch.ones(5))


def test_adamw_groups_match_torch_adamw():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    ref = copy.deepcopy(net)
    ours = Muon([{"params": net.parameters(), "muon": False, "lr": 1e-2, "weight_decay": 0.1}])
    theirs = torch.optim.AdamW(ref.parameters(), lr=1e-2, betas=(0.9, 0.99), weight_decay=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 3)
    for _ in range(5):
        for model, opt in ((net, ours), (ref, theirs)):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    for a, b in zip(net.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_muon_step_is_the_scaled_polar_factor_of_the_nesterov_momentum():
    w = torch.nn.Parameter(torch.randn(8, 4, dtype=torch.float64))
    start = w.detach().clone()
    opt = Muon([w], lr=0.1, momentum=0.5)
    w.grad = torch.randn(8, 4, dtype=torch.float64)
    opt.step()
    # first step: buffer = g, Nesterov direction = g + 0.5 g; tall matrix scaled by sqrt(8 / 4)
    want = start - 0.1 * 2 ** 0.5 * newton_schulz(1.5 * w.grad)
    torch.testing.assert_close(w.detach(), want)


@pytest.mark.parametrize("kwargs,msg", [(dict(lr=0), "lr"), (dict(momentum=1.0), "momentum"),
                                        (dict(ns_steps=0), "ns_steps")])
def test_bad_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        Muon([torch.nn.Parameter(torch.ones(2, 2))], **kwargs)


def test_vectors_must_not_be_in_a_muon_group():
    with pytest.raises(ValueError, match="matrices only"):
        Muon([torch.nn.Parameter(torch.ones(3))])


def test_split_keeps_embeddings_and_the_tied_head_out_of_muon():
    m = GPT(GPTConfig(vocab_size=11, block_size=8, num_layers=2, num_heads=2, d_model=16))
    hidden, rest = split_muon_params(m)
    assert all(p.dim() == 2 for p in hidden)
    assert not any(p is m.tok_emb.weight or p is m.lm_head.weight for p in hidden)
    assert len({id(p) for p in hidden + rest}) == len(hidden) + len(rest) == len(list(m.parameters()))
    opt = make_optimizer(m, TrainConfig(optimizer="muon"))
    assert [g["muon"] for g in opt.param_groups] == [True, False, False]
    assert opt.param_groups[0]["base_lr"] == 0.02


def test_split_keeps_the_lstm_head_out_of_muon():
    from seqlab.nn import LSTMConfig, LSTMLanguageModel

    m = LSTMLanguageModel(LSTMConfig(vocab_size=11, d_model=8, hidden_size=16, num_layers=2, block_size=8))
    hidden, rest = split_muon_params(m)
    assert any(p is m.head.weight for p in rest) and any(p is m.embedding.weight for p in rest)
    assert {id(p) for p in hidden} == {id(p) for n, p in m.lstm.named_parameters() if n.startswith("weight")}


def test_unknown_optimizer_is_rejected():
    with pytest.raises(ValueError, match="optimizer"):
        TrainConfig(optimizer="sgd")
