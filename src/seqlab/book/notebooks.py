"""The pages as notebooks a reader downloads: the cells the build ran, with their outputs, and Markdown that reads in
Jupyter as it reads on the page.

MyST's roles mean nothing to Jupyter, so the Markdown is resolved against the build: each
``{glue:text}`name``` becomes the text the page shows, each ``{claim}`` role the
sentence the page shows (:mod:`seqlab.book.sentences`), each
``{eq}`label``` the equation's number on the site, each labelled equation gets that number as a
``\\tag``, ``{ref}`` becomes its link text (or the heading it points to), target lines ``(label)=``
go, a ``:::{admonition}`` becomes a collapsible ``<details>`` block and an ``:::{erratum}`` a quoted
"Erratum" block. An evidence box (an admonition whose class names ``evidence``, the page's folded "How we know")
becomes ordinary Markdown cells of its own, headed by its title. Cells the page hides
(``hide-input``) are kept, collapsed, so the notebook still runs top to bottom.

A paragraph that quotes a number or a sentence becomes a *sentence cell*: a collapsed code cell
that calls :func:`seqlab.book.page.prose` on the paragraph, its numbers and wordings written as
plain marks (``⟦g07_decay⟧``, ``⟦s47_reach: if true || if false⟧``), and whose saved output is the
paragraph as the page shows it. Rerun after a reader changes a setting, it shows the sentences
the reader's numbers make.
"""
from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

from ..claims import CLAIM_PREFIX
from .errata import ERRATUM, UNLESS
from .sentences import ROLE, parse, record_of, render

__all__ = ["reader_notebook", "reader_cells", "resolve_markdown", "resolve_roles", "resolve_static", "to_template",
           "fill_template", "template_names", "is_sentence_cell", "glue_texts", "equation_numbers", "heading_titles"]

_GLUE = re.compile(r"\{glue:text\}`([^`:]+)(?::[^`]*)?`")
_EQ = re.compile(r"\{eq\}`([^`]+)`")
_REF_TEXT = re.compile(r"\{ref\}`([^`<]*?)\s*<([^>`]+)>`")
_REF = re.compile(r"\{ref\}`([^`<]+)`")
_TARGET = re.compile(r"^\(([\w.-]+)\)=\s*$", re.M)
_LABELLED_MATH = re.compile(r"\$\$\n(.*?)\n\$\$[ \t]*\(([\w.-]+)\)", re.S)
_ADMONITION = re.compile(r"^:::\{admonition\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)(.*?)^:::[ \t]*$", re.M | re.S)
#: an evidence box: a ``:::{admonition}`` whose ``:class:`` names ``evidence``
#: (its fence may be longer than three colons, so that it can hold an erratum or another box)
_EVIDENCE = re.compile(r"^(:{3,})\{admonition\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)(.*?)^\1[ \t]*$",
                       re.M | re.S)
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
    return resolve_roles(resolve_static(text, equations, titles), glue)


def resolve_roles(text: str, glue: dict[str, str]) -> str:
    """The numbers and sentences of ``text`` (``{glue:text}``, ``{claim}``) as the build showed them."""
    text = _GLUE.sub(lambda m: glue.get(m.group(1), m.group(0)), text)
    return ROLE.sub(lambda m: _sentence(m, glue), text)


def resolve_static(text: str, equations: dict[str, str], titles: dict[str, str]) -> str:
    """Everything of MyST in ``text`` but its numbers and sentences: labels, equation numbers, references,
    admonitions."""
    text = _DIRECTIVE.sub("", text)
    text = _TARGET.sub("", text)

    def tagged(m):
        number = equations.get(m.group(2))
        tag = f" \\tag{{{number.strip('()')}}}" if number else ""
        return f"$$\n{m.group(1)}{tag}\n$$"

    text = _LABELLED_MATH.sub(tagged, text)
    text = _EQ.sub(lambda m: equations.get(m.group(1), f"({m.group(1)})"), text)
    text = _REF_TEXT.sub(lambda m: m.group(1), text)
    text = _REF.sub(lambda m: titles.get(m.group(1), m.group(1)), text)

    def details(m):
        return (f"<details><summary>{html.escape(m.group(1).strip())}</summary>\n\n{m.group(3).strip()}\n\n"
                "</details>")

    text = _ADMONITION.sub(details, text)

    def erratum(m):
        body = m.group(2)
        conditional = UNLESS.match(body)
        if conditional:  # the measured sentence itself says whether the chapter's reading stands
            body = body[conditional.end():]
        measured, _, why = body.strip().partition("\n\n")
        head = "**The printed chapter says:**" if conditional else "**Erratum.** The printed chapter says:"
        lines = [f"{head} {m.group(1).strip()}", f"**Measured here:** {measured}"]
        lines += [why.strip()] if why.strip() else []
        return "\n>\n".join("> " + line.replace("\n", "\n> ") for line in lines)

    text = ERRATUM.sub(lambda m: erratum(m), text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


#: a number or sentence of a paragraph in a downloaded notebook's sentence cell: ⟦name⟧ (a glued number),
#: ⟦claim: if true || if false⟧ (a claim's wordings)
_MARK = re.compile(r"⟦([^⟧]*)⟧")
_ANY_ROLE = re.compile(r"\{(?:glue:text|claim)\}`")


def to_template(text: str) -> str:
    """``text`` with each ``{glue:text}`` and ``{claim}`` role written as a mark :func:`fill_template` reads (plain
    text a reader can read and edit, no MyST)."""
    text = _GLUE.sub(lambda m: f"⟦{m.group(1)}⟧", text)
    return ROLE.sub(lambda m: f"⟦{' '.join(m.group(1).split())}⟧", text)


def template_names(template: str) -> list[str]:
    """The glue names a template's marks read, in order (a claim's under the claim prefix)."""
    names = []
    for m in _MARK.finditer(template):
        inner = m.group(1)
        claim = re.match(r"^\s*([A-Za-z_]\w*)\s*:\s", inner)
        name = CLAIM_PREFIX + claim.group(1) if claim else inner.split(":")[0].strip()
        if name not in names:
            names.append(name)
    return names


def fill_template(template: str, known: dict[str, str]) -> str:
    """The paragraph a template makes with the glued texts and claim records of ``known``; a mark that cannot be
    filled stays as it is, so the gap shows."""
    def fill(m):
        inner = m.group(1)
        try:
            if re.match(r"^\s*[A-Za-z_]\w*\s*:\s", inner):
                template = parse(inner)
                return render(template, record_of(known[CLAIM_PREFIX + template.name]))
            return known[inner.strip()]
        except (KeyError, ValueError):
            return m.group(0)

    return _MARK.sub(fill, template)


def _chunks(text: str) -> list[str]:
    """``text`` cut at blank lines, keeping a display equation, a fenced block or a ``<details>`` block whole."""
    out, current = [], []
    for para in text.split("\n\n"):
        current.append(para)
        joined = "\n\n".join(current)
        if (joined.count("<details>") == joined.count("</details>") and joined.count("$$") % 2 == 0
                and joined.count("```") % 2 == 0):
            out.append(joined)
            current = []
    if current:
        out.append("\n\n".join(current))
    return out


# the cells the export adds are collapsed; ``seqlab.sentence`` tells them from the page's own cells
def _sentence_metadata() -> dict:
    return {"tags": ["hide-input"], "jupyter": {"source_hidden": True}, "seqlab": {"sentence": True}}


def is_sentence_cell(cell) -> bool:
    """A cell the export added to show the page's paragraphs (not one of the page's own cells)."""
    return bool(cell.get("metadata", {}).get("seqlab", {}).get("sentence"))


def _sentence_cell(template: str, glue: dict[str, str]):
    """A hidden code cell that shows a paragraph with the kernel's numbers, carrying the build's rendering."""
    import nbformat

    built = {n: glue[n] for n in template_names(template) if n in glue}
    literal = f'r"""{template}"""' if '"""' not in template and not template.endswith("\\") else repr(template)
    source = (f"# this paragraph of the page, with the numbers of this notebook: change a setting above, rerun\n"
              f"prose({literal},\n      built={json.dumps(built, indent=1, ensure_ascii=False)})")
    shown = fill_template(template, glue)
    out = nbformat.v4.new_output("display_data", data={"text/markdown": shown, "text/plain": shown})
    return nbformat.v4.new_code_cell(source, outputs=[out], metadata=_sentence_metadata())


def _is_evidence(m: re.Match) -> bool:
    return any(line.startswith(":class:") and "evidence" in line.split() for line in m.group(3).splitlines())


def reader_cells(markdown: str, glue: dict[str, str], equations: dict[str, str], titles: dict[str, str]):
    """One Markdown cell of a page as the reader's cells: Markdown for its plain paragraphs, and for each run of
    paragraphs that quote numbers or sentences a sentence cell (:func:`seqlab.book.page.prose`), so those follow the
    reader's numbers when the notebook is rerun. An evidence box starts cells of its own, headed by its title."""
    cells, start = [], 0
    for m in _EVIDENCE.finditer(markdown):
        if not _is_evidence(m):
            continue
        cells += _reader_cells(markdown[start:m.start()], glue, equations, titles)
        cells += _reader_cells(f"#### {m.group(2).strip()}\n\n{m.group(4)}", glue, equations, titles)
        start = m.end()
    return cells + _reader_cells(markdown[start:], glue, equations, titles)


def _reader_cells(markdown: str, glue: dict[str, str], equations: dict[str, str], titles: dict[str, str]):
    import nbformat

    cells, plain, marked = [], [], []

    def flush():
        if plain:
            cells.append(nbformat.v4.new_markdown_cell(re.sub(r"\n{3,}", "\n\n", "\n\n".join(plain)).strip("\n")))
            plain.clear()
        if marked:
            cells.append(_sentence_cell("\n\n".join(marked), glue))
            marked.clear()

    for chunk in _chunks(resolve_static(markdown, equations, titles)):
        if not chunk.strip():
            continue
        if _ANY_ROLE.search(chunk):
            if plain:
                flush()
            marked.append(to_template(chunk))
        else:
            if marked:
                flush()
            plain.append(chunk)
    flush()
    return cells


def _sentence(m, glue: dict[str, str]) -> str:
    try:
        template = parse(m.group(1))
        return render(template, record_of(glue[CLAIM_PREFIX + template.name]))
    except (KeyError, ValueError):  # TemplateError is a ValueError: leave the role, so the gap shows
        return m.group(0)


def reader_notebook(executed, glue: dict[str, str], equations: dict[str, str], titles: dict[str, str]):
    """The executed notebook (an ``nbformat`` node) as a reader gets it: Markdown resolved, outputs kept, the build's
    bookkeeping (source maps, execution timings) dropped, hidden cells collapsed."""
    import copy

    import nbformat

    nb = copy.deepcopy(executed)
    nb.metadata.pop("source_map", None)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cells += reader_cells(cell.source, glue, equations, titles)
            continue
        if cell.cell_type == "code":
            cell.metadata.pop("execution", None)
            if "hide-input" in cell.metadata.get("tags", []):
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        cells.append(cell)
    first = next((i for i, c in enumerate(cells) if is_sentence_cell(c)), None)
    if first is not None:  # the sentence cells need prose(): imported once, just before the first of them
        cells.insert(first, nbformat.v4.new_code_cell(
            "from seqlab.book.page import prose  # shows the page's paragraphs with this notebook's numbers",
            metadata=_sentence_metadata()))
    nb.cells = [c for c in cells if c.cell_type != "markdown" or c.source.strip()]
    return nb
