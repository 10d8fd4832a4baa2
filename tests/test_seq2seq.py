import pytest
import torch

from seqlab.nn import Seq2Seq
from seqlab.tasks.seq2seq import fit_seq2seq, random_tokens, token_accuracy
from seqlab.errors import InvalidParameterError


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


# ------------------------------------------------------------ the recurrence page's own model (§14.48-§14.49)

def _page_model():
    """The cell of the recurrence page that defines train and accuracy (and imports Seq2Seq), run on its own."""
    import torch.nn as nn
    import torch.nn.functional as F

    from seqlab.book.build import PAGES
    from seqlab.book.cells import code_cells

    cell, = [c for c in code_cells(PAGES / "recurrence.md") if "def train(" in c.source]
    assert cell.visible
    names = {"torch": torch, "nn": nn, "F": F}
    exec(cell.source, names)
    return names


@pytest.mark.parametrize("attention", [None, "general"])
def test_page_copy_model_is_the_library_copy_experiment(attention):
    from seqlab.experiments.seq2seq import copy_experiment

    page = _page_model()
    lib = copy_experiment(6, attention, 41, n_train=32, epochs=20, n_test=16)
    torch.manual_seed(41)
    X = torch.randint(1, 9, (32, 6))
    m = page["Seq2Seq"](9, 16, 24, attention=attention)
    loss = page["train"](m, X, X, 20, 5e-3)
    X_new = torch.randint(1, 9, (16, 6), generator=torch.Generator().manual_seed(1041))
    acc = page["accuracy"]
    with torch.no_grad():
        got = dict(final_loss=loss, copy_accuracy=acc(m(X, X)[0].argmax(-1), X),
                   heldout_teacher_forced=acc(m(X_new, X_new)[0].argmax(-1), X_new),
                   heldout_free_running=acc(m.greedy_decode(X_new, 6)[0], X_new))
    for k, v in got.items():
        assert v == pytest.approx(lib[k], rel=1e-5, abs=1e-6), k


def test_page_reversal_model_is_the_library_reversal_experiment():
    import copy

    import numpy as np

    from seqlab.chapter import s14_49
    from seqlab.experiments.seq2seq import reversal_experiment

    page = _page_model()
    lib = reversal_experiment(53, T=5, n=20, epochs=10)
    torch.manual_seed(53)
    X = torch.randint(1, 11, (20, 5))
    m = page["Seq2Seq"](11, s14_49.REVERSAL_EMBED, s14_49.REVERSAL_HIDDEN, attention="general",
                        init_decoder_from_encoder=False)
    untrained = copy.deepcopy(m)
    loss = page["train"](m, X, X.flip(1), 10, 3e-3)
    X_new = torch.randint(1, 11, (20, 5), generator=torch.Generator().manual_seed(1053))
    with torch.no_grad():
        np.testing.assert_allclose(m(X_new, X_new.flip(1))[1].numpy(), lib["heldout_alpha"], atol=1e-6)
        np.testing.assert_allclose(untrained(X_new, X_new.flip(1))[1].numpy(), lib["heldout_alpha_untrained"],
                                   atol=1e-6)
        assert page["accuracy"](m.greedy_decode(X_new, 5)[0], X_new.flip(1)) == pytest.approx(
            lib["heldout_free_running"])
    assert loss == pytest.approx(lib["final_loss"], rel=1e-5)


def test_reversal_settings_are_the_experiments_defaults():
    import inspect

    from seqlab.chapter import s14_49
    from seqlab.experiments.seq2seq import reversal_experiment

    d = {k: p.default for k, p in inspect.signature(reversal_experiment).parameters.items()}
    assert (d["seed"], d["T"], d["vocab"], d["n"], d["epochs"], d["lr"]) == (
        s14_49.REVERSAL_SEED, s14_49.REVERSAL_T, s14_49.REVERSAL_VOCAB, s14_49.REVERSAL_N, s14_49.REVERSAL_EPOCHS,
        s14_49.REVERSAL_LR)


def test_alignment_controls_by_hand():
    import numpy as np

    from seqlab.chapter import s14_49

    T = 4
    anti = np.zeros((2, T, T))
    anti[:, np.arange(T), T - 1 - np.arange(T)] = 1.0  # perfect reversal alignment
    later = np.zeros((1, T, T))
    later[0, 0, T - 1] = 1.0
    later[0, np.arange(1, T), T - np.arange(1, T)] = 1.0  # one step later from the second output on
    c = s14_49.alignment_controls({"anti": anti, "later": later, "uniform": None}).set_index("weights")
    assert c.loc["anti", "weight_within_one_of_antidiagonal"] == 1.0
    assert c.loc["anti", "argmax_on_antidiagonal"] == 1.0 and c.loc["anti", "argmax_one_step_later"] == 0.0
    assert c.loc["later", "argmax_one_step_later"] == 1.0 and c.loc["later", "weight_within_one_of_antidiagonal"] == 1.0
    # uniform: rows 0 and T-1 have two band cells, the others three
    assert c.loc["uniform", "weight_within_one_of_antidiagonal"] == pytest.approx((2 * 2 + 3 * (T - 2)) / T / T)
    assert np.isnan(c.loc["uniform", "argmax_on_antidiagonal"])
    assert s14_49.sequences_above(anti, np.full((2, T, T), 1 / T)) == 1.0


def test_step_times_measures_both_cells():
    from seqlab.chapter import s14_47_1

    times = s14_47_1.step_times(d_h=8, d_in=4, batch=2, T=5, steps=1, repeats=2)
    summary = s14_47_1.step_time_summary(times)
    assert list(summary.cell) == ["GRU", "LSTM"] and (summary.repeats == 2).all() and (summary.median_ms > 0).all()


def test_surface_gap_table_reads_the_surface():
    from seqlab.chapter import s14_47

    gaps = s14_47.surface_gap_table(seed=31, widths=(8, 32))
    assert list(gaps.width) == [8, 32] and (gaps.lags_lstm_above <= 80).all()


def test_after_first_error_by_hand():
    """Sequence 2 first errs at step 2, so steps 3 and 4 count; sequence 1 never errs and adds none."""
    import math

    from seqlab.tasks.seq2seq import after_first_error

    target = torch.tensor([[1, 2, 3, 4], [1, 2, 3, 4]])
    free = torch.tensor([[1, 2, 3, 4], [1, 9, 3, 9]])
    forced = torch.tensor([[1, 2, 3, 4], [1, 2, 3, 4]])
    out = after_first_error(free, forced, target)
    assert out == dict(free_running=0.5, teacher_forced=1.0, one_behind=0.0, one_ahead=0.0, positions=0.25)
    clean = after_first_error(target, forced, target)
    assert math.isnan(clean["free_running"]) and math.isnan(clean["teacher_forced"]) and clean["positions"] == 0
    with pytest.raises(InvalidParameterError):
        after_first_error(free[:1], forced, target)


def test_probe_reads_a_token_from_the_state_that_holds_it():
    """States that are a one-hot copy of the token at the next position: the lag-1 probe reads it, lag 0 cannot."""
    from seqlab.analysis.probe import lagged_token_probe

    gen = torch.Generator().manual_seed(0)
    X = torch.randint(1, 5, (2, 200, 6), generator=gen)
    def states(x):  # state t holds token t - 1 (and zeros at t = 0), plus a little noise
        onehot = torch.nn.functional.one_hot(x - 1, 4).float()
        shifted = torch.cat([torch.zeros_like(onehot[:, :1]), onehot[:, :-1]], dim=1)
        return shifted + 0.01 * torch.randn(shifted.shape, generator=gen)
    out = lagged_token_probe(states(X[0]), X[0], states(X[1]), X[1], vocab=4, lags=(0, 1))
    acc = dict(zip(out.lag, out.accuracy))
    assert acc[1] == 1.0 and acc[0] < 0.5 and (out.chance == 0.25).all()
    with pytest.raises(InvalidParameterError):
        lagged_token_probe(states(X[0]), X[0], states(X[1]), X[1], vocab=4, lags=(6,))


def test_after_first_error_tells_a_slip_from_a_derailment():
    """A decoder that skips one token and copies on scores at chance in place but fully one step ahead."""
    from seqlab.tasks.seq2seq import after_first_error

    target = torch.tensor([[1, 2, 3, 4, 5, 6]])
    skipped = torch.tensor([[1, 3, 4, 5, 6, 6]])  # slips at step 2, then copies on, one token ahead
    repeated = torch.tensor([[1, 2, 2, 3, 4, 5]])  # repeats at step 3, then copies on, one token behind
    out = after_first_error(skipped, target, target)
    assert out["free_running"] == 0.25 and out["one_ahead"] == 1.0 and out["one_behind"] == 0.0
    out = after_first_error(repeated, target, target)
    assert out["free_running"] == 0.0 and out["one_behind"] == 1.0 and out["one_ahead"] == 0.0
