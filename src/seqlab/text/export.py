"""A seqlab GPT as a Hugging Face model folder: ``config.json``, ``model.safetensors``, ``tokenizer.json``.

The GPT is pre-LN with LayerNorm and an exact-GELU feed-forward, so it maps weight for
weight onto architectures ``transformers`` already has, and loads there with no seqlab
code:

- learned or sinusoidal positions: GPT-2 (``GPT2LMHeadModel``); a sinusoidal table is
  stored as GPT-2's position embedding, which holds the same numbers;
- rotary positions: GPT-NeoX (``GPTNeoXForCausalLM``) with sequential residuals and
  rotary on every dimension. seqlab rotates each (2i, 2i+1) pair of a head; NeoX rotates
  dimension i with i + d/2, so each head's query and key rows are reordered (evens, then
  odds), which leaves every dot product, and so the model, unchanged.

A Llama config cannot hold this model exactly (RMSNorm and a gated SiLU feed-forward),
so none is written. Missing biases (``bias=False``) are stored as zeros. The character
tokenizer becomes a WordLevel ``tokenizer.json`` over single characters, the BPE one a
byte-level BPE (GPT-2's split and byte alphabet, seqlab's merges in their order); QK-norm
has no exact counterpart and is refused with one :class:`ExportError`. The LSTM has
no transformers class: its folder holds the same files with seqlab's own weight names,
which :func:`load_hf` (and ``lm sample``) read back.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import torch

from ..errors import SeqlabError
from ..files import OutputSet
from ..nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
from ..nn.positional import sinusoidal_encoding
from .hf_extras import MODELING_FILE, MODELING_SOURCE, auto_map, generation_config, model_card
from .hf_folder import LSTM_TYPE, ExportError, check_vocabulary, read_folder
from .tokenizers import UNK, BPETokenizer, CharTokenizer, Tokenizer

__all__ = ["ExportError", "ExportWriteError", "export_hf", "hf_state_dict", "load_hf"]


class ExportWriteError(SeqlabError, OSError):
    """An export that could not be written (a full disk, a file-size limit); the folder keeps its earlier set."""


def _zeros_if_none(bias, n: int) -> torch.Tensor:
    return torch.zeros(n) if bias is None else bias.detach()


def _gpt2_weights(model: GPT) -> dict[str, torch.Tensor]:
    c, d = model.config, model.config.d_model
    pos = model.pos.embedding.weight.detach() if c.positional == "learned" else sinusoidal_encoding(c.block_size, d)
    out = {"transformer.wte.weight": model.tok_emb.weight.detach(), "transformer.wpe.weight": pos,
           "transformer.ln_f.weight": model.ln_f.weight.detach(),
           "transformer.ln_f.bias": _zeros_if_none(model.ln_f.bias, d)}
    for i, b in enumerate(model.blocks):
        a, f, p = b.self_attn, b.ff, f"transformer.h.{i}."
        # GPT-2's Conv1D stores (in, out): the transpose of a Linear's weight
        out |= {p + "ln_1.weight": b.norm1.weight.detach(), p + "ln_1.bias": _zeros_if_none(b.norm1.bias, d),
                p + "ln_2.weight": b.norm2.weight.detach(), p + "ln_2.bias": _zeros_if_none(b.norm2.bias, d),
                p + "attn.c_attn.weight": torch.cat([a.Wq.weight, a.Wk.weight, a.Wv.weight]).detach().T,
                p + "attn.c_attn.bias": torch.cat([_zeros_if_none(w.bias, d) for w in (a.Wq, a.Wk, a.Wv)]),
                p + "attn.c_proj.weight": a.Wo.weight.detach().T, p + "attn.c_proj.bias": _zeros_if_none(a.Wo.bias, d),
                p + "mlp.c_fc.weight": f.linear1.weight.detach().T,
                p + "mlp.c_fc.bias": _zeros_if_none(f.linear1.bias, c.d_ff),
                p + "mlp.c_proj.weight": f.linear2.weight.detach().T,
                p + "mlp.c_proj.bias": _zeros_if_none(f.linear2.bias, d)}
    if not c.tie_weights:
        out["lm_head.weight"] = model.lm_head.weight.detach()
    return out


def _neox_weights(model: GPT) -> dict[str, torch.Tensor]:
    c, d = model.config, model.config.d_model
    h, dk = c.num_heads, d // c.num_heads
    half = torch.cat([torch.arange(0, dk, 2), torch.arange(1, dk, 2)])  # a head's pairs (2i, 2i+1) -> (i, i + d/2)

    def heads(w, rotate: bool):  # (d, ...) -> (h, dk, ...), each head's rows in NeoX's order
        w = w.reshape(h, dk, *w.shape[1:])  # (h, dk, ...)
        return w[:, half] if rotate else w

    out = {"gpt_neox.embed_in.weight": model.tok_emb.weight.detach(),
           "gpt_neox.final_layer_norm.weight": model.ln_f.weight.detach(),
           "gpt_neox.final_layer_norm.bias": _zeros_if_none(model.ln_f.bias, d)}
    if not c.tie_weights:  # tied, transformers makes embed_out from embed_in and would call a stored one unexpected
        out["embed_out.weight"] = model.lm_head.weight.detach()
    for i, b in enumerate(model.blocks):
        a, f, p = b.self_attn, b.ff, f"gpt_neox.layers.{i}."
        # NeoX's fused projection is per head: (h, [q, k, v], dk) rows
        w = torch.stack([heads(a.Wq.weight.detach(), True), heads(a.Wk.weight.detach(), True),
                         heads(a.Wv.weight.detach(), False)], dim=1)  # (h, 3, dk, d)
        bias = torch.stack([heads(_zeros_if_none(a.Wq.bias, d), True), heads(_zeros_if_none(a.Wk.bias, d), True),
                            heads(_zeros_if_none(a.Wv.bias, d), False)], dim=1)  # (h, 3, dk)
        out |= {p + "input_layernorm.weight": b.norm1.weight.detach(),
                p + "input_layernorm.bias": _zeros_if_none(b.norm1.bias, d),
                p + "post_attention_layernorm.weight": b.norm2.weight.detach(),
                p + "post_attention_layernorm.bias": _zeros_if_none(b.norm2.bias, d),
                p + "attention.query_key_value.weight": w.reshape(3 * d, d),
                p + "attention.query_key_value.bias": bias.reshape(3 * d),
                p + "attention.dense.weight": a.Wo.weight.detach(), p + "attention.dense.bias": _zeros_if_none(a.Wo.bias, d),
                p + "mlp.dense_h_to_4h.weight": f.linear1.weight.detach(),
                p + "mlp.dense_h_to_4h.bias": _zeros_if_none(f.linear1.bias, c.d_ff),
                p + "mlp.dense_4h_to_h.weight": f.linear2.weight.detach(),
                p + "mlp.dense_4h_to_h.bias": _zeros_if_none(f.linear2.bias, d)}
    return out


def _config(model: GPT, tok: Tokenizer) -> dict:
    c = model.config
    ids = {"bos_token_id": None, "eos_token_id": None, "vocab_size": c.vocab_size}
    if c.positional == "rotary":
        return {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "hidden_size": c.d_model,
                "num_hidden_layers": c.num_layers, "num_attention_heads": c.num_heads, "intermediate_size": c.d_ff,
                "hidden_act": "gelu", "rotary_pct": 1.0, "rotary_emb_base": 10000, "max_position_embeddings":
                c.block_size, "layer_norm_eps": 1e-5, "use_parallel_residual": False, "attention_bias": True,
                "tie_word_embeddings": c.tie_weights, "attention_dropout": 0.0, "hidden_dropout": 0.0, **ids}
    return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": c.d_model, "n_layer": c.num_layers,
            "n_head": c.num_heads, "n_inner": c.d_ff, "n_positions": c.block_size, "activation_function": "gelu",
            "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
            "tie_word_embeddings": c.tie_weights, **ids}


def hf_state_dict(model: GPT) -> dict[str, torch.Tensor]:
    """The model's weights under the names (and layouts) of the Hugging Face architecture it maps onto."""
    if not isinstance(model, GPT):
        raise ExportError(f"only the GPT maps onto a transformers architecture; a {type(model).__name__} does not "
                          "(transformers has no LSTM language model: export_hf writes its own weights instead)")
    if model.config.qk_norm:
        raise ExportError("a GPT with QK-norm has no exact transformers counterpart")
    weights = _neox_weights(model) if model.config.positional == "rotary" else _gpt2_weights(model)
    return {k: v.detach().to(torch.float32).contiguous().clone() for k, v in weights.items()}


def byte_alphabet() -> list[str]:
    """The printable character GPT-2's byte-level tokenizers write for each byte: printable Latin-1 bytes stand for
    themselves, the others take the code points from 256 up in byte order, so no token holds a space."""
    keep = {*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1),
            *range(ord("\u00ae"), ord("\u00ff") + 1)}
    out, extra = [], 0
    for b in range(256):
        out.append(chr(b) if b in keep else chr(256 + extra))
        extra += b not in keep
    return out


def _char_json(tok: CharTokenizer) -> dict:
    vocab = dict(tok.token_to_id)
    return {"added_tokens": [{"id": vocab[UNK], "content": UNK, "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": False, "special": True}] if UNK in vocab else [],
            # every character a token of its own, newlines included
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[\\s\\S]"}, "behavior": "Isolated",
                              "invert": False},
            "decoder": {"type": "Fuse"}, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": UNK}}


def _bpe_json(tok: BPETokenizer) -> dict:
    alphabet = byte_alphabet()
    names = ["".join(alphabet[b] for b in t) for t in tok.token_bytes]
    if len(set(names)) != len(names):
        raise ExportError("two of this BPE tokenizer's tokens spell the same bytes; tokenizer.json gives each "
                          "string one id, so it cannot hold them")
    merges = sorted(tok.merges.items(), key=lambda kv: kv[1])  # by rank: the order they apply in
    level = {"add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {"added_tokens": [], "pre_tokenizer": {"type": "ByteLevel", **level},  # GPT-2's split: PRE_SPLIT
            "decoder": {"type": "ByteLevel", **level},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": {n: i for i, n in enumerate(names)},
                      "merges": [[names[a], names[b]] for (a, b), _ in merges]}}


def _tokenizer_json(tok: Tokenizer) -> dict:
    if isinstance(tok, CharTokenizer):
        body = _char_json(tok)
    elif isinstance(tok, BPETokenizer):
        body = _bpe_json(tok)
    else:
        raise ExportError(f"a {tok.kind} tokenizer has no tokenizer.json form here; export a model trained with "
                          "--tokenizer char or bpe")
    return {"version": "1.0", "truncation": None, "padding": None, "normalizer": None, "post_processor": None,
            **body}


def _tokenizer_back(d: Path, spec: dict) -> Tokenizer:
    """seqlab's tokenizer for a tokenizer.json model that :func:`export_hf` could have written."""
    vocab = spec.get("vocab") or {}
    tokens = sorted(vocab, key=vocab.get)
    if [vocab[t] for t in tokens] != list(range(len(tokens))):
        raise ExportError(f"{d}: tokenizer.json's ids are not 0 to {len(tokens) - 1}")
    if spec.get("type") == "WordLevel" and all(len(t) == 1 or t == UNK for t in tokens):
        tok = CharTokenizer()
        tok._set_vocab(tokens)
        return tok
    if spec.get("type") == "BPE" and tokens[:256] == byte_alphabet():
        pairs = []
        for rank, merge in enumerate(spec.get("merges", [])):
            a, b = merge.split(" ") if isinstance(merge, str) else merge
            if vocab.get(a + b) != 256 + rank:
                raise ExportError(f"{d}: merge {rank} of tokenizer.json does not make token {256 + rank}")
            pairs.append((vocab[a], vocab[b]))
        tok = BPETokenizer()
        tok._restore({"merges": pairs})
        return tok
    raise ExportError(f"{d}: tokenizer.json is neither a character tokenizer nor a byte-level BPE seqlab wrote")


def export_hf(model, tok: Tokenizer, out, *, info: dict | None = None) -> list[Path]:
    """Write ``out`` as a Hugging Face model folder, what ``seqlab lm export`` writes.

    A GPT becomes a folder transformers loads (with ``generation_config.json``, and ``modeling_seqlab.py`` for
    generating past the context as seqlab does, loaded with ``trust_remote_code=True``: see
    ``seqlab.text.hf_extras``); an LSTM, which transformers has no class for, the same files with seqlab's own
    weight names and its own ``model_type``. Both get a model card, ``README.md``, from ``info`` (a checkpoint's
    ``iteration``, ``history`` and ``text``). The folder appears as one complete set with a manifest
    (``seqlab.files.OutputSet``): an interrupted export leaves the previous folder as it was.

    Args:
        model: a :class:`~seqlab.nn.GPT` or :class:`~seqlab.nn.LSTMLanguageModel`.
        tok: its tokenizer (character or byte-level BPE; a word tokenizer has no exact counterpart).
        out: the folder to write.
        info: what the model card tells of the training run (default: nothing).

    Returns:
        The paths of the files written.

    Raises:
        ExportError: a model or tokenizer the format cannot hold exactly.

    Example:
        >>> import tempfile
        >>> from seqlab.nn import GPT, GPTConfig
        >>> from seqlab.text.tokenizers import CharTokenizer
        >>> tok = CharTokenizer().train("to be or not to be")
        >>> model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=8, num_layers=1, num_heads=1, d_model=8))
        >>> sorted(p.name for p in export_hf(model, tok, tempfile.mkdtemp()))[:3]
        ['README.md', 'config.json', 'generation_config.json']
    """
    from safetensors.torch import save

    pad = tok.token_to_id.get(UNK, 0)
    extra: dict[str, str] = {}
    if isinstance(model, LSTMLanguageModel):
        weights = {k: v.detach().to(torch.float32).contiguous().clone() for k, v in model.state_dict().items()}
        config = {"model_type": LSTM_TYPE, "architectures": ["seqlab.nn.LSTMLanguageModel"],
                  **asdict(model.config)}
        kind = "seqlab LSTM"
    else:
        weights, config = hf_state_dict(model), _config(model, tok)
        rotary = model.config.positional == "rotary"
        config |= {"auto_map": auto_map(rotary), "pad_token_id": pad}
        kind = "GPT-NeoX" if rotary else "GPT-2"
        extra = {MODELING_FILE: MODELING_SOURCE,
                 "generation_config.json": json.dumps(generation_config(pad, tok.token_to_id.get(UNK)), indent=1) + "\n"}
    extra["README.md"] = model_card(kind, model.config.block_size, tok.vocab_size, tok.kind, info)
    tokenizer = _tokenizer_json(tok)
    tok_config = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": UNK if UNK in tok.token_to_id else None,
                  "model_max_length": model.config.block_size, "clean_up_tokenization_spaces": False}
    with OutputSet(out, "seqlab lm export --format hf") as files:
        try:
            # serialised in memory, then written as plain bytes: a full disk is then an OSError naming its cause
            files.path("model.safetensors").write_bytes(save(weights, metadata={"format": "pt"}))
            files.path("config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
            files.path("tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False) + "\n",
                                                    encoding="utf-8")
            files.path("tokenizer_config.json").write_text(json.dumps(tok_config, indent=1) + "\n",
                                                           encoding="utf-8")
            for name, body in extra.items():
                files.path(name).write_text(body, encoding="utf-8")
            return files.commit()
        except OSError as e:
            if isinstance(e, SeqlabError):
                raise
            raise ExportWriteError(f"{out}: the export could not be written ({e.strerror or e}); "
                                   f"{files.fate()}") from None


def _gpt2_back(w: dict, cfg: dict) -> tuple[GPTConfig, dict]:
    d = cfg["n_embd"]
    config = GPTConfig(vocab_size=cfg["vocab_size"], block_size=cfg["n_positions"], num_layers=cfg["n_layer"],
                       num_heads=cfg["n_head"], d_model=d, d_ff=cfg.get("n_inner") or 4 * d, bias=True,
                       positional="learned", tie_weights=cfg.get("tie_word_embeddings", True))
    out = {"tok_emb.weight": w["transformer.wte.weight"], "pos.embedding.weight": w["transformer.wpe.weight"],
           "ln_f.weight": w["transformer.ln_f.weight"], "ln_f.bias": w["transformer.ln_f.bias"]}
    for i in range(config.num_layers):
        p, q = f"transformer.h.{i}.", f"blocks.{i}."
        qkv, qkv_b = w[p + "attn.c_attn.weight"].T, w[p + "attn.c_attn.bias"]  # (3d, d), (3d,)
        for k, name in enumerate(("Wq", "Wk", "Wv")):
            out[q + f"self_attn.{name}.weight"] = qkv[k * d:(k + 1) * d]
            out[q + f"self_attn.{name}.bias"] = qkv_b[k * d:(k + 1) * d]
        out |= {q + "norm1.weight": w[p + "ln_1.weight"], q + "norm1.bias": w[p + "ln_1.bias"],
                q + "norm2.weight": w[p + "ln_2.weight"], q + "norm2.bias": w[p + "ln_2.bias"],
                q + "self_attn.Wo.weight": w[p + "attn.c_proj.weight"].T, q + "self_attn.Wo.bias": w[p + "attn.c_proj.bias"],
                q + "ff.linear1.weight": w[p + "mlp.c_fc.weight"].T, q + "ff.linear1.bias": w[p + "mlp.c_fc.bias"],
                q + "ff.linear2.weight": w[p + "mlp.c_proj.weight"].T, q + "ff.linear2.bias": w[p + "mlp.c_proj.bias"]}
    if not config.tie_weights:
        out["lm_head.weight"] = w["lm_head.weight"]
    return config, out


def _neox_back(w: dict, cfg: dict) -> tuple[GPTConfig, dict]:
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    dk = d // h
    if cfg.get("rotary_pct", 1.0) != 1.0 or cfg.get("use_parallel_residual", True):
        raise ExportError("only a GPT-NeoX with rotary on every dimension and sequential residuals maps onto the GPT")
    config = GPTConfig(vocab_size=cfg["vocab_size"], block_size=cfg["max_position_embeddings"],
                       num_layers=cfg["num_hidden_layers"], num_heads=h, d_model=d, d_ff=cfg["intermediate_size"],
                       bias=True, positional="rotary", tie_weights=cfg.get("tie_word_embeddings", False))
    back = torch.argsort(torch.cat([torch.arange(0, dk, 2), torch.arange(1, dk, 2)]))  # NeoX's order -> pairs
    out = {"tok_emb.weight": w["gpt_neox.embed_in.weight"], "ln_f.weight": w["gpt_neox.final_layer_norm.weight"],
           "ln_f.bias": w["gpt_neox.final_layer_norm.bias"]}
    for i in range(config.num_layers):
        p, q = f"gpt_neox.layers.{i}.", f"blocks.{i}."
        qkv = w[p + "attention.query_key_value.weight"].reshape(h, 3, dk, d)  # (h, [q, k, v], dk, d)
        qkv_b = w[p + "attention.query_key_value.bias"].reshape(h, 3, dk)
        for k, name in enumerate(("Wq", "Wk", "Wv")):
            rows, b = (qkv[:, k][:, back], qkv_b[:, k][:, back]) if k < 2 else (qkv[:, k], qkv_b[:, k])
            out[q + f"self_attn.{name}.weight"], out[q + f"self_attn.{name}.bias"] = rows.reshape(d, d), b.reshape(d)
        out |= {q + "norm1.weight": w[p + "input_layernorm.weight"], q + "norm1.bias": w[p + "input_layernorm.bias"],
                q + "norm2.weight": w[p + "post_attention_layernorm.weight"],
                q + "norm2.bias": w[p + "post_attention_layernorm.bias"],
                q + "self_attn.Wo.weight": w[p + "attention.dense.weight"], q + "self_attn.Wo.bias": w[p + "attention.dense.bias"],
                q + "ff.linear1.weight": w[p + "mlp.dense_h_to_4h.weight"], q + "ff.linear1.bias": w[p + "mlp.dense_h_to_4h.bias"],
                q + "ff.linear2.weight": w[p + "mlp.dense_4h_to_h.weight"], q + "ff.linear2.bias": w[p + "mlp.dense_4h_to_h.bias"]}
    if not config.tie_weights:
        out["lm_head.weight"] = w["embed_out.weight"]
    return config, out


def _lstm_back(w: dict, cfg: dict) -> tuple[LSTMConfig, dict]:
    fields = {k: cfg[k] for k in ("vocab_size", "d_model", "hidden_size", "num_layers", "dropout", "block_size")}
    return LSTMConfig(**fields), w


def load_hf(directory):
    """``(model, tokenizer)`` of a folder :func:`export_hf` wrote (or any GPT-2 / GPT-NeoX folder of the same
    shape with such a tokenizer), read as carefully as a checkpoint (``seqlab.text.hf_folder.read_folder``).

    Args:
        directory: the folder.

    Returns:
        ``(model, tokenizer)``, the model in eval mode.

    Raises:
        ExportError: anything else (its subclass ``HFFolderError`` for a damaged folder).

    Example:
        >>> import tempfile
        >>> from seqlab.nn import GPT, GPTConfig
        >>> from seqlab.text import CharTokenizer
        >>> tok, folder = CharTokenizer().train("to be or not"), tempfile.mkdtemp()
        >>> _ = export_hf(GPT(GPTConfig(tok.vocab_size, block_size=8, num_layers=1, num_heads=1, d_model=8)), tok,
        ...               folder)
        >>> model, tok2 = load_hf(folder)
        >>> model.config.block_size, tok2.encode("not") == tok.encode("not")
        (8, True)
    """
    d = Path(directory)
    found = read_folder(d)
    back = {"gpt2": _gpt2_back, "gpt_neox": _neox_back, LSTM_TYPE: _lstm_back}[found.config["model_type"]]
    try:
        config, state = back(found.tensors, found.config)
        tok = _tokenizer_back(d, found.tokenizer["model"])
        check_vocabulary(tok.vocab_size, found.config, d)
        model = LSTMLanguageModel(config) if isinstance(config, LSTMConfig) else GPT(config)
        missing, unexpected = model.load_state_dict(state, strict=False)
        if set(missing) - {"lm_head.weight"} or unexpected:
            raise ExportError(f"{d}: the weights do not fit the model ({sorted(missing)[:2]}, {sorted(unexpected)[:2]})")
    except (ValueError, KeyError, TypeError, RuntimeError, AttributeError) as e:
        if isinstance(e, ExportError):
            raise
        raise ExportError(f"{d}: not a model folder seqlab can read ({type(e).__name__}: "
                          f"{' '.join(str(e).split())[:120]})") from None
    return model.eval(), tok
