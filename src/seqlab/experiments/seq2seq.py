"""The chapter's encoder-decoder experiments (§14.48-§14.49): copy and reversal, scored on held-out data.

§14.49 and its page read the reversal run through :func:`reversal_experiment_cached`,
which trains it on first use and keeps one result per seed for the process.
"""
from __future__ import annotations

import copy
import functools

import torch

from ..analysis.probe import lagged_token_probe
from ..nn.seq2seq import Seq2Seq
from ..tasks.seq2seq import after_first_error, fit_seq2seq, random_tokens, token_accuracy
from ..threads import single_threaded

__all__ = ["copy_experiment", "reversal_experiment", "reversal_experiment_cached"]


def copy_experiment(T: int, attention: str | None = None, seed: int = 41, d_hidden: int = 24, n_train: int = 400,
                    epochs: int = 250, lr: float = 5e-3, vocab: int = 8, n_test: int = 400) -> dict:
    """The chapter's copy task at length ``T``, plus held-out free-running accuracy, and both accuracies at the
    positions after each held-out sequence's first free-running mistake (:func:`~seqlab.tasks.seq2seq.after_first_error`).

    Draw order after ``torch.manual_seed(seed)``: the training tokens, then the
    model (embedding, encoder, decoder[, query projection], head). Held-out
    sequences come from a separate generator seeded ``seed + 1000`` so they do
    not disturb the chapter's draws.
    """
    torch.manual_seed(seed)
    X = random_tokens(n_train, T, vocab)
    model = Seq2Seq(vocab + 1, 16, d_hidden, attention=attention)
    fit = fit_seq2seq(model, X, X, epochs, lr)
    X_test = random_tokens(n_test, T, vocab, torch.Generator().manual_seed(seed + 1000))
    with torch.no_grad():
        train_tf = token_accuracy(model(X, X)[0].argmax(-1), X)
        forced = model(X_test, X_test)[0].argmax(-1)
        test_free, _ = model.greedy_decode(X_test, T)
    after = after_first_error(test_free, forced, X_test)
    return dict(sequence_length=T, attention=attention or "none", final_loss=fit.final_loss,
                copy_accuracy=train_tf, heldout_teacher_forced=token_accuracy(forced, X_test),
                heldout_free_running=token_accuracy(test_free, X_test),
                **{f"heldout_after_error_{k}": v for k, v in after.items()})


def reversal_experiment_cached(seed: int = 53) -> dict:
    """``reversal_experiment(seed)`` on one thread, trained once per seed in this process (shared, do not modify)."""
    return _reversal_once(int(seed))


@functools.cache
def _reversal_once(seed: int) -> dict:
    with single_threaded():  # the arithmetic of the chapter's worker processes
        return reversal_experiment(seed)


def reversal_experiment(seed: int = 53, T: int = 12, vocab: int = 10, n: int = 500, epochs: int = 400,
                        lr: float = 3e-3) -> dict:
    """§14.49's reversal task: GRU encoder-decoder with scaled general attention; the decoder starts at zero.

    Returns the final loss, the teacher-forced training accuracy (the chapter's
    number), held-out teacher-forced and free-running accuracy, the attention weights of the first
    training example, the loss curve, and the controls for the alignment: the
    teacher-forced attention weights on every held-out sequence, of the trained
    model (``heldout_alpha``) and of the same model before training
    (``heldout_alpha_untrained``, same initial weights), each (n, T, T); and ``token_probe``
    (:func:`~seqlab.analysis.probe.lagged_token_probe`): how well the trained encoder's state at position j and
    at j + 1 tells the source token at j, on held-out sequences.
    """
    torch.manual_seed(seed)
    X = random_tokens(n, T, vocab)
    Y = X.flip(1)
    model = Seq2Seq(vocab + 1, 24, 32, attention="general", init_decoder_from_encoder=False)
    untrained = copy.deepcopy(model).eval()  # copying draws nothing: the training run is unchanged
    fit = fit_seq2seq(model, X, Y, epochs, lr)
    X_test = random_tokens(n, T, vocab, torch.Generator().manual_seed(seed + 1000))
    Y_test = X_test.flip(1)
    with torch.no_grad():
        logits, alpha = model(X, Y)
        free, _ = model.greedy_decode(X_test, T)
        heldout_logits, heldout_alpha = model(X_test, Y_test)
        heldout_alpha_untrained = untrained(X_test, Y_test)[1]
    return dict(final_loss=fit.final_loss, token_accuracy=token_accuracy(logits.argmax(-1), Y),
                heldout_teacher_forced=token_accuracy(heldout_logits.argmax(-1), Y_test),
                heldout_free_running=token_accuracy(free, Y_test), alpha=alpha[0].numpy(),
                losses=fit.losses, heldout_alpha=heldout_alpha.numpy(),
                heldout_alpha_untrained=heldout_alpha_untrained.numpy(),
                token_probe=lagged_token_probe(model.encode(X)[0].detach(), X, model.encode(X_test)[0].detach(),
                                               X_test, vocab))
