"""``seqlab chapter build``: the offline HTML chapter."""
from __future__ import annotations

__all__ = ["add_commands"]


def _cmd_build(args) -> int:
    from ..book.build import build

    return build(args.out, args.pages, args.cache)


def add_commands(sub, parser_class) -> None:
    from ..book.build import add_arguments

    cp = sub.add_parser("chapter", help="the rendered chapter").add_subparsers(dest="chapter_command",
                                                                              parser_class=parser_class)
    b = cp.add_parser("build", help="build the offline HTML chapter (needs the [book] extra)")
    add_arguments(b)
    b.set_defaults(func=_cmd_build)
