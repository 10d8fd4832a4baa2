"""``seqlab lm train`` and ``seqlab lm sample``: language models on a user's text, with resumable checkpoints."""
from __future__ import annotations

import fcntl
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from ..experiments.lm import CHAPTER_TRAIN, chapter_gpt_config
from ._common import UsageError, check_output_dir, float_in, int_at_least, nonnegative_int, positive_int, seed

__all__ = ["add_commands", "output_lock"]

#: the chapter's recipe supplies every default, so the CLI trains what §14.57 trains
_GPT = chapter_gpt_config(vocab_size=1)
#: CLI option -> model setting, for messages about a checkpoint trained with other settings
_OPTION_OF = {"d_model": "--d-model", "num_layers": "--num-layers", "num_heads": "--num-heads",
              "block_size": "--block-size", "positional": "--positional", "hidden_size": "--d-model",
              "vocab_size": "--vocab-size/--tokenizer"}
#: a share of the text's characters unknown to a resumed checkpoint's tokenizer above which resuming is refused
_MAX_UNKNOWN = 0.01


class OutputInUse(UsageError):
    """Another process is training into the same folder."""


@contextmanager
def output_lock(out: Path):
    """Hold an OS lock on ``out`` for the whole run; a second run on the same folder is refused at once.

    The lock dies with its process, so a killed run never leaves the folder locked.
    """
    path = out / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise OutputInUse(f"--out {out} is in use by another `seqlab lm train` (pid {holder}); wait for it to "
                              "finish or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


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
        ids = tok.encode(text)
        unk = tok.token_to_id.get(UNK)
        share = sum(i == unk for i in ids) / max(1, len(ids)) if unk is not None else 0.0
        if share > _MAX_UNKNOWN:
            raise UsageError(f"{args.text}: {share:.0%} of it is unknown to the tokenizer of the checkpoint in {out} "
                             "(trained on another text); use --restart or another --out")
        _check_settings(args, state, out)
        return tok, state
    if args.tokenizer == "char":
        return CharTokenizer().train(text), None
    return BPETokenizer().train(text, args.vocab_size), None


def _check_settings(args, state: dict, out: Path) -> None:
    """Name the option that differs from the checkpoint being resumed."""
    if state["model_kind"] != args.model:
        raise UsageError(f"--model {args.model}: the checkpoint in {out} is a {state['model_kind']} model; use "
                         f"--model {state['model_kind']}, --restart, or another --out")
    cfg = state["model_config"]
    asked = {"d_model": args.d_model, "block_size": args.block_size}
    if args.model == "gpt":
        asked |= {"num_layers": args.num_layers, "num_heads": args.num_heads, "positional": args.positional}
    else:
        asked |= {"hidden_size": 2 * args.d_model}
    for key, value in asked.items():
        if key in cfg and cfg[key] != value:
            have = cfg[key] if key != "hidden_size" else cfg[key] // 2
            raise UsageError(f"{_OPTION_OF[key]} {value if key != 'hidden_size' else args.d_model}: the checkpoint in "
                             f"{out} was trained with {_OPTION_OF[key]} {have}; use the same setting, --restart, "
                             "or another --out")


def _build_model(args, vocab_size: int):
    from ..nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel

    if args.model == "gpt":
        return GPT(GPTConfig(vocab_size=vocab_size, block_size=args.block_size, num_layers=args.num_layers,
                             num_heads=args.num_heads, d_model=args.d_model, bias=False, positional=args.positional))
    return LSTMLanguageModel(LSTMConfig(vocab_size=vocab_size, d_model=args.d_model, hidden_size=2 * args.d_model,
                                        num_layers=2, block_size=args.block_size))


def _cmd_train(args) -> int:
    import torch

    from ..store import remove_orphans
    from ..text.corpus import read_text_file, split_train_val
    from ..text.training import TrainConfig, train_lm

    if args.model == "gpt" and args.d_model % args.num_heads:
        raise UsageError(f"--d-model {args.d_model} must be divisible by --num-heads {args.num_heads}")
    text = read_text_file(args.text)
    _check_text(text, args.text)
    out = check_output_dir(args.out)
    with output_lock(out):
        remove_orphans(out)  # temporary files of a run that was killed mid-write
        tok, _ = _tokenizer_for(args, text, out)
        _check_memory(args, tok.vocab_size)
        ids = torch.tensor(tok.encode(text))
        train_ids, val_ids = split_train_val(ids)
        if min(len(train_ids), len(val_ids)) <= args.block_size:
            raise UsageError(f"{args.text}: {len(ids)} tokens is too short for a context of {args.block_size} "
                             "(the 10% validation part must be longer than the context)")
        cfg = TrainConfig(max_iters=args.max_iters, batch_size=args.batch_size, block_size=args.block_size,
                          learning_rate=args.lr, min_lr=args.lr / 10, warmup_iters=min(args.warmup, args.max_iters),
                          eval_interval=args.eval_interval, seed=args.seed, optimizer=args.optimizer,
                          muon_lr=args.muon_lr, eval_iters=CHAPTER_TRAIN.eval_iters)
        torch.manual_seed(args.seed)
        try:
            model = _build_model(args, tok.vocab_size)
            res = train_lm(model, train_ids, val_ids, cfg, checkpoint_dir=out, tokenizer=tok,
                           resume=not args.restart, progress=sys.stderr.isatty(), log=_log_row)
        except KeyboardInterrupt:
            print(f"seqlab: interrupted; {out} keeps the last checkpoint, run the same command to resume",
                  file=sys.stderr)
            return 130
        except (RuntimeError, MemoryError) as e:
            if _is_allocation_failure(e):
                raise UsageError("out of memory while training this model and batch; lower --batch-size, "
                                 f"--d-model, --num-layers or --block-size ({out} keeps its last checkpoint)") from None
            raise
    if res.resumed_from is not None:
        print(f"(resumed from iteration {res.resumed_from})")
    print(f"checkpoint: {out}")
    return 0


def _log_row(r) -> None:
    print(f"iter {r['iter']:>6}  train {r['train_loss']:.4f}  val {r['val_loss']:.4f} "
          f"({r['val_bpc']:.3f} bits/token)  {r['tokens_per_s']:,.0f} tok/s", flush=True)


def _cmd_sample(args) -> int:
    import torch

    from ..text.checkpoint import load_checkpoint
    from ..text.generation import stream
    from ..text.sampling import SuppressTokens, build_processors
    from ..text.tokenizers import UNK

    procs = build_processors(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, min_p=args.min_p)
    model, tok, _ = load_checkpoint(args.checkpoint)
    if tok is None:
        raise UsageError(f"{args.checkpoint}: the checkpoint has no tokenizer")
    if UNK in tok.token_to_id:  # the unknown token is a placeholder, not text
        procs.insert(0, SuppressTokens([tok.token_to_id[UNK]]))
    prompt_ids = tok.encode(args.prompt or "\n")  # an empty prompt starts from a new line
    sys.stdout.write(args.prompt)
    g = torch.Generator().manual_seed(args.seed)
    pending: list[int] = []
    for nxt in stream(model, torch.tensor([prompt_ids]), args.max_new_tokens, procs, greedy=args.greedy, generator=g):
        pending.append(int(nxt))
        piece = tok.decode(pending)
        if "\ufffd" not in piece:  # wait for the rest of a multi-byte character
            sys.stdout.write(piece)
            sys.stdout.flush()
            pending = []
    sys.stdout.write(tok.decode(pending) + "\n")
    return 0


_LR = float_in(1e-8, 10.0)  # outside this, AdamW and Muon either cannot move or overflow at once


def add_commands(sub, parser_class) -> None:
    lm = sub.add_parser("lm", help="train and sample language models").add_subparsers(dest="lm_command",
                                                                                       parser_class=parser_class)
    c = CHAPTER_TRAIN
    t = lm.add_parser("train", help="train a character (or BPE) language model on a text file")
    t.add_argument("--text", required=True, help="UTF-8 text file")
    t.add_argument("--out", default="checkpoints/lm", help="checkpoint folder (resumed if it holds one)")
    t.add_argument("--model", choices=("gpt", "lstm"), default="gpt")
    t.add_argument("--tokenizer", choices=("char", "bpe"), default="char")
    t.add_argument("--vocab-size", type=int_at_least(256, 65536), default=512, help="BPE vocabulary size")
    t.add_argument("--max-iters", type=positive_int, default=c.max_iters)
    t.add_argument("--batch-size", type=positive_int, default=c.batch_size)
    t.add_argument("--block-size", type=positive_int, default=c.block_size)
    t.add_argument("--num-layers", type=positive_int, default=_GPT.num_layers)
    t.add_argument("--num-heads", type=positive_int, default=_GPT.num_heads)
    t.add_argument("--d-model", type=positive_int, default=_GPT.d_model)
    t.add_argument("--positional", choices=("rotary", "learned", "sinusoidal"), default=_GPT.positional,
                   help="position information of the GPT")
    t.add_argument("--optimizer", choices=("muon", "adamw"), default=c.optimizer,
                   help="muon: Muon for hidden matrices, AdamW for the rest; adamw: AdamW for all")
    t.add_argument("--lr", type=_LR, default=c.learning_rate, help="peak AdamW learning rate")
    t.add_argument("--muon-lr", type=_LR, default=c.muon_lr, help="peak Muon learning rate")
    t.add_argument("--warmup", type=nonnegative_int, default=c.warmup_iters)
    t.add_argument("--eval-interval", type=positive_int, default=c.eval_interval)
    t.add_argument("--seed", type=seed, default=c.seed)
    t.add_argument("--restart", action="store_true", help="ignore an existing checkpoint in --out and start over")
    t.set_defaults(func=_cmd_train)
    s = lm.add_parser("sample", help="generate text from a checkpoint, streaming to stdout")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--prompt", default="")
    s.add_argument("--max-new-tokens", type=nonnegative_int, default=300)
    s.add_argument("--temperature", type=float_in(0.0, 100.0, low_open=True), default=1.0)
    s.add_argument("--top-k", type=positive_int, default=None)
    s.add_argument("--top-p", type=float_in(0.0, 1.0), default=None)
    s.add_argument("--min-p", type=float_in(0.0, 1.0), default=None)
    s.add_argument("--greedy", action="store_true")
    s.add_argument("--seed", type=seed, default=0)
    s.set_defaults(func=_cmd_sample)
