"""The chapter's pages follow docs/pages.md: code-first, every number in prose glued from the computation,
at least 250 words of prose per section, no hand-typed measurements."""
import re

import pytest
from conftest import REPO

BOOK = REPO / "src" / "seqlab" / "book" / "pages"
#: pages written in the code-first style (the others still call show() and are listed in the issues)
CODE_FIRST = ["recurrence", "attention", "transformer", "text", "summary", "forecasting"]
MIN_WORDS = 250


def split_page(text: str):
    """(prose, code): prose outside code cells and directive blocks; code of the executable cells."""
    prose, code, in_code, in_block = [], [], False, False
    for line in text.split("\n"):
        if line.startswith("```{code-cell}"):
            in_code = True
            continue
        if line.startswith("```") and in_code:
            in_code = False
            continue
        if in_code:
            code.append(line)
            continue
        fence = re.match(r"^(`{3,}|:{3,})\{", line)
        if fence and not in_block:  # a directive block, up to its own fence (a longer one may hold others)
            in_block = fence.group(1)
            continue
        if in_block and line.rstrip() == in_block:
            in_block = False
            continue
        if not in_block:
            prose.append(line)
    body = "\n".join(prose)
    body = body.split("\n---\n", 2)[-1] if body.startswith("---") else body  # the jupytext header
    return body, "\n".join(code)


def strip_markup(prose: str) -> str:
    prose = re.sub(r"\$\$.*?\$\$( \(eq-[\w-]+\))?", " ", prose, flags=re.S)  # display math
    prose = re.sub(r"\$[^$]+\$", " ", prose)  # inline math
    prose = re.sub(r"\{[\w:]+\}`[^`]*`", " GLUED ", prose)  # roles: glue, eq, ref
    prose = re.sub(r"`[^`]*`", " ", prose)  # inline code
    prose = re.sub(r"§\d+(\.\d+)*", " ", prose)  # section numbers
    prose = re.sub(r"\(\w[\w-]*\)=", " ", prose)  # labels
    return prose


def sections(prose: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", prose, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.fixture(params=CODE_FIRST)
def page(request):
    path = BOOK / f"{request.param}.md"
    if not path.exists():
        pytest.fail(f"{path} is missing")
    return request.param, path.read_text(encoding="utf-8")


def test_no_hand_typed_measurements_in_prose(page):
    name, text = page
    prose, _ = split_page(text)
    clean = strip_markup(prose)
    found = re.findall(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?%?|\d+%|\d(?:\.\d+)?e[-+]\d+", clean)
    assert not found, f"{name}: numbers typed by hand in prose (glue them): {found[:8]}"


def test_every_glue_reference_is_computed(page):
    name, text = page
    prose, code = split_page(text)
    used = set(re.findall(r"\{glue:text\}`([\w-]+)(?::[^`]*)?`", prose))
    defined = set(re.findall(r"""glue\(\s*["']([\w-]+)["']""", code)) | _glue_all_keys(text)
    # keys built by f-strings (a comprehension or a loop over rows): {..} stands for any name part
    built = [re.compile(re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(k))) for k in _glue_all_keys(text, built=True)]
    defined |= {n for n in used if any(p.fullmatch(n) for p in built)}
    assert used, f"{name}: no glued numbers at all"
    said = {n for n in used - defined if any(p.fullmatch(n) for p in _claim_names()) and "say(" in code}
    assert used - said <= defined, f"{name}: prose quotes {sorted(used - defined - said)} that no cell computes"


def _glue_all_keys(text: str, built: bool = False) -> set[str]:
    """The names a page binds with ``glue_all({...})``: the string keys of its dict; with ``built``, the
    f-string keys instead (of a dict or a comprehension), as source text such as ``iv_{k}_{s}``."""
    import ast

    from seqlab.book.cells import code_cells

    keys = set()
    for cell in code_cells(text):
        for node in ast.walk(ast.parse(cell.source)):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "glue_all" and node.args):
                continue
            arg = node.args[0]
            found = arg.keys if isinstance(arg, ast.Dict) else [arg.key] if isinstance(arg, ast.DictComp) else []
            if built:
                keys |= {ast.unparse(k)[2:-1] for k in found if isinstance(k, ast.JoinedStr)}
            else:
                keys |= {k.value for k in found if isinstance(k, ast.Constant)}
    return keys


def _claim_names() -> list:
    """Patterns of the claim names the section modules make (``say`` glues each claim's sentence by its name)."""
    names = []
    for src in (REPO / "src" / "seqlab" / "chapter").glob("s14_*.py"):
        for m in re.finditer(r"""(?:claim|require)\(\s*f?["']([\w{}.\[\]'" -]+?)["'],""", src.read_text()):
            names.append(re.compile(re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(m.group(1)))))
        # names kept in a module's table of claims (INGREDIENTS, SIGNIFICANCE_READ: a string in a tuple)
        for m in re.finditer(r"""[(,]\s*"(s\d\d_[a-z0-9_]+)"\s*[,)]""", src.read_text()):
            names.append(re.compile(re.escape(m.group(1))))
    return names


def test_code_first_cells_call_the_library(page):
    name, text = page
    _, code = split_page(text)
    assert "show(" not in code, f"{name}: still uses show(); call the library step by step"
    assert re.search(r"from seqlab\.chapter(\.s14_\w+)? import", code), f"{name}: settings must come from the section"
    assert re.search(r"from seqlab\.(nn|analysis|tasks|text|forecast|experiments)", code)


def test_each_section_has_prose_that_teaches(page):
    name, text = page
    prose, _ = split_page(text)
    for title, body in sections(prose).items():
        words = len(re.findall(r"[A-Za-z][A-Za-z'’-]*", strip_markup(body)))
        assert words >= MIN_WORDS, f"{name}: section {title!r} has {words} words of prose (at least {MIN_WORDS})"


def test_the_scanner_catches_typed_numbers():
    prose = "The loss fell to 0.0603 and accuracy to 99%, see §14.49 and $x=0.5$ and {glue:text}`acc`."
    found = re.findall(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?%?|\d+%|\d(?:\.\d+)?e[-+]\d+", strip_markup(prose))
    assert found == ["0.0603", "99%"]


ALL_PAGES = CODE_FIRST + ["forecasting_record"]
#: the chapter's budget of claims written two ways (a section that reports an outcome that varies from run to run)
MAX_TWO_WORDINGS = 10
#: the most of a page's visible cells that may call a seqlab.chapter module (settings, stored runs, glue)
MAX_CHAPTER_SHARE = 0.35


def paragraphs(prose: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", prose) if p.strip() and not p.strip().startswith("(")]


@pytest.mark.parametrize("name", ALL_PAGES)
def test_every_section_and_the_page_end_with_a_take_away(name):
    prose, _ = split_page((BOOK / f"{name}.md").read_text(encoding="utf-8"))
    for title, body in sections(prose).items():
        last = paragraphs(body)
        assert last and last[-1].startswith("**Take-away"), f"{name}: section {title!r} does not end with its take-away"
    assert paragraphs(prose)[-1].startswith("**Take-away"), f"{name}: the page does not end with a take-away"


def test_few_claims_have_two_wordings_and_none_nests_a_choice():
    from seqlab.book.sentences import templates

    found = {name: templates((BOOK / f"{name}.md").read_text(encoding="utf-8")) for name in ALL_PAGES + ["index"]}
    two = [(page, t.name) for page, ts in found.items() for t in ts if t.if_false is not None]
    assert len(two) <= MAX_TWO_WORDINGS, f"{len(two)} claims with two wordings: {two}"
    nested = [(page, t.name) for page, ts in found.items() for t in ts
              if re.search(r"\{[A-Za-z_]\w*[?*]", t.if_true + (t.if_false or ""))]
    assert not nested, f"claims with a choice or list inside: {nested}"


def visible_cells(text: str) -> list[str]:
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S)
    return [c for c in cells if not re.search(r"remove-input|remove-cell|hide-input|hide-cell", c[:300])]


@pytest.mark.parametrize("name", ALL_PAGES)
def test_most_visible_cells_compute_with_the_library_not_the_chapter(name):
    cells = visible_cells((BOOK / f"{name}.md").read_text(encoding="utf-8"))
    chapter = [c.splitlines()[0] for c in cells if re.search(r"\bs14_\w+\.|seqlab\.chapter", c)]
    assert len(chapter) <= MAX_CHAPTER_SHARE * len(cells), (
        f"{name}: {len(chapter)} of {len(cells)} visible cells call seqlab.chapter (at most "
        f"{MAX_CHAPTER_SHARE:.0%})")


@pytest.mark.parametrize("name", ALL_PAGES)
def test_numbers_in_prose_are_written_one_way(name):
    """Outside a claim's sentence a number is glued ({glue:text}); a claim's own numbers are its fields."""
    text = (BOOK / f"{name}.md").read_text(encoding="utf-8")
    assert "{fact}`" not in text, f"{name}: the retired {{fact}} role quotes {text.count('{fact}`')} numbers: glue them"
