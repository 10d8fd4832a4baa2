import copy

import pytest
import torch

from seqlab.nn import GPT, GPTConfig
from seqlab import devices
from seqlab.text.optim import Muon, MuonWithAdamW, newton_schulz, split_muon_params
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


@pytest.mark.parametrize("shape", [(3, 20, 50), (2, 2, 30, 12)])
def test_newton_schulz_of_a_batch_is_each_matrix_on_its_own(shape):
    g = torch.randn(*shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    each = torch.stack([newton_schulz(m) for m in g.reshape(-1, *shape[-2:])]).reshape(shape)
    torch.testing.assert_close(newton_schulz(g), each)


def test_muon_steps_matrices_of_one_shape_as_if_each_had_its_own_optimizer():
    gen = torch.Generator().manual_seed(7)
    shapes = [(6, 4), (6, 4), (4, 6), (6, 4)]  # three of one shape are batched together, one alone
    together = [torch.nn.Parameter(torch.randn(*s, generator=gen, dtype=torch.float64)) for s in shapes]
    alone = [torch.nn.Parameter(p.detach().clone()) for p in together]
    opt = Muon(together, lr=0.05, momentum=0.9, weight_decay=0.1)
    opts = [Muon([p], lr=0.05, momentum=0.9, weight_decay=0.1) for p in alone]
    for _ in range(3):
        for a, b in zip(together, alone):
            a.grad = torch.randn(a.shape, generator=gen, dtype=torch.float64)
            b.grad = a.grad.clone()
        opt.step()
        for o in opts:
            o.step()
    for a, b in zip(together, alone):
        torch.testing.assert_close(a.detach(), b.detach())


def test_newton_schulz_rejects_vectors():
    with pytest.raises(ValueError, match="matrix"):
        newton_schulz(torch.ones(5))


def test_muon_step_matches_torch_muon():
    """Same update as torch.optim.Muon; torch's Newton-Schulz runs in bfloat16, hence the tolerance."""
    g = torch.Generator().manual_seed(3)
    ours_w = torch.nn.Parameter(torch.randn(24, 12, generator=g))
    ref_w = torch.nn.Parameter(ours_w.detach().clone())
    ours = Muon([ours_w], lr=0.05, momentum=0.9, weight_decay=0.1)
    ref = torch.optim.Muon([ref_w], lr=0.05, momentum=0.9, weight_decay=0.1)
    for _ in range(4):
        grad = torch.randn(24, 12, generator=g)
        ours_w.grad, ref_w.grad = grad.clone(), grad.clone()
        ours.step()
        ref.step()
    moved = (ours_w.detach() - ref_w.detach()).abs().max()
    step_size = 0.05 * 2 ** 0.5  # each step moves a weight by about lr * scale * (singular values ~ 1) / sqrt(n)
    assert moved < 0.03 * step_size
    torch.testing.assert_close(ours.state[ours_w]["momentum_buffer"], ref.state[ref_w]["momentum_buffer"])


def test_newton_schulz_matches_torch_in_float32_range():
    from torch.optim._muon import _zeropower_via_newtonschulz

    x = torch.randn(40, 16, generator=torch.Generator().manual_seed(4))
    theirs = _zeropower_via_newtonschulz(x, (3.4445, -4.775, 2.0315), 5, 1e-7).float()
    ours = newton_schulz(x)
    assert (ours - theirs).norm() / theirs.norm() < 0.02  # bfloat16 keeps ~3 significant digits


def test_muon_with_adamw_uses_torch_adamw_for_the_rest():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 8, bias=True), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    ref = copy.deepcopy(net)
    hidden = [net[0].weight]
    rest = [net[0].bias, net[2].weight, net[2].bias]
    ours = MuonWithAdamW([{"params": hidden}], [{"params": rest, "lr": 1e-2, "weight_decay": 0.1}])
    theirs = torch.optim.AdamW([ref[0].bias, ref[2].weight, ref[2].bias], lr=1e-2, weight_decay=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 3)
    for _ in range(5):
        for model, opt in ((net, ours), (ref, theirs)):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        ref[0].weight.data.copy_(net[0].weight.data)  # Muon's part is checked above
    for a, b in zip(net.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b)


def test_muon_with_adamw_state_round_trips():
    m = GPT(GPTConfig(vocab_size=11, block_size=8, num_layers=1, num_heads=2, d_model=16))
    opt = make_optimizer(m, TrainConfig(optimizer="muon"))
    x = torch.randint(0, 11, (2, 8))
    m(x, x)[1].backward()
    opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == list(range(len(list(m.parameters()))))
    again = make_optimizer(m, TrainConfig(optimizer="muon"))
    again.load_state_dict(sd)
    for (i, a), (j, b) in zip(sorted(sd["state"].items()), sorted(again.state_dict()["state"].items())):
        assert i == j and a.keys() == b.keys()
        for k in a:
            torch.testing.assert_close(torch.as_tensor(a[k]), torch.as_tensor(b[k]))
    with pytest.raises(ValueError, match="groups"):
        again.load_state_dict(make_optimizer(m, TrainConfig(optimizer="adamw")).state_dict())


def test_muon_step_is_the_scaled_polar_factor_of_the_nesterov_momentum():
    w = torch.nn.Parameter(torch.randn(8, 4, dtype=torch.float64))
    start = w.detach().clone()
    opt = Muon([w], lr=0.1, momentum=0.5)
    w.grad = torch.randn(8, 4, dtype=torch.float64)
    opt.step()
    # first step: buffer = 0.5 g, Nesterov direction = 0.5 g + 0.5 * 0.5 g; tall matrix scaled by sqrt(8 / 4)
    want = start - 0.1 * 2 ** 0.5 * newton_schulz(0.75 * w.grad)
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
    assert isinstance(opt.adamw, torch.optim.AdamW)
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


def test_muon_with_bfloat16_newton_schulz_steps_by_the_bfloat16_polar_factor():
    w = torch.nn.Parameter(torch.randn(8, 4, generator=torch.Generator().manual_seed(5)))
    start = w.detach().clone()
    opt = Muon([w], lr=0.1, momentum=0.5, ns_dtype=torch.bfloat16)
    w.grad = torch.randn(8, 4, generator=torch.Generator().manual_seed(6))
    opt.step()
    assert w.dtype == torch.float32  # the direction is cast back to the parameter's dtype
    # as in float32 (test above), with the iteration run on the bfloat16 look-ahead
    want = start - 0.1 * 2 ** 0.5 * newton_schulz((0.75 * w.grad).bfloat16()).float()
    torch.testing.assert_close(w.detach(), want)
    # and near the float32 step: bfloat16 keeps ~3 significant digits, and five iterations compound the rounding
    full = newton_schulz(0.75 * w.grad)
    assert (start - w.detach() - 0.1 * 2 ** 0.5 * full).norm() / (0.1 * 2 ** 0.5 * full.norm()) < 0.05


def test_a_forced_newton_schulz_dtype_is_used_and_kept_out_of_the_state():
    model = GPT(GPTConfig(vocab_size=11, block_size=8, num_layers=1, num_heads=2, d_model=16))
    for setting, want in (("float32", None), ("bfloat16", torch.bfloat16)):
        opt = make_optimizer(model, TrainConfig(optimizer="muon", muon_ns_dtype=setting))
        assert opt.muon.ns_dtype is want
        assert all("ns_dtype" not in g for g in opt.state_dict()["param_groups"])


@pytest.fixture
def capability(monkeypatch):
    """Set what the CPU reports: its flags (None: no /proc/cpuinfo) and, for the probe, the seconds of a product."""
    def set_(flags, seconds=None):
        devices.native_bfloat16.cache_clear()
        monkeypatch.setattr(devices, "_cpu_flags", lambda: flags)
        if seconds is not None:
            monkeypatch.setattr(devices, "_probe_seconds", lambda dtype: seconds[dtype])
    yield set_
    devices.native_bfloat16.cache_clear()


@pytest.mark.parametrize("flags, seconds, native", [
    ({"avx2", "avx512f", "avx512_bf16"}, None, True),
    ({"amx_bf16", "sse4_2"}, None, True),
    ({"fp", "asimd", "bf16"}, None, True),  # an Arm CPU with the BF16 extension
    ({"avx2", "avx512f"}, None, False),
    (None, {torch.bfloat16: 1.2e-3, torch.float32: 1.0e-3}, True),  # no flags to read: the probe decides
    (None, {torch.bfloat16: 5.3e-3, torch.float32: 1.0e-3}, False),
])
def test_the_cpu_capability_picks_the_newton_schulz_dtype(capability, flags, seconds, native):
    capability(flags, seconds)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, num_layers=1, num_heads=2, d_model=16))
    opt = make_optimizer(model, TrainConfig(optimizer="muon", dtype="bfloat16"))  # muon_ns_dtype="auto" by default
    assert opt.muon.ns_dtype is (torch.bfloat16 if native else None)
    # a float32 run stays float32 whatever the hardware
    assert make_optimizer(model, TrainConfig(optimizer="muon")).muon.ns_dtype is None
    assert devices.muon_ns_dtype("auto", torch.device("cpu"), "float32") == (None, "float32, as the run is")
    dtype, why = devices.muon_ns_dtype("auto", torch.device("cpu"))
    assert why.startswith("bfloat16 (" if native else "float32 (")
    assert ("probe" in why) == (flags is None)
    # a forced setting wins over the capability
    assert devices.muon_ns_dtype("float32", torch.device("cpu"))[0] is None
    assert devices.muon_ns_dtype("bfloat16", torch.device("cpu"))[0] is torch.bfloat16


def test_the_capability_is_checked_once(capability, monkeypatch):
    calls = []
    capability({"avx512_bf16"})
    monkeypatch.setattr(devices, "_cpu_flags", lambda: calls.append(1) or {"avx512_bf16"})
    for _ in range(3):
        devices.muon_ns_dtype("auto", torch.device("cpu"))
    assert len(calls) == 1


def test_both_branches_take_torch_muons_step():
    """float32 and bfloat16 Newton-Schulz give one update: each within bfloat16's rounding of torch.optim.Muon's."""
    g = torch.Generator().manual_seed(5)
    start = torch.randn(32, 16, generator=g)
    grads = [torch.randn(32, 16, generator=g) for _ in range(3)]
    ref_w = torch.nn.Parameter(start.clone())
    ref = torch.optim.Muon([ref_w], lr=0.05, momentum=0.9, weight_decay=0.1)
    for grad in grads:
        ref_w.grad = grad.clone()
        ref.step()
    for ns in (None, torch.bfloat16):
        w = torch.nn.Parameter(start.clone())
        opt = Muon([w], lr=0.05, momentum=0.9, weight_decay=0.1, ns_dtype=ns)
        for grad in grads:
            w.grad = grad.clone()
            opt.step()
        moved = (ref_w.detach() - start).norm()
        assert (w.detach() - ref_w.detach()).norm() < 0.03 * moved


@pytest.mark.parametrize("bad", ["fp16", "", None, "AUTO"])
def test_muon_ns_dtype_setting_is_checked(bad):
    with pytest.raises(ValueError, match="muon_ns_dtype"):
        TrainConfig(muon_ns_dtype=bad)
    with pytest.raises(ValueError, match="muon_ns_dtype"):
        devices.muon_ns_dtype(bad, torch.device("cpu"))


@pytest.mark.parametrize("bad", [torch.int32, "bfloat16", torch.bool])
def test_ns_dtype_must_be_a_floating_torch_dtype(bad):
    with pytest.raises(ValueError, match="ns_dtype"):
        Muon([torch.nn.Parameter(torch.ones(2, 2))], ns_dtype=bad)
