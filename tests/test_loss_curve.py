"""``lm train`` draws its loss curve beside the checkpoint; a curve that cannot be drawn costs the run nothing."""
from __future__ import annotations

from conftest import tiny_checkpoint

from seqlab.cli import _train_report
from seqlab.text.checkpoint import load_checkpoint

TINY = ["--max-iters", "6", "--batch-size", "4", "--block-size", "16", "--d-model", "16", "--num-layers", "1",
        "--num-heads", "2", "--eval-interval", "2"]


def test_the_curve_is_a_png_beside_the_checkpoint(tmp_path, capsys):
    ckpt = tiny_checkpoint(tmp_path, 5_000, TINY)
    png = ckpt / "loss_curve.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"loss curve: {png}" in capsys.readouterr().out
    assert len(load_checkpoint(ckpt)[2]["history"]) == 3  # the three evaluations it draws


def test_a_curve_that_cannot_be_written_is_a_warning(tmp_path, capsys, monkeypatch):
    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_train_report, "write_loss_curve", fail)
    ckpt = tiny_checkpoint(tmp_path, 5_000, TINY)  # exit 0: the run and its checkpoint are whole
    assert not (ckpt / "loss_curve.png").exists()
    assert "seqlab: warning: the loss curve was not written" in capsys.readouterr().err
