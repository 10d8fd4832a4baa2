"""The code cells of a page as a reader sees them: which are visible, which names they need, how many glue.

A reader who downloads a page as a notebook, or copies one cell, has only what the visible
cells define. :func:`undefined_names` lists every name a visible cell uses that no visible
cell before it (or the cell itself) imports or assigns, and that Python does not provide.
:func:`long_lines` lists the lines a reader can see wider than their box: those of visible cells and
of ``hide-input`` cells, whose folded source a reader opens with "Show code cell source".
"""
from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cell", "code_cells", "undefined_names", "glue_share", "long_lines", "CODE_COLUMN", "FOLDED_COLUMN"]

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.S | re.M)
_HIDDEN = ("hide-input", "remove-input", "remove-cell")
_REMOVED = ("remove-input", "remove-cell")  # a reader never sees these sources, not even folded

#: characters a code cell's box holds without scrolling sideways in a 1200-px window (the browser check's
#: FIT_WINDOW): a 608-px box with 16 px of padding each side, in a 14-px monospace font
CODE_COLUMN = 68
#: the same for a ``hide-cell`` or ``hide-input`` cell: a reader unfolds it inside a frame that takes two
#: characters of the box
FOLDED_COLUMN = 66


@dataclass(frozen=True)
class Cell:
    source: str  # the code, without its option lines
    tags: tuple[str, ...]
    line: int = 0  # the page's line number of the first line of ``source``

    @property
    def visible(self) -> bool:
        return not any(t in self.tags for t in _HIDDEN)

    @property
    def readable(self) -> bool:
        """Whether a reader can see the source: visible, or folded (``hide-input``) and opened on a click."""
        return not any(t in self.tags for t in _REMOVED)

    @property
    def column(self) -> int:
        """How many characters a line of this cell may hold on the page."""
        folded = "hide-cell" in self.tags or "hide-input" in self.tags
        return FOLDED_COLUMN if folded else CODE_COLUMN


def code_cells(page: Path | str) -> list[Cell]:
    """The page's ``{code-cell}`` blocks in order, with their tags."""
    text = Path(page).read_text(encoding="utf-8") if isinstance(page, Path) else page
    cells = []
    for m in _CELL.finditer(text):
        lines = m.group(1).splitlines()
        line = text.count("\n", 0, m.start(1)) + 1
        tags: tuple[str, ...] = ()
        while lines and lines[0].startswith(":"):
            opt = lines.pop(0)
            line += 1
            if opt.startswith(":tags:"):
                tags = tuple(t.strip(" '\"") for t in opt.split(":", 2)[2].strip(" []").split(","))
        cells.append(Cell("\n".join(lines), tags, line))
    return cells


def long_lines(cells: list[Cell]) -> list[tuple[int, int, str]]:
    """``(cell number, page line, line)`` for each line a reader can see (a visible cell's, or a folded
    ``hide-input`` cell's) longer than the cell's column."""
    return [(i, cell.line + k, text) for i, cell in enumerate(cells, 1) if cell.readable
            for k, text in enumerate(cell.source.splitlines()) if len(text) > cell.column]


class _Names(ast.NodeVisitor):
    """Names a cell binds at top level (and in any scope) and names it loads."""

    def __init__(self):
        self.bound: set[str] = set()
        self.loaded: list[str] = []

    def visit_Name(self, node):
        (self.bound.add if isinstance(node.ctx, (ast.Store, ast.Del)) else self.loaded.append)(node.id)

    def visit_Import(self, node):
        for a in node.names:
            self.bound.add((a.asname or a.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def _scope(self, node):
        self.bound.add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_arg(self, node):
        self.bound.add(node.arg)

    def visit_ExceptHandler(self, node):
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)


def undefined_names(cells: list[Cell]) -> list[tuple[int, str]]:
    """``(cell number, name)`` for each name a visible cell uses that no visible cell up to it defines."""
    known = set(dir(builtins)) | {"display", "get_ipython", "__file__"}
    missing = []
    for i, cell in enumerate(cells):
        if not cell.visible:
            continue
        v = _Names()
        v.visit(ast.parse(cell.source))
        for name in dict.fromkeys(v.loaded):
            if name not in known and name not in v.bound:
                missing.append((i, name))
        known |= v.bound
    return missing


def glue_share(cells: list[Cell]) -> tuple[int, int]:
    """``(glue lines, code lines)`` over the visible cells: how much of what a reader sees is bookkeeping."""
    glue = code = 0
    for cell in cells:
        if not cell.visible:
            continue
        for line in cell.source.splitlines():
            if line.strip() and not line.strip().startswith("#"):
                code += 1
                glue += bool(re.match(r"\s*(glue|glue_all|say)\(", line))
    return glue, code


def display_share(cells: list[Cell]) -> tuple[int, int]:
    """``(display lines, code lines)`` over the visible cells: the lines of heading and format dictionaries
    written into ``table(...)`` calls, which belong in the page's folded ``display_defaults`` cell."""
    import ast

    shown = code = 0
    for cell in cells:
        if not cell.visible:
            continue
        code += sum(1 for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#"))
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython magics: not counted
            continue
        lines = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "table":
                values = [k.value for k in node.keywords if k.arg in ("columns", "formats")] + node.args[1:2]
                for v in values:
                    if isinstance(v, (ast.Dict, ast.DictComp)):
                        lines.update(range(v.lineno, v.end_lineno + 1))
        shown += len(lines)
    return shown, code
