import math

import pytest
import torch

from seqlab.text.sampling import (
    MinP,
    SuppressTokens,
    Temperature,
    TopK,
    TopP,
    apply_processors,
    build_processors,
    sample_next,
)

LOG = lambda *p: torch.log(torch.tensor([p]))  # logits of a probability vector


def kept(logits):
    return torch.isfinite(logits)[0].tolist()


def test_temperature_hand_worked():
    logits = torch.tensor([[1.0, 2.0]])
    out = Temperature(0.5)(logits)
    assert out.tolist() == [[-2.0, 0.0]]  # (1, 2) / 0.5 = (2, 4), shifted so the largest is 0
    assert torch.allclose(out.softmax(-1), torch.tensor([[2.0, 4.0]]).softmax(-1))
    assert logits.tolist() == [[1.0, 2.0]]  # the caller's tensor is untouched


@pytest.mark.parametrize("k,expected", [(1, [False, True, False, False]), (2, [False, True, True, True]),
                                        (3, [False, True, True, True]), (4, [True, True, True, True]),
                                        (10, [True, True, True, True])])
def test_top_k_keeps_ties_with_kth(k, expected):
    # values 1, 3, 2, 2: the 2nd largest is 2, tied: both 2s stay
    assert kept(TopK(k)(torch.tensor([[1.0, 3.0, 2.0, 2.0]]))) == expected


@pytest.mark.parametrize("p,expected", [
    (0.0, [True, False, False]),    # at least min_tokens_to_keep = 1
    (0.4, [True, False, False]),    # 0.5 alone reaches 0.4
    (0.6, [True, True, False]),     # 0.5 < 0.6: the token that crosses (0.3) is kept
    (0.9, [True, True, True]),
    (1.0, [True, True, True]),      # filters nothing
])
def test_top_p_hand_worked(p, expected):
    assert kept(TopP(p)(LOG(0.5, 0.3, 0.2))) == expected


def test_top_p_min_tokens_to_keep():
    assert kept(TopP(0.1, min_tokens_to_keep=2)(LOG(0.7, 0.2, 0.1))) == [True, True, False]


def test_top_p_one_is_identity_even_with_underflow():
    logits = torch.tensor([[0.0, -200.0, -300.0]])
    assert torch.equal(TopP(1.0)(logits), logits)


@pytest.mark.parametrize("min_p,expected", [(0.4, [True, True, False]), (0.1, [True, True, True]),
                                            (1.0, [True, False, False])])
def test_min_p_hand_worked(min_p, expected):
    # max prob 0.6: min_p 0.4 -> threshold 0.24 keeps 0.6 and 0.3, drops 0.1
    assert kept(MinP(min_p)(LOG(0.6, 0.3, 0.1))) == expected


def test_processors_do_not_edit_the_callers_tensor():
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.5]])
    before = logits.clone()
    apply_processors(logits, [Temperature(0.7), TopK(2), TopP(0.5), MinP(0.2)])
    assert torch.equal(logits, before)


def test_order_temperature_first():
    # a high temperature flattens before top-p looks at the mass, so more tokens survive
    logits = LOG(0.7, 0.2, 0.1)
    cold = apply_processors(logits, build_processors(temperature=1.0, top_p=0.75))
    hot = apply_processors(logits, build_processors(temperature=5.0, top_p=0.75))
    assert sum(kept(cold)) < sum(kept(hot))
    assert [type(p).__name__ for p in build_processors(0.5, 3, 0.9, 0.1)] == ["Temperature", "TopK", "TopP", "MinP"]


@pytest.mark.parametrize("kwargs", [dict(temperature=0), dict(temperature=-1), dict(temperature=float("nan")),
                                    dict(top_k=0), dict(top_k=2.5), dict(top_p=1.5), dict(top_p=-0.1),
                                    dict(min_p=2.0), dict(min_tokens_to_keep=0, top_k=3)])
def test_invalid_arguments_rejected_at_construction(kwargs):
    with pytest.raises(ValueError):
        build_processors(**kwargs)


def test_sampling_follows_the_filtered_distribution():
    g = torch.Generator().manual_seed(0)
    logits = LOG(0.5, 0.3, 0.2).repeat(20000, 1)
    draws = sample_next(logits, [TopK(2)], generator=g).flatten()
    freq = torch.bincount(draws, minlength=3).float() / len(draws)
    assert freq[2] == 0 and abs(freq[0].item() - 0.625) < 0.015
    assert sample_next(logits[:1], greedy=True).item() == 0


def test_temperature_limits():
    logits = LOG(0.5, 0.3, 0.2)
    sharp = Temperature(0.05)(logits).softmax(-1)
    flat = Temperature(100.0)(logits).softmax(-1)
    assert sharp[0, 0] > 0.99 and math.isclose(flat[0, 0].item(), 1 / 3, abs_tol=0.01)


def test_suppress_tokens():
    out = SuppressTokens([0, 2])(torch.tensor([[5.0, 1.0, 9.0]]))
    assert kept(out) == [False, True, False]
    with pytest.raises(ValueError):
        SuppressTokens([])
