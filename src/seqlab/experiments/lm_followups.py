"""The follow-up studies of the chapter's language models: the compute sweep (§14.57), BPE against characters
(§14.56), bits per character at a fixed context, and the decoding grid (§14.59), each a stored artifact."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
import pandas as pd
import torch
import torch.nn.functional as F
from ..nn import GPT, LSTMLanguageModel
from ..nn.transformer import config_record
from ..store import heavy_eval, read_artifact_csv, read_artifact_json, verify_artifacts, write_artifacts
from ..text.checkpoint import CHECKPOINT_FILE
from ..text.corpus import TINY_SHAKESPEARE_SHA256, load_tinyshakespeare, split_train_val
from ..text.generation import generate
from ..text.metrics import distinct_n, mean_nll, repetition_rate
from ..text.sampling import EntropyProbe, build_processors
from ..text.tokenizers import BPETokenizer, CharTokenizer
from ..text.train_config import LN2
from ..text.training import TrainConfig, recipe, train_lm
from .lm import CHAPTER_TRAIN, NAME, PROMPT, _named, _sample, chapter_gpt_config, chapter_lstm_config, load_lm_artifacts

__all__ = [
    'SWEEP_NAME', 'BPE_NAME', 'DECODING_NAME', 'SWEEP_ITERS', 'BPE_VOCABS', 'BPE_SAMPLE_TOKENS',
    'DECODING_GRID', 'DECODING_SAMPLES', 'DECODING_TOKENS', 'DECODING_SEED', 'split_text', 'bits_per_char',
    'sweep_train_config', 'sweep_config', 'run_lm_sweep', 'load_sweep_artifacts', 'bpe_config', 'run_lm_bpe',
    'load_bpe_artifacts', 'decoding_config', 'run_lm_decoding', 'load_decoding_artifacts', 'run_lm_followups',
    'followup_results',
]




SWEEP_NAME, BPE_NAME, DECODING_NAME = "lm_sweep", "lm_bpe", "lm_decoding"


#: §14.57's compute sweep: the chapter's recipe run for these many steps (750 is the chapter's own budget)
SWEEP_ITERS = (150, 300, 750, 1500)


#: §14.56: byte-level BPE vocabularies trained against the chapter's character model
BPE_VOCABS = (512, 1024)


BPE_SAMPLE_TOKENS = 160


#: §14.58-§14.59: each knob alone (the others neutral), with its settings from narrow to wide
DECODING_GRID = {"temperature": (0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.2, 1.5),
                 "top_k": (2, 3, 4, 6, 8, 12, 20, 40),
                 "top_p": (0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0),
                 "min_p": (0.5, 0.3, 0.2, 0.15, 0.1, 0.05, 0.02, 0.0)}


DECODING_SAMPLES, DECODING_TOKENS, DECODING_SEED = 8, 400, 100


def split_text(text: str, val_fraction: float = 0.1) -> tuple[str, str]:
    """The character split every tokenizer shares: the first 90% of the text trains, the rest validates.

    For the character tokenizer it is exactly ``split_train_val`` of the token ids.
    """
    n = int(len(text) * (1 - val_fraction))
    return text[:n], text[n:]


@torch.no_grad()
def bits_per_char(model, tok, text: str, context: int | None = None, batch: int = 64) -> dict:
    """Cross-entropy of ``text`` under ``model``, per token and per character.

    The text is encoded and cut into consecutive windows of ``context`` tokens
    (default: the model's block size); in each window every token is predicted from
    the ones before it, and the last partial window is dropped. The summed loss in
    nats divided by the number of predicted tokens is the per-token loss; divided by
    the number of characters those tokens spell, and by ln 2, it is bits per
    character, a unit that does not depend on the tokenizer.
    """
    context = context or model.block_size
    ids = torch.tensor(tok.encode(text), dtype=torch.long)
    n_win = (len(ids) - 1) // context
    if n_win < 1:
        raise ValueError(f"the text has {len(ids)} tokens, fewer than one window of {context} + 1")
    x = ids[: n_win * context].view(n_win, context)
    y = ids[1: n_win * context + 1].view(n_win, context)
    was = model.training
    model.eval()
    total = 0.0
    for i in range(0, n_win, batch):
        logits, _ = model(x[i: i + batch])
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y[i: i + batch].reshape(-1),
                                 reduction="sum").item()
    model.train(was)
    tokens, chars = n_win * context, len(tok.decode(y.reshape(-1).tolist()))
    return dict(eval_tokens=tokens, eval_chars=chars, chars_per_token=chars / tokens, nats_per_token=total / tokens,
                bits_per_token=total / tokens / LN2, bits_per_char=total / chars / LN2)


def sweep_train_config(iters: int, base: TrainConfig = CHAPTER_TRAIN) -> TrainConfig:
    """The chapter's recipe ended after ``iters`` steps: warm-up (1/15) and cosine decay scale with the run.

    ``sweep_train_config(750)`` is ``CHAPTER_TRAIN`` itself.
    """
    return base.with_max_iters(iters, lr_decay_iters=iters, warmup_iters=max(1, iters // 15),
                               eval_interval=max(25, iters // 15), checkpoint_interval=None)


def _models(vocab_size: int) -> dict:
    return {"GPT": lambda: GPT(chapter_gpt_config(vocab_size)),
            "LSTM": lambda: LSTMLanguageModel(chapter_lstm_config(vocab_size))}


def sweep_config(iters=SWEEP_ITERS, train: TrainConfig = CHAPTER_TRAIN,
                 corpus_sha256: str = TINY_SHAKESPEARE_SHA256) -> dict:
    return {"corpus_sha256": corpus_sha256, "tokenizer": "char", "val_fraction": 0.1,
            "gpt": config_record(chapter_gpt_config(1)) | {"vocab_size": "from tokenizer"},
            "lstm": asdict(chapter_lstm_config(1)) | {"vocab_size": "from tokenizer"},
            "iters": list(iters), "train": {str(n): recipe(sweep_train_config(n, train)) for n in iters},
            "torch_threads": 1}


def _train_run(kind: str, vocab_size: int, train_ids, val_ids, c: TrainConfig, label: str):
    """One training run in a worker (one torch thread): ``(history, state_dict)``."""
    torch.manual_seed(c.seed)
    model = _models(vocab_size)[kind]()
    res = train_lm(model, train_ids, val_ids, c)
    return res.history, {k: v.detach().clone() for k, v in model.state_dict().items()}


def run_lm_sweep(root=None, log=print, *, iters=SWEEP_ITERS, train: TrainConfig = CHAPTER_TRAIN,
                 text: str | None = None, workers: int | None = None):
    """Train the GPT and the LSTM for each number of steps in ``iters`` (same loop, data order, batch, context).

    Equal steps are equal tokens; the seconds each run took are in its history, so the
    page reads loss against training time. Every run uses one torch thread, two runs at
    a time in worker processes (longest first): on a shared two-core machine a
    two-thread run that meets other work slows down many times over, a one-thread run
    at most by the share it loses. Writes ``lm_sweep``; returns the LSTM of the longest
    run and the tokenizer (the decoding sweep's independent judge).
    """
    from ..parallel import run_calls

    text = load_tinyshakespeare() if text is None else text
    config = sweep_config(iters, train, hashlib.sha256(text.encode("utf-8")).hexdigest())
    tok = CharTokenizer().train(text)
    train_ids, val_ids = split_train_val(torch.tensor(tok.encode(text)))
    plan = [(kind, n) for n in sorted(iters, reverse=True) for kind in ("GPT", "LSTM")]
    calls = [(_train_run, (kind, tok.vocab_size, train_ids, val_ids, sweep_train_config(n, train), f"{kind} {n}"))
             for kind, n in plan]
    out = run_calls(calls, workers=workers, cost=lambda fn, args: args[4].max_iters)
    frames, judge = [], None
    for (kind, n), (history, state) in zip(plan, out):
        log(f"{kind} {n}: {history[-1]}")
        frames.append(pd.DataFrame(history).assign(model=kind, budget_iters=n))
        if kind == "LSTM" and n == max(iters):
            judge = _models(tok.vocab_size)["LSTM"]()
            judge.load_state_dict(state)
    curves = pd.concat(frames, ignore_index=True)
    write_artifacts(SWEEP_NAME, {"curves.csv": curves.to_csv(index=False).encode()}, config, root)
    return judge, tok


def load_sweep_artifacts(root=None) -> tuple[pd.DataFrame, dict]:
    """Verified ``lm_sweep``: the loss curves of every run (column ``budget_iters``) and the manifest."""
    manifest = verify_artifacts(SWEEP_NAME, sweep_config(), root)
    return _named(read_artifact_csv(SWEEP_NAME, "curves.csv", root)), manifest


def _lm_checkpoint_sha(root=None) -> str:
    return verify_artifacts(NAME, root=root)["files"][CHECKPOINT_FILE]["sha256"]


def bpe_config(vocabs=BPE_VOCABS, train: TrainConfig = CHAPTER_TRAIN, corpus_sha256: str = TINY_SHAKESPEARE_SHA256,
               char_model: str = "lm") -> dict:
    return {"corpus_sha256": corpus_sha256, "val_fraction": 0.1, "split": "characters",
            "bpe_trained_on": "training text", "vocabs": list(vocabs),
            "gpt": config_record(chapter_gpt_config(1)) | {"vocab_size": "from tokenizer"}, "train": recipe(train),
            "char_model": char_model, "prompt": PROMPT, "sample_tokens": BPE_SAMPLE_TOKENS, "torch_threads": 1}


def _bpe_row(name, tok, model, history, train: TrainConfig, train_text: str, val_text: str) -> dict:
    from ..analysis.params import count_parameters

    last = history[-1]
    ev = bits_per_char(model, tok, val_text)
    train_tokens = len(tok.encode(train_text))
    return dict(tokenizer=name, vocab_size=tok.vocab_size, parameters=count_parameters(model),
                iterations=int(last["iter"]), seconds=last["seconds"], tokens_per_s=last["tokens_per_s"],
                train_tokens=train_tokens, train_chars_per_token=len(train_text) / train_tokens,
                chars_seen=int(last["iter"]) * train.batch_size * train.block_size * len(train_text) / train_tokens,
                val_loss_sampled_nats=last["val_loss"], **ev)


def run_lm_bpe(root=None, log=print, *, vocabs=BPE_VOCABS, train: TrainConfig = CHAPTER_TRAIN,
               text: str | None = None, char_model=None, workers: int | None = None) -> None:
    """Train the chapter's GPT on byte-level BPE tokens and score it against the character model per character.

    Every model sees the same characters for training and for validation (the split is
    made on the text, then each tokenizer encodes both parts) and takes the same steps
    of the same batch of ``batch_size x block_size`` tokens. BPE is trained on the
    training text only. ``char_model`` is ``(gpt, tokenizer, history)`` of the
    character model trained with ``train``; by default the verified ``lm`` set's.
    """
    from ..parallel import run_calls

    text = load_tinyshakespeare() if text is None else text
    if char_model is None:
        gpt_c, tok_c, curves, *_ = load_lm_artifacts(root)
        history = curves[curves.model == "GPT"].to_dict("records")
        source = f"lm checkpoint {_lm_checkpoint_sha(root)}"
    else:
        (gpt_c, tok_c, history), source = char_model, "given"
    config = bpe_config(vocabs, train, hashlib.sha256(text.encode("utf-8")).hexdigest(), source)
    train_text, val_text = split_text(text)
    rows = [_bpe_row("character", tok_c, gpt_c, history, train, train_text, val_text)]
    frames, samples = [pd.DataFrame(history).assign(tokenizer="character")], {}
    toks = {f"byte BPE ({v})": BPETokenizer().train(train_text, vocab_size=v) for v in vocabs}
    calls = [(_train_run, ("GPT", tok.vocab_size, torch.tensor(tok.encode(train_text)),
                           torch.tensor(tok.encode(val_text)), train, name)) for name, tok in toks.items()]
    out = run_calls(calls, workers=workers)  # one thread per run, two at a time (see run_lm_sweep)
    for (name, tok), (history, state) in zip(toks.items(), out):
        log(f"{name}: {history[-1]}")
        gpt = GPT(chapter_gpt_config(tok.vocab_size))
        gpt.load_state_dict(state)
        rows.append(_bpe_row(name, tok, gpt, history, train, train_text, val_text))
        frames.append(pd.DataFrame(history).assign(tokenizer=name))
        samples[name] = _sample(gpt, tok, BPE_SAMPLE_TOKENS, seed=7, temperature=1.0)
    files = {"results.csv": pd.DataFrame(rows).to_csv(index=False).encode(),
             "curves.csv": pd.concat(frames, ignore_index=True).to_csv(index=False).encode(),
             "samples.json": json.dumps(samples, indent=1, ensure_ascii=False).encode("utf-8")}
    write_artifacts(BPE_NAME, files, config, root)


def load_bpe_artifacts(root=None):
    """Verified ``lm_bpe``: ``(results, curves, samples, manifest)``."""
    manifest = verify_artifacts(BPE_NAME, bpe_config(char_model=f"lm checkpoint {_lm_checkpoint_sha(root)}"), root)
    return (read_artifact_csv(BPE_NAME, "results.csv", root), _named(read_artifact_csv(BPE_NAME, "curves.csv", root)),
            read_artifact_json(BPE_NAME, "samples.json", root), manifest)


def decoding_config(grid=None, samples: int = DECODING_SAMPLES, tokens: int = DECODING_TOKENS,
                    generator: str = "lm", judge: str = "lm_sweep LSTM") -> dict:
    grid = DECODING_GRID if grid is None else grid
    return {"grid": {k: list(v) for k, v in grid.items()}, "samples": samples, "tokens": tokens,
            "seed": DECODING_SEED, "prompt": PROMPT, "generator": generator, "judge": judge}


def _judge_name(iters=SWEEP_ITERS) -> str:
    return f"LSTM of lm_sweep, {max(iters)} steps"


def _decode_knob(gpt, tok, judge, knob: str, values, samples: int, tokens: int):
    """Every setting of one knob (in a worker, one thread): per-sample scores and the first text of each."""
    prompt = tok.encode(PROMPT)
    rows, texts = [], {}
    for value in values:
        probe = EntropyProbe()
        idx = torch.tensor([prompt] * samples)
        out = generate(gpt, idx, tokens, [*build_processors(**{knob: value}), probe],
                       generator=torch.Generator().manual_seed(DECODING_SEED))
        entropy, kept = probe.per_row()
        for r in range(samples):
            ids = out[r].tolist()
            gen = ids[len(prompt):]
            rows.append(dict(knob=knob, value=value, sample=r, entropy=entropy[r].item(), tokens_kept=kept[r].item(),
                             **{f"distinct_{n}": distinct_n(gen, n) for n in (1, 2, 3, 4)},
                             repetition_rate=repetition_rate(gen, 8), nll_gpt=mean_nll(gpt, ids),
                             nll_judge=mean_nll(judge, ids)))
        texts[str(value)] = tok.decode(out[0].tolist())
    return rows, texts


def run_lm_decoding(root=None, log=print, *, gpt=None, tok=None, judge=None, judge_name: str | None = None,
                    grid=None, samples: int = DECODING_SAMPLES, tokens: int = DECODING_TOKENS,
                    workers: int | None = None) -> None:
    """Sample ``samples`` texts of ``tokens`` characters at every setting of every knob, and score them.

    Each knob is used alone (the others neutral) and every setting draws with the same
    seed, so differences come from the knob, not from luck. Per sample: the mean
    entropy of the distribution actually sampled from and the tokens it kept
    (``EntropyProbe``), distinct-n and 8-gram repetition of the generated part, and
    the mean negative log-likelihood (nats/char) under the generating GPT and under
    ``judge``, a model trained separately. Defaults: the ``lm`` GPT, judged by the
    longest LSTM of the sweep (which must be passed in: its weights are not stored).
    """
    from ..parallel import run_calls

    if judge is None:
        raise ValueError("run_lm_decoding needs the judge model (run_lm_followups trains it)")
    grid = DECODING_GRID if grid is None else grid
    source = "given"
    if gpt is None:
        gpt, tok, *_ = load_lm_artifacts(root)
        source = f"lm checkpoint {_lm_checkpoint_sha(root)}"
    config = decoding_config(grid, samples, tokens, source, judge_name or _judge_name())
    calls = [(_decode_knob, (gpt, tok, judge, knob, tuple(values), samples, tokens)) for knob, values in grid.items()]
    out = run_calls(calls, workers=workers, cost=lambda fn, args: len(args[4]))
    rows, texts = [], {}
    for (knob, _), (knob_rows, knob_texts) in zip(grid.items(), out):
        log(f"decoding {knob}: {len(knob_rows)} samples")
        rows += knob_rows
        texts[knob] = knob_texts
    files = {"samples.csv": pd.DataFrame(rows).to_csv(index=False).encode(),
             "texts.json": json.dumps(texts, indent=1, ensure_ascii=False).encode("utf-8")}
    write_artifacts(DECODING_NAME, files, config, root)


def load_decoding_artifacts(root=None):
    """Verified ``lm_decoding``: ``(per-sample scores, one text per setting, manifest)``."""
    config = decoding_config(generator=f"lm checkpoint {_lm_checkpoint_sha(root)}", judge=_judge_name())
    manifest = verify_artifacts(DECODING_NAME, config, root)
    return (read_artifact_csv(DECODING_NAME, "samples.csv", root), read_artifact_json(DECODING_NAME, "texts.json", root),
            manifest)


def run_lm_followups(root=None, log=print) -> None:
    """The three follow-up sets in order: the sweep (whose longest LSTM judges the samples), BPE, decoding."""
    judge, _ = run_lm_sweep(root, log)
    run_lm_bpe(root, log)
    run_lm_decoding(root, log, judge=judge)


def followup_results(root=None) -> dict:
    """Recompute under HEAVY_EVAL=1, else load: ``{"sweep": ..., "bpe": ..., "decoding": ..., "mode": ...}``."""
    mode = "trained now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
    if heavy_eval():
        run_lm_followups(root)
    return {"sweep": load_sweep_artifacts(root), "bpe": load_bpe_artifacts(root),
            "decoding": load_decoding_artifacts(root), "mode": mode}
