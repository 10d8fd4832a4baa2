"""The Transformer on the chapter's copy and reversal tasks (§14.53-§14.54), stored as artifacts.

Two trainings, both under the chapter's copy-task protocol of §14.48 (the same random
sequences, full-batch Adam, the same number of steps, held-out free-running scoring):

- the **comparison**: GRU encoder-decoder without and with attention (the chapter's models)
  against a small encoder-decoder Transformer, on copy and on reversal at T = 4, 8, 16, 32;
- the **warm-up study**: pre-LN against post-LN stacks, with and without a linear
  learning-rate warm-up, a few seeds, at two learning rates.

``HEAVY_EVAL=1`` runs :func:`run_transformer_tasks` (a few minutes on two cores) and rewrites
``seqlab/artifacts/transformer_tasks``; otherwise :func:`load_transformer_tasks` verifies and
loads the committed results.
"""
from __future__ import annotations

import json
import math
import time

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import InvalidParameterError
from ..nn.seq2seq import Seq2Seq
from ..nn.seq2seq_transformer import Seq2SeqTransformer
from ..store import heavy_eval, read_artifact_csv, verify_artifacts, write_artifacts
from ..tasks.seq2seq import Seq2SeqFit, fit_seq2seq, random_tokens, token_accuracy
from .parallel import run_calls

__all__ = ["NAME", "TASKS", "LENGTHS", "MODELS", "SEED", "PROTOCOL", "GRU", "TRANSFORMER", "WARMUP_STUDY",
           "task_pairs", "make_model", "fit_warmup", "evaluate", "task_experiment", "warmup_run",
           "experiment_config", "run_transformer_tasks", "load_transformer_tasks", "transformer_task_results"]

NAME = "transformer_tasks"
TASKS = ("copy", "reverse")
LENGTHS = (4, 8, 16, 32)
MODELS = ("GRU", "GRU + attention", "Transformer")
SEED = 41
#: §14.48's copy-task protocol, used for every model and both tasks
PROTOCOL = dict(vocab=8, n_train=400, n_test=400, epochs=250, lr=5e-3)
#: the chapter's recurrent encoder-decoder (§14.48): embedding 16, GRU hidden size 24
GRU = dict(embed_dim=16, hidden_size=24)
#: a small pre-LN encoder-decoder Transformer
TRANSFORMER = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1)
#: pre-LN vs post-LN, with and without warm-up: a deeper stack on one task, several seeds, two learning rates
WARMUP_STUDY = dict(task="reverse", T=8, layers=3, lrs=[1e-3, 1e-2], warmup_steps=50, seeds=[1, 2, 3],
                    curve_every=5)


def task_pairs(task: str, n: int, T: int, vocab: int, generator: torch.Generator | None = None):
    """``(source, target)`` for ``task``: copy (target = source) or reverse (target = source flipped in time)."""
    if task not in TASKS:
        raise InvalidParameterError(f"task must be one of {TASKS}, got {task!r}")
    X = random_tokens(n, T, vocab, generator)
    return X, (X if task == "copy" else X.flip(1))


def make_model(model: str, vocab: int, *, norm_first: bool = True, layers: int | None = None) -> nn.Module:
    """One of :data:`MODELS` for content tokens ``1..vocab``.

    The GRU models are §14.48's ``Seq2Seq(vocab + 1, 16, 24)``; the Transformer adds a
    start token (id ``vocab + 1``) and keeps id 0 for padding. ``layers`` overrides the
    Transformer's encoder and decoder depth.
    """
    if model == "Transformer":
        cfg = dict(TRANSFORMER)
        if layers is not None:
            cfg.update(num_encoder_layers=layers, num_decoder_layers=layers)
        return Seq2SeqTransformer(vocab + 2, **cfg, norm_first=norm_first)
    if model in ("GRU", "GRU + attention"):
        return Seq2Seq(vocab + 1, GRU["embed_dim"], GRU["hidden_size"],
                       attention="general" if model == "GRU + attention" else None)
    raise InvalidParameterError(f"model must be one of {MODELS}, got {model!r}")


def fit_warmup(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor, epochs: int, lr: float,
               warmup: int = 0) -> Seq2SeqFit:
    """``fit_seq2seq``'s full-batch Adam loop with a linear warm-up of the learning rate over ``warmup`` steps.

    Step ``s`` (from 0) uses ``lr * min(1, (s + 1) / warmup)``; ``warmup=0`` is ``fit_seq2seq`` itself.
    A loss that becomes NaN or infinite stops the run (it is recorded as the last loss).
    """
    if warmup < 0:
        raise InvalidParameterError(f"warmup must be >= 0, got {warmup}")
    if warmup == 0:
        return fit_seq2seq(model, src, tgt, epochs, lr)
    if epochs < 1 or lr <= 0:
        raise InvalidParameterError(f"need epochs >= 1 and lr > 0; got {epochs}, {lr}")
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
    losses = []
    model.train()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        logits, _ = model(src, tgt)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1))
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            break
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    return Seq2SeqFit(model, losses)


@torch.no_grad()
def evaluate(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor) -> dict:
    """Teacher-forced loss and accuracy, and free-running (greedy) token and whole-sequence accuracy."""
    model.eval()
    logits, _ = model(src, tgt)
    free, _ = model.greedy_decode(src, tgt.size(1))
    return dict(loss=F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1)).item(),
                teacher_forced=token_accuracy(logits.argmax(-1), tgt),
                free_running=token_accuracy(free, tgt),
                exact_sequences=(free == tgt).all(dim=1).float().mean().item())


def task_experiment(model: str, task: str, T: int, seed: int = SEED, *, norm_first: bool = True,
                    layers: int | None = None, lr: float | None = None, warmup: int = 0,
                    epochs: int | None = None, n_train: int | None = None, vocab: int | None = None,
                    n_test: int | None = None, curve_every: int = 0) -> dict:
    """Train ``model`` on ``task`` at length ``T`` and score it on held-out sequences.

    Draw order after ``torch.manual_seed(seed)``: the training tokens, then the model,
    exactly as ``copy_experiment`` of §14.48, so ``("GRU", "copy")`` reproduces it. The
    held-out set comes from a generator seeded ``seed + 1000``. Unset settings are
    :data:`PROTOCOL`'s.
    """
    p = dict(PROTOCOL)
    p.update({k: v for k, v in dict(lr=lr, epochs=epochs, n_train=n_train, vocab=vocab, n_test=n_test).items()
              if v is not None})
    torch.manual_seed(seed)
    src, tgt = task_pairs(task, p["n_train"], T, p["vocab"])
    net = make_model(model, p["vocab"], norm_first=norm_first, layers=layers)
    t0 = time.perf_counter()
    fit = fit_warmup(net, src, tgt, p["epochs"], p["lr"], warmup)
    seconds = time.perf_counter() - t0
    test_src, test_tgt = task_pairs(task, p["n_test"], T, p["vocab"], torch.Generator().manual_seed(seed + 1000))
    finite = all(math.isfinite(v) for v in fit.losses) and len(fit.losses) == p["epochs"]
    train = evaluate(net, src, tgt)
    test = evaluate(net, test_src, test_tgt)
    out = dict(model=model, task=task, sequence_length=T, seed=seed, parameters=sum(q.numel() for q in net.parameters()),
               initial_loss=fit.losses[0], final_loss=fit.losses[-1], finite=finite,
               train_teacher_forced=train["teacher_forced"], heldout_loss=test["loss"],
               heldout_teacher_forced=test["teacher_forced"], heldout_free_running=test["free_running"],
               heldout_exact_sequences=test["exact_sequences"], train_seconds=seconds)
    if curve_every:
        out["curve"] = [(s, v) for s, v in enumerate(fit.losses) if s % curve_every == 0 or s == len(fit.losses) - 1]
    return out


def warmup_run(norm_first: bool, warmup: int, lr: float, seed: int) -> dict:
    """One run of the warm-up study (:data:`WARMUP_STUDY`)."""
    w = WARMUP_STUDY
    r = task_experiment("Transformer", w["task"], w["T"], seed, norm_first=norm_first, layers=w["layers"], lr=lr,
                        warmup=warmup, curve_every=w["curve_every"])
    return r | dict(norm="pre-LN" if norm_first else "post-LN", warmup_steps=warmup, lr=lr)


def experiment_config() -> dict:
    return {"tasks": list(TASKS), "lengths": list(LENGTHS), "models": list(MODELS), "seed": SEED,
            "protocol": PROTOCOL, "gru": GRU, "transformer": TRANSFORMER, "warmup_study": WARMUP_STUDY,
            "threads_per_run": 1}


def _cost(fn, args) -> float:
    if fn is warmup_run:
        return 3.0 * WARMUP_STUDY["T"] * WARMUP_STUDY["layers"]
    model, _, T = args[:3]
    return T * {"GRU": 0.5, "GRU + attention": 0.8, "Transformer": 1.0}[model] * 3.0


def run_transformer_tasks(root=None, workers: int | None = None, log=print) -> float:
    """Run both trainings in worker processes (one torch thread each), write the artifact set; returns seconds."""
    t0 = time.perf_counter()
    calls = [(task_experiment, (m, task, T, SEED)) for task in TASKS for m in MODELS for T in LENGTHS]
    calls += [(warmup_run, (nf, wu, lr, s)) for nf in (True, False) for wu in (0, WARMUP_STUDY["warmup_steps"])
              for lr in WARMUP_STUDY["lrs"] for s in WARMUP_STUDY["seeds"]]
    results = run_calls(calls, workers=workers, cost=_cost)
    comparison = pd.DataFrame([r for r in results if "norm" not in r])
    study = [r for r in results if "norm" in r]
    curves = pd.DataFrame([dict(norm=r["norm"], warmup_steps=r["warmup_steps"], lr=r["lr"], seed=r["seed"], step=s,
                                loss=v) for r in study for s, v in r["curve"]])
    warmup = pd.DataFrame([{k: v for k, v in r.items() if k != "curve"} for r in study])
    seconds = time.perf_counter() - t0
    files = {"comparison.csv": comparison.to_csv(index=False).encode(),
             "warmup.csv": warmup.to_csv(index=False).encode(),
             "warmup_curves.csv": curves.to_csv(index=False).encode(),
             "run.json": json.dumps({"wall_seconds": seconds, "trainings": len(calls),
                                     "workers": workers}, indent=1).encode()}
    write_artifacts(NAME, files, experiment_config(), root)
    log(f"transformer_tasks: {len(calls)} trainings in {seconds:.0f} s")
    return seconds


def load_transformer_tasks(root=None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Verified artifacts: ``(comparison, warmup, warmup_curves, manifest)``."""
    manifest = verify_artifacts(NAME, experiment_config(), root)
    return (read_artifact_csv(NAME, "comparison.csv", root), read_artifact_csv(NAME, "warmup.csv", root),
            read_artifact_csv(NAME, "warmup_curves.csv", root), manifest)


_RESULTS: dict = {}


def transformer_task_results(root=None):
    """Train under HEAVY_EVAL=1 (once per process), else load: ``load_transformer_tasks()`` plus the mode used."""
    key = str(root)
    if key not in _RESULTS:
        mode = "trained now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
        if heavy_eval():
            run_transformer_tasks(root)
        _RESULTS[key] = (*load_transformer_tasks(root), mode)
    return _RESULTS[key]
