"""The ``seqlab`` command: list and run the chapter's sections."""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import __version__


class UsageError(Exception):
    """A bad command line: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage and exits; we want one line
        raise UsageError(message)


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.float32):
        v = float(str(v))  # shortest decimal that round-trips in float32: 0.304, not 0.30399999
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _records(df) -> list[dict]:
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == np.float32:  # keep float32's own shortest decimals through the float64 JSON
            df[c] = [float(str(x)) for x in df[c].to_numpy()]
    return [{str(k): _jsonable(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def result_to_dict(res) -> dict:
    tables = {name: _records(df) for name, df in res.tables.items()}
    return {"section": res.section, "title": res.title, "tables": tables, "figures": [str(p) for p in res.figures],
            "notes": list(res.notes), "seconds": round(res.seconds, 3)}


def _print_text(res, out=None) -> None:
    import pandas as pd

    out = sys.stdout if out is None else out
    print(f"\n§{res.section} {res.title}  ({res.seconds:.1f} s)", file=out)
    with pd.option_context("display.width", 140, "display.max_columns", 20, "display.max_rows", 30):
        for name, df in res.tables.items():
            print(f"\n  [{name}]", file=out)
            print("  " + df.to_string(index=False, max_rows=24).replace("\n", "\n  "), file=out)
    for note in res.notes:
        print(f"  note: {note}", file=out)
    for f in res.figures:
        print(f"  figure: {f}", file=out)


def _cmd_list(args) -> int:
    from .chapter import registry

    for sid, entry in registry().items():
        print(f"{sid:<8} {entry.title}")
    return 0


def _cmd_run(args) -> int:
    from .chapter import get_section, registry, run_section

    ids = list(registry()) if args.section == "all" else [get_section(args.section).id]
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="seqlab-"))
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    results, t0 = [], time.perf_counter()
    for sid in ids:
        res = run_section(sid, out, seed=args.seed, figures=not args.no_figures)
        results.append(res)
        if not args.json:
            _print_text(res)
            sys.stdout.flush()
    total = time.perf_counter() - t0
    if args.json:
        payload = result_to_dict(results[0]) if len(results) == 1 else {
            "sections": [result_to_dict(r) for r in results], "seconds": round(total, 3)}
        json.dump(payload, sys.stdout)
        sys.stdout.write("\n")
    elif len(results) > 1:
        print("\nPer-section seconds:")
        for r in results:
            print(f"  {r.section:<8} {r.seconds:7.2f}  {r.title}")
        print(f"  {'total':<8} {total:7.2f}")
    return 0


def _int_at_least(lowest: int):
    """An argparse type: a whole number >= ``lowest``, else a one-line usage error."""

    def parse(v):
        try:
            n = int(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {v!r}") from None
        if n < lowest:
            raise argparse.ArgumentTypeError(f"expected a number >= {lowest}, got {n}")
        return n

    return parse


_positive_int, _nonnegative_int = _int_at_least(1), _int_at_least(0)


def _positive_float(v):
    try:
        x = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {v!r}") from None
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {v}")
    return x


def _cmd_lm_train(args) -> int:
    import torch

    from .nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
    from .text import BPETokenizer, CharTokenizer
    from .text.checkpoint import CHECKPOINT_FILE, load_checkpoint
    from .text.corpus import read_text_file, split_train_val
    from .text.training import TrainConfig, train_lm

    text = read_text_file(args.text)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    existing = (out / CHECKPOINT_FILE).is_file() and not args.restart
    if existing:  # resume with the checkpoint's own tokenizer
        _, tok, _ = load_checkpoint(out)
    else:
        tok = CharTokenizer().train(text) if args.tokenizer == "char" else BPETokenizer().train(text, args.vocab_size)
    ids = torch.tensor(tok.encode(text))
    train_ids, val_ids = split_train_val(ids)
    if min(len(train_ids), len(val_ids)) <= args.block_size:
        raise UsageError(f"{args.text}: {len(ids)} tokens is too short for a context of {args.block_size} "
                         "(the 10% validation part must be longer than the context)")
    cfg = TrainConfig(max_iters=args.max_iters, batch_size=args.batch_size, block_size=args.block_size,
                      learning_rate=args.lr, min_lr=args.lr / 10, warmup_iters=min(args.warmup, args.max_iters),
                      eval_interval=args.eval_interval, seed=args.seed, optimizer=args.optimizer,
                      muon_lr=args.muon_lr)
    torch.manual_seed(args.seed)
    if args.model == "gpt":
        model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=args.block_size, n_layer=args.n_layer,
                              n_head=args.n_head, d_model=args.d_model, bias=False, positional=args.positional))
    else:
        model = LSTMLanguageModel(LSTMConfig(vocab_size=tok.vocab_size, d_model=args.d_model,
                                             hidden_size=2 * args.d_model, num_layers=2, block_size=args.block_size))
    log = lambda r: print(f"iter {r['iter']:>6}  train {r['train_loss']:.4f}  val {r['val_loss']:.4f} "  # noqa: E731
                          f"({r['val_bpc']:.3f} bits/token)  {r['tokens_per_s']:,.0f} tok/s", flush=True)
    try:
        res = train_lm(model, train_ids, val_ids, cfg, checkpoint_dir=out, tokenizer=tok, resume=not args.restart,
                       progress=sys.stderr.isatty(), log=log)
    except KeyboardInterrupt:
        print(f"seqlab: interrupted; {out} keeps the last checkpoint, run the same command to resume",
              file=sys.stderr)
        return 130
    if res.resumed_from is not None:
        print(f"(resumed from iteration {res.resumed_from})")
    print(f"checkpoint: {out}")
    return 0


def _cmd_lm_sample(args) -> int:
    import torch

    from .text.checkpoint import load_checkpoint
    from .text.generation import stream
    from .text.sampling import SuppressTokens, build_processors
    from .text.tokenizers import UNK

    procs = build_processors(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, min_p=args.min_p)
    model, tok, _ = load_checkpoint(args.checkpoint)
    if tok is None:
        raise UsageError(f"{args.checkpoint}: checkpoint has no tokenizer.txt")
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


def _cmd_forecast_evaluate(args) -> int:
    import pandas as pd

    from .forecast import Forecaster, evaluate, read_series_csv, summarize
    from .forecast.core import MODEL_NAMES

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODEL_NAMES]
    if unknown:
        raise UsageError(f"unknown model {unknown[0]!r}; choose from {', '.join(MODEL_NAMES)}")
    df = read_series_csv(args.csv)
    step = args.step or args.horizon
    if args.min_train_length is not None:
        if args.min_train_length <= args.season:
            raise UsageError(f"--min-train-length must exceed --season ({args.season}): MASE's scale needs the "
                             "seasonal-naive errors of the training part")
        need = args.horizon + args.season + 1  # every series takes part in the last window
        what = f"the last window of horizon {args.horizon} with season {args.season} needs"
    else:
        need = args.horizon + (args.windows - 1) * step + args.season + 1
        what = f"{args.windows} window(s) of horizon {args.horizon} with season {args.season} need"
    short = df.groupby("unique_id").size()
    if (short < need).any():
        uid = short[short < need].index[0]
        raise UsageError(f"series {uid!r} has {short[uid]} observations; {what} at least {need}")
    freq = pd.infer_freq(df[df.unique_id == df.unique_id.iloc[0]].ds) if pd.api.types.is_datetime64_any_dtype(df.ds) \
        else 1
    if freq is None:
        raise UsageError("cannot infer the time step of the ds column; use integer periods or regular dates")
    fc = Forecaster(models, freq=freq, season_length=args.season)
    cv = fc.cross_validation(df, args.horizon, n_windows=args.windows, step_size=args.step,
                             min_train_length=args.min_train_length)
    table = summarize(evaluate(cv, df, args.season, fc.names), naive2="Naive2" if "Naive2" in models else None)
    with pd.option_context("display.width", 140):
        print(table.to_string(index=False))
    return 0


def _cmd_chapter_build(args) -> int:
    from .report.build import main as build_main

    argv = ["--out", args.out] + (["--pages", args.pages] if args.pages else [])
    return build_main(argv)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="seqlab", description="Companion to Chapter 14, Part 3: recurrence and attention.")
    p.add_argument("--version", action="version", version=f"seqlab {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("list", help="every section id with its title").set_defaults(func=_cmd_list)
    r = sub.add_parser("run", help="run one section (or 'all')")
    r.add_argument("section", help="section id such as 14.50.2, or 'all'")
    r.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    r.add_argument("--out", help="folder for figures (default: a new temporary folder)")
    r.add_argument("--seed", type=int, help="replace the chapter's seed(s); shifts every seed by the same amount")
    r.add_argument("--no-figures", action="store_true", help="compute tables only")
    r.set_defaults(func=_cmd_run)

    lm = sub.add_parser("lm", help="train and sample language models").add_subparsers(dest="lm_command",
                                                                                       parser_class=_Parser)
    t = lm.add_parser("train", help="train a character (or BPE) language model on a text file")
    t.add_argument("--text", required=True, help="UTF-8 text file")
    t.add_argument("--out", default="checkpoints/lm", help="checkpoint folder (resumed if it holds one)")
    t.add_argument("--model", choices=("gpt", "lstm"), default="gpt")
    t.add_argument("--tokenizer", choices=("char", "bpe"), default="char")
    t.add_argument("--vocab-size", type=_positive_int, default=512, help="BPE vocabulary size")
    # defaults are the chapter's (seqlab.text.experiments); a test keeps them equal
    t.add_argument("--max-iters", type=_positive_int, default=750)
    t.add_argument("--batch-size", type=_positive_int, default=24)
    t.add_argument("--block-size", type=_positive_int, default=64)
    t.add_argument("--n-layer", type=_positive_int, default=4)
    t.add_argument("--n-head", type=_positive_int, default=4)
    t.add_argument("--d-model", type=_positive_int, default=128)
    t.add_argument("--positional", choices=("rotary", "learned", "sinusoidal"), default="rotary",
                   help="position information of the GPT")
    t.add_argument("--optimizer", choices=("muon", "adamw"), default="muon",
                   help="muon: Muon for hidden matrices, AdamW for the rest; adamw: AdamW for all")
    t.add_argument("--lr", type=_positive_float, default=5e-3, help="peak AdamW learning rate")
    t.add_argument("--muon-lr", type=_positive_float, default=0.02, help="peak Muon learning rate")
    t.add_argument("--warmup", type=_nonnegative_int, default=50)
    t.add_argument("--eval-interval", type=_positive_int, default=50)
    t.add_argument("--seed", type=int, default=1337)
    t.add_argument("--restart", action="store_true", help="ignore an existing checkpoint in --out and start over")
    t.set_defaults(func=_cmd_lm_train)
    s = lm.add_parser("sample", help="generate text from a checkpoint, streaming to stdout")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--prompt", default="")
    s.add_argument("--max-new-tokens", type=int, default=300)
    s.add_argument("--temperature", type=float, default=1.0)
    s.add_argument("--top-k", type=int, default=None)
    s.add_argument("--top-p", type=float, default=None)
    s.add_argument("--min-p", type=float, default=None)
    s.add_argument("--greedy", action="store_true")
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(func=_cmd_lm_sample)

    fp = sub.add_parser("forecast", help="evaluate forecasters").add_subparsers(dest="forecast_command",
                                                                                 parser_class=_Parser)
    e = fp.add_parser("evaluate", help="rolling-origin MASE table for a long or wide CSV")
    e.add_argument("--csv", required=True, help="long (unique_id, ds, y) or wide (time column + one per series)")
    e.add_argument("--horizon", type=_positive_int, required=True)
    e.add_argument("--season", type=_positive_int, default=1)
    e.add_argument("--windows", type=_positive_int, default=1)
    e.add_argument("--step", type=_positive_int, default=None, help="step between windows (default: horizon)")
    e.add_argument("--min-train-length", type=_positive_int, default=None,
                   help="let series of unequal length share the evaluation: every series takes part in the last "
                        "window, and in each earlier one whose training part has at least this many observations "
                        "(default: every series needs every window)")
    e.add_argument("--models", default="Naive,SeasonalNaive,Naive2,AutoETS,AutoTheta",
                   help="comma-separated model names")
    e.set_defaults(func=_cmd_forecast_evaluate)

    cp = sub.add_parser("chapter", help="the rendered chapter").add_subparsers(dest="chapter_command",
                                                                              parser_class=_Parser)
    b = cp.add_parser("build", help="build the offline HTML chapter (needs the [book] extra)")
    b.add_argument("--out", default="build/chapter")
    b.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    b.set_defaults(func=_cmd_chapter_build)
    return p


def main(argv: list[str] | None = None) -> int:
    from .chapter import UnknownSectionError
    from .report.artifacts import ArtifactError
    from .text.training import TrainingDiverged

    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError("missing command; try `seqlab list` or `seqlab run SECTION`")
        if args.command == "chapter" and getattr(args, "chapter_command", None) is None:
            raise UsageError("missing chapter command: `seqlab chapter build`")
        if args.command == "forecast" and getattr(args, "forecast_command", None) is None:
            raise UsageError("missing forecast command: `seqlab forecast evaluate`")
        if args.command == "lm" and getattr(args, "lm_command", None) is None:
            raise UsageError("missing lm command: `seqlab lm train` or `seqlab lm sample`")
        return args.func(args)
    except BrokenPipeError:  # the reader (e.g. `head`) closed the pipe: not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (UsageError, UnknownSectionError, ArtifactError, TrainingDiverged, ValueError, OSError) as e:
        print(f"seqlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("seqlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
