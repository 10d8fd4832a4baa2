"""The chapter's language models (§14.56–§14.60): their recipes, the stored run that trains the character GPT and
LSTM and samples from them (HEAVY_EVAL regenerates it), and its verified artifacts."""
from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
import pandas as pd
import torch
from ..nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
from ..nn.transformer import config_record
from ..store import artifact_dir, heavy_eval, read_artifact_csv, read_artifact_json, verify_artifacts, write_artifacts
from ..text.checkpoint import CHECKPOINT_FILE, RENAMED, load_checkpoint, save_checkpoint
from ..text.corpus import TINY_SHAKESPEARE_SHA256, load_tinyshakespeare, split_train_val
from ..text.generation import generate
from ..text.metrics import distinct_n, mean_nll, repetition_rate
from ..text.sampling import build_processors
from ..text.tokenizers import CharTokenizer
from ..text.training import TrainConfig, recipe, train_lm

__all__ = [
    'NAME', 'PROMPT', 'CHAPTER_TRAIN', 'STRATEGIES', 'TEMPERATURES', 'TOP_PS', 'chapter_gpt_config',
    'chapter_lstm_config', 'FAST_LSTM_TRAIN', 'FAST_GPT_TRAIN', 'fast_gpt_config', 'SAMPLE_TOKENS',
    'SAMPLE_SEEDS', 'experiment_config', 'run_lm_experiment', 'load_lm_artifacts', 'lm_results',
]


NAME = "lm"


PROMPT = "ROMEO:\n"


#: seqlab's defaults for the chapter's model. Against nanoGPT's CPU recipe (AdamW 1e-3, batch 12, 2000 steps):
#: Muon for the hidden matrices, a larger batch, and a schedule that ends within the recipe's wall-clock time.
CHAPTER_TRAIN = TrainConfig(max_iters=750, batch_size=24, block_size=64, learning_rate=5e-3, min_lr=5e-4,
                            warmup_iters=50, eval_interval=50, eval_iters=20, seed=1337, optimizer="muon",
                            muon_lr=0.02, device="cpu")


STRATEGIES = {
    "greedy": dict(greedy=True),
    "temperature 0.5": dict(temperature=0.5),
    "temperature 1.0": dict(temperature=1.0),
    "temperature 1.5": dict(temperature=1.5),
    "top-k 10": dict(top_k=10),
    "top-p 0.9": dict(top_p=0.9),
    "min-p 0.1": dict(min_p=0.1),
}


TEMPERATURES = (0.5, 0.7, 0.9, 1.0, 1.2, 1.5)


TOP_PS = (0.5, 0.7, 0.8, 0.9, 0.95, 1.0)


def _named(curves):
    """Loss curves with the history fields of earlier versions under their present names (the stored CSVs keep
    the names they were written with, and their checksums)."""
    return curves.rename(columns=RENAMED)


def chapter_gpt_config(vocab_size: int) -> GPTConfig:
    """nanoGPT's CPU shape (4 layers, 4 heads, 128 dims, block 64, no biases) with rotary positions."""
    return GPTConfig(vocab_size=vocab_size, block_size=64, num_layers=4, num_heads=4, d_model=128, dropout=0.0, bias=False,
                     positional="rotary")


def chapter_lstm_config(vocab_size: int) -> LSTMConfig:
    return LSTMConfig(vocab_size=vocab_size, d_model=128, hidden_size=256, num_layers=2, block_size=64)


#: Quality per second on a CPU with bfloat16 products (``benchmarks/bench_lm.py``): the chapter's recipe with
#: bfloat16 autocast and a batch of 48, whose larger products run faster per token. ``bench_lm.py`` fits its
#: schedule to the time available (:attr:`TrainConfig.schedule_seconds`).
FAST_LSTM_TRAIN = replace(CHAPTER_TRAIN, batch_size=48, dtype="bfloat16")


#: As :data:`FAST_LSTM_TRAIN`, for :func:`fast_gpt_config`'s untied head: a batch of 64 (the GPT's step has a fixed
#: cost, Muon's above all, that a larger batch spreads over more tokens), the embedding learning at 0.05 and the head
#: at 0.005, no weight decay, and Muon at 0.03 with its momentum rising from 0.85 to 0.95 over 300 steps.
FAST_GPT_TRAIN = replace(FAST_LSTM_TRAIN, batch_size=64, muon_lr=0.03, embedding_lr=0.05, head_lr=0.005,
                         weight_decay=0.0, muon_momentum_warmup=300)


def fast_gpt_config(vocab_size: int) -> GPTConfig:
    """The chapter's GPT with an output head of its own, so the embedding and the head can learn at their own rates."""
    return replace(chapter_gpt_config(vocab_size), tie_weights=False)


#: tokens per sample and samples per setting in the decoding sweep
SAMPLE_TOKENS, SAMPLE_SEEDS = 300, 4


def experiment_config(train: TrainConfig = CHAPTER_TRAIN, corpus_sha256: str = TINY_SHAKESPEARE_SHA256,
                      sample_tokens: int = SAMPLE_TOKENS, sample_seeds: int = SAMPLE_SEEDS) -> dict:
    config = {"corpus_sha256": corpus_sha256, "tokenizer": "char", "val_fraction": 0.1,
              "gpt": config_record(chapter_gpt_config(1)) | {"vocab_size": "from tokenizer"},
              "lstm": asdict(chapter_lstm_config(1)) | {"vocab_size": "from tokenizer"},
              "train": recipe(train), "prompt": PROMPT, "strategies": STRATEGIES,
              "temperatures": list(TEMPERATURES), "top_ps": list(TOP_PS)}
    if (sample_tokens, sample_seeds) != (SAMPLE_TOKENS, SAMPLE_SEEDS):  # a quick run records its own sampling
        config |= {"sample_tokens": sample_tokens, "sample_seeds": sample_seeds}
    return config


def _sample(model, tok, n_new: int, seed: int, **strategy) -> str:
    greedy = strategy.pop("greedy", False)
    procs = build_processors(**strategy)
    idx = torch.tensor([tok.encode(PROMPT)])
    out = generate(model, idx, n_new, procs, greedy=greedy, generator=torch.Generator().manual_seed(seed))
    return tok.decode(out[0].tolist())


def run_lm_experiment(root=None, log=print, *, train: TrainConfig = CHAPTER_TRAIN, text: str | None = None,
                      sample_tokens: int = SAMPLE_TOKENS, sample_seeds: int = SAMPLE_SEEDS) -> None:
    """Train both models with the same loop and budget, sample, score, and write the artifact set.

    ``train`` and ``text`` default to the chapter's recipe and corpus; smaller ones
    make a quick run whose manifest records what it used.
    """
    text = load_tinyshakespeare() if text is None else text
    config = experiment_config(train, hashlib.sha256(text.encode("utf-8")).hexdigest(), sample_tokens,
                               sample_seeds)  # fail before training
    tok = CharTokenizer().train(text)
    train_ids, val_ids = split_train_val(torch.tensor(tok.encode(text)))
    torch.manual_seed(train.seed)
    gpt = GPT(chapter_gpt_config(tok.vocab_size))
    g_res = train_lm(gpt, train_ids, val_ids, train, log=lambda r: log(f"gpt  {r}"))
    torch.manual_seed(train.seed)
    lstm = LSTMLanguageModel(chapter_lstm_config(tok.vocab_size))
    budget = g_res.history[-1]["seconds"]  # the same wall-clock budget as the Transformer
    l_res = train_lm(lstm, train_ids, val_ids, train, time_budget_s=budget, log=lambda r: log(f"lstm {r}"))
    curves = pd.concat([pd.DataFrame(g_res.history).assign(model="GPT"),
                        pd.DataFrame(l_res.history).assign(model="LSTM")])
    samples = {name: _sample(gpt, tok, sample_tokens, seed=7, **dict(s)) for name, s in STRATEGIES.items()}

    rows = []
    settings = [("temperature", t, dict(temperature=t)) for t in TEMPERATURES] + \
               [("top_p", p, dict(top_p=p)) for p in TOP_PS]
    for knob, value, s in settings:
        for seed in range(sample_seeds):
            txt = _sample(gpt, tok, sample_tokens, seed=100 + seed, **dict(s))
            ids = tok.encode(txt)[len(PROMPT):]
            rows.append(dict(knob=knob, value=value, seed=seed, distinct_1=distinct_n(ids, 1),
                             distinct_2=distinct_n(ids, 2), distinct_3=distinct_n(ids, 3),
                             repetition_rate=repetition_rate(ids, 8),
                             nll_gpt=mean_nll(gpt, tok.encode(txt)), nll_lstm=mean_nll(lstm, tok.encode(txt))))
    tradeoff = pd.DataFrame(rows)

    with tempfile.TemporaryDirectory() as tmp:
        save_checkpoint(tmp, gpt, tokenizer=tok, iteration=g_res.iterations, train_config=asdict(train),
                        history=g_res.history)
        files = {f: (Path(tmp) / f).read_bytes() for f in (CHECKPOINT_FILE, "tokenizer.txt")}
    files.update({
        "loss_curves.csv": curves.to_csv(index=False).encode(),
        "samples.json": json.dumps(samples, indent=1, ensure_ascii=False).encode("utf-8"),
        "tradeoff.csv": tradeoff.to_csv(index=False).encode(),
    })
    write_artifacts(NAME, files, config, root)


def load_lm_artifacts(root=None):
    """Verified artifacts: ``(gpt, tokenizer, curves, samples, tradeoff, manifest)``."""
    manifest = verify_artifacts(NAME, experiment_config(), root)
    gpt, tok, _ = load_checkpoint(artifact_dir(NAME, root))
    return (gpt, tok, _named(read_artifact_csv(NAME, "loss_curves.csv", root)), read_artifact_json(NAME, "samples.json", root),
            read_artifact_csv(NAME, "tradeoff.csv", root), manifest)


def lm_results(root=None):
    """Recompute under HEAVY_EVAL=1, else load; returns load_lm_artifacts() plus the mode used."""
    mode = "trained now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
    if heavy_eval():
        run_lm_experiment(root)
    return (*load_lm_artifacts(root), mode)
