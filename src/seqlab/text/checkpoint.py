"""Training checkpoints: one safetensors file (weights, optimizer, RNG) with JSON metadata, written atomically.

A checkpoint directory holds ``checkpoint.safetensors`` (the authoritative state;
its header metadata carries the model and training configuration, the iteration
and the loss history), ``tokenizer.txt`` and a human-readable
``trainer_state.json``. Every file is written to a temporary name and moved into
place with ``os.replace``, so a run killed at any moment leaves the previous good
checkpoint intact. Nothing is loaded with pickle.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import torch

from .. import __version__
from ..nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
from .tokenizers import Tokenizer, TokenizerFormatError, load_tokenizer

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "build_model", "model_kind", "CHECKPOINT_FILE"]

CHECKPOINT_FILE = "checkpoint.safetensors"
FORMAT = "seqlab-checkpoint-1"


class CheckpointError(ValueError):
    """A checkpoint directory that is missing, incomplete or corrupt."""


def model_kind(model) -> str:
    if isinstance(model, GPT):
        return "gpt"
    if isinstance(model, LSTMLanguageModel):
        return "lstm"
    raise TypeError(f"cannot checkpoint a {type(model).__name__}")


def build_model(kind: str, config: dict):
    if kind == "gpt":
        return GPT(GPTConfig(**config))
    if kind == "lstm":
        return LSTMLanguageModel(LSTMConfig(**config))
    raise CheckpointError(f"unknown model kind {kind!r}")


def _atomic(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    os.chmod(tmp, 0o644)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _model_tensors(model) -> dict[str, torch.Tensor]:
    seen, out = set(), {}
    for name, t in model.state_dict().items():
        if t.data_ptr() in seen:  # tied weights (GPT's head = embedding) are stored once
            continue
        seen.add(t.data_ptr())
        out[f"model.{name}"] = t.detach().contiguous().clone()
    return out


def save_checkpoint(directory, model, optimizer=None, *, tokenizer: Tokenizer | None = None, iteration: int = 0,
                    train_config: dict | None = None, history: list | None = None,
                    rng: dict[str, torch.Tensor] | None = None, extra: dict | None = None) -> Path:
    """Write the checkpoint atomically; returns the safetensors path."""
    from safetensors.torch import save_file

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    tensors = _model_tensors(model)
    groups = None
    if optimizer is not None:
        sd = optimizer.state_dict()
        for idx, st in sd["state"].items():
            for key, val in st.items():
                tensors[f"optim.{idx}.{key}"] = torch.as_tensor(val).detach().contiguous().clone()
        groups = sd["param_groups"]
    for name, t in (rng or {}).items():
        tensors[f"rng.{name}"] = t.contiguous().clone()
    meta = {
        "format": FORMAT, "seqlab_version": __version__, "model_kind": model_kind(model),
        "model_config": json.dumps(asdict(model.config)), "iteration": str(iteration),
        "train_config": json.dumps(train_config or {}), "history": json.dumps(history or []),
        "optimizer_param_groups": json.dumps(groups), "extra": json.dumps(extra or {}),
    }
    if tokenizer is not None:
        _atomic(d / "tokenizer.txt", tokenizer.save)
    target = d / CHECKPOINT_FILE
    _atomic(target, lambda tmp: save_file(tensors, tmp, metadata=meta))
    state = {"iteration": iteration, "history": history or [], "train_config": train_config or {},
             "model_kind": meta["model_kind"], "model_config": asdict(model.config)}
    _atomic(d / "trainer_state.json", lambda tmp: Path(tmp).write_text(json.dumps(state, indent=1)))
    return target


def load_checkpoint(directory, *, optimizer_factory=None):
    """``(model, tokenizer, state)`` from a checkpoint directory.

    ``state`` has the iteration, the histories and configs, the RNG tensors and,
    when ``optimizer_factory(model)`` is given, the optimizer with its state restored.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file, safe_open

    d = Path(directory)
    path = d / CHECKPOINT_FILE
    if not path.is_file():
        raise CheckpointError(f"{d}: no {CHECKPOINT_FILE} (not a seqlab checkpoint directory)")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{path}: corrupt checkpoint ({str(e)[:80]})") from None
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a {FORMAT} file")
    try:
        model = build_model(meta["model_kind"], json.loads(meta["model_config"]))
        weights = {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}
        missing, unexpected = model.load_state_dict(weights, strict=False)
        tied = {"lm_head.weight"} if getattr(model.config, "tie_weights", False) else set()
        if set(missing) - tied or unexpected:
            raise CheckpointError(f"{path}: weights do not fit the model (missing {sorted(set(missing) - tied)[:3]}, "
                                  f"unexpected {sorted(unexpected)[:3]})")
        state = {"iteration": int(meta["iteration"]), "history": json.loads(meta["history"]),
                 "train_config": json.loads(meta["train_config"]), "extra": json.loads(meta.get("extra", "{}")),
                 "seqlab_version": meta.get("seqlab_version"),
                 "rng": {k[4:]: v for k, v in tensors.items() if k.startswith("rng.")}}
        if optimizer_factory is not None:
            opt = optimizer_factory(model)
            groups = json.loads(meta["optimizer_param_groups"])
            if groups is not None:
                st: dict = {}
                for k, v in tensors.items():
                    if k.startswith("optim."):
                        _, idx, key = k.split(".", 2)
                        st.setdefault(int(idx), {})[key] = v
                opt.load_state_dict({"state": st, "param_groups": groups})
            state["optimizer"] = opt
    except CheckpointError:
        raise
    except (KeyError, ValueError, TypeError, RuntimeError) as e:
        raise CheckpointError(f"{path}: corrupt checkpoint ({type(e).__name__}: {str(e)[:80]})") from None
    tokenizer = None
    if (d / "tokenizer.txt").is_file():
        try:
            tokenizer = load_tokenizer(d / "tokenizer.txt")
        except TokenizerFormatError as e:
            raise CheckpointError(str(e)) from None
    return model, tokenizer, state
