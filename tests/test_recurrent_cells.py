"""The LSTM and GRU written from their gate equations equal torch.nn.LSTM / torch.nn.GRU given the same weights."""
import pytest
import torch
from torch import nn

from seqlab.nn import gru_cell, lstm_cell, set_forget_bias, unroll


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("m,d,T", [(3, 5, 7), (8, 16, 20)])
def test_unrolled_cells_equal_torch(cls, m, d, T):
    torch.manual_seed(0)
    module = cls(m, d, batch_first=True)
    x = torch.randn(4, T, m)
    with torch.no_grad():
        ref, _ = module(x)
        ours = unroll(module, x)
    torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-6)


def test_lstm_cell_hand_worked():
    # zero weights: every gate is sigmoid(0) = 1/2 and the candidate tanh(0) = 0
    d, m = 2, 1
    W_ih, W_hh, b = torch.zeros(4 * d, m), torch.zeros(4 * d, d), torch.zeros(4 * d)
    h, c = lstm_cell(torch.ones(1, m), torch.zeros(1, d), torch.full((1, d), 2.0), W_ih, W_hh, b, b)
    torch.testing.assert_close(c, torch.full((1, d), 1.0))  # c' = f c + i g = 0.5 * 2 + 0.5 * 0
    torch.testing.assert_close(h, 0.5 * torch.tanh(torch.full((1, d), 1.0)))


def test_gru_cell_keeps_the_state_when_z_is_one():
    d, m = 3, 2
    W_ih, W_hh = torch.zeros(3 * d, m), torch.zeros(3 * d, d)
    b_ih = torch.zeros(3 * d)
    b_ih[d : 2 * d] = 50.0  # update gate saturated at 1
    h = torch.randn(1, d)
    torch.testing.assert_close(gru_cell(torch.randn(1, m), h, W_ih, W_hh, b_ih, torch.zeros(3 * d)), h)


def test_set_forget_bias_sets_the_sum_of_both_biases():
    torch.manual_seed(1)
    lstm = nn.LSTM(3, 4, num_layers=2)
    set_forget_bias(lstm, 1.5)
    for layer in range(2):
        total = getattr(lstm, f"bias_ih_l{layer}") + getattr(lstm, f"bias_hh_l{layer}")
        torch.testing.assert_close(total[4:8], torch.full((4,), 1.5))
