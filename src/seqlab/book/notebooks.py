"""The pages as notebooks a reader downloads: the cells the build ran, with their outputs, and Markdown that reads in
Jupyter as it reads on the page.

MyST's roles mean nothing to Jupyter, so the Markdown is resolved against the build: each
``{glue:text}`name``` becomes the text the page shows (the claim sentences among them), each
``{eq}`label``` the equation's number on the site, each labelled equation gets that number as a
``\\tag``, ``{ref}`` becomes its link text (or the heading it points to), target lines ``(label)=``
go, and a ``:::{admonition}`` becomes a collapsible ``<details>`` block. Cells the page hides
(``hide-input``) are kept, collapsed, so the notebook still runs top to bottom.
"""
from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

__all__ = ["reader_notebook", "resolve_markdown", "glue_texts", "equation_numbers", "heading_titles"]

_GLUE = re.compile(r"\{glue:text\}`([^`:]+)(?::[^`]*)?`")
_EQ = re.compile(r"\{eq\}`([^`]+)`")
_REF_TEXT = re.compile(r"\{ref\}`([^`<]*?)\s*<([^>`]+)>`")
_REF = re.compile(r"\{ref\}`([^`<]+)`")
_TARGET = re.compile(r"^\(([\w.-]+)\)=\s*$", re.M)
_LABELLED_MATH = re.compile(r"\$\$\n(.*?)\n\$\$[ \t]*\(([\w.-]+)\)", re.S)
_ADMONITION = re.compile(r"^:::\{admonition\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)(.*?)^:::[ \t]*$", re.M | re.S)
_DIRECTIVE = re.compile(r"^```\{(toctree|contents)\}.*?^```[ \t]*$", re.M | re.S)


def glue_texts(glue_json: Path) -> dict[str, str]:
    """``name -> text`` of every value a page glued (myst-nb's ``PAGE.glue.json``), as the page shows it."""
    try:
        raw = json.loads(glue_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for name, output in raw.items():
        plain = output.get("data", {}).get("text/plain")
        if plain is None:
            continue
        plain = "".join(plain) if isinstance(plain, list) else plain
        try:
            value = ast.literal_eval(plain)  # glued strings arrive as quoted literals
            out[name] = value if isinstance(value, str) else plain
        except (ValueError, SyntaxError):
            out[name] = plain
    return out


def equation_numbers(page_html: Path) -> dict[str, str]:
    """``label -> "(n.m)"`` for each numbered equation of a built page."""
    try:
        text = page_html.read_text(encoding="utf-8")
    except OSError:
        return {}
    found = re.findall(r'id="equation-([\w.-]+)"[^>]*>\s*<span class="eqno">(\([^<]*\))', text)
    return dict(found)


def heading_titles(sources: list[Path]) -> dict[str, str]:
    """``label -> heading`` for every ``(label)=`` target that stands before a heading in the page sources."""
    out = {}
    for path in sources:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = _TARGET.match(line)
            if m:
                nxt = next((ln for ln in lines[i + 1:] if ln.strip()), "")
                if nxt.startswith("#"):
                    out[m.group(1)] = nxt.lstrip("#").strip()
    return out


def resolve_markdown(text: str, glue: dict[str, str], equations: dict[str, str], titles: dict[str, str]) -> str:
    """One Markdown cell in Jupyter's Markdown (see the module docstring). A glued name the build did not record is
    left as the role, so a gap shows instead of a silent blank."""
    text = _DIRECTIVE.sub("", text)
    text = _TARGET.sub("", text)

    def tagged(m):
        number = equations.get(m.group(2))
        tag = f" \\tag{{{number.strip('()')}}}" if number else ""
        return f"$$\n{m.group(1)}{tag}\n$$"

    text = _LABELLED_MATH.sub(tagged, text)
    text = _GLUE.sub(lambda m: glue.get(m.group(1), m.group(0)), text)
    text = _EQ.sub(lambda m: equations.get(m.group(1), f"({m.group(1)})"), text)
    text = _REF_TEXT.sub(lambda m: m.group(1), text)
    text = _REF.sub(lambda m: titles.get(m.group(1), m.group(1)), text)

    def details(m):
        return (f"<details><summary>{html.escape(m.group(1).strip())}</summary>\n\n{m.group(3).strip()}\n\n"
                "</details>")

    text = _ADMONITION.sub(details, text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def reader_notebook(executed, glue: dict[str, str], equations: dict[str, str], titles: dict[str, str]):
    """The executed notebook (an ``nbformat`` node) as a reader gets it: Markdown resolved, outputs kept, the build's
    bookkeeping (source maps, execution timings) dropped, hidden cells collapsed."""
    import copy

    nb = copy.deepcopy(executed)
    nb.metadata.pop("source_map", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = resolve_markdown(cell.source, glue, equations, titles)
        elif cell.cell_type == "code":
            cell.metadata.pop("execution", None)
            if "hide-input" in cell.metadata.get("tags", []):
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
    nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.source.strip()]
    return nb
