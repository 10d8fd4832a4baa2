"""An exported Hugging Face folder is read like a checkpoint: whole, unchanged since export, self-consistent.

Every damaged folder ends in one ``seqlab: error:`` line and exit 2 from ``lm sample``; random damage
to a folder with its manifest ends in that line or in exactly the samples of the intact folder.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest
from conftest import patient
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file, save_file

from seqlab.cli import main
from seqlab.files import INCOMPLETE, MANIFEST, sha256_file
from seqlab.nn import GPT, GPTConfig
from seqlab.text.export import ExportError, export_hf, load_hf
from seqlab.text.hf_folder import HFFolderError
from seqlab.text.tokenizers import CharTokenizer

TEXT = "ROMEO:\nBut soft, what light through yonder window breaks?\n"
SAMPLE = ["--prompt", "ROMEO:", "--max-new-tokens", "20", "--seed", "3"]


def _export(folder, positional: str = "rotary", tokenizer_text: str = TEXT):
    tok = CharTokenizer().train(tokenizer_text)
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=8,
                          positional=positional)).eval()
    export_hf(model, tok, folder)
    return model, tok


def _error(capsys, folder) -> str:
    assert main(["lm", "sample", "--checkpoint", str(folder), *SAMPLE]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("seqlab: error: "), err
    return err[0]


def _rewrite(folder, name: str, data: bytes, *, manifest: bool) -> None:
    """Replace a file; with ``manifest`` the manifest is updated too, as a second export would have."""
    (folder / name).write_bytes(data)
    if manifest:
        m = json.loads((folder / MANIFEST).read_text())
        m["files"][name].update(bytes=len(data), sha256=sha256_file(folder / name))
        (folder / MANIFEST).write_text(json.dumps(m))


@pytest.mark.parametrize("positional", ["rotary", "learned"])  # GPT-NeoX and GPT-2 folders
def test_one_changed_byte_in_the_weights_is_refused(tmp_path, capsys, positional):
    _export(tmp_path, positional)
    data = bytearray((tmp_path / "model.safetensors").read_bytes())
    data[-5] ^= 0x01  # the last bytes are weights: the file still parses, as another model
    (tmp_path / "model.safetensors").write_bytes(bytes(data))
    line = _error(capsys, tmp_path)
    assert "model.safetensors: does not match the size and sha256 that seqlab-manifest.json recorded" in line


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_naming_the_tensor(tmp_path, capsys, value):
    _export(tmp_path, "learned")
    w = load_file(tmp_path / "model.safetensors")
    w["transformer.h.0.attn.c_attn.bias"][3] = value
    save_file(w, tmp_path / "model.safetensors")
    _rewrite(tmp_path, "model.safetensors", (tmp_path / "model.safetensors").read_bytes(), manifest=True)
    line = _error(capsys, tmp_path)
    assert "tensor transformer.h.0.attn.c_attn.bias holds NaN or infinite values" in line


@pytest.mark.parametrize("config, says", [
    ([1, 2], "config.json: a JSON list, where an object is expected"),
    ({"num_attention_heads": 0}, "num_attention_heads must be a positive whole number, not 0"),
    ({"num_attention_heads": 3}, "num_attention_heads = 3 does not divide hidden_size = 8"),
    ({"hidden_size": True}, "hidden_size must be a positive whole number, not True"),
    ({"max_position_embeddings": 8}, "max_position_embeddings = 8 does not cover the tokenizer's context of 16"),
    ({"num_hidden_layers": 4000}, "describes a model of about"),
])
def test_a_bad_config_is_one_line(tmp_path, capsys, config, says):
    _export(tmp_path)
    if isinstance(config, dict):
        config = {**json.loads((tmp_path / "config.json").read_text()), **config}
    _rewrite(tmp_path, "config.json", json.dumps(config).encode(), manifest=True)
    assert says in _error(capsys, tmp_path)


def test_a_truncated_weights_file_is_one_line(tmp_path, capsys):
    _export(tmp_path)
    data = (tmp_path / "model.safetensors").read_bytes()
    _rewrite(tmp_path, "model.safetensors", data[: len(data) // 2], manifest=True)
    assert "model.safetensors: not a readable safetensors file (truncated or damaged" in _error(capsys, tmp_path)


def test_a_tokenizer_from_another_export_names_the_mismatch(tmp_path, capsys):
    _export(tmp_path / "a")
    _export(tmp_path / "b", tokenizer_text="ab")
    _rewrite(tmp_path / "a", "tokenizer.json", (tmp_path / "b" / "tokenizer.json").read_bytes(), manifest=True)
    line = _error(capsys, tmp_path / "a")
    assert "tokenizer.json: has 3 tokens, but config.json's vocab_size is" in line and "different exports" in line


def test_a_fifo_in_place_of_the_weights_is_refused_at_once(tmp_path):
    _export(tmp_path)
    os.unlink(tmp_path / "model.safetensors")
    os.mkfifo(tmp_path / "model.safetensors")
    # in a process of its own: a blocking open would never return, and the timeout ends the test
    p = subprocess.run([sys.executable, "-m", "seqlab", "lm", "sample", "--checkpoint", str(tmp_path), *SAMPLE],
                       capture_output=True, text=True, timeout=patient(60))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "model.safetensors: a named pipe, not a regular file" in lines[0]


def test_a_folder_marked_incomplete_says_how_to_redo_it(tmp_path, capsys):
    _export(tmp_path)
    (tmp_path / INCOMPLETE).write_text("killed while moving\n")
    line = _error(capsys, tmp_path)
    assert "an export into this folder stopped before it finished" in line
    assert f"seqlab lm export --checkpoint CKPT --out {tmp_path}" in line


def test_a_folder_without_a_manifest_is_read_with_a_warning(tmp_path, capsys):
    _export(tmp_path)
    assert main(["lm", "sample", "--checkpoint", str(tmp_path), *SAMPLE]) == 0
    intact = capsys.readouterr()
    os.unlink(tmp_path / MANIFEST)
    assert main(["lm", "sample", "--checkpoint", str(tmp_path), *SAMPLE]) == 0
    read = capsys.readouterr()
    assert read.out == intact.out
    assert f"has no {MANIFEST}, so its files cannot be checked" in read.err and intact.err == ""
    with pytest.warns(UserWarning, match="cannot be checked"):
        load_hf(tmp_path)


def test_an_export_onto_a_full_disk_is_one_line_and_keeps_the_earlier_export(tmp_path):
    """A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes writes fail as a full disk does."""
    _export(tmp_path / "hf")
    before = {p.name: p.read_bytes() for p in (tmp_path / "hf").iterdir()}
    code = """
import resource, signal, sys, torch
from seqlab.cli import main
from seqlab.nn import GPT, GPTConfig
from seqlab.text.checkpoint import save_checkpoint
from seqlab.text.tokenizers import CharTokenizer
tok = CharTokenizer().train("ROMEO: But soft")
model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=64, num_layers=2, num_heads=2, d_model=64))
save_checkpoint(sys.argv[1], model, tokenizer=tok)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
sys.exit(main(["lm", "export", "--checkpoint", sys.argv[1], "--out", sys.argv[2]]))
"""
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "ckpt"), str(tmp_path / "hf")],
                       capture_output=True, text=True, timeout=patient(300))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "the export could not be written (File too large)" in lines[0]
    assert "keeps what it held before" in lines[0]
    assert {p.name: p.read_bytes() for p in (tmp_path / "hf").iterdir()} == before


_FILES = ["model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json", MANIFEST]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(_FILES), how=st.sampled_from(["flip", "truncate", "append", "delete"]),
       where=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7))
def test_random_damage_is_one_clear_error_or_the_same_model(tmp_path_factory, name, how, where, bit):
    folder = tmp_path_factory.mktemp("hf")
    model, tok = _export(folder)
    path = folder / name
    data = bytearray(path.read_bytes())
    at = int(where * len(data))
    if how == "flip":
        data[at] ^= 1 << bit
    elif how == "truncate":
        data = data[:at]
    elif how == "append":
        data += b"\0"
    if how == "delete":
        path.unlink()
    else:
        path.write_bytes(bytes(data))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a deleted manifest is read with a warning
            back, tok2 = load_hf(folder)
    except ExportError as e:  # one clear line, never a traceback from below
        assert "\n" not in str(e) and str(folder) in str(e)
        return
    # read without complaint: then it is the exported model, exactly
    ids = torch.tensor([tok.encode("ROMEO:")])
    with torch.no_grad():
        assert torch.equal(back(ids)[0], model(ids)[0])
    assert tok2.id_to_token == tok.id_to_token


def test_every_damage_error_is_an_hf_folder_error(tmp_path):
    _export(tmp_path)
    (tmp_path / "tokenizer.json").write_text("[]")
    with pytest.raises(HFFolderError):
        load_hf(tmp_path)
