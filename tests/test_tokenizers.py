import pytest
from conftest import SHARED, require_shared

from seqlab.text import BPETokenizer, CharTokenizer, TokenizerFormatError, WordTokenizer, load_tokenizer

CORPUS = SHARED / "data" / "tinyshakespeare.txt"

TRAIN = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 3
         + "naïve café — Ünïcödé 日本語 text 🙂🚀 emoji 👩‍👩‍👧 family\n")
INPUTS = {
    "ascii": "Before we proceed, hear me speak.",
    "unicode": "naïve café Ünïcödé 日本語",
    "emoji": "🙂🚀 👩‍👩‍👧 text",
    "whitespace": "\n\nAll:\nSpeak, speak.\n",
}


def make(cls):
    if cls is BPETokenizer:
        return BPETokenizer().train(TRAIN, 300)
    return cls().train(TRAIN)


@pytest.mark.parametrize("cls", [CharTokenizer, WordTokenizer, BPETokenizer])
@pytest.mark.parametrize("name", list(INPUTS))
def test_round_trip_seen_text(cls, name):
    """Every input is made of characters and words the training text contains."""
    tok = make(cls)
    ids = tok.encode(INPUTS[name])
    assert 0 not in ids or cls is BPETokenizer  # no <unk> for seen text
    assert tok.decode(ids) == INPUTS[name]


@pytest.mark.parametrize("name", list(INPUTS))
def test_bpe_round_trips_unseen_text_byte_for_byte(name):
    tok = BPETokenizer().train("aaab abab", 260)
    assert tok.decode(tok.encode(INPUTS[name])) == INPUTS[name]


@pytest.mark.parametrize("cls", [CharTokenizer, WordTokenizer, BPETokenizer])
def test_save_load_identical(cls, tmp_path):
    tok = make(cls)
    path = tmp_path / f"{cls.kind}.tok"
    tok.save(path)
    again = cls.load(path)
    assert type(load_tokenizer(path)) is cls
    for text in INPUTS.values():
        assert again.encode(text) == tok.encode(text)
    assert path.read_text(encoding="utf-8").startswith(f"seqlab-tokenizer 1 {cls.kind}\n")


def test_bpe_hand_worked_merges():
    # Chunks "aaab" and " abab" (the space attaches to the next word). Pair counts:
    # (a,b) 1 + 2 = 3, (a,a) 2, (' ',a) 1, (b,a) 1, so merge 1 is (a,b) -> 256.
    # After it the chunks are [a, a, 256] and [' ', 256, 256]: (a,a) 1, (a,256) 1, (' ',256) 1, (256,256) 1.
    # All tie at 1; ties go to the smallest pair, (' ', 256) -> 257 = b" ab".
    tok = BPETokenizer().train("aaab abab", 258)
    a, b, sp = ord("a"), ord("b"), ord(" ")
    assert list(tok.merges.items()) == [((a, b), 256), ((sp, 256), 257)]
    assert tok.token_bytes[256:] == [b"ab", b" ab"]
    assert tok.encode(" abab") == [257, 256]
    assert tok.encode("aab") == [a, 256]  # "a", then the merged "ab"
    assert tok.decode(tok.encode("aaab abab")) == "aaab abab"


def test_unknowns_and_min_freq():
    word = WordTokenizer(min_freq=2).train("the cat the dog the")
    assert word.encode("the cat") == [word.token_to_id["the"], word.token_to_id[" "], 0]
    char = CharTokenizer().train("abc")
    assert char.encode("abz") == [1, 2, 0]


@pytest.mark.parametrize("bad", ["", None])
def test_training_rejects_empty(bad):
    for tok in (CharTokenizer(), WordTokenizer()):
        with pytest.raises((ValueError, TypeError)):
            tok.train(bad)
    with pytest.raises(ValueError):
        BPETokenizer().train("abc", 100)


@pytest.mark.parametrize("content", [b"", b"not a tokenizer\n{}", b"seqlab-tokenizer 9 bpe\n{}",
                                     b"seqlab-tokenizer 1 bpe\n{\"merges\": [[999, 1]]}",
                                     b"seqlab-tokenizer 1 char\n{broken", b"\xff\xfe\x00binary"])
def test_corrupt_files_raise_format_error(content, tmp_path):
    path = tmp_path / "bad.tok"
    path.write_bytes(content)
    with pytest.raises(TokenizerFormatError):
        load_tokenizer(path)


def test_loading_the_wrong_kind_is_refused(tmp_path):
    CharTokenizer().train("abc").save(tmp_path / "c.tok")
    with pytest.raises(TokenizerFormatError):
        BPETokenizer.load(tmp_path / "c.tok")


def test_save_is_atomic_and_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "t.tok"
    CharTokenizer().train("abc").save(path)
    before = path.read_text(encoding="utf-8")
    import seqlab.store as mod  # every seqlab write goes through store.atomic_write

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(mod.os, "replace", boom)
    with pytest.raises(OSError):
        CharTokenizer().train("xyz").save(path)
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tok"]


def test_bpe_compression_matches_hugging_face_within_2_percent():
    require_shared(CORPUS)
    hf = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    text = CORPUS.read_text(encoding="utf-8")[:300_000]
    ours = BPETokenizer().train(text, 512)
    ref = hf.Tokenizer(models.BPE())
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    ref.train_from_iterator([text], trainers.BpeTrainer(vocab_size=512, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    n_bytes = len(text.encode("utf-8"))
    ours_bpt = n_bytes / len(ours.encode(text))
    ref_bpt = n_bytes / len(ref.encode(text).ids)
    assert ours.vocab_size == ref.get_vocab_size() == 512
    assert abs(ours_bpt / ref_bpt - 1) < 0.02, (ours_bpt, ref_bpt)
    assert ours.decode(ours.encode(text)) == text
