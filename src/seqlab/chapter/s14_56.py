"""§14.56 Tokenization: characters, words, subwords; vocabulary size vs sequence length; what BPE does to a model."""
from __future__ import annotations

import time
from collections import Counter

import pandas as pd

from ..claims import claim_source, verdict
from ..text import BPETokenizer, CharTokenizer, WordTokenizer
from ..text.corpus import load_tinyshakespeare
from ..text.tokenizers import PRE_SPLIT
from ._lm import followups
from ._util import provenance
from .base import section

D_MODEL = 128
#: the sentence BPE is walked through, and how many merges the walk shows
SENTENCE = "the king, the queen and the king's men then thank thee"
MERGES = 8
#: the second text the page cuts with the tokenizer of the walk (the first is SENTENCE)
REPLAYED = "then the queen thanks the men"
#: a text with characters that tinyshakespeare never uses (curly apostrophe, accents, a dash, the euro sign)
UNSEEN = "Juliet’s café — 3 €, said the nurse"
#: the corpus-wide comparison of tokenizers
WORD_MIN_FREQS = (1, 3, 10)
BPE_SIZES = (256, 512, 1024, 2048)


def visible(token: str) -> str:
    """A token as a reader can see it: a space is shown as ␣ and a newline as ⏎."""
    return token.replace(" ", "␣").replace("\n", "⏎")


def merge_trace(text: str = SENTENCE, merges: int = MERGES) -> pd.DataFrame:
    """Byte-level BPE trained on ``text``, one merge per row.

    Each row counts the adjacent token pairs inside the pre-split chunks (a merge never
    crosses a chunk boundary, so `` the`` and ``king`` stay apart), names the pair
    ``BPETokenizer.train`` merges next, the new token it creates, and the length of
    ``text`` in tokens before and after. The counting is done here; the choice is the
    library's, so the table shows what the tokenizer does, not a re-implementation.
    """
    chunks = PRE_SPLIT.findall(text)
    rows = []
    for k in range(merges):
        before = BPETokenizer().train(text, vocab_size=256 + k)
        after = BPETokenizer().train(text, vocab_size=257 + k)
        if len(after.merges) == k:
            break  # every chunk is one token already
        pieces = [before.encode(c) for c in chunks]
        counts = Counter(p for ids in pieces for p in zip(ids, ids[1:]))
        (a, b), new_id = list(after.merges.items())[-1]
        name = lambda i, t=before: visible(t.token_bytes[i].decode("utf-8", "replace"))
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
        rows.append(dict(step=k + 1, tokens_before=sum(map(len, pieces)),
                         most_frequent_pairs=", ".join(f"{name(x)}+{name(y)} ({c})" for (x, y), c in top),
                         merged=f"{name(a)} + {name(b)}", count=counts[(a, b)],
                         new_token=visible(after.token_bytes[new_id].decode("utf-8", "replace")), new_id=new_id,
                         tokens_after=len(after.encode(text))))
    return pd.DataFrame(rows)


def split_into_tokens(tok, text: str) -> list[str]:
    """``text`` as the list of tokens ``tok`` cuts it into (each made visible)."""
    if isinstance(tok, BPETokenizer):
        return [visible(tok.token_bytes[i].decode("utf-8", "replace")) for i in tok.encode(text)]
    return [visible(tok.id_to_token[i]) for i in tok.encode(text)]


def bar_lines(pieces: list[str], width: int = 72) -> str:
    """``pieces`` joined by ``|`` and wrapped to ``width`` columns, breaking only between two tokens."""
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines, line = [], ""
    for piece in pieces:
        joined = f"{line}|{piece}" if line else piece
        if line and len(joined) + 1 > width:  # + 1: a broken line ends on a bar, the next token starts the next
            lines.append(line + "|")
            line = piece
        else:
            line = joined
    return "\n".join(lines + [line])


def round_trip(tokenizers: dict, text: str = UNSEEN) -> pd.DataFrame:
    """Encode ``text`` with each tokenizer and decode it back: tokens, unknowns, and whether the text survives."""
    rows = []
    for name, tok in tokenizers.items():
        ids = tok.encode(text)
        unk = 0 if isinstance(tok, BPETokenizer) else ids.count(tok.token_to_id["<unk>"])
        back = tok.decode(ids)
        rows.append(dict(tokenizer=name, tokens=len(ids), unknown_tokens=unk, decoded=back, lossless=back == text))
    return pd.DataFrame(rows)


def tokenizer_table(text: str | None = None, word_min_freqs=WORD_MIN_FREQS, bpe_sizes=BPE_SIZES) -> pd.DataFrame:
    """Every tokenizer trained on the whole corpus: vocabulary, tokens, characters per token, unknowns, round trip."""
    text = load_tinyshakespeare() if text is None else text
    n_chars, n_bytes = len(text), len(text.encode("utf-8"))
    candidates = [("character", "char", CharTokenizer, {})]
    candidates += [(f"word (min_freq {f})", "word", lambda f=f: WordTokenizer(min_freq=f), {}) for f in word_min_freqs]
    candidates += [(f"byte BPE ({v})", "bpe", BPETokenizer, {"vocab_size": v}) for v in bpe_sizes]
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
    return pd.DataFrame(rows)


def tokenizer_figure(df: pd.DataFrame):
    from ..plotting import line_pair

    names = {"char": "character", "word": "word", "bpe": "byte BPE"}  # as the table names them
    df = df.assign(family=df.family.map(names).fillna(df.family))
    return line_pair(df.sort_values("vocab_size"), "vocab_size", "tokens", "family", points=True,
                     log_x=True, log_y=True, title="Vocabulary size against sequence length",
                     subtitle="tinyshakespeare: characters, words and byte BPE at several vocabulary sizes",
                     xlab="Vocabulary size (log scale)", ylab="Tokens in the corpus (log scale)",
                     colors={"character": "#D8433B", "word": "#7FB069", "byte BPE": "#3B7DD8"})


def bpe_model_results():
    """The ``lm_bpe`` artifact set (verified): ``(results, curves, samples, manifest)``."""
    from ._lm import followups

    return followups()["bpe"]


def bpe_curves_bits(results: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Training curves in bits per character: each sampled per-token loss divided by ln 2 and by the model's
    characters per token on the validation text."""
    cpt = results.set_index("tokenizer").chars_per_token
    out = curves.copy()
    out["val_bits_per_char"] = out.val_loss / 0.6931471805599453 / out.tokenizer.map(cpt)
    return out


def bpe_figure(results: pd.DataFrame, curves: pd.DataFrame):
    from ..plotting import line_pair

    return line_pair(bpe_curves_bits(results, curves), "iter", "val_bits_per_char", "tokenizer", points=True,
                     title="The same model on three tokenizations",
                     subtitle="The chapter's GPT, the same steps of 24 x 64 tokens; validation loss per character",
                     xlab="Training step", ylab="Validation bits per character",
                     colors={"character": "#D8433B", "byte BPE (512)": "#3B7DD8", "byte BPE (1024)": "#7FB069"})


@section("14.56", "Tokenization")
def run(ctx):
    df = tokenizer_table()
    trace = merge_trace()
    walked = BPETokenizer().train(SENTENCE, vocab_size=256 + MERGES)
    corpus = load_tinyshakespeare()
    rt = round_trip({"character": CharTokenizer().train(corpus),
                     "word (min_freq 10)": WordTokenizer(min_freq=10).train(corpus),
                     "byte BPE (512)": BPETokenizer().train(corpus, 512)})
    results, curves, _, _ = bpe_model_results()
    notes = [provenance("lm_bpe", followups()["mode"]),
             *merge_claims(trace, split_into_tokens(walked, REPLAYED)), *tokenizer_claims(rt, df),
             *bpe_model_claims(results)]
    figs = []
    if ctx.figures:
        figs = ctx.save("tokenization", *tokenizer_figure(df))
        figs += ctx.save("bpe_vs_char", *bpe_figure(results, curves))
    tables = {"tokenizers": df, "bpe_merges": trace, "bpe_vs_char": results, "round_trip": rt}
    return tables, figs, notes


# --- claims: the sentences of §14.56 that interpret its numbers ---------------------------------------------------

@claim_source
def merge_claims(trace: pd.DataFrame, pieces: list[str], frequent: str = "␣the"):
    """The BPE walk-through: when does a merged token first take part in a merge, and how is a new text cut?"""
    reuse = [r for r in trace.itertuples() if any(len(side) > 1 for side in r.merged.split(" + "))]
    first = reuse[0] if reuse else None
    multi = [w for w in _words(pieces) if len(w) > 1]
    return [
        verdict("bpe_reuse", first is not None, step=first.step if first else None,
                new_token=first.new_token if first else None, parts=first.merged.split(" + ") if first else [],
                merges=len(trace), merged=trace.merged.tolist()),
        verdict("bpe_pieces", frequent in pieces and bool(multi), frequent=frequent,
                spelled_out="|".join(multi[0]) if multi else "", pieces=pieces),
    ]


def _words(pieces: list[str]) -> list[list[str]]:
    """The pieces grouped into words: a piece that starts with ␣ (or follows punctuation) starts a new word."""
    words: list[list[str]] = []
    for p in pieces:
        if not words or p.startswith("␣") or not p[0].isalpha() or not words[-1][-1][-1].isalpha():
            words.append([p])
        else:
            words[-1].append(p)
    return [w for w in words if any(c.isalpha() for c in "".join(w))]


@claim_source
def tokenizer_claims(rt: pd.DataFrame, tk: pd.DataFrame):
    """The round trip of an unseen sentence, and the corpus lengths of words against 1,024-token BPE."""
    r = rt.set_index("tokenizer")
    exact = sorted(r.index[r.lossless])
    t = tk.set_index("tokenizer")
    bpe, word = t.tokens["byte BPE (1024)"], t.tokens["word (min_freq 1)"]
    return [
        verdict("rt_only_bpe", exact == ["byte BPE (512)"], lossless=exact),
        verdict("tk_bpe_shorter", bpe < word, bpe_1024=bpe, word=word),
        verdict("tk_bpe_why", bpe < word, bpe_1024=bpe, word=word),
    ]


@claim_source
def bpe_model_claims(results: pd.DataFrame):
    """The three tokenizations trained at equal steps: is the 1,024-token model worse per token yet better per
    character, and did it read more characters?"""
    b = results.set_index("tokenizer")
    big, char = b.loc["byte BPE (1024)"], b.loc["character"]
    worse_per_token = big.nats_per_token > char.nats_per_token
    better_per_char = big.bits_per_char < char.bits_per_char
    return [
        verdict("bpe_turn", worse_per_token and better_per_char, nats=[big.nats_per_token, char.nats_per_token],
                bits=[big.bits_per_char, char.bits_per_char]),
        verdict("bpe_reason", better_per_char and big.chars_seen > char.chars_seen,
                bits=[big.bits_per_char, char.bits_per_char], seen=[big.chars_seen, char.chars_seen]),
    ]
