"""What ``seqlab lm train`` checks and holds around a run: the output folder's lock, the text's size against
memory, and a first Ctrl-C that stops after the step with a checkpoint."""
from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from ._common import UsageError


class OutputInUse(UsageError):
    """Another process is training into the same folder."""


@contextmanager
def output_lock(out: Path, command: str = "seqlab lm train"):
    """Hold ``out``'s writer lock for the whole run (:func:`seqlab.files.folder_lock`, the lock every seqlab
    writer takes); a second run on the same folder is refused at once, naming the holder."""
    from ..files import FolderInUseError, folder_lock

    try:
        lock = folder_lock(out, command)
        lock.__enter__()
    except FolderInUseError as e:
        raise OutputInUse(f"--out {e}") from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


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
