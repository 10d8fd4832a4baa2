"""An exported Hugging Face folder, read as carefully as a checkpoint.

:func:`read_folder` is the only place that opens the files of such a folder. Before
any weight reaches a model it makes sure that:

- the folder is not marked incomplete (an export killed while moving its files in
  leaves ``seqlab-INCOMPLETE.txt``, and its files may then come from two exports);
- every file is a regular file (a FIFO or device would hang or stream forever);
- every file the folder's ``seqlab-manifest.json`` lists still has the size and sha256
  recorded at export (a folder without a manifest is read with a warning);
- ``config.json`` is an object whose sizes are positive whole numbers, whose heads
  divide the width and whose positions cover the tokenizer's context, and which
  describes no more parameters than ``model.safetensors`` holds;
- every floating-point tensor is finite (a NaN weight would otherwise surface as
  wrong text, or be blamed on the sampling rules).

Each failure is one :class:`~seqlab.text.export.ExportError` line that names the file.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from ..errors import SeqlabError
from ..files import INCOMPLETE, MANIFEST, NotRegularFileError, read_regular_file

__all__ = ["ExportError", "HFFolderError", "FolderContents", "read_folder", "check_config", "check_vocabulary",
           "LSTM_TYPE", "MODEL_TYPES"]

#: the model_type of an exported LSTM: transformers has no class for it, so only seqlab (or your code) loads it
LSTM_TYPE = "seqlab_lstm"
#: per model_type, the sizes config.json must give as positive whole numbers
MODEL_TYPES = {
    "gpt2": ("vocab_size", "n_embd", "n_layer", "n_head", "n_positions"),
    "gpt_neox": ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                 "max_position_embeddings"),
    LSTM_TYPE: ("vocab_size", "d_model", "hidden_size", "num_layers", "block_size"),
}
_REQUIRED = ("config.json", "model.safetensors", "tokenizer.json")
_OPTIONAL = ("tokenizer_config.json",)
#: a config may describe somewhat more parameters than its tensors hold (tied or zero-filled weights), not this many
_PARAMETER_SLACK = 2.0


class ExportError(SeqlabError, ValueError):
    """A model or tokenizer that the requested format cannot hold exactly, or a folder seqlab cannot read back.

    A damaged folder (incomplete, changed since export, inconsistent) raises the subclass ``HFFolderError``.

    Example:
        >>> import tempfile
        >>> from seqlab.text import load_hf
        >>> load_hf(tempfile.mkdtemp())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqlab.text.hf_folder.HFFolderError: /...: not a model folder seqlab can read (config.json is missing)
    """


class HFFolderError(ExportError):
    """An exported model folder that is incomplete, changed since export, or not self-consistent."""


@dataclass(frozen=True)
class FolderContents:
    """What :func:`read_folder` found: the parsed files and the tensors, all checked."""
    config: dict
    tensors: dict
    tokenizer: dict
    tokenizer_config: dict | None
    verified: bool  # every file was checked against the manifest's sha256


def _read(path: Path) -> bytes:
    """The bytes of ``path``, which must be a regular file (:func:`seqlab.files.read_regular_file`)."""
    try:
        return read_regular_file(path)
    except FileNotFoundError:
        raise HFFolderError(f"{path.parent}: not a model folder seqlab can read ({path.name} is missing)") from None
    except NotRegularFileError as e:
        raise HFFolderError(f"{e}; an exported folder holds regular files only") from None
    except OSError as e:
        raise HFFolderError(f"{path}: cannot be read ({e.strerror or e})") from None


def _manifest(d: Path) -> dict | None:
    """The manifest's file records, or None when the folder has none."""
    if not os.path.lexists(d / MANIFEST):
        return None
    try:
        manifest = json.loads(_read(d / MANIFEST).decode("utf-8"))
        files = manifest["files"]
        if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
            raise TypeError
        return files
    except (ValueError, KeyError, TypeError):
        raise HFFolderError(f"{d / MANIFEST}: not a manifest seqlab wrote (damaged?); export the folder again") from None


def _verify(d: Path, name: str, data: bytes, records: dict | None) -> bool:
    """Whether ``data`` was checked against the manifest's record of ``name`` (raises where it differs)."""
    record = None if records is None else records.get(name)
    if record is None:
        return False
    if record.get("bytes") != len(data) or record.get("sha256") != hashlib.sha256(data).hexdigest():
        raise HFFolderError(f"{d / name}: does not match the size and sha256 that {MANIFEST} recorded at export "
                            "(changed or damaged since); export the folder again")
    return True


def _json_object(d: Path, name: str, data: bytes) -> dict:
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise HFFolderError(f"{d / name}: not valid JSON ({' '.join(str(e).split())[:80]})") from None
    if not isinstance(value, dict):
        raise HFFolderError(f"{d / name}: a JSON {type(value).__name__}, where an object is expected")
    return value


def _tensors(d: Path, data: bytes) -> dict:
    from safetensors import SafetensorError
    from safetensors.torch import load

    try:
        tensors = load(data)
    except (SafetensorError, ValueError, RuntimeError, OSError) as e:
        raise HFFolderError(f"{d / 'model.safetensors'}: not a readable safetensors file (truncated or damaged: "
                            f"{' '.join(str(e).split())[:80]})") from None
    for name, t in tensors.items():  # before any use: a NaN weight would surface later with a wrong cause
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise HFFolderError(f"{d / 'model.safetensors'}: tensor {name} holds NaN or infinite values; a model "
                                "with non-finite weights gives no meaningful text")
    return tensors


def read_folder(directory) -> FolderContents:
    """Read and check an exported folder (see the module's docstring); raises :class:`HFFolderError`."""
    d = Path(directory)
    if not d.is_dir():
        raise HFFolderError(f"{d}: not a folder")
    if os.path.lexists(d / INCOMPLETE):
        raise HFFolderError(f"{d}: an export into this folder stopped before it finished ({INCOMPLETE}), so its "
                            f"files may come from two exports; export again: seqlab lm export --checkpoint CKPT "
                            f"--out {d}")
    records = _manifest(d)
    raw = {"config.json": _read(d / "config.json")}
    config = _json_object(d, "config.json", raw["config.json"])
    if config.get("model_type") not in MODEL_TYPES:  # said first: no other file matters for such a folder
        raise HFFolderError(f"{d}: model_type {config.get('model_type')!r} is not one seqlab's GPT maps onto "
                            "(gpt2 or gpt_neox)")
    raw |= {name: _read(d / name) for name in _REQUIRED[1:]}
    raw |= {name: _read(d / name) for name in _OPTIONAL if os.path.lexists(d / name)}
    checked = [_verify(d, name, data, records) for name, data in raw.items()]
    for name in (records or {}):  # a listed file that is gone is a damaged folder too
        if name in _REQUIRED + _OPTIONAL and name not in raw:
            raise HFFolderError(f"{d / name}: listed in {MANIFEST} but missing; export the folder again")
    verified = all(checked)
    if records is None:
        warnings.warn(f"{d} has no {MANIFEST}, so its files cannot be checked against the export's record; "
                      "reading what can be validated", stacklevel=2)
    elif not verified:
        warnings.warn(f"{MANIFEST} in {d} does not list every model file; the unlisted ones are not checked "
                      "against a record", stacklevel=2)
    tokenizer = _json_object(d, "tokenizer.json", raw["tokenizer.json"])
    if not isinstance(tokenizer.get("model"), dict):
        raise HFFolderError(f"{d / 'tokenizer.json'}: has no tokenizer model object")
    tok_config = _json_object(d, "tokenizer_config.json", raw["tokenizer_config.json"]) \
        if "tokenizer_config.json" in raw else None
    tensors = _tensors(d, raw.pop("model.safetensors"))
    check_config(config, d, tensors, tok_config)
    return FolderContents(config, tensors, tokenizer, tok_config, verified)


def _positive(cfg: dict, key: str, where: Path) -> int:
    v = cfg.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise HFFolderError(f"{where / 'config.json'}: {key} must be a positive whole number, not {v!r}")
    return v


def _parameters(model_type: str, s: dict) -> int:
    """Roughly how many parameters the config describes (the larger terms only)."""
    if model_type == "gpt2":
        d, L = s["n_embd"], s["n_layer"]
        return s["vocab_size"] * d + s["n_positions"] * d + 12 * L * d * d
    if model_type == "gpt_neox":
        d, L = s["hidden_size"], s["num_hidden_layers"]
        return s["vocab_size"] * d + L * (4 * d * d + 2 * d * s["intermediate_size"])
    h = s["hidden_size"]
    return s["vocab_size"] * (s["d_model"] + h) + 4 * s["num_layers"] * h * (h + max(h, s["d_model"]))


def check_config(cfg: dict, where, tensors: dict | None = None, tokenizer_config: dict | None = None) -> None:
    """Refuse a ``config.json`` seqlab cannot build a model from exactly (see the module's docstring)."""
    where = Path(where)
    model_type = cfg.get("model_type")
    if model_type not in MODEL_TYPES:
        raise HFFolderError(f"{where}: model_type {model_type!r} is not one seqlab's GPT maps onto (gpt2 or "
                            "gpt_neox)")
    sizes = {k: _positive(cfg, k, where) for k in MODEL_TYPES[model_type]}
    width, heads, positions = {"gpt2": ("n_embd", "n_head", "n_positions"),
                               "gpt_neox": ("hidden_size", "num_attention_heads", "max_position_embeddings"),
                               LSTM_TYPE: (None, None, "block_size")}[model_type]
    if heads is not None:
        if sizes[width] % sizes[heads]:
            raise HFFolderError(f"{where / 'config.json'}: {heads} = {sizes[heads]} does not divide {width} = "
                                f"{sizes[width]}")
        if model_type == "gpt_neox" and (sizes[width] // sizes[heads]) % 2:
            raise HFFolderError(f"{where / 'config.json'}: rotary positions rotate pairs, so each head's width "
                                f"({sizes[width] // sizes[heads]}) must be even")
    context = (tokenizer_config or {}).get("model_max_length")
    if isinstance(context, int) and not isinstance(context, bool) and context > sizes[positions]:
        raise HFFolderError(f"{where / 'config.json'}: {positions} = {sizes[positions]} does not cover the "
                            f"tokenizer's context of {context} tokens (tokenizer_config.json)")
    if tensors is not None:
        held = sum(t.numel() for t in tensors.values())
        if _parameters(model_type, sizes) > _PARAMETER_SLACK * held + 10_000:
            raise HFFolderError(f"{where / 'config.json'}: describes a model of about {_parameters(model_type, sizes):,} "
                                f"parameters, but model.safetensors holds {held:,}: the two do not belong together")


def check_vocabulary(tokenizer_size: int, cfg: dict, where) -> None:
    """The tokenizer and the model must agree on the vocabulary, or ids fall outside one of them."""
    if tokenizer_size != cfg["vocab_size"]:
        raise HFFolderError(f"{Path(where) / 'tokenizer.json'}: has {tokenizer_size} tokens, but config.json's "
                            f"vocab_size is {cfg['vocab_size']}: the tokenizer and the model come from different "
                            "exports")
