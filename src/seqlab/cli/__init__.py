"""The ``seqlab`` command.

Exit codes: 0 success; 2 bad input (one line on stderr: an unknown section, a bad
option, file, parameter or artifact — anything derived from
:class:`seqlab.errors.SeqlabError`, or an operating-system error such as a
missing or unreadable file); 130 interrupted; 1 an internal error, which is a
bug in seqlab: one line says so, and the traceback goes to a log file (or to
stderr with ``SEQLAB_TRACEBACK=1``).
"""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import traceback
import warnings

from .. import __version__
from ..errors import SeqlabError
from . import chapter, forecast, lm, run
from ._common import Parser, UsageError, join_option_values

__all__ = ["main", "build_parser", "UsageError"]

_SUBCOMMANDS = {"chapter": ("chapter_command", "`seqlab chapter build`"),
                "forecast": ("forecast_command", "`seqlab forecast evaluate`, `seqlab forecast fit` or `seqlab forecast predict`"),
                "lm": ("lm_command", "`seqlab lm train`, `seqlab lm sample`, `seqlab lm eval` or `seqlab lm export`")}


def build_parser() -> Parser:
    p = Parser(prog="seqlab", description="Companion to Chapter 14, Part 3: recurrence and attention.")
    p.add_argument("--version", action="version", version=f"seqlab {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    run.add_commands(sub)
    lm.add_commands(sub, Parser)
    forecast.add_commands(sub, Parser)
    chapter.add_commands(sub, Parser)
    return p


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _os_error(e: OSError) -> str:
    if e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return _one_line(e)


def _internal_error(e: BaseException) -> int:
    text = "".join(traceback.format_exception(e))
    if os.environ.get("SEQLAB_TRACEBACK", "").strip() not in ("", "0"):
        sys.stderr.write(text)
        print(f"seqlab: internal error: {type(e).__name__}: {_one_line(e)} (a bug in seqlab)", file=sys.stderr)
        return 1
    fd, log = tempfile.mkstemp(prefix="seqlab-crash-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    print(f"seqlab: internal error: {type(e).__name__}: {_one_line(e)} (a bug in seqlab; traceback in {log}, "
          "or rerun with SEQLAB_TRACEBACK=1)", file=sys.stderr)
    return 1


def _dispatch(argv) -> int:
    parser = build_parser()
    argv = join_option_values(list(sys.argv[1:] if argv is None else argv), parser)
    args = parser.parse_args(argv)
    args.argv = argv  # a launcher (lm train --nproc) starts the same command again
    if args.command is None:
        raise UsageError("missing command; try `seqlab list` or `seqlab run SECTION`")
    if args.command in _SUBCOMMANDS:
        dest, hint = _SUBCOMMANDS[args.command]
        if getattr(args, dest, None) is None:
            raise UsageError(f"missing {args.command} command: {hint}")
    return args.func(args)


def main(argv: list[str] | None = None) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = _dispatch(argv)
        except BrokenPipeError:  # the reader (e.g. `head`) closed the pipe: not an error of ours
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except SeqlabError as e:
            print(f"seqlab: error: {_one_line(e)}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"seqlab: error: {_os_error(e)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt as e:  # a command may say what was lost
            print("seqlab: interrupted" + (f": {_one_line(e)}" if str(e) else ""), file=sys.stderr)
            return 130
        except SystemExit:  # --help and --version
            raise
        except Exception as e:  # anything else is a bug, and must look like one
            return _internal_error(e)
    # warnings are shown only when the command succeeded, after its output, one line each
    for message in dict.fromkeys(_one_line(w.message) for w in caught if not _quiet(w)):
        print(f"seqlab: warning: {message}", file=sys.stderr)
    return code


def _quiet(w: warnings.WarningMessage) -> bool:
    """Library deprecation chatter is not the user's business."""
    return issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning))


def _terminate(signum, frame):
    raise KeyboardInterrupt


def entry() -> None:
    """The ``seqlab`` command: :func:`main`, then exit. After Ctrl-C the process leaves at once, once its message is
    out: the worker pools were stopped, and the interpreter's exit would otherwise wait on their bookkeeping
    threads, which a loaded machine can keep busy for many seconds. SIGTERM (``kill``, a job scheduler's time
    limit) stops a command as Ctrl-C does, with the same message, instead of killing it mid-write."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    code = main()
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)


if __name__ == "__main__":
    entry()
