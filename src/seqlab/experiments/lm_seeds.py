"""The §14.57 sweep again under two more seeds, so that its comparisons of the GPT and the LSTM rest on three.

The chapter's runs (``lm_sweep``) use ``CHAPTER_TRAIN.seed``; a seed here sets the initial
weights, the order of the training windows and the windows the validation loss is estimated on,
the same for both models of a pair. Writes the artifact set ``lm_sweep_seeds``; ``HEAVY_EVAL=1``
reruns it with the other follow-ups.
"""
from __future__ import annotations

import dataclasses
import hashlib

import pandas as pd
import torch

from ..store import read_artifact_csv, verify_artifacts, write_artifacts
from ..text.corpus import TINY_SHAKESPEARE_SHA256, load_tinyshakespeare, split_train_val
from ..text.tokenizers import CharTokenizer
from ..text.training import TrainConfig, recipe
from .lm import CHAPTER_TRAIN, _named
from .lm_followups import SWEEP_ITERS, _train_run, sweep_config, sweep_train_config

__all__ = ["SEEDS_NAME", "SWEEP_SEEDS", "seeds_config", "run_lm_sweep_seeds", "load_sweep_seeds"]

SEEDS_NAME = "lm_sweep_seeds"
#: the chapter's seed is CHAPTER_TRAIN.seed (1337); these two are the next ones, fixed before any run
SWEEP_SEEDS = (1338, 1339)


def _seeded(train: TrainConfig, seed: int) -> TrainConfig:
    return dataclasses.replace(train, seed=seed)


def seeds_config(seeds=SWEEP_SEEDS, iters=SWEEP_ITERS, train: TrainConfig = CHAPTER_TRAIN,
                 corpus_sha256: str = TINY_SHAKESPEARE_SHA256) -> dict:
    base = sweep_config(iters, train, corpus_sha256)
    return base | {"seeds": list(seeds),
                   "train": {f"{s}/{n}": recipe(sweep_train_config(n, _seeded(train, s))) for s in seeds for n in iters}}


def run_lm_sweep_seeds(root=None, log=print, *, seeds=SWEEP_SEEDS, iters=SWEEP_ITERS,
                       train: TrainConfig = CHAPTER_TRAIN, text: str | None = None, workers: int | None = None):
    """Every (seed, budget, model) run of the sweep under ``seeds``, one torch thread each, two at a time."""
    from ..parallel import run_calls

    text = load_tinyshakespeare() if text is None else text
    config = seeds_config(seeds, iters, train, hashlib.sha256(text.encode("utf-8")).hexdigest())
    tok = CharTokenizer().train(text)
    train_ids, val_ids = split_train_val(torch.tensor(tok.encode(text)))
    plan = [(seed, kind, n) for n in sorted(iters, reverse=True) for seed in seeds for kind in ("GPT", "LSTM")]
    calls = [(_train_run, (kind, tok.vocab_size, train_ids, val_ids, sweep_train_config(n, _seeded(train, seed)),
                           f"{kind} {n} seed {seed}")) for seed, kind, n in plan]
    out = run_calls(calls, workers=workers, cost=lambda fn, args: args[4].max_iters)
    frames = []
    for (seed, kind, n), (history, _) in zip(plan, out):
        log(f"seed {seed}, {kind} {n}: {history[-1]}")
        frames.append(pd.DataFrame(history).assign(model=kind, budget_iters=n, seed=seed))
    curves = pd.concat(frames, ignore_index=True)
    write_artifacts(SEEDS_NAME, {"curves.csv": curves.to_csv(index=False).encode()}, config, root)
    return curves


def load_sweep_seeds(root=None) -> pd.DataFrame:
    """The stored curves (``model``, ``budget_iters``, ``seed``, ``iter``, losses, seconds), verified."""
    verify_artifacts(SEEDS_NAME, seeds_config(), root)
    return _named(read_artifact_csv(SEEDS_NAME, "curves.csv", root))


if __name__ == "__main__":
    run_lm_sweep_seeds()
