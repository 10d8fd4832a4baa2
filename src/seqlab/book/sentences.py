"""Sentences that interpret a number, written in the page: the ``{claim}`` role.

The page's Markdown holds every wording of a number-dependent sentence, where it stands in
the paragraph::

    {claim}`s47_reach: the gated cells reach further by {ratio:.3g}x || they do not reach further`

Before the colon is the claim's name, then its wording. Most claims have one wording: the
lesson states what holds on every seed and repeat. A *required* claim (``require``) stops the
build where it is false. A *lesson* claim (a ``verdict`` with one wording) that is false fails
the build too (the role warns, and the build treats warnings as errors), and where a reader
reruns a notebook with other settings its sentence is marked, "not borne out in this run: …"
with its evidence, never shown unmarked. Only a section that reports an outcome that
legitimately varies from run to run writes two wordings, for a true verdict and a false one,
split by ``||``.
The section's claim source (a function in ``seqlab.chapter``) computes only the verdict and
its numbers, with :func:`seqlab.claims.verdict` or :func:`seqlab.claims.require`; the page's
cell records them with :func:`seqlab.book.page.say`. The role then picks the wording that holds
and fills each ``{name}`` or ``{name:spec}`` from the verdict's evidence:

- a float with no spec reads to three significant digits, an int as written; ``:,`` groups
  thousands; any other spec is Python's format mini-language;
- ``:size`` reads three significant digits below 1,000 and a whole number with grouped thousands
  from there (12.3, 456, 12,345);
- ``{names!j}`` joins a list as "a, b and c" (a spec applies to each item; an empty list reads
  "none");
- ``{flag?words if true|words if false}`` picks words by a fact of the evidence (a boolean, or a
  list: true when it is not empty); either side may be empty and may quote numbers itself, as in
  ``{narrow?On {narrow!j} the mean falls short.|}``;
- ``{items*ITEM}`` joins a list of records as "a, b and c", each written by ``ITEM`` with the
  record's own fields, as in ``{under*{model} ({c80:.1%})}``;
- ``{{`` and ``}}`` are literal braces.

A choice and a list template let a page say everything in words while the claim source
computes only facts: no English is assembled in Python.

The same function renders the sentence for the HTML page (the Sphinx role), the build report,
the downloaded notebook and the tests, so the four cannot disagree.
"""
from __future__ import annotations

import ast
import json
import re
import string
from dataclasses import dataclass

from ..claims import CLAIM_PREFIX, fmt, join_and

__all__ = ["ROLE", "NOT_BORNE_OUT", "Template", "TemplateError", "parse", "templates", "render",
           "not_borne_out", "record_of", "setup"]

#: a ``{claim}`...``` role in a page's Markdown (its text may run over several lines)
ROLE = re.compile(r"\{claim\}`([^`]+)`")
_NAME = re.compile(r"^\s*([A-Za-z_][\w]*)\s*:(.*)$", re.S)


class TemplateError(ValueError):
    """A ``{claim}`` role that cannot be read or filled: no name, a missing number, a wording for one outcome."""


@dataclass(frozen=True)
class Template:
    """The wordings of one claim as the page writes them."""

    name: str
    if_true: str
    if_false: str | None  # None: one wording, stated as what holds (a lesson or a required claim)

    def wording(self, holds: bool, required: bool) -> str:
        if self.if_false is not None and required:
            raise TemplateError(f"claim {self.name!r} is required: the page states it one way, not two")
        return self.if_true if holds or self.if_false is None else self.if_false


def _squash(text: str) -> str:
    return " ".join(text.split())


def parse(text: str) -> Template:
    """A role's text (``name: if-true || if-false``, or ``name: text``) as a :class:`Template`."""
    m = _NAME.match(text)
    if not m:
        raise TemplateError(f"a claim reads 'name: wording || wording', got {_squash(text)[:60]!r}")
    parts = [_squash(p) for p in _split_top(m.group(2), "||")]
    if len(parts) > 2 or not all(parts):
        raise TemplateError(f"claim {m.group(1)!r} needs one wording, or two non-empty ones split by '||'")
    if len(parts) == 2 and parts[0] == parts[1]:
        raise TemplateError(f"claim {m.group(1)!r} has the same wording for both outcomes")
    return Template(m.group(1), parts[0], parts[1] if len(parts) == 2 else None)


def templates(markdown: str) -> list[Template]:
    """Every ``{claim}`` role of a page's Markdown, in order."""
    return [parse(m.group(1)) for m in ROLE.finditer(markdown)]


class _Prose(string.Formatter):
    def convert_field(self, value, conversion):
        if conversion == "j":
            return _Joined(value)
        return super().convert_field(value, conversion)

    def format_field(self, value, spec):
        if isinstance(value, _Joined):
            return join_and(self.format_field(v, spec) for v in value.items) if value.items else "none"
        if isinstance(value, (list, tuple, dict)):
            raise TemplateError(f"a list needs !j to be read as words, got {value!r}")
        if isinstance(value, int) and not isinstance(value, bool) and not spec:
            return str(value)
        if spec == "size" and not isinstance(value, (bool, str)):
            return fmt(value, ",.0f" if abs(float(value)) >= 1000 else ".3g")
        return fmt(value, spec or ".3g")


@dataclass
class _Joined:
    items: list


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` that stands outside every ``{...}`` field."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if depth == 0 and (text.startswith("{{", i) or text.startswith("}}", i)):  # escapes live outside fields
            i += 2
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth < 0:
                raise TemplateError(f"a closing brace with no field in {_squash(text)[:60]!r}")
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    if depth:
        raise TemplateError(f"a field is not closed in {_squash(text)[:60]!r}")
    return parts + [text[start:]]


_CHOICE = re.compile(r"^([A-Za-z_]\w*)\?", re.S)
_ITEMS = re.compile(r"^([A-Za-z_]\w*)\*", re.S)


def _field_end(text: str, start: int) -> int:
    """The index of the brace that closes the field opened at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise TemplateError(f"a field is not closed: {text[start:start + 40]!r}")


def _truth(evidence: dict, key: str) -> bool:
    if key not in evidence:
        raise KeyError(key)
    value = evidence[key]
    if isinstance(value, (list, tuple, dict)):
        return bool(value)
    if isinstance(value, (bool, int)) or value is None:
        return bool(value)
    raise TemplateError(f"{{{key}?...}} picks words by a boolean or a list, got {value!r}")


def _fill(wording: str, evidence: dict) -> str:
    """``wording`` with its fields filled from ``evidence``: choices and list templates here, every other field
    by the format rules of :class:`_Prose`."""
    out, i = [], 0
    while i < len(wording):
        if wording.startswith("{{", i) or wording.startswith("}}", i):
            out.append(wording[i])
            i += 2
            continue
        if wording[i] == "}":
            raise TemplateError(f"a closing brace with no field: {wording[max(0, i - 30):i + 1]!r}")
        if wording[i] != "{":
            out.append(wording[i])
            i += 1
            continue
        end = _field_end(wording, i)
        inner = wording[i + 1:end]
        choice, items = _CHOICE.match(inner), _ITEMS.match(inner)
        if choice:
            sides = _split_top(inner[choice.end():], "|")
            if len(sides) != 2:
                raise TemplateError(f"a choice reads {{flag?if true|if false}}, got {{{inner}}}")
            out.append(_fill(sides[0] if _truth(evidence, choice.group(1)) else sides[1], evidence))
        elif items:
            records = evidence[items.group(1)]
            if not isinstance(records, (list, tuple)) or not all(isinstance(r, dict) for r in records):
                raise TemplateError(f"{{{items.group(1)}*...}} writes a list of records, got {records!r}")
            each = inner[items.end():]
            out.append(join_and(_fill(each, {**evidence, **r}) for r in records) if records else "none")
        else:
            out.append(_Prose().vformat("{" + inner + "}", (), evidence))
        i = end + 1
    return "".join(out)


#: how a lesson claim that a run does not bear out begins, wherever it is shown
NOT_BORNE_OUT = "not borne out in this run:"


def not_borne_out(template: Template, record: dict) -> bool:
    """Whether ``record`` makes ``template`` a one-wording claim whose verdict is false (shown marked)."""
    return template.if_false is None and not record["holds"] and not record.get("required")


def _evidence_text(evidence: dict) -> str:
    shown = [f"{k} = {_Prose().format_field(v, '')}" for k, v in evidence.items()
             if isinstance(v, (int, float, str)) and not isinstance(v, bool)]
    return "; ".join(shown) or "no numbers"


def render(template: Template, record: dict) -> str:
    """The sentence ``record`` (``holds``, ``required``, ``evidence``) makes of ``template``: a one-wording claim
    whose verdict is false reads "not borne out in this run: …" with its evidence."""
    wording = template.wording(bool(record["holds"]), bool(record.get("required")))
    try:
        text = _fill(wording, record.get("evidence", {}))
        if not_borne_out(template, record):
            return f"[{NOT_BORNE_OUT} {text} (evidence: {_evidence_text(record.get('evidence', {}))})]"
        return text
    except KeyError as e:
        raise TemplateError(f"claim {template.name!r} quotes {e.args[0]!r}, which is not in its evidence "
                            f"({', '.join(sorted(record.get('evidence', {}))) or 'none'})") from None
    except (IndexError, ValueError, TypeError) as e:
        raise TemplateError(f"claim {template.name!r}: {e}") from None


def record_of(glued_text: str) -> dict:
    """A claim's record from the text myst-nb stored for it (a quoted JSON string)."""
    text = glued_text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = ast.literal_eval(text)
    return json.loads(text)


def _role():
    from docutils import nodes
    from myst_nb.core.variables import RetrievalError
    from myst_nb.ext.glue.utils import glue_warning, retrieve_glue_data
    from myst_nb.ext.utils import RoleBase

    class ClaimRole(RoleBase):
        """``{claim}`name: if-true || if-false```: the wording that holds, filled from the claim's evidence."""

        def run(self):
            try:
                template = parse(self.text)
                data = retrieve_glue_data(self.document, CLAIM_PREFIX + template.name)
                plain = data.data.get("text/plain", "")
                record = record_of("".join(plain) if isinstance(plain, list) else plain)
                text = render(template, record)
            except (TemplateError, RetrievalError, ValueError) as e:
                return [], [glue_warning(f"{{claim}}: {e}", self.document, self.line)]
            if not_borne_out(template, record):  # shown marked, and the build (warnings are errors) stops
                node = nodes.strong(text, text, classes=["claim", "not-borne-out"])
                self.set_source_info(node)
                return [node], [glue_warning(f"{{claim}}: lesson claim {template.name!r} is false in this run: "
                                             f"{text}", self.document, self.line)]
            node = nodes.inline(text, text, classes=["claim"])
            self.set_source_info(node)
            return [node], []

    return ClaimRole()


def setup(app):
    """Sphinx: register the ``{claim}`` role."""
    app.add_role("claim", _role())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
