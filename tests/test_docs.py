"""The guide and the reference: built with the chapter, every public name documented with an example that runs, the
command-line reference equal to ``--help``, and every code block of the guide run on small data.

A guide page's code block may be preceded by MyST comments that tell this test how to run it:
``% test: sub OLD => NEW`` (replace text first: fewer iterations), ``% test: skip REASON`` (not run; its
``seqlab`` lines are still parsed), ``% test: needs cuda`` (run where torch sees a GPU, else parsed),
``% test: slow`` (run by the tests marked slow) and ``% test: prints as above`` (its output equals the block
before it). Every ``seqlab`` command runs in this process with :data:`TINY` sizes.
"""
import contextlib
import doctest
import html
import io
import re
import runpy
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import patient, require

from seqlab.book import apidoc
from seqlab.book.build import PAGES, check_pages
from seqlab.book.cells import CODE_COLUMN
from seqlab.book.clidoc import commands as _commands
from seqlab.book.clidoc import help_environment, help_text

GUIDE = PAGES / "guide"
CONF = runpy.run_path(str(PAGES / "conf.py"))
LIBRARY = ("seqlab.nn", "seqlab.text", "seqlab.analysis", "seqlab.tasks", "seqlab.forecast")
#: the options each command runs the guide with: small enough for a test, the same shape wherever a run continues
TINY = {("lm", "train"): {"--max-iters": "20", "--eval-interval": "10", "--batch-size": "8", "--block-size": "32",
                          "--d-model": "32", "--num-layers": "1", "--num-heads": "2"},
        ("lm", "sample"): {"--max-new-tokens": "40"},
        ("forecast", "evaluate"): {"--max-steps": "5", "--members": "1"},
        ("forecast", "predict"): {"--max-steps": "5", "--members": "1"}}
GPT_ONLY = ("--num-layers", "--num-heads")


# ---- the reference: docstrings and examples ----

@pytest.mark.parametrize("package", apidoc.REFERENCE)
def test_every_public_name_has_a_docstring(package):
    pending = set(CONF["seqlab_api_pending"].get(package, ()))
    missing = set(apidoc.undocumented(package))
    assert missing <= pending, f"public names of {package} without a docstring: {sorted(missing - pending)}"
    assert pending <= missing, f"{sorted(pending - missing)} have a docstring now: drop them from seqlab_api_pending"


@pytest.mark.parametrize("package", LIBRARY)
def test_every_public_name_has_an_example(package):
    assert apidoc.without_example(package) == []


def _public_modules():
    return sorted({m for p in LIBRARY for m in apidoc.public_modules(p)})


@pytest.mark.parametrize("module", _public_modules())
def test_examples_run(module, tmp_path, monkeypatch):
    """Every docstring example of the modules that define the public names, as doctest runs it, in a temporary
    folder (an example writes nowhere else)."""
    import importlib

    monkeypatch.chdir(tmp_path)
    found = doctest.DocTestFinder().find(importlib.import_module(module))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = io.StringIO()
    for test in found:
        runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()


def test_the_reference_resolves_names_by_their_defining_module():
    documented = apidoc._documented()
    resolve = lambda target, context=None: apidoc.documented_name(target, context, documented)
    assert resolve("seqlab.nn.transformer.GPT") == "seqlab.nn.GPT"
    assert resolve("seqlab.forecast.core.Forecaster.cross_validation") == "seqlab.forecast.Forecaster.cross_validation"
    assert resolve("ShapeError", "seqlab.nn") == "seqlab.errors.ShapeError"
    assert resolve("CheckpointMismatchError", "seqlab.text") == "seqlab.text.CheckpointMismatchError"
    assert resolve("seqlab.text.tokenizers.PRE_SPLIT") is None  # not public: a reference to it stays broken
    assert resolve("no_such_name", "seqlab.text") is None


# ---- the command-line reference ----

def commands():
    from seqlab.cli import build_parser

    return _commands(build_parser())


def _help(words) -> str:
    """What ``seqlab WORDS --help`` prints in a terminal of the reference's width."""
    from seqlab.cli import main

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        for k, v in help_environment().items():
            mp.setenv(k, v)
        with pytest.raises(SystemExit) as e:
            main([*words, "--help"])
    assert e.value.code == 0
    return out.getvalue()


def test_every_command_is_in_the_reference():
    found = {c.words for c in commands()}
    assert {(), ("lm", "train"), ("lm", "sample"), ("lm", "eval"), ("lm", "export"), ("forecast", "evaluate"),
            ("forecast", "predict"), ("chapter", "build"), ("run",), ("list",)} <= found
    for c in commands():
        assert help_text(c.parser) == _help(c.words), c.line


# ---- the guide's code blocks ----

_BLOCK = re.compile(r"((?:^% test:[^\n]*\n)*)^```(bash|python)\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass
class Block:
    page: str
    line: int
    language: str
    code: str
    marks: list[str] = field(default_factory=list)

    def mark(self, name: str) -> str | None:
        return next((m[len(name):].strip() for m in self.marks if m == name or m.startswith(name + " ")), None)


def guide_blocks(page: str) -> list[Block]:
    text = (GUIDE / f"{page}.md").read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        marks = [line.split(":", 1)[1].strip() for line in m.group(1).splitlines()]
        code = m.group(3)
        for sub in (mk[4:] for mk in marks if mk.startswith("sub ")):
            old, new = (s.strip() for s in sub.split("=>"))
            assert old in code, f"{page}.md line {text[:m.start()].count(chr(10)) + 1}: no {old!r} to replace"
            code = code.replace(old, new)
        out.append(Block(page, text[:m.start(3)].count("\n") + 1, m.group(2), code, marks))
    return out


GUIDE_PAGES = sorted(p.stem for p in GUIDE.glob("*.md") if guide_blocks(p.stem))


def seqlab_lines(code: str) -> list[list[str]]:
    """The ``seqlab`` commands of a bash block as argument lists (``python -m seqlab`` too), continuations joined."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["seqlab"]:
            found.append(words[1:])
        elif "-m" in words and words[words.index("-m") + 1:][:1] == ["seqlab"]:
            found.append(words[words.index("-m") + 2:])
    return found


def tiny(argv: list[str]) -> list[str]:
    """``argv`` with :data:`TINY`'s options for its command, replacing the values it gives."""
    sizes = dict(TINY.get(tuple(argv[:2]), {}))
    if argv[:1] == ["forecast"] and not any("N-BEATS" in a for a in argv):  # options of N-BEATS alone
        sizes = {}
    if "lstm" in argv:
        sizes = {k: v for k, v in sizes.items() if k not in GPT_ONLY}
    out, i = list(argv), 0
    while i < len(out):
        if out[i] in sizes:
            out[i + 1] = sizes.pop(out[i])
        i += 1
    return out + [x for k, v in sizes.items() for x in (k, v)]


def _parses(argv: list[str]) -> None:
    from seqlab.cli import build_parser
    from seqlab.cli._common import join_option_values

    parser = build_parser()
    parser.parse_args(join_option_values(argv, parser))


def _run_block(block: Block, namespace: dict) -> str:
    """Run one block in the current folder; returns what it printed."""
    from seqlab.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if block.language == "python":
            exec(compile(block.code, f"{block.page}.md:{block.line}", "exec"), namespace)
        else:
            lines = [x.strip() for x in block.code.replace("\\\n", " ").splitlines()]
            others = [x for x in lines if x and not x.startswith(("#", "seqlab "))]
            assert not others, f"{block.page}.md:{block.line}: a runnable bash block holds only seqlab lines"
            for argv in seqlab_lines(block.code):
                assert main(tiny(argv)) == 0, f"{block.page}.md:{block.line}: seqlab {' '.join(argv)}"
    return out.getvalue()


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def run_page(page: str, folder: Path, slow: bool) -> list[str]:
    """Run ``page``'s blocks top to bottom in ``folder``; returns what was left out, and why."""
    left, namespace, previous = [], {"__name__": "__guide__"}, None
    for b in guide_blocks(page):
        reason = b.mark("skip") or (b.mark("needs") if b.mark("needs") == "cuda" and not _cuda() else None) or \
            ("slow" if b.mark("slow") is not None and not slow else None)
        if reason is not None:
            left.append(f"{page}.md:{b.line}: {reason}")
            continue
        printed = _run_block(b, namespace)
        if b.mark("prints as above") is not None:
            assert printed == previous, f"{page}.md:{b.line} prints otherwise than the block before it"
        previous = printed
    return left


@pytest.mark.parametrize("page", GUIDE_PAGES)
def test_guide_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_page(page, tmp_path, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in GUIDE_PAGES if any(b.mark("slow") is not None
                                                                for b in guide_blocks(p))])
def test_guide_blocks_run_with_the_slow_ones(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_page(page, tmp_path, slow=True)


@pytest.mark.parametrize("page", GUIDE_PAGES)
def test_every_guide_command_parses(page):
    """The blocks left out (a scheduler, torchrun, a GPU) still name only options seqlab has."""
    for argv in [argv for b in guide_blocks(page) if b.language == "bash" for argv in seqlab_lines(b.code)]:
        _parses(argv)
        _parses(tiny(argv))


@pytest.mark.parametrize("page", sorted(p.stem for p in GUIDE.glob("*.md")))
def test_guide_code_fits_the_column(page):
    wide = [f"{page}.md:{b.line + i}: {line}" for b in guide_blocks(page)
            for i, line in enumerate(b.code.splitlines()) if len(line) > CODE_COLUMN]
    assert not wide, "\n".join(wide)


def test_the_guide_leaves_out_only_what_it_must():
    """On a CPU: the GPU blocks, the slow ones, and the two that start processes of their own."""
    marks = [m for p in GUIDE_PAGES for b in guide_blocks(p) for m in b.marks if not m.startswith("sub ")]
    assert {m.split()[0] for m in marks} <= {"skip", "needs", "slow", "prints"}
    assert sum(m.startswith("skip") for m in marks) <= 2


# ---- built with the chapter ----

def test_guide_is_one_page_name_of_the_build():
    assert check_pages("guide") == ["guide"] and check_pages("attention,guide") == ["attention", "guide"]
    from seqlab.book.build import BookError

    with pytest.raises(BookError, match="choose from .*guide"):
        check_pages("guides")


def test_every_guide_page_is_in_the_navigation():
    toctree = re.compile(r"^```\{toctree\}\n(.*?)^```", re.M | re.S)
    listed = lambda md: [x.strip() for t in toctree.findall(md.read_text(encoding="utf-8"))
                         for x in t.splitlines() if x.strip() and not x.startswith(":")]
    entries = listed(PAGES / "index.md") + [f"guide/{x}" for x in listed(GUIDE / "reference.md")]
    pages = sorted(f"guide/{p.stem}" for p in GUIDE.glob("*.md"))
    assert sorted(e for e in entries if e.startswith("guide/")) == pages
    shown = {m.group(1) for p in GUIDE.glob("api_*.md")
             for m in re.finditer(r"\.\. seqlab-api:: (\S+)", p.read_text(encoding="utf-8"))}
    assert shown == set(apidoc.REFERENCE)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The guide and the reference built as ``seqlab chapter build --pages guide`` builds them: the chapter's own
    Sphinx configuration, warnings (a broken reference, a name without a docstring) as errors."""
    require("myst_nb")
    out, cache = tmp_path_factory.mktemp("site"), tmp_path_factory.mktemp("cache")
    env = {**__import__("os").environ, "SEQLAB_BOOK_PAGES": "guide", "SEQLAB_BOOK_CACHE": str(cache / "jupyter")}
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(PAGES),
                        str(out)], env=env, capture_output=True, text=True, timeout=patient(600))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-5000:]
    return out


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_the_rendered_cli_reference_is_the_help(site):
    page = (site / "guide" / "cli.html").read_text(encoding="utf-8")
    for c in commands():
        assert f'id="{c.label}"' in page, c.label
        pre = re.search(r"<pre>(.*?)</pre>", page[page.index(f'id="{c.label}"'):], re.S)  # its section's help
        assert _text(pre.group(1)).rstrip("\n") == _help(c.words).rstrip("\n"), c.line


def test_the_reference_and_the_guide_are_linked_from_the_chapter(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    for page in sorted(GUIDE.glob("*.md")):
        if page.stem not in ("cli",) and not page.stem.startswith("api_"):
            assert f'href="guide/{page.stem}.html"' in index, page.stem
    for package in apidoc.REFERENCE:
        html_ = (site / "guide" / f"api_{package.split('.')[-1]}.html").read_text(encoding="utf-8")
        for name in apidoc.public_names(package):
            assert f'id="{package}.{name}"' in html_, f"{package}.{name}"
    assert "sphinx-book-theme" in index or "bd-sidebar" in index  # the chapter's theme
    # a guide-only build lets the index's links to the chapter's pages go unresolved; the guide's own must resolve
    for page in sorted((site / "guide").glob("*.html")):
        unresolved = re.findall(r'class="xref std std-(?:ref|doc)[^"]*">(.*?)<', page.read_text(encoding="utf-8"))
        assert not unresolved, (page.name, unresolved)
