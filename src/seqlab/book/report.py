"""The build report: every number and claim each page glued, read back from the executed pages.

myst-nb keeps what each page glued in ``jupyter_execute/PAGE.glue.json`` (also when the page's
outputs came from the execution cache). From those files the report lists every claim with its
value and evidence, and enforces *one quantity, one value*: a glue name is one quantity, so a
name that two pages glue with different text fails the build.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..claims import CLAIM_PREFIX


__all__ = ["page_glue", "collect", "conflicts", "Conflict"]


@dataclass(frozen=True)
class Conflict:
    """One glue name shown with different text on different pages."""

    name: str
    values: dict[str, str]  # page -> text

    def __str__(self) -> str:
        shown = "; ".join(f"{page}: {text!r}" for page, text in self.values.items())
        return f"{self.name!r} is one quantity shown with two values ({shown})"


def _text(output: dict) -> str:
    text = output.get("data", {}).get("text/plain", "")
    text = "".join(text) if isinstance(text, list) else text
    # glue stores a str by its repr; myst-nb shows it unquoted
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            import ast

            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text[1:-1]
    return text


def page_glue(exec_dir: Path, page: str) -> dict[str, str]:
    """``name -> text`` for everything ``page`` glued (claim records included), empty if it glued nothing."""
    path = Path(exec_dir) / f"{page}.glue.json"
    if not path.is_file():
        return {}
    return {name: _text(out) for name, out in json.loads(path.read_text(encoding="utf-8")).items()}


def conflicts(glued: dict[str, dict[str, str]]) -> list[Conflict]:
    """Names glued by more than one page with different text (``glued``: page -> name -> text)."""
    seen: dict[str, dict[str, str]] = {}
    for page, values in glued.items():
        for name, text in values.items():
            if not name.startswith(CLAIM_PREFIX):
                seen.setdefault(name, {})[page] = text
    return [Conflict(name, pages) for name, pages in sorted(seen.items()) if len(set(pages.values())) > 1]


def page_templates(sources: Path | None, page: str) -> dict:
    """``name -> Template`` for every ``{claim}`` role in the source of ``page`` (none without ``sources``)."""
    from .sentences import templates

    path = Path(sources) / f"{page}.md" if sources is not None else None
    if path is None or not path.is_file():
        return {}
    return {t.name: t for t in templates(path.read_text(encoding="utf-8"))}


def collect(exec_dir: Path, pages: list[str], sources: Path | None = None) -> dict:
    """The report: per page, its glued numbers and its claims; and the one-value conflicts across pages.

    A claim whose wordings stand in the page (``{claim}`` roles in ``sources/PAGE.md``) gets the sentence the page
    shows, rendered from its record as the page renders it; its ``text_from`` says "page". Its ``kind`` says how the
    page states it: "required" (the build stops where it is false), "lesson" (one wording: the build fails where
    it is false) "either way" (two wordings, for an outcome that varies from run to run) or "not shown" (no wording in the
    page's source)."""
    from .sentences import render

    glued = {page: page_glue(exec_dir, page) for page in pages}
    claims = []
    for page, values in glued.items():
        written = page_templates(sources, page)
        for name, text in values.items():
            if name.startswith(CLAIM_PREFIX):
                record = {"text": "", **json.loads(text)}  # no sentence where the page writes none
                name = name[len(CLAIM_PREFIX):]
                if name in written:
                    record = {**record, "text": render(written[name], record), "text_from": "page"}
                record["kind"] = ("required" if record.get("required") else "not shown" if name not in written else
                                  "either way" if written[name].if_false is not None else "lesson")
                claims.append({"page": page, "name": name, **record})
    numbers = {page: {n: t for n, t in values.items() if not n.startswith(CLAIM_PREFIX)}
               for page, values in glued.items()}
    return {"claims": claims, "glued": numbers, "conflicts": [str(c) for c in conflicts(glued)]}
