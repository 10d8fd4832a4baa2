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

import functools
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
from ..parallel import default_workers, run_calls
from ..store import artifact_dir, heavy_eval, read_artifact_json, verify_artifacts, write_artifacts
from ..tasks.seq2seq import after_first_error, fit_seq2seq, random_tokens, token_accuracy

__all__ = ["NAME", "TASKS", "LENGTHS", "MODELS", "SEED", "PROTOCOL", "GRU", "TRANSFORMER", "WARMUP_STUDY", "ATTENTION_T",
           "task_pairs", "make_model", "evaluate", "task_experiment", "warmup_run",
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
#: a pre-LN encoder-decoder Transformer with fewer parameters than the GRU models
TRANSFORMER = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1)
#: pre-LN vs post-LN, with and without warm-up: a wider, deeper stack on one task, three seeds, two learning rates
WARMUP_STUDY = dict(task="reverse", T=8, transformer=dict(d_model=32, num_heads=4, d_ff=64, num_encoder_layers=2,
                                                          num_decoder_layers=2),
                    lrs=[1e-2, 3e-2], warmup_steps=100, seeds=[1, 2, 3], curve_every=5)
#: the length at which the trained Transformers' cross-attention maps are kept (first held-out sequence)
ATTENTION_T = 16


def task_pairs(task: str, n: int, T: int, vocab: int, generator: torch.Generator | None = None):
    """``(source, target)`` for ``task``: copy (target = source) or reverse (target = source flipped in time)."""
    if task not in TASKS:
        raise InvalidParameterError(f"task must be one of {TASKS}, got {task!r}")
    X = random_tokens(n, T, vocab, generator)
    return X, (X if task == "copy" else X.flip(1))


def make_model(model: str, vocab: int, *, norm_first: bool = True, transformer: dict | None = None) -> nn.Module:
    """One of :data:`MODELS` for content tokens ``1..vocab``.

    The GRU models are §14.48's ``Seq2Seq(vocab + 1, 16, 24)``; the Transformer
    (:data:`TRANSFORMER`, or the sizes in ``transformer``) adds a start token (id
    ``vocab + 1``) and keeps id 0 for padding.
    """
    if model == "Transformer":
        return Seq2SeqTransformer(vocab + 2, **(transformer or TRANSFORMER), norm_first=norm_first)
    if model in ("GRU", "GRU + attention"):
        return Seq2Seq(vocab + 1, GRU["embed_dim"], GRU["hidden_size"],
                       attention="general" if model == "GRU + attention" else None)
    raise InvalidParameterError(f"model must be one of {MODELS}, got {model!r}")


@torch.no_grad()
def evaluate(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor) -> dict:
    """Teacher-forced loss and accuracy, free-running (greedy) token and whole-sequence accuracy, and both
    accuracies after each sequence's first free-running mistake (``after_error_*``)."""
    model.eval()
    logits, _ = model(src, tgt)
    free, _ = model.greedy_decode(src, tgt.size(1))
    after = after_first_error(free, logits.argmax(-1), tgt)
    return dict(loss=F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1)).item(),
                teacher_forced=token_accuracy(logits.argmax(-1), tgt),
                free_running=token_accuracy(free, tgt),
                exact_sequences=(free == tgt).all(dim=1).float().mean().item(),
                **{f"after_error_{k}": v for k, v in after.items()})


def task_experiment(model: str, task: str, T: int, seed: int = SEED, *, norm_first: bool = True,
                    transformer: dict | None = None, lr: float | None = None, warmup: int = 0,
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
    net = make_model(model, p["vocab"], norm_first=norm_first, transformer=transformer)
    t0 = time.perf_counter()
    fit = fit_seq2seq(net, src, tgt, p["epochs"], p["lr"], warmup)
    seconds = time.perf_counter() - t0
    test_src, test_tgt = task_pairs(task, p["n_test"], T, p["vocab"], torch.Generator().manual_seed(seed + 1000))
    finite = all(math.isfinite(v) for v in fit.losses) and len(fit.losses) == p["epochs"]
    train = evaluate(net, src, tgt)
    test = evaluate(net, test_src, test_tgt)
    out = dict(model=model, task=task, sequence_length=T, seed=seed, parameters=sum(q.numel() for q in net.parameters()),
               initial_loss=fit.losses[0], final_loss=fit.losses[-1], finite=finite,
               train_teacher_forced=train["teacher_forced"], heldout_loss=test["loss"],
               heldout_teacher_forced=test["teacher_forced"], heldout_free_running=test["free_running"],
               heldout_exact_sequences=test["exact_sequences"], train_seconds=seconds,
               **{f"heldout_{k}": v for k, v in test.items() if k.startswith("after_error_")})
    if isinstance(net, Seq2SeqTransformer) and T == ATTENTION_T:
        w = net.cross_attention(test_src[:1], test_tgt[:1])[0][0]  # first decoder layer, first sequence: (h, T', T)
        out["attention"] = [(h + 1, i + 1, j + 1, float(w[h, i, j])) for h in range(w.size(0))
                            for i in range(w.size(1)) for j in range(w.size(2))]
    if curve_every:
        out["curve"] = [(s, v) for s, v in enumerate(fit.losses) if s % curve_every == 0 or s == len(fit.losses) - 1]
    return out


def warmup_run(norm_first: bool, warmup: int, lr: float, seed: int) -> dict:
    """One run of the warm-up study (:data:`WARMUP_STUDY`)."""
    w = WARMUP_STUDY
    r = task_experiment("Transformer", w["task"], w["T"], seed, norm_first=norm_first, transformer=w["transformer"], lr=lr,
                        warmup=warmup, curve_every=w["curve_every"])
    return r | dict(norm="pre-LN" if norm_first else "post-LN", warmup_steps=warmup, lr=lr)


def experiment_config() -> dict:
    return {"tasks": list(TASKS), "lengths": list(LENGTHS), "models": list(MODELS), "seed": SEED,
            "protocol": PROTOCOL, "gru": GRU, "transformer": TRANSFORMER, "warmup_study": WARMUP_STUDY,
            "threads_per_run": 1}


def _cost(fn, args) -> float:
    """Rough single-core seconds of a call, for longest-first scheduling."""
    if fn is warmup_run:
        return 20.0
    model, _, T = args[:3]
    return T * {"GRU": 0.2, "GRU + attention": 0.34, "Transformer": 0.35}[model]


def run_transformer_tasks(root=None, workers: int | None = None, log=print) -> float:
    """Run both trainings in worker processes (one torch thread each), write the artifact set; returns seconds."""
    t0 = time.perf_counter()
    calls = [(task_experiment, (m, task, T, SEED)) for task in TASKS for m in MODELS for T in LENGTHS]
    calls += [(warmup_run, (nf, wu, lr, s)) for nf in (True, False) for wu in (0, WARMUP_STUDY["warmup_steps"])
              for lr in WARMUP_STUDY["lrs"] for s in WARMUP_STUDY["seeds"]]
    results = run_calls(calls, workers=workers, cost=_cost)
    main = [r for r in results if "norm" not in r]
    attention = pd.DataFrame([dict(task=r["task"], sequence_length=r["sequence_length"], head=h, output_position=i,
                                   input_position=j, weight=w) for r in main for h, i, j, w in r.get("attention", [])])
    comparison = pd.DataFrame([{k: v for k, v in r.items() if k != "attention"} for r in main])
    study = [r for r in results if "norm" in r]
    curves = pd.DataFrame([dict(norm=r["norm"], warmup_steps=r["warmup_steps"], lr=r["lr"], seed=r["seed"], step=s,
                                loss=v) for r in study for s, v in r["curve"]])
    warmup = pd.DataFrame([{k: v for k, v in r.items() if k != "curve"} for r in study])
    seconds = time.perf_counter() - t0
    def csv(df: pd.DataFrame) -> bytes:
        return df.to_csv(index=False, float_format="%.17g").encode()  # 17 digits: floats read back exactly

    files = {"comparison.csv": csv(comparison), "warmup.csv": csv(warmup), "warmup_curves.csv": csv(curves),
             "cross_attention.csv": csv(attention),
             "run.json": json.dumps({"wall_seconds": seconds, "trainings": len(calls), "torch": torch.__version__,
                                     "workers": default_workers() if workers is None else workers}, indent=1).encode()}
    write_artifacts(NAME, files, experiment_config(), root)
    log(f"transformer_tasks: {len(calls)} trainings in {seconds:.0f} s")
    return seconds


def load_transformer_tasks(root=None) -> dict:
    """Verified artifacts: a dict of frames ``comparison``, ``warmup``, ``warmup_curves``, ``cross_attention``,
    and the ``manifest`` and ``run`` records."""
    manifest = verify_artifacts(NAME, experiment_config(), root)
    # round_trip: pandas' default float parser can miss the last bit of a 17-digit number
    out = {name: pd.read_csv(artifact_dir(NAME, root) / f"{name}.csv", float_precision="round_trip")
           for name in ("comparison", "warmup", "warmup_curves", "cross_attention")}
    return out | {"manifest": manifest, "run": read_artifact_json(NAME, "run.json", root)}


def transformer_task_results(root=None) -> dict:
    """Train under HEAVY_EVAL=1 (once per process), else load: ``load_transformer_tasks()`` plus ``mode``."""
    return _task_results(None if root is None else str(root))


@functools.cache
def _task_results(root: str | None) -> dict:
    mode = "trained now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from stored results checked against their checksums"
    if heavy_eval():  # silent: stdout may carry `seqlab run --json`, stderr fails a page build
        run_transformer_tasks(root, log=lambda *_: None)
    return load_transformer_tasks(root) | {"mode": mode}
