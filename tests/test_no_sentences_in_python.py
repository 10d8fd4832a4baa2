"""No reader sentence lives in the chapter's Python (issue 38).

The pages write every sentence a reader reads; ``seqlab run`` prints tables, the verdicts of the claim
sources, and at most one note on where the numbers come from. This test reads every module of
``seqlab.chapter`` and fails on any string literal or f-string of ``MIN_WORDS`` words or more outside the
places a label or a message belongs.
"""
import ast
import re
from pathlib import Path

import pytest

CHAPTER = Path(__file__).resolve().parents[1] / "src" / "seqlab" / "chapter"
MIN_WORDS = 7

#: keyword arguments whose strings are labels or messages: figure titles and axes, headings, help, names
LABEL_ARGS = {"title", "subtitle", "xlab", "ylab", "zlab", "label", "caption", "help", "name", "columns"}
#: local variables that hold a figure's labels before they are passed on (``title, subtitle = ...``)
LABEL_VARIABLES = {"title", "subtitle", "xlab", "ylab", "zlab", "label", "caption"}
#: calls whose positional arguments are labels: (function or method name, position) -> the parameter's name
POSITIONAL_LABELS = {
    ("section", 1): "title",  # @section("14.60", "Caching keys and values: ..."): the section's title
    ("step", 0): "name",  # ctx.step("training the reversal model (...)"): the name of a slow step, on stderr
    ("compile", 0): "pattern",  # re.compile(r"^\s*(\d+)\. (.+?)..."): a regular expression is code, not prose
}
#: module-level constants that are tables of labels or data, by module, each with the reason it is allowed
LABEL_CONSTANTS = {
    "s14_56": {
        "SENTENCE": "the text BPE is trained on and walked through: data the page shows, not a sentence of the page",
    },
    "s14_54": {
        "MASK_CHECKS": "row labels of the mask_checks table (what is changed, what must not move)",
    },
    "s14_59": {
        "AXIS": "axis labels of the trade-off figure, by the measure on the x axis",
    },
    "s14_62": {
        "ROLE_LABELS": "cells of the protocol table: the role of each window, in the table's columns",
    },
    "s14_63_nbeats": {
        "INGREDIENTS": "the ablation's row labels (the ingredient changed), each mapped to a short name",
    },
    "s14_63_reference": {
        "ANCHORS": "the source column of the anchors table: where each reference value comes from",
        "REPORTED_ELSEWHERE": "the source column of the reported-elsewhere table: a citation per value",
    },
}
#: the one note a section's result may carry beside its verdicts (``chapter._util.provenance``): where its
#: numbers come from, never a reading of them
PROVENANCE = re.compile(r"Results \{\} \(artifact set\{\} \{\}, every file's sha256 checked\)\.")


def words(text: str) -> int:
    """Whitespace-separated pieces that contain a letter (``4d² + 2d·d_ff`` is a formula of two words)."""
    return sum(any(ch.isalpha() for ch in piece) for piece in text.split())


def literal_text(node: ast.AST) -> str | None:
    """The text of a string constant, or of an f-string with ``{}`` for each placeholder; None for other nodes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for elt in node.elts for n in _targets(elt)]
    return []


def exempt_nodes(tree: ast.Module, module: str) -> set[int]:
    """ids of the nodes whose strings may be long: docstrings, raise messages, labels, listed constants."""
    allowed, roots = set(), []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and literal_text(body[0].value) is not None:
            roots.append(body[0].value)  # a docstring
        if isinstance(node, ast.Raise):
            roots.append(node)
        if isinstance(node, ast.Call):
            roots += [kw.value for kw in node.keywords if kw.arg in LABEL_ARGS]
            roots += [arg for i, arg in enumerate(node.args) if (_callee(node), i) in POSITIONAL_LABELS]
        if isinstance(node, ast.Assign) and all(
                t in LABEL_VARIABLES for target in node.targets for t in _targets(target)) \
                and any(_targets(target) for target in node.targets):
            roots.append(node.value)
    for node in tree.body:  # module level only
        names = [t for target in getattr(node, "targets", [getattr(node, "target", None)]) if target is not None
                 for t in _targets(target)]
        if names and all(n in LABEL_CONSTANTS.get(module, {}) for n in names):
            roots.append(node.value)
    for root in roots:
        allowed.update(id(n) for n in ast.walk(root))
    return allowed


def sentences(source: str, module: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every string literal or f-string of MIN_WORDS words or more that is not exempt."""
    tree = ast.parse(source)
    allowed = exempt_nodes(tree, module)
    inner = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if id(node) in allowed or id(node) in inner:
            continue
        text = literal_text(node)
        if text is None or words(text) < MIN_WORDS or PROVENANCE.fullmatch(text):
            continue
        found.append((node.lineno, text))
    return sorted(found)


MODULES = sorted(CHAPTER.glob("*.py"))


def test_the_chapter_modules_are_read():
    assert len(MODULES) > 20 and {p.stem for p in MODULES} >= {"s14_45", "s14_57", "s14_63", "s14_64"}
    for module, constants in LABEL_CONSTANTS.items():  # a listed constant that no longer exists is dropped here
        tree = ast.parse((CHAPTER / f"{module}.py").read_text(encoding="utf-8"))
        defined = {t for node in tree.body for target in getattr(node, "targets", []) for t in _targets(target)}
        assert set(constants) <= defined, (module, set(constants) - defined)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_no_sentence_literals(path):
    found = sentences(path.read_text(encoding="utf-8"), path.stem)
    assert not found, f"{path.name}: sentences belong in the page's Markdown, verdicts in claim sources:\n" + \
        "\n".join(f"  line {line}: {text[:90]!r}" for line, text in found)


# --- the check itself can fail -------------------------------------------------------------------------------------

PLANTED = '''
"""A module docstring may be as long as it likes, because it is documentation for the code's readers."""
from .base import section

SHORT = "a label of fewer words"


@section("14.99", "A title for the section may be long as well")
def run(ctx):
    """So may a function's docstring, which is documentation and never printed as a note."""
    if ctx is None:
        raise ValueError("an error message is a message to the user, not a reader sentence")
    notes = [f"At lag {ctx.lag} the LSTM's input gradient is {ctx.ratio:.3g}x the RNN's: it reaches further.",
             "Erratum: the chapter says the gradient is below 1e-8 by lag 40, which is not what was measured.",
             f"Results {ctx.mode} (artifact set{ctx.s} {ctx.sets}, every file's sha256 checked)."]
    fig = line_pair(ctx.df, "x", "y", title="A figure title is a label and may run to many words",
                    subtitle=f"So may its subtitle, at {ctx.n} points from the stored artifact set")
    table = dict(check="a table cell that reads like a sentence of the page", value=1)
    return {}, fig, notes + [table]
'''


def test_a_planted_sentence_is_found():
    found = sentences(PLANTED, "s14_99")
    assert [text.split()[:2] for _, text in found] == [["At", "lag"], ["Erratum:", "the"], ["a", "table"]]


def test_a_planted_label_constant_is_found_unless_listed():
    source = 'ROWS = ("a row label that is long enough to count as a sentence",)\n'
    assert sentences(source, "s14_99") and not sentences(source.replace("ROWS", "SENTENCE"), "s14_56")


def test_a_regular_expression_is_code_but_a_sentence_beside_it_is_not():
    pattern = 'PAT = re.compile(r"^(\\d+)\\. (.+?) is taught in (.+?) and summed up in (.+)$")\n'
    assert not sentences(pattern, "s14_99")
    assert sentences(pattern + 'NOTE = "and this line reads like a sentence of the page"\n', "s14_99")


def test_words_are_counted_in_text_not_in_formulas():
    assert words("4d² + 2d·d_ff + 9d + d_ff") == 4
    assert words("the gated cells do reach further here") == 7
    assert PROVENANCE.fullmatch("Results {} (artifact set{} {}, every file's sha256 checked).")
