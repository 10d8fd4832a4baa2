"""Training checkpoints: one safetensors file that holds everything, replaced atomically as one unit.

``checkpoint.safetensors`` is the authoritative state: model weights, optimizer
state and RNG tensors, and in its header metadata the model and training
configuration, the iteration, the loss history, the tokenizer, and a sha256 of
every tensor (checked on load, so a flipped byte in the weights is an error, not
a silently different model). Because all of it lives in one file that is moved
into place with ``os.replace``, no reader can see weights from one step with a
tokenizer or trainer state from another. ``tokenizer.txt`` and
``trainer_state.json`` beside it are human-readable copies written afterwards;
a ``tokenizer.txt`` that disagrees with the checkpoint's own tokenizer is
reported. Nothing is loaded with pickle.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from .. import __version__
from ..errors import SeqlabError
from ..nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
from ..nn.transformer import config_record
from ..files import atomic_write
from .tokenizers import Tokenizer, TokenizerFormatError, load_tokenizer, loads_tokenizer

__all__ = ["CheckpointError", "CheckpointMismatchError", "CheckpointWriteError", "save_checkpoint", "load_checkpoint", "read_metadata", "read_checkpoint_state",
           "build_model", "model_kind", "CHECKPOINT_FILE"]

CHECKPOINT_FILE = "checkpoint.safetensors"
FORMAT = "seqlab-checkpoint-2"


class CheckpointError(SeqlabError, ValueError):
    """A checkpoint directory that is missing, incomplete or corrupt.

    Example:
        >>> import tempfile
        >>> load_checkpoint(tempfile.mkdtemp())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        seqlab.text.checkpoint.CheckpointError: /...: no checkpoint.safetensors (not a seqlab checkpoint directory)
    """


class CheckpointWriteError(SeqlabError, OSError):
    """A checkpoint file could not be written; the file it would have replaced is left as it was."""


class CheckpointMismatchError(CheckpointError):
    """A checkpoint that does not belong with what it is used with (another model shape, another tokenizer).

    :func:`~seqlab.text.train_lm` raises it when asked to resume a checkpoint of another model or recipe,
    or one trained on another text.

    Example:
        >>> issubclass(CheckpointMismatchError, CheckpointError)
        True
    """


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


def _tensor_sha(t: torch.Tensor) -> str:
    return hashlib.sha256(t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()).hexdigest()


def _model_tensors(model) -> dict[str, torch.Tensor]:
    seen, out = set(), {}
    for name, t in model.state_dict().items():
        if t.data_ptr() in seen:  # tied weights (GPT's head = embedding) are stored once
            continue
        seen.add(t.data_ptr())
        out[f"model.{name}"] = t.detach().cpu().contiguous().clone()  # device-independent: loads anywhere
    return out


def save_checkpoint(directory, model, optimizer=None, *, tokenizer: Tokenizer | None = None, iteration: int = 0,
                    train_config: dict | None = None, history: list | None = None,
                    rng: dict[str, torch.Tensor] | None = None, extra: dict | None = None) -> Path:
    """Write the checkpoint atomically; returns the safetensors path."""
    from safetensors.torch import save_file

    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckpointWriteError(f"could not create the checkpoint folder {d} ({e.strerror or e})") from None
    tensors = _model_tensors(model)
    groups = None
    if optimizer is not None:
        sd = optimizer.state_dict()
        for idx, st in sd["state"].items():
            for key, val in st.items():
                tensors[f"optim.{idx}.{key}"] = torch.as_tensor(val).detach().cpu().contiguous().clone()
        groups = sd["param_groups"]
    for name, t in (rng or {}).items():
        tensors[f"rng.{name}"] = t.contiguous().clone()
    meta = {
        "format": FORMAT, "seqlab_version": __version__, "model_kind": model_kind(model),
        "model_config": json.dumps(config_record(model.config)), "iteration": str(iteration),
        "train_config": json.dumps(train_config or {}), "history": json.dumps(history or []),
        "optimizer_param_groups": json.dumps(groups), "extra": json.dumps(extra or {}),
        "tokenizer": tokenizer.dumps() if tokenizer is not None else "",
        "tensor_sha256": json.dumps({k: _tensor_sha(v) for k, v in tensors.items()}, sort_keys=True),
    }
    target = _write(d / CHECKPOINT_FILE, lambda tmp: save_file(tensors, tmp, metadata=meta), d)
    # readable copies, written after the authoritative file
    if tokenizer is not None:
        _write(d / "tokenizer.txt", meta["tokenizer"], d)
    state = {"iteration": iteration, "history": history or [], "train_config": train_config or {},
             "model_kind": meta["model_kind"], "model_config": config_record(model.config)}
    _write(d / "trainer_state.json", json.dumps(state, indent=1), d)
    return target


def _write(path: Path, data, directory: Path) -> Path:
    """atomic_write, with a failed write (disk full, read-only, no permission) as one :class:`CheckpointWriteError`."""
    from safetensors import SafetensorError

    try:
        return atomic_write(path, data)
    except (OSError, SafetensorError) as e:
        reason = getattr(e, "strerror", None) or _one_line(e)
        if "No space left" in str(e):
            reason = "No space left on device"
        kept = ("the previous checkpoint there is intact" if (directory / CHECKPOINT_FILE).is_file()
                else "no earlier checkpoint exists there")
        raise CheckpointWriteError(f"could not write {path} ({reason}); {kept}") from None


def _read_header(path: Path, data: bytes | None = None) -> dict:
    """The safetensors header's metadata, from ``data`` (the whole file) or from the file's first bytes."""
    try:
        if data is None:
            with open(path, "rb") as f:
                head = f.read(8)
                n = int.from_bytes(head, "little") if len(head) == 8 else -1
                if not 0 < n <= 100 * 2 ** 20:
                    raise ValueError("no safetensors header")
                raw = f.read(n)
        else:
            n = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
            if not 0 < n <= min(len(data) - 8, 100 * 2 ** 20):
                raise ValueError("no safetensors header")
            raw = data[8:8 + n]
        header = json.loads(raw)
        meta = header.get("__metadata__") or {}
        if not isinstance(meta, dict):
            raise ValueError("malformed metadata")
        return meta
    except PermissionError:
        raise CheckpointError(f"{path}: cannot be read (permission denied)") from None
    except (OSError, ValueError, UnicodeDecodeError, AttributeError) as e:
        raise CheckpointError(f"{path}: corrupt checkpoint ({_one_line(e)})") from None


def _checkpoint_path(directory) -> Path:
    path = Path(directory) / CHECKPOINT_FILE
    if not path.exists():
        raise CheckpointError(f"{Path(directory)}: no {CHECKPOINT_FILE} (not a seqlab checkpoint directory)")
    if not path.is_file():
        raise CheckpointError(f"{path}: not a regular file")
    return path


def _check_format(meta: dict, path: Path) -> dict:
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a {FORMAT} file (format {meta.get('format')!r})")
    return meta


def read_metadata(directory) -> dict:
    """The checkpoint's header metadata (configuration, iteration, tokenizer text) without loading any tensor."""
    path = _checkpoint_path(directory)
    return _check_format(_read_header(path), path)


def read_checkpoint_state(directory) -> dict:
    """Kind, model configuration and iteration of a checkpoint, from its header alone (no tensors read)."""
    meta = read_metadata(directory)
    try:
        return {"model_kind": meta["model_kind"], "model_config": json.loads(meta["model_config"]),
                "iteration": int(meta["iteration"]), "tokenizer": meta.get("tokenizer", ""),
                "train_config": json.loads(meta.get("train_config", "{}")),
                "extra": json.loads(meta.get("extra", "{}") or "{}")}
    except (KeyError, ValueError) as e:
        raise CheckpointError(f"{Path(directory) / CHECKPOINT_FILE}: corrupt checkpoint header ({_one_line(e)})") \
            from None


#: history fields of earlier versions, under their present names
RENAMED = {"val_bpc": "val_bits_per_token"}  # it always was bits per token, which only a char model reads per char


def current_names(history: list) -> list:
    """History rows with the fields of earlier versions under their present names (:data:`RENAMED`)."""
    return [{RENAMED.get(k, k): v for k, v in row.items()} if isinstance(row, dict) else row for row in history]


def _one_line(e: BaseException, limit: int = 100) -> str:
    return " ".join(str(e).split())[:limit]


def _verify_tensors(tensors: dict, meta: dict, path: Path) -> None:
    try:
        expected = json.loads(meta["tensor_sha256"])
    except (KeyError, ValueError):
        raise CheckpointError(f"{path}: corrupt checkpoint (no tensor checksums)") from None
    if set(expected) != set(tensors):
        raise CheckpointError(f"{path}: corrupt checkpoint (its tensors do not match its checksum list)")
    for name, t in tensors.items():
        if _tensor_sha(t) != expected[name]:
            raise CheckpointError(f"{path}: tensor {name} does not match its sha256: the file is corrupt or was "
                                  "changed after it was written")
    for name, t in tensors.items():  # checked before any use: a NaN weight would surface later as a wrong cause
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise CheckpointError(f"{path}: weights are not finite: tensor {name} holds NaN or infinite values "
                                  "(written by a run that diverged, or by another program)")


def _load_tokenizer(d: Path, meta: dict, vocab_size: int):
    tokenizer = None
    if meta.get("tokenizer"):
        try:
            tokenizer = loads_tokenizer(meta["tokenizer"], f"{d / CHECKPOINT_FILE} (its tokenizer)")
        except TokenizerFormatError as e:
            raise CheckpointError(str(e)) from None
    copy = d / "tokenizer.txt"
    if copy.is_file():
        try:
            other = load_tokenizer(copy)
        except TokenizerFormatError as e:
            raise CheckpointError(str(e)) from None
        if tokenizer is None:
            tokenizer = other
        elif other.dumps() != tokenizer.dumps():
            raise CheckpointMismatchError(f"{copy} is not the tokenizer this checkpoint was trained with (copied from "
                                          "another run?); delete it to use the checkpoint's own")
    if tokenizer is not None and tokenizer.vocab_size != vocab_size:
        raise CheckpointMismatchError(f"{d}: the tokenizer has {tokenizer.vocab_size} tokens but the model was built "
                                      f"for {vocab_size}: they come from different runs")
    return tokenizer


def load_checkpoint(directory, *, optimizer_factory=None):
    """``(model, tokenizer, state)`` from a checkpoint directory (``seqlab lm train --out``, or ``train_lm``'s).

    Every tensor is checked against the sha256 stored with it. Nothing is unpickled.

    Args:
        directory: the checkpoint folder (holding ``checkpoint.safetensors``).
        optimizer_factory: ``optimizer_factory(model)`` makes an optimizer whose state the checkpoint restores
            (default: none is made).

    Returns:
        ``(model, tokenizer, state)``, the model (a :class:`~seqlab.nn.GPT` or an
        :class:`~seqlab.nn.LSTMLanguageModel`) with its weights, its tokenizer (``None`` if none was saved), and
        a dict with ``iteration``, ``history``, ``train_config``, ``model_kind``, ``model_config``, ``rng``,
        ``extra`` and ``seqlab_version`` (and ``optimizer`` with a factory).

    Raises:
        CheckpointError: a folder without a checkpoint, or one that is unreadable, corrupt or of another format.

    Example:
        >>> import tempfile
        >>> from seqlab.nn import GPT, GPTConfig
        >>> from seqlab.text import CharTokenizer
        >>> from seqlab.text.checkpoint import save_checkpoint
        >>> tok, folder = CharTokenizer().train("abc"), tempfile.mkdtemp()
        >>> _ = save_checkpoint(folder, GPT(GPTConfig(tok.vocab_size, block_size=4, num_layers=1, num_heads=1,
        ...                                           d_model=8)), tokenizer=tok, iteration=3)
        >>> model, tok, state = load_checkpoint(folder)
        >>> type(model).__name__, tok.vocab_size, state["iteration"]
        ('GPT', 4, 3)
    """
    from safetensors import SafetensorError
    from safetensors.torch import load as load_bytes

    d = Path(directory)
    path = _checkpoint_path(d)
    # one read: header and tensors come from the same bytes, so a file replaced meanwhile cannot mix two versions
    try:
        data = path.read_bytes()
    except PermissionError:
        raise CheckpointError(f"{path}: cannot be read (permission denied)") from None
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be read ({_one_line(e)})") from None
    meta = _check_format(_read_header(path, data), path)
    try:
        tensors = load_bytes(data)
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{path}: corrupt checkpoint ({_one_line(e)})") from None
    del data
    _verify_tensors(tensors, meta, path)
    try:
        model = build_model(meta["model_kind"], json.loads(meta["model_config"]))
        weights = {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}
        missing, unexpected = model.load_state_dict(weights, strict=False)
        tied = {"lm_head.weight"} if getattr(model.config, "tie_weights", False) else set()
        if set(missing) - tied or unexpected:
            raise CheckpointError(f"{path}: weights do not fit the model (missing {sorted(set(missing) - tied)[:3]}, "
                                  f"unexpected {sorted(unexpected)[:3]})")
        state = {"iteration": int(meta["iteration"]), "history": current_names(json.loads(meta["history"])),
                 "train_config": json.loads(meta["train_config"]), "extra": json.loads(meta.get("extra", "{}")),
                 "seqlab_version": meta.get("seqlab_version"), "model_kind": meta["model_kind"],
                 "model_config": json.loads(meta["model_config"]),
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
        raise CheckpointError(f"{path}: corrupt checkpoint ({type(e).__name__}: {_one_line(e, 80)})") from None
    tokenizer = _load_tokenizer(d, meta, model.config.vocab_size)
    return model, tokenizer, state
