"""The recurrence page's own cells (the gradient product of eq-bptt, norm clipping, the additive score, the
positions after a first mistake), compiled from the page and held equal to what the rest of the chapter uses."""
import numpy as np
import pytest
import torch
from conftest import page_functions

from seqlab.analysis.gradients import grad_by_lag


@pytest.fixture(scope="module")
def page_code():
    return page_functions("recurrence", ("draw", "forward_states", "carried_back", "clip_by_norm"),
                          {"torch": torch, "np": np, "D_BPTT": 32, "T_BPTT": 60, "BPTT_SEED": 21})


def _draw(rho, T, d, seed):
    """grad_by_lag's draw order: W, W_x, then the inputs."""
    torch.manual_seed(seed)
    W = torch.randn(d, d)
    W = W / torch.linalg.eigvals(W.double()).abs().max().item() * rho
    Wx = torch.randn(d, 4) * 0.1
    return W, Wx, [torch.randn(4) for _ in range(T)]


@pytest.mark.parametrize("rho, T, d, seed", [(0.95, 60, 32, 21), (0.5, 5, 3, 0), (1.15, 30, 8, 4), (0.7, 1, 1, 2)])
def test_carried_back_equals_grad_by_lag(page_code, rho, T, d, seed):
    W, Wx, xs = page_code["draw"](rho, d=d, T=T, seed=seed)
    mine = page_code["carried_back"](W, page_code["forward_states"](W, Wx, xs))
    lib = grad_by_lag(rho=rho, T=T, d=d, seed=seed)[::-1]
    assert mine.shape == lib.shape == (T,)
    np.testing.assert_allclose(mine, lib, rtol=1e-4, atol=1e-30)


def test_the_page_draws_as_grad_by_lag_does(page_code):
    for a, b in zip(page_code["draw"](0.95, d=8, T=5, seed=3), _draw(0.95, 5, 8, 3)):
        assert all(torch.equal(x, y) for x, y in zip(a, b)) if isinstance(a, list) else torch.equal(a, b)


def test_carried_back_by_hand(page_code):
    """One step, one unit: h_1 = tanh(w·0 + 0) = 0, so dL/dh_0 = (1 - 0²) w = w."""
    W = torch.tensor([[0.5]])
    H = page_code["forward_states"](W, torch.zeros(1, 4), [torch.zeros(4)])
    assert H.shape == (1, 1) and page_code["carried_back"](W, H).tolist() == [0.5]


@pytest.mark.parametrize("scale, c", [(1e4, 1.0), (1e-3, 1.0), (2.0, 0.5), (0.0, 1.0)])
def test_clip_by_norm_equals_torch(page_code, scale, c):
    g = torch.Generator().manual_seed(1)
    params = [torch.randn(5, 3, generator=g, requires_grad=True), torch.randn(7, generator=g, requires_grad=True)]
    grads = [torch.randn(p.shape, generator=g) * scale for p in params]
    kept = [x.clone() for x in grads]
    mine = page_code["clip_by_norm"](grads, c)
    for p, x in zip(params, grads):
        p.grad = x.clone()
    torch.nn.utils.clip_grad_norm_(params, max_norm=c)
    for m, p, x, k in zip(mine, params, grads, kept):
        torch.testing.assert_close(m, p.grad, rtol=1e-5, atol=1e-12)
        assert torch.equal(x, k)  # the caller's tensors are left alone
    total = torch.cat([m.flatten() for m in mine]).norm().item()
    assert total <= c * (1 + 1e-6)


@pytest.mark.parametrize("B, T, d_s, d_h, a", [(2, 10, 16, 16, 16), (1, 1, 3, 5, 2), (4, 7, 8, 6, 12)])
def test_additive_attention_equals_the_library(B, T, d_s, d_h, a):
    """eq-scores' additive score with eq-alignment around it, written out on the page: AdditiveAttention's output."""
    from seqlab.nn.attention import AdditiveAttention

    ns = page_functions("recurrence", ("additive_attention",), {"torch": torch})
    torch.manual_seed(B * 100 + T)
    layer = AdditiveAttention(d_s, d_h, a)
    s, H = torch.randn(B, d_s), torch.randn(B, T, d_h)
    with torch.no_grad():
        context, alpha = ns["additive_attention"](s, H, layer.W_s.weight, layer.W_h.weight, layer.v.weight[0])
        lib_context, lib_alpha = layer(s, H)
    torch.testing.assert_close(alpha, lib_alpha, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(context, lib_context, rtol=1e-5, atol=1e-6)
    assert alpha.shape == (B, T) and torch.allclose(alpha.sum(-1), torch.ones(B))


def test_tanh_slopes_follow_grad_by_lag_draws(page_code):
    """s14_46_1.tanh_slopes runs the states of grad_by_lag's recurrence, as the page's forward_states does."""
    from seqlab.chapter import s14_46_1

    W, Wx, xs = _draw(1.15, 60, 32, 21)
    H = page_code["forward_states"](W, Wx, xs)
    row = s14_46_1.tanh_slopes(rhos=(1.15,)).iloc[0]
    assert row.mean_slope == pytest.approx(float((1 - H ** 2).mean()), rel=1e-6)
    assert row.largest_state == pytest.approx(float(H.abs().max()), rel=1e-6)
    assert row.rho_times_slope == pytest.approx(1.15 * row.mean_slope)


@pytest.mark.parametrize("seed, vocab", [(0, 3), (1, 8), (2, 2)])
def test_page_after_mistake_equals_the_library(seed, vocab):
    """§14.48's written-out cell scores the same positions as ``after_first_error``, the one the sweep uses."""
    from seqlab.tasks.seq2seq import after_first_error

    ns = page_functions("recurrence", ("after_mistake",), {"torch": torch, "np": np})
    gen = torch.Generator().manual_seed(seed)
    Y = torch.randint(1, vocab + 1, (50, 9), generator=gen)
    free = torch.where(torch.rand(50, 9, generator=gen) < 0.3, torch.randint(1, vocab + 1, (50, 9), generator=gen), Y)
    forced = torch.where(torch.rand(50, 9, generator=gen) < 0.1, torch.randint(1, vocab + 1, (50, 9), generator=gen), Y)
    lib = after_first_error(free, forced, Y)
    assert ns["after_mistake"](free, forced, Y) == (lib["free_running"], lib["teacher_forced"])
