"""``seqlab lm train --init-from DIR``: a new run that starts from another run's weights and tokenizer.

The source (a checkpoint folder, or a folder ``lm export`` wrote) decides the model's
shape and the tokenizer; shape options given on the command line must agree with it.
The new run has its own optimizer, schedule and step count from 0, writes only into
``--out`` (never into the source), and records where it started in every checkpoint.
Characters of the new text that the source's tokenizer does not know are read as
its unknown token; past :data:`MAX_UNKNOWN` of the text, the run is refused.
"""
from __future__ import annotations

from pathlib import Path

from ._common import UsageError

__all__ = ["MAX_UNKNOWN", "adopt_source_shape", "source_start", "provenance", "check_same_source"]

#: the share of a new text's characters a source's tokenizer may not know (each is read as <unk>)
MAX_UNKNOWN = 0.05
#: args field -> (its flag, how the source gives it)
_SHAPE = {"model": "--model", "tokenizer": "--tokenizer", "d_model": "--d-model", "block_size": "--block-size",
          "num_layers": "--num-layers", "num_heads": "--num-heads", "positional": "--positional",
          "untied_head": "--untied-head", "qk_norm": "--qk-norm", "dropout": "--dropout", "vocab_size": "--vocab-size"}


def _given(args, flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in getattr(args, "argv", []))


def _load_source(src: Path):
    """``(model, tokenizer, state)`` of the source; ``state`` is empty for an exported folder."""
    from ..text.checkpoint import CHECKPOINT_FILE, load_checkpoint
    from ..text.export import load_hf

    if not src.is_dir():
        raise UsageError(f"--init-from {src}: no such folder (a checkpoint folder, or one lm export wrote)")
    if not (src / CHECKPOINT_FILE).exists() and (src / "config.json").is_file():
        model, tok = load_hf(src)
        return model, tok, {}
    model, tok, state = load_checkpoint(src)
    if tok is None:
        raise UsageError(f"--init-from {src}: the checkpoint has no tokenizer")
    return model, tok, state


def adopt_source_shape(args) -> None:
    """Take the model's shape and tokenizer from ``--init-from``; refuse a shape option that disagrees."""
    from ..text.checkpoint import model_kind

    src = Path(args.init_from)
    out = Path(args.out)
    a, b = src.resolve(), out.resolve()
    if a == b or a in b.parents or b in a.parents:
        raise UsageError(f"--out {out} and --init-from {src} overlap; a fine-tuning run never writes into (or "
                         "around) its source: choose another --out")
    model, tok, _ = _load_source(src)
    c = model.config
    kind = model_kind(model)
    have = {"model": kind, "tokenizer": tok.kind, "block_size": c.block_size, "dropout": c.dropout,
            "vocab_size": tok.vocab_size}
    if kind == "gpt":
        have |= {"d_model": c.d_model, "num_layers": c.num_layers, "num_heads": c.num_heads,
                 "positional": c.positional, "untied_head": not c.tie_weights, "qk_norm": c.qk_norm}
    else:
        have |= {"d_model": c.d_model}
    for key, value in have.items():
        flag = _SHAPE[key]
        if _given(args, flag) and getattr(args, key) != value:
            raise UsageError(f"{flag} {getattr(args, key)}: --init-from {src} has {key} = {value}, and a fine-tuning "
                             f"run keeps its source's shape; leave {flag} out")
        setattr(args, key, value)
    args.vocab_size_given = False


def source_start(args, text: str, label: str):
    """``(tokenizer, model)`` to start from, with the source's weights; says how unknown characters are read."""
    from ..text.tokenizers import UNK

    model, tok, _ = _load_source(Path(args.init_from))
    unk = tok.token_to_id.get(UNK)
    if unk is not None:
        unknown = [ch for ch in dict.fromkeys(text) if tok.encode(ch) == [unk]]
        count = sum(text.count(ch) for ch in unknown)
        if count:
            share = count / len(text)
            named = ", ".join(repr(ch) for ch in unknown[:10]) + (f" and {len(unknown) - 10} more"
                                                                  if len(unknown) > 10 else "")
            if share > MAX_UNKNOWN:
                raise UsageError(f"{label}: {share:.1%} of its characters ({named}) are unknown to the tokenizer of "
                                 f"--init-from {args.init_from}, more than {MAX_UNKNOWN:.0%}: train from scratch "
                                 "instead (without --init-from)")
            print(f"init: {count:,} character(s) of {label} ({share:.2%}: {named}) are unknown to the source's "
                  f"tokenizer and are read as {UNK}", flush=True)
    return tok, model


def provenance(args, text: str, label: str) -> dict:
    """What every checkpoint of this run records: its text and, when fine-tuning, where it started."""
    from ..files import sha256_file
    from ..text.checkpoint import CHECKPOINT_FILE
    from ..text.training import text_record

    record = {"text": text_record(text, label)}
    if getattr(args, "init_from", None):
        src = Path(args.init_from)
        file = src / CHECKPOINT_FILE if (src / CHECKPOINT_FILE).is_file() else src / "model.safetensors"
        record["init_from"] = {"path": str(src.resolve()), "sha256": sha256_file(file)}
    return record


def check_same_source(stored: dict, now: dict, out: Path) -> None:
    """A fine-tuning run resumes only with the source it started from (named by its folder: the source may have
    trained on since, and the run no longer reads it)."""
    was, is_ = stored.get("init_from"), now.get("init_from")
    if (was or {}).get("path") != (is_ or {}).get("path"):
        started = f"started from {was['path']}" if was else "was trained from scratch"
        asked = f"--init-from {is_['path']}" if is_ else "no --init-from"
        raise UsageError(f"--out {out} holds a run that {started}, and this command asks for {asked}; use the same "
                         "source, --restart, or another --out")
