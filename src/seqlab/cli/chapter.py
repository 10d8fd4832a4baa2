"""``seqlab chapter build``: the offline HTML chapter."""
from __future__ import annotations

from pathlib import Path

__all__ = ["add_commands"]


def _cmd_build(args) -> int:
    from ..book.build import build

    return build(Path(args.out), args.pages)


def add_commands(sub, parser_class) -> None:
    cp = sub.add_parser("chapter", help="the rendered chapter").add_subparsers(dest="chapter_command",
                                                                              parser_class=parser_class)
    b = cp.add_parser("build", help="build the offline HTML chapter (needs the [book] extra)")
    b.add_argument("--out", default="build/chapter")
    b.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    b.set_defaults(func=_cmd_build)
