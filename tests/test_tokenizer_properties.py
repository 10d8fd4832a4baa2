"""Properties of every tokenizer over arbitrary Unicode: the round trip, unknowns, and the ids ``decode`` accepts."""
from functools import lru_cache

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from seqlab.errors import InvalidParameterError, SeqlabError
from seqlab.text import BPETokenizer, CharTokenizer, WordTokenizer
from seqlab.text.tokenizers import UNK, TokenizerInputTypeError, UnknownTokenError

CLASSES = [CharTokenizer, WordTokenizer, BPETokenizer]
# characters the pre-split and the word split treat specially: underscores and digits (\w but not letters),
# combining marks, ZWJ emoji, CJK, controls, Unicode-only whitespace (\x1c-\x1f are whitespace to `re` but
# not to `regex`), a BOM, and the apostrophe of the contractions
SPECIAL = list("_0123456789'sdmtlvre \t\n\r\x0b\x0c") + [
    "\u0301", "\u0308", "\u20dd", "\u200d", "\u200b", "\ufeff", "\x00", "\x1b", "\x1c", "\x1f", "\x7f", "\x85",
    "\xa0", "\u2028", "\u3000", "日", "本", "語", "한", "🙂", "👩", "🚀", "🏽", "€", "’", "—", "é", "ß", "ǅ", "Ⅻ", "²",
    "٣", "\U0010ffff", "\ue000"]
TEXT = st.text(alphabet=st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from(SPECIAL)))
EXAMPLES = ["snake_case = my_var__2", "__init__", "_", "x_1 = _2_", "1_000_000", "👩‍👩‍👧 🙂🚀 👍🏽",
            "日本語のテキスト、中文文本。", "e\u0301 n\u0303 a\u0308\u0301", "\x00\x01\x1b[0m\x7f\x1c\x1d",
            "\t\n\r\x0b\x0c \xa0\u2028\u3000", "it's 'S we'll they're I'd", "\ufeffBOM", "  \n\n  end  ",
            "<unk>", "\U0010ffff\ue000", "Ⅻ²٣ 42"]


def with_examples(test):
    for text in EXAMPLES:
        test = example(text)(test)
    return test


def trained_on(cls, text):
    return BPETokenizer().train(text, 300) if cls is BPETokenizer else cls().train(text)


@lru_cache(maxsize=None)
def bpe_on_other_text():
    return BPETokenizer().train("the cat sat on the mat; the dog sat on the log. " * 4, 280)


@pytest.mark.parametrize("cls", CLASSES)
@settings(deadline=None, max_examples=150)
@given(text=TEXT.filter(len))
@with_examples
def test_round_trip_on_the_training_text(cls, text):
    tok = trained_on(cls, text)
    ids = tok.encode(text, strict=True)  # every character / word of `text` is in the vocabulary
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == text


@pytest.mark.parametrize("cls", [CharTokenizer, WordTokenizer])
@settings(deadline=None, max_examples=100)
@given(text=TEXT)
@with_examples
def test_round_trip_on_text_within_a_larger_training_text(cls, text):
    # a symbol is a word-split piece of its own, so the '.' either side keeps text's pieces intact
    tok = cls().train("The quick brown fox." + text + ".jumps over the lazy dog.")
    assert tok.decode(tok.encode(text, strict=True)) == text


@settings(deadline=None, max_examples=200)
@given(text=TEXT)
@with_examples
def test_bpe_round_trips_any_text_whatever_it_was_trained_on(text):
    tok = bpe_on_other_text()
    ids = tok.encode(text)
    assert len(ids) <= len(text.encode("utf-8"))
    assert tok.decode(ids) == text


@settings(deadline=None, max_examples=100)
@given(text=st.text(alphabet="abc_xé🙂\n"))
def test_char_unknowns_are_counted_never_dropped(text):
    tok = CharTokenizer().train("abc_\n")
    ids = tok.encode(text)
    assert len(ids) == len(text)  # one id per character, known or not
    unseen = [c for c in text if c not in "abc_\n"]
    assert ids.count(tok.token_to_id[UNK]) == len(unseen)
    if unseen:
        with pytest.raises(UnknownTokenError, match="not in the vocabulary"):
            tok.encode(text, strict=True)
        assert tok.decode(ids).count(UNK) == len(unseen)
    else:
        assert tok.decode(tok.encode(text, strict=True)) == text


@settings(deadline=None, max_examples=100)
@given(words=st.lists(st.sampled_from(["the", "cat", "dog", " ", ", ", "\n", "my_var", "42", "é"])))
def test_word_strict_raises_exactly_when_the_round_trip_would_fail(words):
    tok = WordTokenizer().train("the cat, my_var\n42")
    text = "".join(words)
    lossless = tok.decode(tok.encode(text)) == text
    if lossless:
        assert tok.decode(tok.encode(text, strict=True)) == text
    else:
        assert UNK in tok.decode(tok.encode(text))  # the loss is a visible placeholder, not a gap
        with pytest.raises(UnknownTokenError):
            tok.encode(text, strict=True)


@pytest.mark.parametrize("cls", CLASSES)
@settings(deadline=None, max_examples=60)
@given(data=st.data())
def test_decode_accepts_every_id_in_range(cls, data):
    tok = trained_on(cls, "abc_ 日本 🙂")
    ids = data.draw(st.lists(st.integers(0, tok.vocab_size - 1)))
    as_type = data.draw(st.sampled_from([int, np.int64, lambda i: torch.tensor(i)]))
    out = tok.decode([as_type(i) for i in ids])
    assert isinstance(out, str)
    assert out == tok.decode(ids)


@pytest.mark.parametrize("cls", CLASSES)
@settings(deadline=None, max_examples=60)
@given(data=st.data())
def test_decode_refuses_ids_outside_the_vocabulary(cls, data):
    tok = trained_on(cls, "abc_ 日本 🙂")
    bad = data.draw(st.one_of(st.integers(max_value=-1), st.integers(min_value=tok.vocab_size)))
    good = data.draw(st.lists(st.integers(0, tok.vocab_size - 1), max_size=3))
    with pytest.raises(InvalidParameterError, match="outside the vocabulary"):
        tok.decode(good + [bad] + good)


@pytest.mark.parametrize("cls", CLASSES)
def test_negative_ids_do_not_index_from_the_end(cls):
    tok = trained_on(cls, "abc")
    assert tok.decode([tok.vocab_size - 1])  # the last token exists ...
    with pytest.raises(InvalidParameterError):
        tok.decode([-1])  # ... and -1 does not silently name it


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("ids", [[1.0], [True], ["a"], "ab", [None], [[1, 2]], 3, None, [torch.tensor([1, 2])]])
def test_decode_refuses_non_integer_ids(cls, ids):
    tok = trained_on(cls, "abc")
    with pytest.raises(TokenizerInputTypeError) as err:
        tok.decode(ids)
    assert isinstance(err.value, InvalidParameterError)
    assert isinstance(err.value, TypeError)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("text", [None, b"abc", 3, ["a", "b"]])
def test_encode_refuses_non_text(cls, text):
    tok = trained_on(cls, "abc")
    with pytest.raises(TokenizerInputTypeError):
        tok.encode(text)


@pytest.mark.parametrize("make", [lambda: WordTokenizer(min_freq="2"), lambda: WordTokenizer(min_freq=1.5),
                                  lambda: BPETokenizer().train("abc", 300.0),
                                  lambda: BPETokenizer().train("abc", "300"), lambda: CharTokenizer().train(b"abc")])
def test_bad_parameter_types_raise_seqlab_errors(make):
    with pytest.raises(SeqlabError) as err:
        make()
    assert isinstance(err.value, TypeError)
