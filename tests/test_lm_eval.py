"""``seqlab lm eval`` scores every token of a text once, for checkpoints and exported folders alike, and gives
the whole-split loss the long-run benchmark reports for the same model."""
from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_checkpoint

from seqlab.cli import main
from seqlab.errors import InvalidParameterError
from seqlab.experiments.lm_long import split_loss
from seqlab.nn import GPT, GPTConfig
from seqlab.text.checkpoint import load_checkpoint
from seqlab.text.corpus import load_tinyshakespeare, split_train_val
from seqlab.text.scoring import score_text, window_loss
from seqlab.text.tokenizers import CharTokenizer

TINY = ["--max-iters", "8", "--batch-size", "4", "--block-size", "16", "--d-model", "16", "--num-layers", "1",
        "--num-heads", "2", "--eval-interval", "4"]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("eval"), 20_000, TINY)


def _eval(capsys, *argv) -> dict:
    assert main(["lm", "eval", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_validation_split_gives_the_benchmarks_whole_split_loss(ckpt, capsys):
    """The bundled text's last 10% (as lm train and bench_lm_long split it), scored as split_loss scores it."""
    model, tok, _ = load_checkpoint(ckpt)
    _, val = split_train_val(torch.tensor(tok.encode(load_tinyshakespeare())))
    bench = split_loss(model, val, model.config.block_size)
    said = _eval(capsys, "--checkpoint", str(ckpt))
    assert said["tokens"] == len(val) - 1 and said["split"] == "val"
    assert abs(said["nats_per_token"] - bench) <= 1e-6
    assert said["bits_per_char"] == pytest.approx(said["nats"] / said["characters"] / math.log(2), rel=1e-12)
    assert said["perplexity"] == pytest.approx(math.exp(bench), rel=1e-6)


def test_an_exported_folder_scores_as_its_checkpoint(ckpt, tmp_path, capsys):
    assert main(["lm", "export", "--checkpoint", str(ckpt), "--out", str(tmp_path / "hf")]) == 0
    capsys.readouterr()
    text = tmp_path / "held_out.txt"
    text.write_text(load_tinyshakespeare()[-3_000:], encoding="utf-8")
    a = _eval(capsys, "--checkpoint", str(ckpt), "--text", str(text), "--split", "all")
    b = _eval(capsys, "--checkpoint", str(tmp_path / "hf"), "--text", str(text), "--split", "all")
    assert a["tokens"] == b["tokens"] == 2_999 and a["characters"] == b["characters"] == 2_999
    assert b["nats_per_token"] == pytest.approx(a["nats_per_token"], abs=1e-5)  # weights re-laid for NeoX


def test_every_token_is_scored_once_against_a_token_by_token_reference():
    """A hand-worked reference: each token predicted from the tokens before it in its window."""
    torch.manual_seed(0)
    tok = CharTokenizer().train("abcdefgh")
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=4, num_layers=1, num_heads=1, d_model=8)).eval()
    ids = tok.encode("abcdefghabcdefgha")  # 17 tokens: four full windows of 4 and no tail
    total = 0.0
    with torch.no_grad():
        for w in range(4):
            x = torch.tensor([ids[4 * w:4 * w + 4]])
            logp = F.log_softmax(model(x)[0][0], -1)
            total -= sum(float(logp[t, ids[4 * w + t + 1]]) for t in range(4))
    nats, n = window_loss(model, ids)
    assert n == 16 and nats == pytest.approx(total, rel=1e-6)
    s = score_text(model, tok, "abcdefghabcdefgha")
    assert (s.tokens, s.characters) == (16, 16) and s.nats == pytest.approx(total, rel=1e-6)
    short = score_text(model, tok, "abc")  # shorter than one window: the tail alone
    assert short.tokens == 2


def test_bad_input_is_one_line(ckpt, tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text("a", encoding="utf-8")
    assert main(["lm", "eval", "--checkpoint", str(ckpt), "--text", str(one), "--split", "all"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "scoring needs at least 2" in err[0], err
    assert main(["lm", "eval", "--checkpoint", str(tmp_path / "none")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(InvalidParameterError):
        window_loss(GPT(GPTConfig(vocab_size=3, block_size=4, num_layers=1, num_heads=1, d_model=4)), [1])


def test_scoring_leaves_the_callers_thread_count(ckpt):
    model, tok, _ = load_checkpoint(ckpt)
    before = torch.get_num_threads()
    score_text(model, tok, "ROMEO: But soft", threads=1)
    assert torch.get_num_threads() == before


def test_mean_nll_runs_on_one_thread_and_gives_the_setting_back(monkeypatch):
    from seqlab.text.metrics import mean_nll

    seen = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (seen.append(n), real(n)))
    before = torch.get_num_threads()
    model = GPT(GPTConfig(vocab_size=5, block_size=4, num_layers=1, num_heads=1, d_model=8))
    assert mean_nll(model, [0, 1, 2, 3, 4, 0, 1]) > 0
    assert seen[0] == 1 and torch.get_num_threads() == before  # one thread while scoring, the caller's after
