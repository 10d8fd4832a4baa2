"""``seqlab lm train`` and ``seqlab lm sample``: language models on a user's text, with resumable checkpoints."""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from ..experiments.lm import CHAPTER_TRAIN, chapter_gpt_config
from ..devices import DEVICES, DTYPES, MUON_NS_DTYPES
from ._common import UsageError, check_output_dir, float_in, int_at_least, nonnegative_int, positive_int, seed
from ._export import cmd_export
from ._train_report import STEP_CAP, header, log_rows, summary

__all__ = ["add_commands", "output_lock"]

#: the chapter's recipe supplies every default, so the CLI trains what §14.57 trains
_GPT = chapter_gpt_config(vocab_size=1)
#: CLI option -> model setting, for messages about a checkpoint trained with other settings
_OPTION_OF = {"d_model": "--d-model", "num_layers": "--num-layers", "num_heads": "--num-heads",
              "block_size": "--block-size", "positional": "--positional", "hidden_size": "--d-model",
              "vocab_size": "--vocab-size/--tokenizer", "dropout": "--dropout"}
#: a share of the text's characters unknown to a resumed checkpoint's tokenizer above which resuming is refused
_MAX_UNKNOWN = 0.01
#: --max-iters when --schedule-seconds sets the run's length and no step count is given


class OutputInUse(UsageError):
    """Another process is training into the same folder."""


@contextmanager
def output_lock(out: Path):
    """Hold an OS lock on ``out`` for the whole run; a second run on the same folder is refused at once.

    The lock (``filelock``: fcntl on POSIX, msvcrt on Windows) dies with its process, so a killed run never leaves
    the folder locked; ``.lock.pid`` beside it names the holder.
    """
    from filelock import FileLock, Timeout

    lock = FileLock(str(out / ".lock"), timeout=0)
    pid_file = out / ".lock.pid"
    try:
        lock.acquire()
    except Timeout:
        try:
            holder = pid_file.read_text(encoding="ascii").strip() or "unknown"
        except (OSError, UnicodeDecodeError):
            holder = "unknown"
        raise OutputInUse(f"--out {out} is in use by another `seqlab lm train` (pid {holder}); wait for it to "
                          "finish or choose another --out") from None
    try:
        pid_file.write_text(f"{os.getpid()}\n", encoding="ascii")
        yield
    finally:
        lock.release()


def _memory_needed(args, vocab_size: int) -> float:
    """A rough lower bound of training memory in bytes: weights with Adam state, plus activations."""
    d, L, B, T = args.d_model, args.num_layers, args.batch_size, args.block_size
    if args.model == "gpt":
        params = 12 * L * d * d + vocab_size * d
        activations = B * T * L * (16 * d + 2 * args.num_heads * T) + B * T * vocab_size
    else:
        h = 2 * d
        params = 4 * (d + h) * h + 4 * (2 * h) * h + vocab_size * (d + h)
        activations = B * T * (10 * h * 2 + vocab_size)
    return 4.0 * (4 * params + 3 * activations)


def _check_memory(args, vocab_size: int) -> None:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return
    need = _memory_needed(args, vocab_size)
    if need > 0.8 * total:
        raise UsageError(f"this model and batch need about {need / 2 ** 30:,.0f} GiB of memory to train; the machine has "
                         f"{total / 2 ** 30:.0f} GiB: lower --batch-size, --d-model, --num-layers or --block-size")


def _is_allocation_failure(e: BaseException) -> bool:
    text = str(e)
    return isinstance(e, MemoryError) or "can't allocate memory" in text or "DefaultCPUAllocator" in text or \
        "out of memory" in text.lower()


def _check_text(text: str, where: str) -> None:
    from ..text.corpus import CorpusError

    if len(set(text)) < 2:
        raise CorpusError(f"{where}: the text has a single distinct character ({text[:1]!r}); there is nothing "
                          "for a language model to learn")


def _tokenizer_for(args, text: str, out: Path):
    """The tokenizer of a checkpoint being resumed (checked against the text), else a new one."""
    from ..text import BPETokenizer, CharTokenizer
    from ..text.checkpoint import CHECKPOINT_FILE, read_checkpoint_state
    from ..text.tokenizers import UNK, loads_tokenizer

    if (out / CHECKPOINT_FILE).is_file() and not args.restart:
        state = read_checkpoint_state(out)
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
        return tok, state
    if args.tokenizer == "char":
        return CharTokenizer().train(text), None
    return BPETokenizer().train(text, args.vocab_size), None


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


def _read_text(args) -> str:
    from ..text.corpus import load_tinyshakespeare, read_text_file

    if args.text is None:
        args.text_label = "the bundled tinyshakespeare"
        return load_tinyshakespeare()
    args.text_label = args.text
    return read_text_file(args.text, max_bytes=_max_text_bytes())


def _max_text_bytes() -> int:
    """The largest text that fits in memory once tokenized (a Python int and a tensor entry per character)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 2 ** 30
    return int(0.5 * total / _BYTES_PER_CHAR)


#: memory per character of text while training: the string, the id list, the id tensor, and the train/val copies
_BYTES_PER_CHAR = 64


class _StopRequest:
    """SIGINT/SIGTERM: the first asks the run to stop after the current step (with a checkpoint); a second stops now."""

    def __init__(self):
        self.requested = False
        self.previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(f"\nseqlab: {signal.Signals(signum).name}: stopping after this step and writing a checkpoint "
              "(press Ctrl-C again to stop at once)", file=sys.stderr, flush=True)

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        return False

    def __call__(self) -> bool:
        return self.requested


def _cmd_train(args) -> int:
    import time

    import torch

    from ..files import remove_orphans
    from ..text.checkpoint import CHECKPOINT_FILE
    from ..text.corpus import split_train_val
    from ..devices import resolve_device
    from ..text.distributed import (rank_from_environment, rendezvous_address, rendezvous_timeout,
                                    watch_launcher)
    from ..text.training import TrainConfig, train_lm

    device = resolve_device(args.device)  # an absent device is said first, before any text is read or folder made
    if args.nproc > 1:
        return _launch(args, device)
    _resolve_model_options(args)
    where = rank_from_environment()  # a malformed RANK or WORLD_SIZE is one line naming the variable
    rank, world = where.rank, where.world_size
    if where.distributed:
        rendezvous_address(), rendezvous_timeout()  # checked before any text is read
    watch_launcher()  # a rank of --nproc stops with its launcher
    if args.batch_size % (world * args.grad_accum_steps):
        raise UsageError(f"--batch-size {args.batch_size} must divide evenly over {world} process"
                         f"{'es' if world > 1 else ''} x --grad-accum-steps {args.grad_accum_steps}")
    if rank != 0:  # the other ranks train in silence; rank 0 speaks for the run
        sys.stdout = open(os.devnull, "w")
    if args.model == "gpt" and args.d_model % args.num_heads:
        raise UsageError(f"--d-model {args.d_model} must be divisible by --num-heads {args.num_heads}")
    text = _read_text(args)
    _check_text(text, args.text_label)
    out = check_output_dir(args.out)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    try:
        with (output_lock(out) if rank == 0 else contextlib.nullcontext()):
            if rank == 0:
                remove_orphans(out)  # temporary files of a run that was killed mid-write
                if (out / "best").is_dir():
                    remove_orphans(out / "best")
            tok, state = _tokenizer_for(args, text, out)
            _check_memory(args, tok.vocab_size)
            ids = torch.tensor(tok.encode(text))
            train_ids, val_ids = split_train_val(ids)
            if min(len(train_ids), len(val_ids)) <= args.block_size:
                raise UsageError(f"{args.text_label}: {len(ids)} tokens is too short for a context of "
                                 f"{args.block_size} (the 10% validation part must be longer than the context)")
            val_chars = len(tok.decode(val_ids.tolist()))  # what the validation tokens spell
            warmup = _warmup(args, state)
            cfg = TrainConfig(max_iters=args.max_iters, batch_size=args.batch_size, block_size=args.block_size,
                              learning_rate=args.lr, min_lr=args.lr / 10, warmup_iters=warmup,
                              eval_interval=args.eval_interval, seed=args.seed, optimizer=args.optimizer,
                              muon_lr=args.muon_lr, eval_iters=CHAPTER_TRAIN.eval_iters,
                              embedding_lr=args.embedding_lr, head_lr=args.head_lr, weight_decay=args.weight_decay,
                              muon_momentum_warmup=args.muon_momentum_warmup, schedule_seconds=args.schedule_seconds,
                              grad_accum_steps=args.grad_accum_steps, device=args.device, dtype=args.dtype,
                              compile=args.compile, muon_ns_dtype=args.muon_ns_dtype)
            if state is not None:
                for note in _check_training_settings(cfg, state, out):
                    print(f"resume: {note}", flush=True)
            torch.manual_seed(args.seed)
            model = _build_model(args, tok.vocab_size)
            header(args, model, tok, text, train_ids, val_ids, cfg, out)
            try:
                with _StopRequest() as stop:
                    res = train_lm(model, train_ids, val_ids, cfg, checkpoint_dir=out, tokenizer=tok,
                                   resume=not args.restart, progress=sys.stderr.isatty(),
                                   log=log_rows(per_token=len(val_ids) != val_chars), time_budget_s=args.max_time,
                                   should_stop=stop, val_chars=val_chars)
            except KeyboardInterrupt:
                kept = ("keeps its last checkpoint" if (out / CHECKPOINT_FILE).is_file() else
                        "has no checkpoint yet")
                print(f"seqlab: interrupted; {out} {kept}; run the same command to resume", file=sys.stderr)
                return 130
            except (RuntimeError, MemoryError) as e:
                if _is_allocation_failure(e):
                    raise UsageError("out of memory while training this model and batch; lower --batch-size, "
                                     f"--d-model, --num-layers or --block-size ({out} keeps its last checkpoint)") \
                        from None
                raise
    finally:
        torch.set_num_threads(threads)
    if res.resumed_from is not None:
        print(f"(resumed from iteration {res.resumed_from})")
    for note in res.notes:
        if note.startswith("already"):
            print(f"resume: {note}")
    summary(res, out, time.perf_counter() - started, cfg, args.max_time, per_token=len(val_ids) != val_chars)
    if res.stopped:
        print(f"seqlab: stopped at iteration {res.iterations:,}; checkpoint written to {out}; run the same command "
              "to resume", file=sys.stderr)
        return 130
    print(f"checkpoint: {out}")
    return 0


def _cmd_sample(args) -> int:
    from ._sample import run_sample

    return run_sample(args)


#: the most tokens one `lm sample` generates
MAX_NEW_TOKENS = 100_000
_LR = float_in(1e-8, 10.0)  # outside this, AdamW and Muon either cannot move or overflow at once


def add_commands(sub, parser_class) -> None:
    lm = sub.add_parser("lm", help="train and sample language models").add_subparsers(dest="lm_command",
                                                                                       parser_class=parser_class)
    c = CHAPTER_TRAIN
    t = lm.add_parser("train", help="train a character (or BPE) language model on a text file")
    t.add_argument("--text", default=None, help="UTF-8 text file (default: the bundled tinyshakespeare)")
    t.add_argument("--out", default="checkpoints/lm", help="checkpoint folder (resumed if it holds one)")
    t.add_argument("--model", choices=("gpt", "lstm"), default="gpt")
    t.add_argument("--tokenizer", choices=("char", "bpe"), default="char")
    t.add_argument("--vocab-size", type=int_at_least(256, 65536), default=None,
                   help="BPE vocabulary size (default 512; needs --tokenizer bpe)")
    t.add_argument("--max-iters", type=positive_int, default=None,
                   help=f"iterations in all (default {c.max_iters}; with --schedule-seconds, no limit); on resume a "
                        "larger value extends the run")
    t.add_argument("--max-time", type=float_in(0.0, 1e7, low_open=True), default=None, metavar="SECONDS",
                   help="stop (with an evaluation and a checkpoint) after this much training time, counted across "
                        "resumes (default: no limit)")
    t.add_argument("--schedule-seconds", type=float_in(0.0, 1e7, low_open=True), default=None, metavar="SECONDS",
                   help="fit the schedule to this much training time: warm-up in steps, the cosine over the "
                        "seconds, and the run ends within them")
    t.add_argument("--batch-size", type=positive_int, default=c.batch_size,
                   help="sequences per step, over all processes together")
    t.add_argument("--block-size", type=positive_int, default=c.block_size, help="context length in tokens")
    t.add_argument("--num-layers", type=positive_int, default=None, help=f"GPT only (default {_GPT.num_layers})")
    t.add_argument("--num-heads", type=positive_int, default=None, help=f"GPT only (default {_GPT.num_heads})")
    t.add_argument("--d-model", type=positive_int, default=_GPT.d_model,
                   help="model width (the LSTM: embedding width, and half its hidden size)")
    t.add_argument("--positional", choices=("rotary", "learned", "sinusoidal"), default=None,
                   help=f"position information of the GPT (default {_GPT.positional})")
    t.add_argument("--optimizer", choices=("muon", "adamw"), default=c.optimizer,
                   help="muon: Muon for hidden matrices, AdamW for the rest; adamw: AdamW for all")
    t.add_argument("--lr", type=_LR, default=c.learning_rate, help="peak AdamW learning rate")
    t.add_argument("--muon-lr", type=_LR, default=c.muon_lr, help="peak Muon learning rate")
    t.add_argument("--embedding-lr", type=_LR, default=None,
                   help="peak AdamW learning rate of the token embedding (default: --lr)")
    t.add_argument("--head-lr", type=_LR, default=None,
                   help="peak AdamW learning rate of an untied output head (default: --lr)")
    t.add_argument("--dropout", type=float_in(0.0, 0.9), default=0.0,
                   help="dropout probability in training (the GPT: after attention, the MLP and the embedding; "
                        "the LSTM: on its embedding, between its layers and on its outputs)")
    t.add_argument("--untied-head", action="store_true",
                   help="GPT only: an output head of its own instead of the token embedding's transpose")
    t.add_argument("--qk-norm", action="store_true",
                   help="GPT only: a LayerNorm on each head's queries and keys before the scores (QK-norm)")
    t.add_argument("--muon-momentum-warmup", type=positive_int, default=None, metavar="STEPS",
                   help="raise Muon's momentum linearly from 0.85 to 0.95 over STEPS steps (default: 0.95 throughout)")
    t.add_argument("--weight-decay", type=float_in(0.0, 10.0), default=c.weight_decay,
                   help="AdamW's decoupled weight decay of embeddings and other matrices outside Muon")
    t.add_argument("--warmup", type=nonnegative_int, default=None,
                   help=f"warm-up iterations (default {c.warmup_iters}, at most --max-iters)")
    t.add_argument("--eval-interval", type=positive_int, default=c.eval_interval,
                   help="iterations between validation evaluations (and checkpoints)")
    t.add_argument("--seed", type=seed, default=c.seed)
    t.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads (default 1: more threads than free cores slows training down)")
    t.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when present, else the CPU")
    t.add_argument("--dtype", choices=DTYPES, default="float32", help="bfloat16: autocast the forward pass")
    t.add_argument("--muon-ns-dtype", choices=MUON_NS_DTYPES, default="auto",
                   help="Muon's Newton-Schulz products: auto runs a --dtype bfloat16 run's in bfloat16 (as "
                        "torch.optim.Muon) where the CPU or GPU has native bfloat16 products, in float32 elsewhere, "
                        "and a float32 run's in float32; the run's header says which")
    t.add_argument("--compile", action="store_true", help="torch.compile the model for training")
    t.add_argument("--grad-accum-steps", type=positive_int, default=1,
                   help="micro-batches per step and process; --batch-size stays the global batch")
    t.add_argument("--nproc", type=int_at_least(1, 256), default=1,
                   help="data-parallel processes on this machine (as torchrun --standalone --nproc_per_node)")
    t.add_argument("--restart", action="store_true", help="ignore an existing checkpoint in --out and start over")
    t.set_defaults(func=_cmd_train)
    x = lm.add_parser("export", help="write a checkpoint as a Hugging Face model folder transformers loads")
    x.add_argument("--checkpoint", required=True)
    x.add_argument("--format", choices=("hf",), default="hf",
                   help="hf: config.json, model.safetensors, tokenizer.json (GPT-2 or GPT-NeoX architecture)")
    x.add_argument("--out", required=True, help="the folder to write (one complete set, with a manifest)")
    x.set_defaults(func=cmd_export)
    from ._sample import MAX_SAMPLES, stop_string

    s = lm.add_parser("sample", help="generate text from a checkpoint, streaming to stdout")
    s.add_argument("--checkpoint", required=True)
    prompt = s.add_mutually_exclusive_group()  # None defaults, so an explicit --prompt "" still conflicts
    prompt.add_argument("--prompt", default=None, help="text to continue (default: start from a new line)")
    prompt.add_argument("--prompt-file", default=None, metavar="PATH",
                        help="UTF-8 file whose whole text, final newline included, is the prompt")
    s.add_argument("--max-new-tokens", type=int_at_least(0, MAX_NEW_TOKENS), default=300)
    # None means "not given": --greedy refuses the sampling options only when they are given
    s.add_argument("--temperature", type=float_in(0.0, 100.0, low_open=True), default=None, help="default 1")
    s.add_argument("--top-k", type=positive_int, default=None)
    s.add_argument("--top-p", type=float_in(0.0, 1.0), default=None)
    s.add_argument("--min-p", type=float_in(0.0, 1.0), default=None)
    s.add_argument("--repetition-penalty", type=float_in(0.001, 100.0), default=None,
                   help="above 1, tokens already in the text get less likely (Hugging Face's rule); default 1")
    s.add_argument("--no-repeat-ngram-size", type=nonnegative_int, default=None, metavar="N",
                   help="never complete an N-gram already in the text (prompt included); 0: off")
    s.add_argument("--stop", action="append", type=stop_string, default=None, metavar="TEXT",
                   help="end a sample where TEXT is generated, printing the text before it; repeatable; "
                        "\\n, \\t, \\r and \\\\ are escapes")
    s.add_argument("--num-samples", type=int_at_least(1, MAX_SAMPLES), default=1, metavar="N",
                   help="print N samples, each under a header; sample i (from 0) uses --seed + i")
    s.add_argument("--batch-size", type=int_at_least(1, MAX_SAMPLES), default=1, metavar="N",
                   help="generate up to N of the --num-samples together (each with its own seed, the same text as "
                        "alone); the first of each batch streams, the others print when it ends")
    s.add_argument("--threads", type=int_at_least(1, 1024), default=1,
                   help="torch threads (more threads than free cores slows sampling down)")
    s.add_argument("--greedy", action="store_true", help="always the most likely token; --repetition-penalty and "
                   "--no-repeat-ngram-size still apply")
    s.add_argument("--seed", type=seed, default=0)
    s.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when present, else the CPU "
                   "(a seed gives the same text on every device: the draws run on the CPU)")
    s.set_defaults(func=_cmd_sample)
