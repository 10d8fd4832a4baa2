"""Tokenizers trained from scratch: characters, words, byte-level BPE.

Each class adds one capability to the same interface: ``train``, ``encode``,
``decode``, ``save``, ``load``. Files are UTF-8 text with a versioned header
line, ``seqlab-tokenizer 1 <kind>``; a file with another header, a wrong kind or
a malformed line raises :class:`TokenizerFormatError`.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from ..errors import InvalidParameterError, SeqlabError
from ..store import atomic_write

__all__ = ["Tokenizer", "CharTokenizer", "WordTokenizer", "BPETokenizer", "TokenizerFormatError", "load_tokenizer",
           "loads_tokenizer"]

FORMAT_VERSION = 1
UNK = "<unk>"

# GPT-2-style pre-split: contractions, optional space + letters / digits / other symbols, whitespace runs
PRE_SPLIT = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")
_WORDS = re.compile(r"\w+|[^\w\s]|\s+")


class TokenizerFormatError(SeqlabError, ValueError):
    """A tokenizer file that is not a valid seqlab tokenizer of the expected kind."""


class Tokenizer:
    kind = "base"

    def __init__(self):
        self.id_to_token: list[str] = []
        self.token_to_id: dict[str, int] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.id_to_token)

    def _set_vocab(self, tokens: list[str]) -> None:
        self.id_to_token = list(tokens)
        self.token_to_id = {t: i for i, t in enumerate(self.id_to_token)}

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        try:
            return "".join(self.id_to_token[i] for i in ids)
        except IndexError:
            raise InvalidParameterError(f"token id outside the vocabulary of {self.vocab_size}") from None

    def _payload(self) -> dict:
        return {"tokens": self.id_to_token}

    def _restore(self, payload: dict) -> None:
        self._set_vocab(payload["tokens"])

    def dumps(self) -> str:
        """The tokenizer file's text: a versioned header line, then the JSON payload."""
        return f"seqlab-tokenizer {FORMAT_VERSION} {self.kind}\n" + json.dumps(self._payload(), ensure_ascii=False) + "\n"

    def save(self, path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, self.dumps())

    @classmethod
    def load(cls, path):
        tok = load_tokenizer(path)
        if not isinstance(tok, cls):
            raise TokenizerFormatError(f"{path}: holds a {tok.kind} tokenizer, not {cls.kind}")
        return tok


class CharTokenizer(Tokenizer):
    """One token per Unicode character seen in training, plus ``<unk>`` (id 0) for unseen ones."""

    kind = "char"

    def train(self, text: str) -> "CharTokenizer":
        if not text:
            raise InvalidParameterError("cannot train a tokenizer on empty text")
        self._set_vocab([UNK] + sorted(set(text)))
        return self

    def encode(self, text: str) -> list[int]:
        return [self.token_to_id.get(c, 0) for c in text]


class WordTokenizer(Tokenizer):
    """Words, punctuation and whitespace runs; tokens seen fewer than ``min_freq`` times map to ``<unk>``."""

    kind = "word"

    def __init__(self, min_freq: int = 1):
        super().__init__()
        if min_freq < 1:
            raise InvalidParameterError(f"min_freq must be >= 1, got {min_freq}")
        self.min_freq = min_freq

    def train(self, text: str) -> "WordTokenizer":
        if not text:
            raise InvalidParameterError("cannot train a tokenizer on empty text")
        counts = Counter(_WORDS.findall(text))
        kept = sorted((t for t, c in counts.items() if c >= self.min_freq), key=lambda t: (-counts[t], t))
        self._set_vocab([UNK] + kept)
        return self

    def encode(self, text: str) -> list[int]:
        return [self.token_to_id.get(t, 0) for t in _WORDS.findall(text)]

    def _payload(self) -> dict:
        return {"tokens": self.id_to_token, "min_freq": self.min_freq}

    def _restore(self, payload: dict) -> None:
        super()._restore(payload)
        self.min_freq = int(payload["min_freq"])


class BPETokenizer(Tokenizer):
    """Byte-level byte-pair encoding: 256 byte tokens, then ``vocab_size - 256`` learned merges.

    Training keeps pair counts and, for every pair, the set of distinct chunks it
    occurs in; a merge rewrites only those chunks and adjusts the counts by the
    pairs it removes and creates, instead of recounting the corpus.
    """

    kind = "bpe"

    def __init__(self):
        super().__init__()
        self.merges: dict[tuple[int, int], int] = {}
        self.token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    def train(self, text: str, vocab_size: int) -> "BPETokenizer":
        if not text:
            raise InvalidParameterError("cannot train a tokenizer on empty text")
        if vocab_size < 256:
            raise InvalidParameterError(f"vocab_size must be >= 256 (the byte alphabet), got {vocab_size}")
        chunk_freq = Counter(PRE_SPLIT.findall(text))
        words = [list(c.encode("utf-8")) for c in chunk_freq]
        freqs = list(chunk_freq.values())
        pair_counts: Counter = Counter()
        where: dict[tuple[int, int], set[int]] = defaultdict(set)
        for w, (ids, f) in enumerate(zip(words, freqs)):
            for pair in zip(ids, ids[1:]):
                pair_counts[pair] += f
                where[pair].add(w)
        self.merges, self.token_bytes, self._cache = {}, [bytes([i]) for i in range(256)], {}
        for new_id in range(256, vocab_size):
            if not pair_counts:
                break  # every chunk is a single token already
            # most frequent pair; ties go to the smallest pair so the result is deterministic
            best = max(pair_counts.items(), key=lambda kv: (kv[1], (-kv[0][0], -kv[0][1])))[0]
            if pair_counts[best] < 1:
                break
            self.merges[best] = new_id
            self.token_bytes.append(self.token_bytes[best[0]] + self.token_bytes[best[1]])
            for w in list(where.pop(best, ())):
                ids, f = words[w], freqs[w]
                for pair in zip(ids, ids[1:]):  # retract this chunk's old pairs
                    pair_counts[pair] -= f
                    if pair_counts[pair] <= 0:
                        del pair_counts[pair]
                merged = _merge(ids, best, new_id)
                words[w] = merged
                for pair in zip(merged, merged[1:]):
                    pair_counts[pair] += f
                    where[pair].add(w)
            pair_counts.pop(best, None)
        self._sync_vocab()
        return self

    def _sync_vocab(self) -> None:
        self.id_to_token = [b.decode("utf-8", errors="replace") for b in self.token_bytes]

    def _encode_chunk(self, chunk: str) -> list[int]:
        cached = self._cache.get(chunk)
        if cached is not None:
            return cached
        ids = list(chunk.encode("utf-8"))
        while len(ids) > 1:
            pair = min(zip(ids, ids[1:]), key=lambda p: self.merges.get(p, float("inf")))
            if pair not in self.merges:
                break
            ids = _merge(ids, pair, self.merges[pair])
        if len(self._cache) < 100_000:
            self._cache[chunk] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for chunk in PRE_SPLIT.findall(text):
            out.extend(self._encode_chunk(chunk))
        return out

    def decode(self, ids: list[int]) -> str:
        try:
            data = b"".join(self.token_bytes[i] for i in ids)
        except IndexError:
            raise InvalidParameterError(f"token id outside the vocabulary of {self.vocab_size}") from None
        return data.decode("utf-8", errors="replace")

    def _payload(self) -> dict:
        # merges in rank order; each line of the vocabulary follows from them
        return {"merges": [[a, b] for (a, b), _ in sorted(self.merges.items(), key=lambda kv: kv[1])]}

    def _restore(self, payload: dict) -> None:
        self.merges, self.token_bytes, self._cache = {}, [bytes([i]) for i in range(256)], {}
        for rank, pair in enumerate(payload["merges"]):
            a, b = int(pair[0]), int(pair[1])
            new_id = 256 + rank
            if not (0 <= a < new_id and 0 <= b < new_id):
                raise TokenizerFormatError(f"merge {rank} refers to an unknown token ({a}, {b})")
            self.merges[(a, b)] = new_id
            self.token_bytes.append(self.token_bytes[a] + self.token_bytes[b])
        self._sync_vocab()


def _merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out, i, n = [], 0, len(ids)
    while i < n:
        if i < n - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


_KINDS = {cls.kind: cls for cls in (CharTokenizer, WordTokenizer, BPETokenizer)}


def load_tokenizer(path) -> Tokenizer:
    """Read any seqlab tokenizer file, checking its header and contents."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TokenizerFormatError(f"{path}: not a UTF-8 text file") from None
    return loads_tokenizer(text, str(path))


def loads_tokenizer(text: str, path: str = "tokenizer") -> Tokenizer:
    """A tokenizer from the text :meth:`Tokenizer.dumps` wrote; ``path`` names the source in errors."""
    header, _, body = text.partition("\n")
    parts = header.split()
    if len(parts) != 3 or parts[0] != "seqlab-tokenizer":
        raise TokenizerFormatError(f"{path}: not a seqlab tokenizer file (bad header)")
    if parts[1] != str(FORMAT_VERSION):
        raise TokenizerFormatError(f"{path}: format version {parts[1]}, this seqlab reads {FORMAT_VERSION}")
    if parts[2] not in _KINDS:
        raise TokenizerFormatError(f"{path}: unknown tokenizer kind {parts[2]!r}")
    try:
        payload = json.loads(body)
        tok = _KINDS[parts[2]]()
        tok._restore(payload)
    except TokenizerFormatError:
        raise
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise TokenizerFormatError(f"{path}: corrupt {parts[2]} tokenizer ({type(e).__name__})") from None
    return tok
