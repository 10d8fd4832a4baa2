"""Tokenizers trained from scratch: characters, words, byte-level BPE.

Each class adds one capability to the same interface: ``train``, ``encode``,
``decode``, ``save``, ``load``. Files are UTF-8 text with a versioned header
line, ``seqlab-tokenizer 1 <kind>``; a file with another header, a wrong kind or
a malformed line raises :class:`TokenizerFormatError`.

Round trip, ``decode(encode(text)) == text``:

* :class:`BPETokenizer` holds for any ``str``: it works on UTF-8 bytes and all
  256 bytes are in its vocabulary, so nothing is ever unknown.
* :class:`CharTokenizer` and :class:`WordTokenizer` hold for text made of the
  characters (words) they kept in training. Anything else becomes ``<unk>``
  (id 0, decoded as the five characters ``<unk>``): the tokens count and the
  position survive, the text does not. Nothing is dropped. ``encode(text,
  strict=True)`` raises :class:`UnknownTokenError` instead, for callers that
  need the round trip.

``decode`` takes integer ids (``int``, numpy or 0-d torch integers) in
``[0, vocab_size)``; a negative id, one past the vocabulary, a bool or a
non-integer raises rather than indexing from the end or truncating.
"""
from __future__ import annotations

import json
import operator
import re
from collections import Counter
from pathlib import Path

import regex

from ..errors import InvalidParameterError, SeqlabError
from ..files import atomic_write
from .bpe_merges import learn_merges, merge_pair
from .tokenizer_input import (TokenizerInputTypeError, UnencodableTextError, check_encodable, check_int,
                              check_text)

__all__ = ["UnencodableTextError", "check_encodable", "Tokenizer", "CharTokenizer", "WordTokenizer", "BPETokenizer", "TokenizerFormatError", "UnknownTokenError",
           "TokenizerInputTypeError", "load_tokenizer", "loads_tokenizer"]

FORMAT_VERSION = 1
UNK = "<unk>"

# GPT-2's pre-split (the pattern Hugging Face's ByteLevel pre-tokenizer uses): contractions, an optional
# space + letters / numbers / anything else, whitespace runs. The classes cover every character, so the
# chunks always join back to the text; stdlib ``re`` has no \p{L}, and its approximation lost ``_``.
PRE_SPLIT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
# words, single other symbols, whitespace runs: \w, \s and [^\w\s] cover every character too
_WORDS = re.compile(r"\w+|[^\w\s]|\s+")


class TokenizerFormatError(SeqlabError, ValueError):
    """A tokenizer file that is not a valid seqlab tokenizer of the expected kind.

    Example:
        >>> loads_tokenizer("not a tokenizer", "t.txt")
        Traceback (most recent call last):
        ...
        seqlab.text.tokenizers.TokenizerFormatError: t.txt: not a seqlab tokenizer file (bad header)
    """


class UnknownTokenError(SeqlabError, KeyError):
    """``encode(..., strict=True)`` met a character or word outside the vocabulary.

    Example:
        >>> CharTokenizer().train("ab").encode("abc", strict=True)
        Traceback (most recent call last):
        ...
        seqlab.text.tokenizers.UnknownTokenError: character 'c' is not in the vocabulary of 3 (it would encode as <unk>)
    """

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


class Tokenizer:
    """What every tokenizer does: ``train`` on a text, ``encode`` text to ids, ``decode`` ids back, ``save``, ``load``.

    Use one of :class:`CharTokenizer`, :class:`WordTokenizer` or :class:`BPETokenizer`; :func:`load_tokenizer`
    reads a file of any of them.

    Attributes:
        id_to_token: the token of each id (its text).
        token_to_id: the id of each token.

    Example:
        >>> import os, tempfile
        >>> tok = CharTokenizer().train("hello world")
        >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.txt")
        >>> tok.save(path)
        >>> CharTokenizer.load(path).encode("hold") == tok.encode("hold")
        True
    """

    kind = "base"

    def __init__(self):
        self.id_to_token: list[str] = []
        self.token_to_id: dict[str, int] = {}

    @property
    def vocab_size(self) -> int:
        """Number of token ids (``<unk>`` included)."""
        return len(self.id_to_token)

    def _set_vocab(self, tokens: list[str]) -> None:
        self.id_to_token = list(tokens)
        self.token_to_id = {t: i for i, t in enumerate(self.id_to_token)}

    def encode(self, text: str, *, strict: bool = False) -> list[int]:
        """The token ids of ``text``; a piece outside the vocabulary is ``<unk>`` (id 0), or with ``strict``
        raises :class:`UnknownTokenError`. Text that is not a ``str`` raises ``TokenizerInputTypeError``."""
        raise NotImplementedError

    def _lookup(self, pieces: list[str], strict: bool, what: str) -> list[int]:
        ids = [self.token_to_id.get(p, 0) for p in pieces]
        if strict and 0 in ids:
            bad = pieces[ids.index(0)]
            raise UnknownTokenError(f"{what} {bad!r} is not in the vocabulary of {self.vocab_size} "
                                    f"(it would encode as {UNK})")
        return ids

    def _check_ids(self, ids) -> list[int]:
        """``ids`` as a list of ints in range; list indexing alone would accept -1 (the last token) and bools."""
        try:
            items = list(ids)
        except TypeError:
            raise TokenizerInputTypeError(f"token ids must be an iterable of ints, got {type(ids).__name__}") from None
        n = self.vocab_size
        out = []
        for pos, i in enumerate(items):
            if isinstance(i, bool):
                raise TokenizerInputTypeError(f"token id at position {pos} is a bool, not an int")
            try:
                i = operator.index(i)
            except TypeError:
                raise TokenizerInputTypeError(f"token id at position {pos} is a {type(i).__name__}, "
                                              "not an int") from None
            if not 0 <= i < n:
                raise InvalidParameterError(f"token id {i} at position {pos} is outside the vocabulary "
                                            f"[0, {n})")
            out.append(i)
        return out

    def decode(self, ids: list[int]) -> str:
        """The text of ``ids``, integers in ``[0, vocab_size)``; any other id raises
        :class:`~seqlab.errors.InvalidParameterError` (a negative one does not index from the end)."""
        return "".join(self.id_to_token[i] for i in self._check_ids(ids))

    def _payload(self) -> dict:
        return {"tokens": self.id_to_token}

    def _restore(self, payload: dict) -> None:
        self._set_vocab(payload["tokens"])

    def dumps(self) -> str:
        """The tokenizer file's text: a versioned header line, then the JSON payload."""
        return f"seqlab-tokenizer {FORMAT_VERSION} {self.kind}\n" + json.dumps(self._payload(), ensure_ascii=False) + "\n"

    def save(self, path) -> None:
        """Write :meth:`dumps` to ``path`` (whole or not at all), making its folder."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, self.dumps())

    @classmethod
    def load(cls, path):
        """The tokenizer saved at ``path``; a file of another kind raises :class:`TokenizerFormatError`."""
        tok = load_tokenizer(path)
        if not isinstance(tok, cls):
            raise TokenizerFormatError(f"{path}: holds a {tok.kind} tokenizer, not {cls.kind}")
        return tok


class CharTokenizer(Tokenizer):
    """One token per Unicode code point seen in training, plus ``<unk>`` (id 0).

    ``decode(encode(text)) == text`` for every text whose characters all occur in
    the training text. An unseen character encodes as ``<unk>`` (one id for one
    character, never dropped); with ``strict=True`` it raises
    :class:`UnknownTokenError` instead. The ids follow the characters' order.

    Example:
        >>> tok = CharTokenizer().train("hello world")
        >>> tok.vocab_size, tok.encode("hold"), tok.decode(tok.encode("hold"))
        (9, [4, 6, 5, 2], 'hold')
        >>> tok.encode("hey")  # "y" was not in the training text
        [4, 3, 0]
    """

    kind = "char"

    def train(self, text: str) -> "CharTokenizer":
        """Keep every character of ``text`` (non-empty); returns the tokenizer."""
        if not check_text(text):
            raise InvalidParameterError("cannot train a tokenizer on empty text")
        self._set_vocab([UNK] + sorted(set(text)))
        return self

    def encode(self, text: str, *, strict: bool = False) -> list[int]:
        return self._lookup(list(check_text(text)), strict, "character")


class WordTokenizer(Tokenizer):
    """Words (``\\w+``), single other symbols and whitespace runs; those seen fewer than ``min_freq`` times
    in training map to ``<unk>`` (id 0).

    The split covers every character, so ``decode(encode(text)) == text`` for every
    text whose pieces were all kept in training (with ``min_freq=1``: every text
    made of the training text's pieces, such as the training text itself). An
    unknown piece encodes as one ``<unk>``, never dropped; with ``strict=True`` it
    raises :class:`UnknownTokenError` instead. Frequent pieces get the small ids.

    Args:
        min_freq: the fewest occurrences in training that keep a piece, >= 1.

    Example:
        >>> tok = WordTokenizer().train("the cat sat on the mat")
        >>> tok.encode("the mat"), tok.id_to_token[:3]
        ([2, 1, 4], ['<unk>', ' ', 'the'])
    """

    kind = "word"

    def __init__(self, min_freq: int = 1):
        super().__init__()
        min_freq = check_int("min_freq", min_freq)
        if min_freq < 1:
            raise InvalidParameterError(f"min_freq must be >= 1, got {min_freq}")
        self.min_freq = min_freq

    def train(self, text: str) -> "WordTokenizer":
        """Keep the pieces of ``text`` (non-empty) seen at least ``min_freq`` times; returns the tokenizer."""
        if not check_text(text):
            raise InvalidParameterError("cannot train a tokenizer on empty text")
        counts = Counter(_WORDS.findall(text))
        kept = sorted((t for t, c in counts.items() if c >= self.min_freq), key=lambda t: (-counts[t], t))
        self._set_vocab([UNK] + kept)
        return self

    def encode(self, text: str, *, strict: bool = False) -> list[int]:
        return self._lookup(_WORDS.findall(check_text(text)), strict, "token")

    def _payload(self) -> dict:
        return {"tokens": self.id_to_token, "min_freq": self.min_freq}

    def _restore(self, payload: dict) -> None:
        super()._restore(payload)
        self.min_freq = int(payload["min_freq"])


class BPETokenizer(Tokenizer):
    """Byte-level byte-pair encoding: 256 byte tokens, then ``vocab_size - 256`` learned merges.

    Every byte is a token, so any ``str`` round-trips, whatever the training text
    (``strict`` is accepted for the common interface; nothing is ever unknown).
    Text is first cut by ``PRE_SPLIT`` and merges never cross a chunk; with the
    same merges, the ids are those of Hugging Face's byte-level BPE.
    ``decode`` of an arbitrary id sequence may cut a multi-byte character; those
    bytes decode as U+FFFD.

    Training (``seqlab.text.bpe_merges``) updates its pair counts merge by merge, never recounting the text.

    Example:
        >>> tok = BPETokenizer().train("low lower lowest " * 20, vocab_size=260)
        >>> tok.vocab_size, tok.encode(" lowest"), tok.decode(tok.encode("héllo"))
        (260, [259, 115, 116], 'héllo')
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
        """Learn up to ``vocab_size - 256`` merges (``vocab_size`` >= 256) from ``text``; returns the tokenizer."""
        if not check_text(text):
            raise InvalidParameterError("cannot train a tokenizer on empty text")
        vocab_size = check_int("vocab_size", vocab_size)
        if vocab_size < 256:
            raise InvalidParameterError(f"vocab_size must be >= 256 (the byte alphabet), got {vocab_size}")
        self.merges, self.token_bytes = learn_merges(Counter(PRE_SPLIT.findall(text)), vocab_size)
        self._cache = {}
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
            ids = merge_pair(ids, pair, self.merges[pair])
        if len(self._cache) < 100_000:
            self._cache[chunk] = ids
        return ids

    def encode(self, text: str, *, strict: bool = False) -> list[int]:
        out: list[int] = []
        for chunk in PRE_SPLIT.findall(check_text(text)):
            out.extend(self._encode_chunk(chunk))
        return out

    def decode(self, ids: list[int]) -> str:
        data = b"".join(self.token_bytes[i] for i in self._check_ids(ids))
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


_KINDS = {cls.kind: cls for cls in (CharTokenizer, WordTokenizer, BPETokenizer)}


def load_tokenizer(path) -> Tokenizer:
    """Read any seqlab tokenizer file, checking its header and contents.

    Args:
        path: a file :meth:`Tokenizer.save` wrote.

    Returns:
        A :class:`CharTokenizer`, :class:`WordTokenizer` or :class:`BPETokenizer`, as the file says.

    Raises:
        TokenizerFormatError: not a seqlab tokenizer file, another format version, or a damaged one.
        OSError: the file cannot be read.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.txt")
        >>> WordTokenizer().train("a b a").save(path)
        >>> type(load_tokenizer(path)).__name__
        'WordTokenizer'
    """
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
