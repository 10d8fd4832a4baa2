"""Copy and reversal tasks for the encoder-decoder experiments of §14.48-§14.49."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..nn.seq2seq import Seq2Seq

__all__ = ["random_tokens", "Seq2SeqFit", "fit_seq2seq", "token_accuracy"]


def random_tokens(n: int, length: int, vocab: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """(n, length) tokens uniform on 1..vocab (index 0 stays free, as in the chapter's 1-based R code)."""
    if n < 1 or length < 2 or vocab < 2:
        raise ValueError(f"need n >= 1, length >= 2, vocab >= 2; got {n}, {length}, {vocab}")
    return torch.randint(1, vocab + 1, (n, length), dtype=torch.long, generator=generator)


def token_accuracy(pred: torch.Tensor, target: torch.Tensor) -> float:
    """Fraction of positions where ``pred`` equals ``target``."""
    return (pred == target).float().mean().item()


@dataclass
class Seq2SeqFit:
    model: Seq2Seq
    losses: list[float]

    @property
    def final_loss(self) -> float:
        return self.losses[-1]


def fit_seq2seq(model: Seq2Seq, src: torch.Tensor, tgt: torch.Tensor, epochs: int, lr: float) -> Seq2SeqFit:
    """Full-batch Adam on teacher-forced cross-entropy, one step per epoch (the chapter's loop).

    The recorded loss of an epoch is the one computed before that epoch's step.
    """
    if epochs < 1 or lr <= 0:
        raise ValueError(f"need epochs >= 1 and lr > 0; got {epochs}, {lr}")
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        logits, _ = model(src, tgt)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return Seq2SeqFit(model, losses)


def copy_experiment(T: int, attention: str | None = None, seed: int = 41, d_hidden: int = 24, n_train: int = 400,
                    epochs: int = 250, lr: float = 5e-3, vocab: int = 8, n_test: int = 400) -> dict:
    """The chapter's copy task at length ``T``, plus held-out free-running accuracy.

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
        test_tf = token_accuracy(model(X_test, X_test)[0].argmax(-1), X_test)
        test_free, _ = model.greedy_decode(X_test, T)
    return dict(sequence_length=T, attention=attention or "none", final_loss=fit.final_loss,
                copy_accuracy=train_tf, heldout_teacher_forced=test_tf,
                heldout_free_running=token_accuracy(test_free, X_test))


_REVERSAL_CACHE: dict[tuple, dict] = {}


def reversal_experiment_cached(seed: int = 53) -> dict:
    """``reversal_experiment(seed)``, reusing a result computed earlier in this process (see ``remember_reversal``)."""
    if (seed,) not in _REVERSAL_CACHE:
        before = torch.get_num_threads()
        torch.set_num_threads(1)  # the same single-threaded arithmetic as in a worker process
        try:
            _REVERSAL_CACHE[(seed,)] = reversal_experiment(seed)
        finally:
            torch.set_num_threads(before)
    return _REVERSAL_CACHE[(seed,)]


def remember_reversal(seed: int, result: dict) -> None:
    """Store a reversal result computed elsewhere (a worker process) for ``reversal_experiment_cached``."""
    _REVERSAL_CACHE[(seed,)] = result


def reversal_experiment(seed: int = 53, T: int = 12, vocab: int = 10, n: int = 500, epochs: int = 400,
                        lr: float = 3e-3) -> dict:
    """§14.49's reversal task: GRU encoder-decoder with scaled general attention; the decoder starts at zero.

    Returns the final loss, the teacher-forced training accuracy (the chapter's
    number), held-out free-running accuracy, the attention weights of the first
    training example and the loss curve.
    """
    torch.manual_seed(seed)
    X = random_tokens(n, T, vocab)
    Y = X.flip(1)
    model = Seq2Seq(vocab + 1, 24, 32, attention="general", init_decoder_from_encoder=False)
    fit = fit_seq2seq(model, X, Y, epochs, lr)
    X_test = random_tokens(n, T, vocab, torch.Generator().manual_seed(seed + 1000))
    with torch.no_grad():
        logits, alpha = model(X, Y)
        free, _ = model.greedy_decode(X_test, T)
    return dict(final_loss=fit.final_loss, token_accuracy=token_accuracy(logits.argmax(-1), Y),
                heldout_free_running=token_accuracy(free, X_test.flip(1)), alpha=alpha[0].numpy(),
                losses=fit.losses)
