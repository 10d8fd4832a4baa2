"""``seqlab lm train`` and ``seqlab lm sample``: language models on a user's text, with resumable checkpoints."""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from ..experiments.lm import CHAPTER_TRAIN
from ._common import UsageError, check_output_dir, note_threads
from ._export import cmd_export
from ._lm_options import GPT_DEFAULTS, add_eval_options, add_export_options, add_sample_options, add_train_options
from ._train_report import STEP_CAP, header, log_rows, loss_curve, summary
from ._train_guards import (OutputInUse, _check_memory, _check_text, _is_allocation_failure, _read_text,
                            _StopRequest, output_lock)

__all__ = ["add_commands", "output_lock", "OutputInUse"]

#: the chapter's recipe supplies every default, so the CLI trains what §14.57 trains
_GPT = GPT_DEFAULTS


#: CLI option -> model setting, for messages about a checkpoint trained with other settings
_OPTION_OF = {"d_model": "--d-model", "num_layers": "--num-layers", "num_heads": "--num-heads",
              "block_size": "--block-size", "positional": "--positional", "hidden_size": "--d-model",
              "vocab_size": "--vocab-size/--tokenizer", "dropout": "--dropout"}


#: a share of the text's characters unknown to a resumed checkpoint's tokenizer above which resuming is refused
_MAX_UNKNOWN = 0.01


def _tokenizer_for(args, text: str, out: Path, prov: dict):
    """``(tokenizer, resumed state, starting model)``: a resumed checkpoint's tokenizer (checked against the text),
    the source's with --init-from, else a new one."""
    from ..text import BPETokenizer, CharTokenizer
    from ..text.checkpoint import CHECKPOINT_FILE, read_checkpoint_state
    from ..text.tokenizers import UNK, loads_tokenizer
    from ._finetune import check_same_source, source_start

    if (out / CHECKPOINT_FILE).is_file() and not args.restart:
        state = read_checkpoint_state(out)
        stored = state["extra"].get("provenance") or {}
        was, now = stored.get("text"), prov["text"]
        if was and was.get("sha256") != now["sha256"]:
            raise UsageError(f"{args.text_label}: the checkpoint in {out} was trained on {was.get('name')} "
                             f"({was.get('characters', 0):,} characters), not on this text ({now['characters']:,}); "
                             f"use the same --text, --init-from {out} --out NEW to fine-tune on it, --restart, or "
                             "another --out")
        if stored:
            check_same_source(stored, prov, out)
        if not state["tokenizer"]:
            raise UsageError(f"{out}: the checkpoint has no tokenizer; use --restart or another --out")
        tok = loads_tokenizer(state["tokenizer"], str(out / CHECKPOINT_FILE))
        if tok.kind != args.tokenizer:
            raise UsageError(f"--tokenizer {args.tokenizer}: the checkpoint in {out} was trained with --tokenizer "
                             f"{tok.kind}; use the same setting, --restart, or another --out")
        if tok.kind == "bpe" and args.vocab_size_given and tok.vocab_size != args.vocab_size:
            raise UsageError(f"--vocab-size {args.vocab_size}: the checkpoint in {out} has a vocabulary of "
                             f"{tok.vocab_size}; use the same setting, --restart, or another --out")
        ids = tok.encode(text)
        unk = tok.token_to_id.get(UNK)
        share = sum(i == unk for i in ids) / max(1, len(ids)) if unk is not None else 0.0
        if share > _MAX_UNKNOWN:
            raise UsageError(f"{args.text_label}: {share:.0%} of it is unknown to the tokenizer of the checkpoint in "
                             f"{out} (trained on another text); use --restart or another --out")
        _check_settings(args, state, out)
        return tok, state, None
    if args.init_from:
        tok, model = source_start(args, text, args.text_label)
        return tok, None, model
    if args.tokenizer == "char":
        return CharTokenizer().train(text), None, None
    return BPETokenizer().train(text, args.vocab_size), None, None


#: TrainConfig field -> the CLI option that sets it
_TRAIN_OPTION = {"batch_size": "--batch-size", "block_size": "--block-size", "learning_rate": "--lr",
                 "min_lr": "--lr", "warmup_iters": "--warmup", "seed": "--seed", "optimizer": "--optimizer",
                 "muon_lr": "--muon-lr", "embedding_lr": "--embedding-lr", "head_lr": "--head-lr",
                 "weight_decay": "--weight-decay", "muon_momentum_warmup": "--muon-momentum-warmup",
                 "schedule_seconds": "--schedule-seconds"}


def _check_settings(args, state: dict, out: Path) -> None:
    """Name the option that differs from the checkpoint being resumed."""
    if state["model_kind"] != args.model:
        raise UsageError(f"--model {args.model}: the checkpoint in {out} is a {state['model_kind']} model; use "
                         f"--model {state['model_kind']}, --restart, or another --out")
    cfg = state["model_config"]
    asked = {"d_model": args.d_model, "block_size": args.block_size, "dropout": args.dropout}
    if args.model == "gpt":
        asked |= {"num_layers": args.num_layers, "num_heads": args.num_heads, "positional": args.positional}
        for flag, trained_with in (("--untied-head", not cfg.get("tie_weights", True)),
                                   ("--qk-norm", cfg.get("qk_norm", False))):
            asked_for = getattr(args, flag[2:].replace("-", "_"))
            if trained_with != asked_for:
                raise UsageError(f"{flag}: the checkpoint in {out} was trained without it; leave out {flag}, "
                                 "--restart, or another --out" if asked_for else
                                 f"the checkpoint in {out} was trained with {flag}; add {flag}, --restart, "
                                 "or another --out")
    else:
        asked |= {"hidden_size": 2 * args.d_model}
    for key, value in asked.items():
        if key in cfg and cfg[key] != value:
            have = cfg[key] if key != "hidden_size" else cfg[key] // 2
            raise UsageError(f"{_OPTION_OF[key]} {value if key != 'hidden_size' else args.d_model}: the checkpoint in "
                             f"{out} was trained with {_OPTION_OF[key]} {have}; use the same setting, --restart, "
                             "or another --out")


def _check_training_settings(cfg, state: dict, out: Path) -> list[str]:
    """Refuse a resume whose training settings differ from the checkpoint's (naming the option); return notes."""
    from ..text.schedule import resume_changes

    saved = state.get("train_config") or {}
    refused, notes = resume_changes(saved, cfg)
    if refused:
        key = refused[0].split()[0]
        option = _TRAIN_OPTION.get(key, key)
        value = getattr(cfg, key)
        have = saved[key] if key != "min_lr" else saved[key] * 10
        shown = value if key != "min_lr" else value * 10
        raise UsageError(f"{option} {_setting(shown)}: the checkpoint in {out} was trained with {option} "
                         f"{_setting(have)}; use the same setting, --restart, or another --out")
    return notes


def _setting(value) -> str:
    """A setting as a message shows it: numbers briefly, an unset rate as 'unset'."""
    if value is None:
        return "unset"
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _build_model(args, vocab_size: int):
    from ..nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel

    if args.model == "gpt":
        return GPT(GPTConfig(vocab_size=vocab_size, block_size=args.block_size, num_layers=args.num_layers,
                             num_heads=args.num_heads, d_model=args.d_model, bias=False, positional=args.positional,
                             tie_weights=not args.untied_head, qk_norm=args.qk_norm, dropout=args.dropout))
    return LSTMLanguageModel(LSTMConfig(vocab_size=vocab_size, d_model=args.d_model, hidden_size=2 * args.d_model,
                                        num_layers=2, block_size=args.block_size, dropout=args.dropout))


def _launch(args, device) -> int:
    """Start ``--nproc`` ranks of this same command (without --nproc) on ``device`` (resolved)."""
    import torch

    from .launch import launch

    if args.batch_size % (args.nproc * args.grad_accum_steps):
        raise UsageError(f"--batch-size {args.batch_size} must divide evenly over {args.nproc} processes x "
                         f"--grad-accum-steps {args.grad_accum_steps}")
    from ..text.distributed import rank_from_environment

    if rank_from_environment().distributed:
        raise UsageError("--nproc starts its own processes; under torchrun, leave it out")
    if device.type == "cuda" and args.nproc > torch.cuda.device_count():
        raise UsageError(f"--nproc {args.nproc} on CUDA needs a GPU per process, and this machine has "
                         f"{torch.cuda.device_count()}")
    argv = list(args.argv)
    rest, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == "--nproc":
            skip = True
            continue
        if a.startswith("--nproc="):
            continue
        rest.append(a)
    return launch(rest, args.nproc, Path(args.out))


def _resolve_model_options(args) -> None:
    """GPT-only options are an error with --model lstm; otherwise fill the chapter's defaults.

    A run fitted to --schedule-seconds ends with its time: it has no step count unless one is given.
    """
    gpt_only = [f"--{k.replace('_', '-')}" for k in ("num_layers", "num_heads", "positional")
                if getattr(args, k) is not None] + [flag for flag, on in (("--untied-head", args.untied_head),
                                                                          ("--qk-norm", args.qk_norm)) if on]
    if args.model == "lstm" and gpt_only:
        raise UsageError(f"{', '.join(gpt_only)} set(s) the GPT only; the LSTM has 2 layers of width 2 x --d-model "
                         "(drop the option or use --model gpt)")
    if args.model == "gpt" and args.head_lr is not None and not args.untied_head:
        raise UsageError("--head-lr sets the rate of an untied head; the GPT's head is its embedding unless "
                         "--untied-head (use --embedding-lr for both)")
    for key in ("num_layers", "num_heads", "positional"):
        if getattr(args, key) is None:
            setattr(args, key, getattr(_GPT, key))
    if args.max_iters is None:
        args.max_iters = STEP_CAP if args.schedule_seconds is not None else CHAPTER_TRAIN.max_iters
    args.vocab_size_given = args.vocab_size is not None
    if args.vocab_size is None:
        args.vocab_size = 512
    elif args.tokenizer != "bpe":
        raise UsageError("--vocab-size sets the BPE vocabulary; it needs --tokenizer bpe")


def _warmup(args, state: dict | None) -> int:
    """--warmup, else the resumed run's own warm-up, else the chapter's (at most --max-iters)."""
    if args.warmup is not None:
        return args.warmup
    saved = (state or {}).get("train_config") or {}
    return saved.get("warmup_iters", min(CHAPTER_TRAIN.warmup_iters, args.max_iters))


def _enter_rank(args) -> int:
    """Check what this process's rank needs before any text is read or folder made; returns the rank."""
    from ..text.distributed import rank_from_environment, rendezvous_address, rendezvous_timeout, watch_launcher

    _resolve_model_options(args)
    if args.init_from:
        from ._finetune import adopt_source_shape

        adopt_source_shape(args)
    where = rank_from_environment()  # a malformed RANK or WORLD_SIZE is one line naming the variable
    world = where.world_size
    if where.distributed:
        rendezvous_address(), rendezvous_timeout()
    watch_launcher()  # a rank of --nproc stops with its launcher
    if args.batch_size % (world * args.grad_accum_steps):
        raise UsageError(f"--batch-size {args.batch_size} must divide evenly over {world} process"
                         f"{'es' if world > 1 else ''} x --grad-accum-steps {args.grad_accum_steps}")
    if where.rank != 0:  # the other ranks train in silence; rank 0 speaks for the run
        sys.stdout = open(os.devnull, "w")
    if args.model == "gpt" and args.d_model % args.num_heads:
        raise UsageError(f"--d-model {args.d_model} must be divisible by --num-heads {args.num_heads}")
    return where.rank


def _split(args, tok, text: str):
    """The text's ids cut into training and validation parts, and the characters the validation ids spell."""
    import torch

    from ..text.corpus import split_train_val
    from ..text.scoring import spelled_characters

    ids = torch.tensor(tok.encode(text))
    train_ids, val_ids = split_train_val(ids)
    if min(len(train_ids), len(val_ids)) <= args.block_size:
        raise UsageError(f"{args.text_label}: {len(ids)} tokens is too short for a context of "
                         f"{args.block_size} (the 10% validation part must be longer than the context)")
    return train_ids, val_ids, spelled_characters(tok, val_ids)  # an <unk> stands for one character


def _train_config(args, warmup: int):
    """The run's :class:`~seqlab.text.training.TrainConfig` from the command's options."""
    from ..text.training import TrainConfig

    return TrainConfig(max_iters=args.max_iters, batch_size=args.batch_size, block_size=args.block_size,
                       learning_rate=args.lr, min_lr=args.lr / 10, warmup_iters=warmup,
                       eval_interval=args.eval_interval, seed=args.seed, optimizer=args.optimizer,
                       muon_lr=args.muon_lr, eval_iters=CHAPTER_TRAIN.eval_iters,
                       embedding_lr=args.embedding_lr, head_lr=args.head_lr, weight_decay=args.weight_decay,
                       muon_momentum_warmup=args.muon_momentum_warmup, schedule_seconds=args.schedule_seconds,
                       grad_accum_steps=args.grad_accum_steps, device=args.device, dtype=args.dtype,
                       compile=args.compile, muon_ns_dtype=args.muon_ns_dtype)


def _train(args, text: str, out: Path, rank: int):
    """Tokenize, build and train under ``out``'s lock; returns ``(result, config, per_token)`` or an exit code."""
    import torch

    from ..files import remove_orphans
    from ..text.checkpoint import CHECKPOINT_FILE
    from ..text.training import train_lm
    from ._finetune import provenance

    if rank == 0:
        remove_orphans(out)  # temporary files of a run that was killed mid-write
        if (out / "best").is_dir():
            remove_orphans(out / "best")
    prov = provenance(args, text, args.text_label)
    tok, state, start = _tokenizer_for(args, text, out, prov)
    _check_memory(args, tok.vocab_size)
    train_ids, val_ids, val_chars = _split(args, tok, text)
    cfg = _train_config(args, _warmup(args, state))
    if state is not None:
        print(f"resume: from iteration {state['iteration']:,} of the checkpoint in {out}", flush=True)
        for note in _check_training_settings(cfg, state, out):
            print(f"resume: {note}", flush=True)
    torch.manual_seed(args.seed)
    model = start if start is not None else _build_model(args, tok.vocab_size)
    header(args, model, tok, text, train_ids, val_ids, cfg, out)
    per_token = len(val_ids) != val_chars
    from ..text.distributed import launcher_gone, stop_with_launcher

    try:
        with _StopRequest() as stop, stop_with_launcher(stop) as should_stop:
            res = train_lm(model, train_ids, val_ids, cfg, checkpoint_dir=out, tokenizer=tok,
                           resume=not args.restart, progress=sys.stderr.isatty(), log=log_rows(per_token=per_token),
                           time_budget_s=args.max_time, should_stop=should_stop, val_chars=val_chars,
                           provenance=prov)
    except KeyboardInterrupt:
        if launcher_gone() is not None:  # _cmd_train says so
            raise
        kept = "keeps its last checkpoint" if (out / CHECKPOINT_FILE).is_file() else "has no checkpoint yet"
        print(f"seqlab: interrupted; {out} {kept}; run the same command to resume", file=sys.stderr)
        return 130
    except (RuntimeError, MemoryError) as e:
        if _is_allocation_failure(e):
            raise UsageError("out of memory while training this model and batch; lower --batch-size, "
                             f"--d-model, --num-layers or --block-size ({out} keeps its last checkpoint)") from None
        raise
    return res, cfg, per_token


def _cmd_train(args) -> int:
    from ..devices import resolve_device

    device = resolve_device(args.device)  # an absent device is said first, before any text is read or folder made
    if args.nproc > 1:
        return _launch(args, device)
    from ..text.distributed import DistributedError
    from .launch import leave_for, orphan_note

    try:
        return _train_rank(args)
    except KeyboardInterrupt:  # a rank whose launcher is gone is interrupted (watch_launcher): say so
        note = orphan_note(Path(args.out))
        if note is None:
            raise
        raise KeyboardInterrupt(note) from None
    except DistributedError as e:
        leave_for(e)  # under lm train --nproc the launcher reports a lost contact, naming the rank that died
        raise


def _train_rank(args) -> int:
    """``lm train`` in this process: the whole run, or one rank of a distributed one."""
    import time

    import torch

    from .launch import orphan_note

    rank = _enter_rank(args)
    text = _read_text(args)
    _check_text(text, args.text_label)
    out = check_output_dir(args.out)
    note_threads(args.threads)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    try:
        with (output_lock(out) if rank == 0 else contextlib.nullcontext()):
            done = _train(args, text, out, rank)
    finally:
        torch.set_num_threads(threads)
    if isinstance(done, int):
        return done
    res, cfg, per_token = done
    for note in res.notes:
        if note.startswith("already"):
            print(f"resume: {note}")
    summary(res, out, time.perf_counter() - started, cfg, args.max_time, per_token=per_token)
    loss_curve(res.history, out, per_token)
    if res.stopped and (orphaned := orphan_note(out)):
        print(f"seqlab: interrupted: {orphaned}", file=sys.stderr)
        return 130
    if res.stopped:
        print(f"seqlab: stopped at iteration {res.iterations:,}; checkpoint written to {out}; run the same command "
              "to resume", file=sys.stderr)
        return 130
    print(f"checkpoint: {out}")
    return 0


def _cmd_sample(args) -> int:
    from ._sample import run_sample

    return run_sample(args)


def _cmd_eval(args) -> int:
    from ._eval import cmd_eval

    return cmd_eval(args)


def add_commands(sub, parser_class) -> None:
    lm = sub.add_parser("lm", help="train and sample language models").add_subparsers(dest="lm_command",
                                                                                       parser_class=parser_class)
    t = lm.add_parser("train", help="train a character (or BPE) language model on a text file")
    add_train_options(t)
    t.set_defaults(func=_cmd_train)
    x = lm.add_parser("export", help="write a checkpoint as a Hugging Face model folder transformers loads")
    add_export_options(x)
    x.set_defaults(func=cmd_export)
    v = lm.add_parser("eval", help="score a checkpoint on a text: loss per token and per character, perplexity")
    add_eval_options(v)
    v.set_defaults(func=_cmd_eval)
    s = lm.add_parser("sample", help="generate text from a checkpoint, streaming to stdout")
    add_sample_options(s)
    s.set_defaults(func=_cmd_sample)
