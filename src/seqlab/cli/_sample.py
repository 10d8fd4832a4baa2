"""The work of ``seqlab lm sample``: options checked together, prompts read, samples streamed and trimmed."""
from __future__ import annotations

import argparse
import sys
import warnings

from ._common import MAX_SEED, UsageError, note_threads

__all__ = ["MAX_SAMPLES", "stop_string", "run_sample"]

#: the most samples one `lm sample` prints
MAX_SAMPLES = 1_000
#: the options that shape the distribution a draw is made from, which --greedy ignores
_SAMPLING_OPTIONS = {"temperature": "--temperature", "top_k": "--top-k", "top_p": "--top-p", "min_p": "--min-p"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def stop_string(value: str) -> str:
    r"""An argparse type: a non-empty stop string, with \n, \t, \r and \\ read as escapes (a shell rarely passes a newline)."""
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in _ESCAPES:
            out.append(_ESCAPES[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    if not out:
        raise argparse.ArgumentTypeError("a stop string cannot be empty")
    from ..text.tokenizers import UnencodableTextError, check_encodable

    try:
        return check_encodable("".join(out), "the stop string")
    except UnencodableTextError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _check_options(args) -> None:
    if args.greedy:
        given = [flag for key, flag in _SAMPLING_OPTIONS.items() if getattr(args, key) is not None]
        if given:
            raise UsageError(f"--greedy takes the most likely token, so {', '.join(given)} would have no effect; "
                             "drop --greedy to sample, or drop " + ", ".join(given))
    if args.seed + args.num_samples - 1 > MAX_SEED:
        raise UsageError(f"--seed {args.seed} with --num-samples {args.num_samples}: sample i uses seed + i, which "
                         f"must stay <= {MAX_SEED}")


def _prompt(args) -> str:
    from ..text.corpus import read_text_file
    from ..text.tokenizers import check_encodable

    if args.prompt_file is None:  # a shell passes bytes that are not UTF-8 as lone surrogates
        return check_encodable(args.prompt or "", "--prompt")
    return read_text_file(args.prompt_file)  # empty, binary, non-UTF-8 or missing: one CorpusError


def _warn_unknown(tok, text: str, what: str, so: str) -> None:
    """Name the characters of ``text`` that ``tok`` encodes as ``<unk>``, and what follows (``so``)."""
    from ..text.tokenizers import UNK

    unk = tok.token_to_id.get(UNK)
    if unk is None or unk not in tok.encode(text):
        return
    chars = [c for c in dict.fromkeys(text) if unk in tok.encode(c)]
    named = ", ".join(repr(c) for c in chars[:20]) + (f" and {len(chars) - 20} more" if len(chars) > 20 else "")
    unknown = f"characters the checkpoint's tokenizer does not know: {named}" if chars else \
        "pieces the checkpoint's tokenizer does not know"
    warnings.warn(f"{what} has {unknown}; {so}", stacklevel=2)


class _Printer:
    """Streams decoded text, holding back what could be the start of a stop string, and cuts at the stop.

    Only a tail of the text (the longest stop string, less one character) is kept
    for matching, so a long sample costs no more per token than a short one.
    """

    def __init__(self, tok, context: str, stops: list[str], out=None):
        self.tok, self.stops, self.out = tok, stops, sys.stdout if out is None else out
        self.keep = max(map(len, stops), default=1) - 1
        self.tail = context[len(context) - self.keep:] if self.keep else ""
        self.buffer, self.pending, self.stopped = "", [], False

    def add(self, token_id: int) -> None:
        from ..text.generation import first_stop, stop_holdback

        if self.stopped:
            return
        self.pending.append(token_id)
        piece = self.tok.decode(self.pending)
        if "\ufffd" in piece:  # wait for the rest of a multi-byte character
            return
        self.pending = []
        seen, self.buffer = self.tail + piece, self.buffer + piece
        at = first_stop(seen, self.stops, start=len(self.tail)) if self.stops else None
        if at is not None:  # everything from the stop string on goes; what is left of it in the buffer was held back
            self.buffer = self.buffer[:max(0, len(self.buffer) - (len(seen) - at))]
            self.stopped = True
            hold = 0
        else:
            hold = min(stop_holdback(seen, self.stops), len(self.buffer)) if self.stops else 0
        self.tail = seen[len(seen) - self.keep:] if self.keep else ""
        self.out.write(self.buffer[:len(self.buffer) - hold])
        self.out.flush()
        self.buffer = self.buffer[len(self.buffer) - hold:]

    def finish(self) -> None:
        if not self.stopped:
            self.buffer += self.tok.decode(self.pending)
        self.out.write(self.buffer + "\n")


def _header(i: int, args) -> str:
    """A blank line, then a header no sample text can be mistaken for (only when there are several samples)."""
    if args.num_samples == 1:
        return ""
    return ("\n" if i else "") + f"=== sample {i + 1} of {args.num_samples} (seed {args.seed + i}) ===\n"


def _sample_batch(model, tok, prompt: str, prompt_ids, rows, args, procs, stopping, stops, device) -> None:
    """Samples ``rows`` generated together, one generator each (sample i draws as --seed SEED+i alone does).

    The first streams as it is generated; the others are held and printed, in order, once the batch ends.
    """
    import io

    import torch

    from ..text.generation import stream

    held = [io.StringIO() for _ in rows[1:]]
    printers = [_Printer(tok, tok.decode(prompt_ids), stops, out) for out in [sys.stdout, *held]]
    sys.stdout.write(_header(rows[0], args) + prompt)
    gens = [torch.Generator().manual_seed(args.seed + i) for i in rows]
    idx = torch.tensor([prompt_ids] * len(rows), device=device)
    for nxt in stream(model, idx, args.max_new_tokens, procs, greedy=args.greedy,
                      generator=gens if len(gens) > 1 else gens[0], stopping=stopping):
        for printer, token in zip(printers, nxt[:, 0].tolist()):
            printer.add(token)
    for printer in printers:
        printer.finish()
    for i, out in zip(rows[1:], held):
        sys.stdout.write(_header(i, args) + prompt + out.getvalue())
    sys.stdout.flush()


def _load(folder):
    """A seqlab checkpoint, or a Hugging Face folder that ``lm export`` wrote (config.json and no checkpoint)."""
    from pathlib import Path

    from ..text.checkpoint import CHECKPOINT_FILE, load_checkpoint
    from ..text.export import load_hf

    d = Path(folder)
    if not (d / CHECKPOINT_FILE).exists() and (d / "config.json").is_file():
        return load_hf(d)
    model, tok, _ = load_checkpoint(d)
    return model, tok


def run_sample(args) -> int:
    import torch

    from ..devices import resolve_device
    from ..text.generation import StopOnStrings
    from ..text.sampling import SuppressTokens, build_processors
    from ..text.tokenizers import UNK

    _check_options(args)
    temperature = 1.0 if args.temperature is None else args.temperature
    procs = build_processors(temperature=temperature, top_k=args.top_k, top_p=args.top_p, min_p=args.min_p,
                             repetition_penalty=args.repetition_penalty,
                             no_repeat_ngram_size=args.no_repeat_ngram_size)
    prompt = _prompt(args)
    model, tok = _load(args.checkpoint)
    device = resolve_device(args.device)
    model.to(device)
    if tok is None:
        raise UsageError(f"{args.checkpoint}: the checkpoint has no tokenizer")
    if UNK in tok.token_to_id:  # the unknown token is a placeholder, not text
        procs.insert(0, SuppressTokens([tok.token_to_id[UNK]]))
    _warn_unknown(tok, prompt, "the prompt", f"the model reads each as {UNK}")
    stops = list(dict.fromkeys(args.stop or []))
    for s in stops:
        _warn_unknown(tok, s, f"--stop {s!r}", "it can never be generated")
    prompt_ids = tok.encode(prompt or "\n")  # an empty prompt starts from a new line
    stopping = [StopOnStrings(stops, tok.decode)] if stops else []
    note_threads(args.threads)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        for first in range(0, args.num_samples, args.batch_size):
            rows = range(first, min(first + args.batch_size, args.num_samples))
            _sample_batch(model, tok, prompt, prompt_ids, rows, args, procs, stopping, stops, device)
    finally:
        torch.set_num_threads(threads)
    return 0
