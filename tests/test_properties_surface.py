"""Property-based guards on the newer surface: random --nproc and torchrun environments, the sampling flags
beyond temperature, and text with lone surrogates and NULs for every tokenizer. Each ends in valid output or one
clear error line (exit 2), never a traceback, an internal error or a hang."""
from __future__ import annotations

import pytest
from conftest import tiny_checkpoint
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from seqlab.cli import main
from seqlab.text import BPETokenizer, CharTokenizer, WordTokenizer
from seqlab.text.corpus import load_tinyshakespeare
from seqlab.text.tokenizers import UnencodableTextError

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TINY = ["--max-iters", "2", "--block-size", "8", "--batch-size", "4", "--eval-interval", "1", "--d-model", "8",
        "--num-layers", "1", "--num-heads", "2", "--warmup", "0"]
#: text that may hold what no file can: lone surrogates (category Cs), beside NULs and ordinary characters
RAW_TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(["\0", "\ud800", "\udfff", "\udcff", "a"])),
                   max_size=40)


def outcome(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    assert code in (0, 2), (argv, code, out.err[-2000:])
    event(f"exit {code}")
    if code == 2:
        lines = out.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("seqlab: error: "), (argv, out.err)
    return code, out.out, out.err


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("surface"), 3000, TINY)


@SETTINGS
@given(penalty=st.one_of(st.none(), st.floats(0.5, 3.0).map(str), st.sampled_from(["0", "-1", "nan", "x", "1e9"])),
       ngram=st.one_of(st.none(), st.integers(-1, 5).map(str), st.just("99999999999999999999")),
       stops=st.lists(RAW_TEXT, max_size=2), samples=st.one_of(st.integers(-1, 3).map(str), st.just("100000")),
       prompt=RAW_TEXT, greedy=st.booleans())
def test_the_sampling_flags(capsys, checkpoint, penalty, ngram, stops, samples, prompt, greedy):
    argv = ["lm", "sample", "--checkpoint", str(checkpoint), "--max-new-tokens", "8", "--num-samples", samples,
            "--prompt", prompt]
    if penalty is not None:
        argv += ["--repetition-penalty", penalty]
    if ngram is not None:
        argv += ["--no-repeat-ngram-size", ngram]
    for s in stops:
        argv += ["--stop", s]
    if greedy:
        argv.append("--greedy")
    code, out, err = outcome(capsys, argv)
    if _has_surrogate(prompt) or any(_has_surrogate(s) for s in stops):
        assert code == 2 and "not valid Unicode" in err, err


def _train(cls, text):
    return cls().train(text, 260) if cls is BPETokenizer else cls().train(text)


@pytest.mark.parametrize("cls", [CharTokenizer, WordTokenizer, BPETokenizer], ids=lambda c: c.__name__)
@settings(max_examples=60, deadline=None)
@given(text=RAW_TEXT.filter(len), other=RAW_TEXT)
def test_every_tokenizer_takes_any_str_or_names_the_bad_character(cls, text, other, tmp_path_factory):
    try:
        tok = _train(cls, text)
    except UnencodableTextError as e:
        assert _has_surrogate(text)
        first = next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)
        assert f"character {first:,} is a lone surrogate" in str(e)
        return
    except ValueError as e:  # a text with nothing to learn (WordTokenizer on whitespace alone) is refused too
        assert "empty" in str(e) or "nothing" in str(e), e
        return
    assert not _has_surrogate(text)
    path = tmp_path_factory.mktemp("tok") / "t.tok"
    tok.save(path)  # whatever trained can be saved and loaded
    assert type(tok).load(path).encode(text) == tok.encode(text)
    if _has_surrogate(other):
        with pytest.raises(UnencodableTextError):
            tok.encode(other)
    else:
        assert all(0 <= i < tok.vocab_size for i in tok.encode(other))


_ENV_VALUES = st.one_of(st.integers(-2, 3).map(str), st.sampled_from(["", "abc", "1.5", "99999999999999999999"]))


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(nproc=st.sampled_from(["1", "2", "0", "x"]), rank=st.one_of(st.none(), _ENV_VALUES),
       world=st.one_of(st.none(), _ENV_VALUES), local=st.one_of(st.none(), _ENV_VALUES),
       port=st.one_of(st.none(), st.sampled_from(["0", "1", "70000", "http", ""])))
def test_random_process_counts_and_torchrun_environments(capsys, monkeypatch, tmp_path_factory, nproc, rank, world,
                                                         local, port):
    text = tmp_path_factory.mktemp("env") / "t.txt"
    text.write_text(load_tinyshakespeare()[:3000], encoding="utf-8")
    for name, value in (("RANK", rank), ("WORLD_SIZE", world), ("LOCAL_RANK", local), ("MASTER_PORT", port)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("SEQLAB_RENDEZVOUS_TIMEOUT", "2")  # a lone rank of a larger world gives up soon
    code, _, err = outcome(capsys, ["lm", "train", "--text", str(text), "--out", str(text.parent / "c"),
                                    "--nproc", nproc, *TINY])
    if code == 0:
        assert (text.parent / "c" / "checkpoint.safetensors").is_file()
