import pytest
import torch

from seqlab.nn import Seq2Seq
from seqlab.tasks.seq2seq import fit_seq2seq, random_tokens, token_accuracy


@pytest.mark.parametrize("attention", [None, "general"])
def test_shapes_and_greedy_decode(attention):
    torch.manual_seed(0)
    m = Seq2Seq(9, 8, 12, attention=attention)
    x = random_tokens(5, 6, 8)
    logits, alpha = m(x, x)
    assert logits.shape == (5, 6, 9)
    assert (alpha is None) == (attention is None)
    if alpha is not None:
        assert alpha.shape == (5, 6, 6)
        torch.testing.assert_close(alpha.sum(-1), torch.ones(5, 6))
    pred, _ = m.greedy_decode(x, 6)
    assert pred.shape == (5, 6)


def test_greedy_decode_first_step_matches_teacher_forcing():
    torch.manual_seed(1)
    m = Seq2Seq(9, 8, 12, attention="general").eval()
    x = random_tokens(4, 5, 8)
    with torch.no_grad():
        tf = m(x, x)[0].argmax(-1)
    pred, _ = m.greedy_decode(x, 5)
    assert torch.equal(pred[:, 0], tf[:, 0])  # both see only the start token at step 1


def test_training_reduces_loss_and_learns_a_short_copy():
    torch.manual_seed(2)
    x = random_tokens(200, 4, 4)
    m = Seq2Seq(5, 8, 16, attention="general")
    fit = fit_seq2seq(m, x, x, epochs=150, lr=1e-2)
    assert fit.final_loss < 0.3 * fit.losses[0]
    with torch.no_grad():
        assert token_accuracy(m(x, x)[0].argmax(-1), x) > 0.9


def test_bad_arguments():
    with pytest.raises(ValueError):
        Seq2Seq(9, 8, 12, attention="bahdanau-ish")
    with pytest.raises(ValueError):
        random_tokens(3, 1, 8)
    with pytest.raises(ValueError):
        fit_seq2seq(Seq2Seq(5, 4, 4), random_tokens(2, 3, 4), random_tokens(2, 3, 4), epochs=0, lr=0.1)
