"""What every command shares: the one-line usage error, the argument types, and output folders."""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

from ..errors import SeqlabError

__all__ = ["UsageError", "Parser", "int_at_least", "positive_int", "nonnegative_int", "float_in", "seed",
           "check_output_dir", "join_option_values"]

#: the largest seed torch's generators accept (a 64-bit integer)
MAX_SEED = 2 ** 63 - 1


class UsageError(SeqlabError):
    """A bad command line: reported as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser that reports errors as one line and knows which of its options take a value.

    ``value_options()`` gathers, over this parser and every sub-command parser made
    through ``add_subparsers``, the long options that take exactly one value; it is
    recorded as arguments are added, through argparse's public methods only.
    """

    def __init__(self, *args, **kwargs):
        self.seqlab_value_options: set[str] = set()  # before argparse's __init__, which adds -h
        self.seqlab_subcommands: list = []  # the actions add_subparsers returned
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        text, default = kwargs.get("help"), kwargs.get("default")
        # every option's --help shows its default, unless its own words already say it
        # by identity: a default of 0 or 0.0 equals False, and is still a default to show
        if text is not argparse.SUPPRESS and not any(default is v for v in (None, False, argparse.SUPPRESS)) \
                and "default" not in (text or "").lower():
            kwargs["help"] = f"{text} (default: %(default)s)" if text else "(default: %(default)s)"
        action = super().add_argument(*args, **kwargs)
        if action.option_strings and action.nargs is None:  # one value (flags have nargs=0)
            self.seqlab_value_options.update(s for s in action.option_strings if s.startswith("--"))
        return action

    def add_subparsers(self, **kwargs):
        action = super().add_subparsers(**kwargs)
        self.seqlab_subcommands.append(action)
        return action

    def value_options(self) -> set[str]:
        out = set(self.seqlab_value_options)
        for action in self.seqlab_subcommands:
            for child in action.choices.values():  # name -> parser of that sub-command
                out |= child.value_options() if isinstance(child, Parser) else set()
        return out

    def error(self, message):  # argparse prints usage and exits; we want one line
        raise UsageError(message)


def int_at_least(lowest: int, highest: int | None = None, why: str | None = None):
    """An argparse type: a whole number in [lowest, highest], else a one-line usage error (saying ``why`` the
    upper bound is where it is, when given)."""

    def parse(v):
        try:
            n = int(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {v!r}") from None
        if n < lowest:
            raise argparse.ArgumentTypeError(f"expected a number >= {lowest}, got {n}")
        if highest is not None and n > highest:
            raise argparse.ArgumentTypeError(f"expected a number <= {highest}{f' ({why})' if why else ''}, got {n}")
        return n

    return parse


positive_int, nonnegative_int = int_at_least(1), int_at_least(0)
seed = int_at_least(0, MAX_SEED)


def float_in(low: float, high: float, *, low_open: bool = False):
    """An argparse type: a finite number in [low, high] (or (low, high] with ``low_open``)."""

    def parse(v):
        try:
            x = float(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {v!r}") from None
        below = x <= low if low_open else x < low
        if not math.isfinite(x) or below or x > high:
            bracket = "(" if low_open else "["
            raise argparse.ArgumentTypeError(f"expected a number in {bracket}{low:g}, {high:g}], got {v}")
        return x

    return parse


def join_option_values(argv: list[str], parser: Parser) -> list[str]:
    """Let an option's value start with '-' (``--muon-lr -inf``): rewrite such pairs as ``--opt=value``.

    argparse takes any token that starts with '-' (other than a plain negative
    number) for an option and then reports "expected one argument", which never
    says what was wrong with the value.
    """
    takes_value = parser.value_options()
    out, i = [], 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if tok in takes_value and nxt is not None and nxt.startswith("-") and not nxt.startswith("--"):
            out.append(f"{tok}={nxt}")
            i += 2
        else:
            out.append(tok)
            i += 1
    return out


def check_output_dir(path, option: str = "--out") -> Path:
    """Create ``path`` if needed and make sure we can write there, before any work starts."""
    if not str(path).strip():
        raise UsageError(f"{option} is empty; name a folder (use {option} . for the current one)")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{option} {out}: cannot create it ({e.strerror})") from None
    try:  # a real write: permission bits say nothing for root or on a read-only file system
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise UsageError(f"{option} {out}: not writable ({e.strerror})") from None
    return out


def available_cores() -> int:
    """The cores this process may run on (its affinity where the OS tells it, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def note_threads(threads: int) -> None:
    """Say when --threads asks for more threads than this process has cores: torch runs them anyway, slower."""
    cores = available_cores()
    if threads > cores:
        print(f"seqlab: note: --threads {threads} is more than the {cores} core(s) this process can use; torch runs "
              f"them anyway, which is slower than --threads {cores}", file=sys.stderr, flush=True)
