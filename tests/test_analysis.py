import numpy as np
import pytest
import torch
import torch.nn as nn

from seqlab.analysis.complexity import attention_flops, crossover, peak_cpu_memory, recurrent_flops
from seqlab.analysis.gradients import grad_by_lag, input_gradient_reach
from seqlab.analysis.params import count_parameters, recurrent_parameters
from seqlab.analysis.softmax import attention_entropy, attention_saturation, logit_spread


@pytest.mark.parametrize("cell,module", [("rnn", nn.RNN), ("gru", nn.GRU), ("lstm", nn.LSTM)])
@pytest.mark.parametrize("d_h,d_in", [(128, 64), (16, 4), (7, 3)])
def test_recurrent_formula_equals_pytorch_count(cell, module, d_h, d_in):
    assert recurrent_parameters(cell, d_h, d_in) == count_parameters(module(d_in, d_h))


def test_grad_by_lag_vanishes_geometrically_below_radius_one():
    g = grad_by_lag(0.7)
    slope = np.polyfit(np.arange(60), np.log(g), 1)[0]  # log-gradient grows toward the loss
    assert 0.2 < slope < 1.0
    assert g[0] < 1e-9 < g[-1]


def test_grad_by_lag_is_deterministic_and_validates():
    np.testing.assert_array_equal(grad_by_lag(0.95, seed=5), grad_by_lag(0.95, seed=5))
    with pytest.raises(ValueError):
        grad_by_lag(-1)


def test_forget_bias_only_for_lstm():
    with pytest.raises(ValueError):
        input_gradient_reach("gru", forget_bias=1.0)
    with pytest.raises(ValueError):
        input_gradient_reach("transformer")


def test_softmax_sum_gradient_is_rounding_only():
    m = attention_saturation(64, scaled=False)
    # sum(alpha) is the constant T: its gradient is float noise, far below the valid probe's
    assert m["gradient_norm"] < 1e-4 < m["logit_gradient_norm"]


def test_logit_spread_tracks_sqrt_dk():
    g = torch.Generator().manual_seed(0)
    for d in (8, 128):
        assert abs(logit_spread(d, n=20000, generator=g) / np.sqrt(d) - 1) < 0.05
        assert abs(logit_spread(d, n=20000, scaled=True, generator=g) - 1) < 0.05


def test_entropy_hand_worked():
    w = torch.tensor([[0.5, 0.5], [1.0, 0.0]])
    assert abs(attention_entropy(w).item() - np.log(2) / 2) < 1e-6


def test_flop_formulas_and_crossover():
    d = 64
    assert attention_flops(2 * d, d) == 16 * (2 * d) * d * d == recurrent_flops(2 * d, d, "lstm")
    assert recurrent_flops(10, 8, "rnn") == 2 * 10 * 8 * 16
    assert crossover([10, 100, 1000], [0.1, 1.0, 10.0]) == pytest.approx(100.0)
    assert crossover([10, 100], [0.5, 0.9]) is None


def test_peak_memory_sees_a_large_allocation():
    peak = peak_cpu_memory(lambda: torch.zeros(1024, 1024).sum())
    assert 4 * 1024 * 1024 <= peak < 16 * 1024 * 1024
