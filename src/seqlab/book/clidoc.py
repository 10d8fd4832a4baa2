"""The command-line reference, generated from ``seqlab``'s own argument parser, so it cannot drift from ``--help``.

:func:`commands` walks a parser and its sub-commands; the ``seqlab-cli`` directive, given the
function that builds the parser (the page names it: the book does not import the command line,
a layer above it), gives each command a section (label ``cli-`` and its words after ``seqlab``, such as
``cli-lm-train``; ``cli-seqlab`` for the top level) holding the one-line help its parent lists and
exactly the text ``seqlab ... --help`` prints in a terminal :data:`HELP_WIDTH` characters wide,
the width of the pages' code column. In a page::

    ```{seqlab-cli} seqlab.cli:build_parser
    ```
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
from dataclasses import dataclass

from .cells import CODE_COLUMN

__all__ = ["HELP_WIDTH", "Command", "commands", "parser_from", "help_text", "help_environment", "setup"]

#: the width ``--help`` is formatted to: argparse wraps at ``$COLUMNS - 2``
HELP_WIDTH = CODE_COLUMN


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]  # after "seqlab": ("lm", "train")
    parser: argparse.ArgumentParser
    summary: str  # the help its parent lists it with ("" for the top level)

    @property
    def label(self) -> str:
        return "cli-" + ("-".join(self.words) if self.words else "seqlab")

    @property
    def line(self) -> str:
        return " ".join(("seqlab", *self.words))


def parser_from(factory: str) -> argparse.ArgumentParser:
    """The parser ``factory`` (``"module:function"``, such as ``"seqlab.cli:build_parser"``) builds."""
    module, _, function = factory.partition(":")
    return getattr(importlib.import_module(module), function)()


def commands(parser: argparse.ArgumentParser) -> list[Command]:
    """Every command of ``parser``, depth first, in the order ``--help`` lists them."""
    found = []

    def walk(p, words, summary):
        found.append(Command(tuple(words), p, summary))
        for action in p._actions:  # argparse has no public way to list sub-parsers
            if isinstance(action, argparse._SubParsersAction):
                listed = {a.dest: a.help or "" for a in action._choices_actions}
                for name, sub in action.choices.items():
                    walk(sub, [*words, name], listed.get(name, ""))

    walk(parser, [], parser.description or "")
    return found


def help_environment() -> dict[str, str]:
    """The environment in which ``seqlab ... --help`` prints what :func:`help_text` returns."""
    return {"COLUMNS": str(HELP_WIDTH + 2), "NO_COLOR": "1"}


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def help_text(parser: argparse.ArgumentParser) -> str:
    """``parser``'s ``--help``, formatted :data:`HELP_WIDTH` characters wide and without colour."""
    if hasattr(parser, "color"):  # Python 3.14 colours help on a terminal
        parser.color = False
    with _environment(help_environment()):
        return parser.format_help()


def _directive():
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class SeqlabCli(Directive):
        """``{seqlab-cli} module:function``: one section per command of the parser that function builds, with its
        ``--help``; its label is the command's."""

        required_arguments = 1

        def run(self):
            document = self.state.document
            out = []
            for c in commands(parser_from(self.arguments[0])):
                section = nodes.section(ids=[c.label], names=[c.label])
                section += nodes.title("", "", nodes.literal(c.line, c.line))
                if c.summary and c.words:
                    section += nodes.paragraph(text=c.summary[0].upper() + c.summary[1:] + ".")
                text = help_text(c.parser).rstrip("\n")
                block = nodes.literal_block(text, text)
                block["language"] = "none"
                section += block
                document.note_explicit_target(section, section)  # {ref}`cli-lm-train` finds it
                out.append(section)
            return out

    return SeqlabCli


def setup(app):
    """Sphinx: the ``seqlab-cli`` directive."""
    app.add_directive("seqlab-cli", _directive())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
