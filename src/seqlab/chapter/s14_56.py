"""§14.56 Tokenization: characters, words, subwords; vocabulary size vs sequence length."""
from __future__ import annotations

import time

import pandas as pd

from ..text import BPETokenizer, CharTokenizer, WordTokenizer
from ..text.corpus import load_tinyshakespeare
from .base import section

D_MODEL = 128


@section("14.56", "Tokenization")
def run(ctx):
    text = load_tinyshakespeare()
    n_chars, n_bytes = len(text), len(text.encode("utf-8"))
    candidates = [("character", "char", CharTokenizer, {})]
    candidates += [(f"word (min_freq {f})", "word", lambda f=f: WordTokenizer(min_freq=f), {}) for f in (1, 3, 10)]
    candidates += [(f"byte BPE ({v})", "bpe", BPETokenizer, {"vocab_size": v}) for v in (256, 512, 1024, 2048)]
    rows = []
    for name, family, make, kw in candidates:
        t0 = time.perf_counter()
        tok = make().train(text, **kw)
        train_s = time.perf_counter() - t0
        ids = tok.encode(text)
        rows.append(dict(tokenizer=name, family=family, vocab_size=tok.vocab_size, tokens=len(ids),
                         chars_per_token=n_chars / len(ids), bytes_per_token=n_bytes / len(ids),
                         embedding_params=tok.vocab_size * D_MODEL, unk_rate=(ids.count(0) / len(ids)
                                                                             if family != "bpe" else 0.0),
                         lossless=tok.decode(ids) == text, train_seconds=train_s))
    df = pd.DataFrame(rows)
    ch = df[df.family == "char"].iloc[0]
    w1 = df[df.tokenizer == "word (min_freq 1)"].iloc[0]
    b512 = df[df.tokenizer == "byte BPE (512)"].iloc[0]
    b1024 = df[df.tokenizer == "byte BPE (1024)"].iloc[0]
    notes = [
        f"Characters: {ch.vocab_size} symbols, {ch.tokens:,} tokens. Words: {w1.vocab_size:,} types cut the sequence to "
        f"{w1.tokens:,} tokens but the embedding table grows to {w1.embedding_params:,} parameters at d = {D_MODEL}.",
        f"Byte-level BPE sits between: at 512 tokens it averages {b512.bytes_per_token:.2f} bytes per token, never "
        "needs an unknown token (every byte is in the vocabulary) and decodes losslessly. At 1,024 it is already "
        f"shorter than the word tokenization ({b1024.tokens:,} vs {w1.tokens:,} tokens) with a "
        f"{w1.vocab_size / b1024.vocab_size:.0f}x smaller vocabulary: the word tokenizer spends a token on every "
        "space, while BPE folds the leading space into the word.",
        "A Transformer's attention cost grows as T^2: halving the sequence length through a larger vocabulary "
        "quarters the attention FLOPs, paid for with a larger embedding and output layer.",
        "Word tokenizers with a frequency cut-off map rare words to <unk> (column `unk_rate`) and cannot round-trip.",
    ]
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        gg, fig = line_pair(df.sort_values("vocab_size"), "vocab_size", "tokens", "family", points=True,
                            log_x=True, log_y=True, title="Vocabulary size against sequence length",
                            subtitle="tinyshakespeare (1.1 M characters): a larger vocabulary shortens the sequence",
                            xlab="Vocabulary size (log scale)", ylab="Tokens in the corpus (log scale)",
                            colors={"char": "#D8433B", "word": "#7FB069", "bpe": "#3B7DD8"})
        figs = ctx.save("tokenization", gg, fig)
    return {"tokenizers": df}, figs, notes
