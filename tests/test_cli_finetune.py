"""Fine-tuning (``lm train --init-from``) and resuming: a run starts from another's weights without touching it,
and a resume on another text, or from another source, is refused in one line naming the difference."""
from __future__ import annotations

import pytest
import torch
from conftest import tiny_checkpoint

from seqlab.cli import main
from seqlab.files import sha256_file
from seqlab.text.checkpoint import CHECKPOINT_FILE, load_checkpoint

TINY = ["--max-iters", "6", "--batch-size", "4", "--block-size", "16", "--d-model", "16", "--num-layers", "1",
        "--num-heads", "2", "--eval-interval", "3"]
OTHER = ("The licensee may copy and distribute verbatim copies of the Program's source code as you receive it, in "
         "any medium, provided that you conspicuously publish an appropriate copyright notice. ") * 40


@pytest.fixture
def base(tmp_path):
    return tiny_checkpoint(tmp_path, 20_000, TINY)


@pytest.fixture
def other(tmp_path):
    f = tmp_path / "other.txt"
    f.write_text(OTHER, encoding="utf-8")
    return f


def _one_line(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("seqlab: error: "), err
    return err[0]


def test_resuming_on_another_text_is_refused_naming_both(base, other, capsys):
    line = _one_line(capsys, ["lm", "train", "--text", str(other), "--out", str(base), *TINY])
    assert "was trained on" in line and "t.txt (20,000 characters)" in line and f"--init-from {base}" in line


def test_fine_tuning_starts_from_the_source_weights_and_never_writes_there(base, other, tmp_path, capsys):
    before = sha256_file(base / CHECKPOINT_FILE)
    src, tok, _ = load_checkpoint(base)
    out = tmp_path / "ft"
    assert main(["lm", "train", "--init-from", str(base), "--text", str(other), "--out", str(out),
                 "--max-iters", "1", "--eval-interval", "1", "--batch-size", "4"]) == 0
    said = capsys.readouterr().out
    assert sha256_file(base / CHECKPOINT_FILE) == before  # the source is untouched
    model, tok2, state = load_checkpoint(out)
    assert tok2.id_to_token == tok.id_to_token and model.config == src.config
    # one step from the source's weights: close to them, and not a fresh initialisation
    moved = max((a - b).abs().max().item() for a, b in zip(model.parameters(), src.parameters()))
    assert 0 < moved < 0.1
    prov = state["extra"]["provenance"]
    assert prov["init_from"]["path"] == str(base.resolve()) and prov["text"]["characters"] == len(OTHER)
    unknown = [ch for ch in dict.fromkeys(OTHER) if ch not in tok.token_to_id]
    assert ("are read as <unk>" in said) == bool(unknown)


def test_a_fine_tuning_run_resumes_only_with_its_source(base, other, tmp_path, capsys):
    out = tmp_path / "ft"
    argv = ["lm", "train", "--init-from", str(base), "--text", str(other), "--out", str(out), "--max-iters", "2",
            "--eval-interval", "1", "--batch-size", "4"]
    assert main(argv) == 0
    assert main([*argv[:-6], "--max-iters", "3", "--eval-interval", "1", "--batch-size", "4"]) == 0  # resumes
    capsys.readouterr()
    assert load_checkpoint(out)[2]["iteration"] == 3
    line = _one_line(capsys, ["lm", "train", "--text", str(other), "--out", str(out), *TINY])
    assert f"holds a run that started from {base.resolve()}" in line and "asks for no --init-from" in line


@pytest.mark.parametrize("extra, says", [(["--d-model", "32"], "--d-model 32: --init-from"),
                                         (["--tokenizer", "bpe"], "--tokenizer bpe: --init-from")])
def test_a_shape_option_that_disagrees_with_the_source_is_refused(base, other, tmp_path, capsys, extra, says):
    line = _one_line(capsys, ["lm", "train", "--init-from", str(base), "--text", str(other), "--out",
                              str(tmp_path / "ft"), *extra])
    assert says in line and "leave" in line


@pytest.mark.parametrize("where", ["same", "inside"])
def test_the_source_folder_is_never_the_output(base, other, capsys, where):
    out = base if where == "same" else base / "ft"
    line = _one_line(capsys, ["lm", "train", "--init-from", str(base), "--text", str(other), "--out", str(out)])
    assert "overlap" in line


def test_a_text_the_source_cannot_read_is_refused(base, tmp_path, capsys):
    greek = tmp_path / "greek.txt"
    greek.write_text("Μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος " * 50, encoding="utf-8")
    line = _one_line(capsys, ["lm", "train", "--init-from", str(base), "--text", str(greek), "--out",
                              str(tmp_path / "ft")])
    assert "unknown to the tokenizer of --init-from" in line and "more than 5%" in line


def test_an_exported_folder_can_be_the_source(base, other, tmp_path, capsys):
    assert main(["lm", "export", "--checkpoint", str(base), "--out", str(tmp_path / "hf")]) == 0
    assert main(["lm", "train", "--init-from", str(tmp_path / "hf"), "--text", str(other), "--out",
                 str(tmp_path / "ft"), "--max-iters", "1", "--eval-interval", "1", "--batch-size", "4"]) == 0
    capsys.readouterr()
    src, _, _ = load_checkpoint(base)
    model, _, _ = load_checkpoint(tmp_path / "ft")
    assert model.config.d_model == src.config.d_model and model.config.positional == src.config.positional
    assert torch.isfinite(next(model.parameters())).all()
