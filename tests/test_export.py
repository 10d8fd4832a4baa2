"""``seqlab lm export --format hf``: a folder transformers loads with no seqlab code, giving seqlab's logits and
greedy tokens. The loading runs in a fresh interpreter that never imports seqlab."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from conftest import require, patient

from seqlab.cli import main
from seqlab.nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
from seqlab.text.checkpoint import save_checkpoint
from seqlab.text.export import ExportError, export_hf, load_hf
from seqlab.text.generation import generate
from seqlab.text.sampling import SuppressTokens
from seqlab.text.tokenizers import UNK, BPETokenizer, CharTokenizer, WordTokenizer

TEXT = "ROMEO:\nBut soft, what light through yonder window breaks?\nIt is the east.\n"
PROMPT = "ROMEO:\nBut "

#: loads the folder with transformers alone and prints its logits and greedy tokens for the prompt
HF_SIDE = """
import json, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
assert not any(m.startswith("seqlab") for m in sys.modules)
model = AutoModelForCausalLM.from_pretrained(sys.argv[1]).eval()
tok = AutoTokenizer.from_pretrained(sys.argv[1])
ids = tok(sys.argv[2], return_tensors="pt")["input_ids"]
with torch.no_grad():
    logits = model(ids).logits[0].tolist()
    greedy = model.generate(ids, max_new_tokens=12, do_sample=False, pad_token_id=0)[0].tolist()
print(json.dumps({"ids": ids[0].tolist(), "logits": logits, "greedy": greedy, "text": tok.decode(greedy),
                  "seqlab": any(m.startswith("seqlab") for m in sys.modules)}))
"""


def _model(positional: str, bias: bool, tie: bool, vocab: int) -> GPT:
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=vocab, block_size=48, num_layers=2, num_heads=2, d_model=16, bias=bias,
                          positional=positional, tie_weights=tie)).eval()
    with torch.no_grad():  # weights far from their initial values, biases included
        for p in model.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return model


def _tokenizer(kind: str):
    return CharTokenizer().train(TEXT) if kind == "char" else BPETokenizer().train(TEXT * 3, 290)


@pytest.mark.parametrize("positional, bias, tie, kind", [("rotary", False, True, "char"), ("rotary", True, False, "bpe"),
                                                         ("learned", True, True, "bpe"), ("learned", False, False, "char"),
                                                         ("sinusoidal", True, True, "char")])
def test_transformers_loads_the_export_with_the_same_logits_and_greedy_tokens(tmp_path, positional, bias, tie, kind,
                                                                              capsys):
    require("transformers")
    tok = _tokenizer(kind)
    model = _model(positional, bias, tie, tok.vocab_size)
    save_checkpoint(tmp_path / "ckpt", model, tokenizer=tok)
    assert main(["lm", "export", "--checkpoint", str(tmp_path / "ckpt"), "--format", "hf", "--out",
                 str(tmp_path / "hf")]) == 0
    said = capsys.readouterr().out
    assert ("GPT-NeoX" if positional == "rotary" else "GPT-2") in said and "AutoModelForCausalLM" in said
    p = subprocess.run([sys.executable, "-c", HF_SIDE, str(tmp_path / "hf"), PROMPT], capture_output=True,
                       text=True, timeout=patient(300))
    assert p.returncode == 0, p.stderr[-3000:]
    hf = json.loads(p.stdout.strip().splitlines()[-1])
    assert hf["seqlab"] is False
    ids = torch.tensor([tok.encode(PROMPT)])
    assert hf["ids"] == ids[0].tolist()  # the tokenizer.json splits as seqlab's tokenizer does
    with torch.no_grad():
        ours = model(ids)[0][0]
    torch.testing.assert_close(torch.tensor(hf["logits"]), ours, rtol=0, atol=1e-5)
    # the folder's generation_config.json suppresses the unknown token, as lm sample does
    suppress = [SuppressTokens([tok.token_to_id[UNK]])] if UNK in tok.token_to_id else []
    greedy = generate(model, ids, 12, suppress, greedy=True)[0].tolist()
    assert hf["greedy"] == greedy and hf["text"] == tok.decode(greedy)


def test_what_has_no_exact_counterpart_is_one_clear_refusal(tmp_path, capsys):
    tok = CharTokenizer().train(TEXT)
    qk = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=8, qk_norm=True))
    with pytest.raises(ExportError, match="QK-norm"):
        export_hf(qk, tok, tmp_path / "qk")
    word = WordTokenizer().train(TEXT)
    with pytest.raises(ExportError, match="word tokenizer"):
        export_hf(GPT(GPTConfig(vocab_size=word.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=8)),
                  word, tmp_path / "word")
    assert not (tmp_path / "qk").exists() and not (tmp_path / "word").exists()


@pytest.mark.parametrize("positional, tie, kind", [("rotary", True, "char"), ("rotary", False, "bpe"),
                                                   ("learned", False, "char"), ("sinusoidal", True, "bpe")])
def test_lm_sample_reads_an_exported_folder_back_as_the_same_model(tmp_path, positional, tie, kind, capsys):
    tok = _tokenizer(kind)
    model = _model(positional, True, tie, tok.vocab_size)
    save_checkpoint(tmp_path / "ckpt", model, tokenizer=tok)
    export_hf(model, tok, tmp_path / "hf")
    argv = ["--prompt", PROMPT, "--max-new-tokens", "30", "--seed", "4", "--temperature", "0.9"]
    assert main(["lm", "sample", "--checkpoint", str(tmp_path / "ckpt"), *argv]) == 0
    original = capsys.readouterr().out
    assert main(["lm", "sample", "--checkpoint", str(tmp_path / "hf"), *argv]) == 0
    assert capsys.readouterr().out == original
    back, tok2 = load_hf(tmp_path / "hf")
    ids = torch.tensor([tok.encode(PROMPT)])
    with torch.no_grad():
        torch.testing.assert_close(back(ids)[0], model(ids)[0], rtol=0, atol=1e-5)
    assert type(tok2) is type(tok) and tok2.id_to_token == tok.id_to_token
    assert tok2.encode(TEXT) == tok.encode(TEXT)


def test_a_folder_that_is_not_a_model_is_one_line(tmp_path, capsys):
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    assert main(["lm", "sample", "--checkpoint", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model_type 'llama' is not one seqlab's GPT maps onto" in err[0], err
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')  # no tokenizer.json, no weights
    assert main(["lm", "sample", "--checkpoint", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a model folder seqlab can read (model.safetensors is missing)" in err[0], err


def test_the_lstm_exports_its_own_weights_and_says_transformers_cannot_load_it(tmp_path, capsys):
    tok = CharTokenizer().train(TEXT)
    torch.manual_seed(0)
    lstm = LSTMLanguageModel(LSTMConfig(vocab_size=tok.vocab_size, d_model=8, hidden_size=16, num_layers=2,
                                        block_size=16)).eval()
    save_checkpoint(tmp_path / "lstm", lstm, tokenizer=tok)
    assert main(["lm", "export", "--checkpoint", str(tmp_path / "lstm"), "--out", str(tmp_path / "hf")]) == 0
    said = capsys.readouterr().out
    assert "transformers has no LSTM language model class" in said and "lm sample --checkpoint" in said
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["model_type"] == "seqlab_lstm" and config["hidden_size"] == 16
    back, tok2 = load_hf(tmp_path / "hf")
    ids = torch.tensor([tok.encode(PROMPT)])
    with torch.no_grad():
        assert torch.equal(back(ids)[0], lstm(ids)[0])
    argv = ["--prompt", PROMPT, "--max-new-tokens", "20", "--seed", "2"]
    assert main(["lm", "sample", "--checkpoint", str(tmp_path / "lstm"), *argv]) == 0
    original = capsys.readouterr().out
    assert main(["lm", "sample", "--checkpoint", str(tmp_path / "hf"), *argv]) == 0
    assert capsys.readouterr().out == original


#: generates past the context with transformers alone, trust_remote_code=True (the folder's modeling_seqlab.py)
HF_LONG = """
import json, sys
from transformers import AutoModelForCausalLM, AutoTokenizer
assert not any(m.startswith("seqlab") for m in sys.modules)
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], trust_remote_code=True).eval()
tok = AutoTokenizer.from_pretrained(sys.argv[1])
ids = tok(sys.argv[2], return_tensors="pt")["input_ids"]
out = model.generate(ids, max_new_tokens=int(sys.argv[3]))  # greedy: the folder's generation_config.json
print(json.dumps({"text": tok.decode(out[0]), "class": type(model).__name__,
                  "seqlab": any(m.startswith("seqlab") for m in sys.modules)}))
"""


@pytest.mark.parametrize("positional, tie", [("rotary", True), ("learned", False)])
def test_an_export_generates_three_times_its_context_as_lm_sample_does(tmp_path, capsys, positional, tie):
    require("transformers")
    tok = _tokenizer("char")
    model = _model(positional, True, tie, tok.vocab_size)  # block_size 48
    save_checkpoint(tmp_path / "ckpt", model, tokenizer=tok)
    assert main(["lm", "export", "--checkpoint", str(tmp_path / "ckpt"), "--out", str(tmp_path / "hf")]) == 0
    capsys.readouterr()
    new = 3 * model.config.block_size
    assert main(["lm", "sample", "--checkpoint", str(tmp_path / "ckpt"), "--prompt", PROMPT, "--greedy",
                 "--max-new-tokens", str(new)]) == 0
    ours = capsys.readouterr().out
    p = subprocess.run([sys.executable, "-c", HF_LONG, str(tmp_path / "hf"), PROMPT, str(new)],
                       capture_output=True, text=True, timeout=patient(300))
    assert p.returncode == 0, p.stderr[-3000:]
    hf = json.loads(p.stdout.strip().splitlines()[-1])
    assert hf["seqlab"] is False and hf["class"].startswith("Seqlab")
    assert len(hf["text"]) == len(PROMPT) + new and ours.rstrip("\n").startswith(hf["text"].rstrip("\n"))
    assert hf["text"] == ours[:len(hf["text"])]
    card = (tmp_path / "hf" / "README.md").read_text()
    assert f"**Context:** {model.config.block_size} tokens" in card and "trust_remote_code=True" in card
    gen = json.loads((tmp_path / "hf" / "generation_config.json").read_text())
    assert gen["do_sample"] is False and gen["eos_token_id"] is None and isinstance(gen["pad_token_id"], int)
