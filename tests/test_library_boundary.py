"""The library holds no chapter: what a practitioner imports names no section's choices and reads no results.

``seqlab.nn``, ``analysis``, ``text``, ``forecast`` and ``tasks`` are the pieces a user takes to their own text and
series. The chapter's settings, rounds and artifacts live in ``seqlab.experiments`` and ``seqlab.chapter``. Section
references in docstrings and comments are welcome; identifiers, imports and artifact reads are not.
"""
import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "seqlab"
LIBRARY = ("nn", "analysis", "text", "forecast", "tasks")
#: the layers above the library, and the store's readers of committed artifacts
FORBIDDEN_MODULES = ("experiments", "chapter", "book", "artifacts")
ARTIFACT_READERS = {"read_artifact_csv", "read_artifact_json", "verify_artifacts", "artifact_dir", "artifact_sets"}


def identifiers(tree: ast.AST):
    """Every name the code binds or uses: definitions, arguments, variables, attributes, keywords, imports."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name, node.lineno
        elif isinstance(node, ast.arg):
            yield node.arg, node.lineno
        elif isinstance(node, ast.Name):
            yield node.id, node.lineno
        elif isinstance(node, ast.Attribute):
            yield node.attr, node.lineno
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg, node.lineno
        elif isinstance(node, ast.alias):
            yield node.asname or node.name, node.lineno


def imported_modules(tree: ast.AST, package: str):
    """(absolute module, line) for every import, relative ones resolved against ``seqlab.<package>``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["seqlab", *package.split(".")][: max(0, 1 + len(package.split(".")) - (node.level - 1))]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, node.lineno
            for a in node.names:
                yield f"{module}.{a.name}", node.lineno


def library_files():
    return sorted(p for pkg in LIBRARY for p in (SRC / pkg).rglob("*.py"))


def problems(source: str, rel: Path) -> list[str]:
    """What in ``source`` (the file at ``rel`` under ``src/seqlab``) puts the chapter into the library."""
    tree = ast.parse(source)
    package = ".".join(rel.parent.parts)
    found = [f"{rel}:{line}: identifier {name!r} names the chapter" for name, line in identifiers(tree)
             if "chapter" in name.lower()]
    for module, line in imported_modules(tree, package):
        parts = module.split(".")
        if parts[:1] == ["seqlab"] and len(parts) > 1 and parts[1] in FORBIDDEN_MODULES:
            found.append(f"{rel}:{line}: imports {module} (a layer above the library)")
        if parts[-1] in ARTIFACT_READERS:
            found.append(f"{rel}:{line}: imports {parts[-1]} (reads committed artifacts)")
    return found


def test_the_library_has_files_to_check():
    assert len(library_files()) > 20


@pytest.mark.parametrize("path", library_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_chapter_in_the_library(path):
    assert problems(path.read_text(encoding="utf-8"), path.relative_to(SRC)) == []


def test_the_check_finds_a_chapter_preset_an_upward_import_and_an_artifact_read():
    code = ("from ..experiments.forecast import NBEATS_PLAN\nfrom ..store import read_artifact_csv\n"
            "import seqlab.chapter.s14_63\nCHAPTER_MEMBER = 1\n\n"
            "def chapter_ensemble(season_length):\n    return season_length\n")
    found = problems(code, Path("forecast/probe.py"))
    assert any("'CHAPTER_MEMBER'" in f for f in found) and any("'chapter_ensemble'" in f for f in found)
    assert any("seqlab.experiments.forecast" in f for f in found)
    assert any("seqlab.chapter.s14_63" in f for f in found)
    assert any("read_artifact_csv" in f for f in found)
    assert problems("from ..files import atomic_write\nfrom .nbeats import GENERIC_MEMBER\n",
                    Path("forecast/probe.py")) == []
