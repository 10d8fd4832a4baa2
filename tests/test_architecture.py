"""The layers of docs/architecture.md, checked on the source: who may import whom, and no import cycles."""
import ast
from pathlib import Path

import pytest
from conftest import REPO

PKG = REPO / "src" / "seqlab"
#: bottom to top; a module may import its own layer and the layers below it
LAYERS = [
    {"errors", "files", "store", "threads", "parallel", "data", "artifacts", "claims", "machine", "results", "lazy",
     "devices"},
    {"nn"},
    {"analysis"},
    {"text"},
    {"forecast"},
    {"tasks"},
    {"experiments"},
    {"plotting"},
    {"chapter"},
    {"book"},
    {"cli", "__main__"},
]
LIBRARY = {"nn", "analysis", "text", "forecast", "tasks"}


def _unit(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0].removesuffix(".py")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the seqlab modules ``path`` imports (anywhere in the file, lazily or not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("seqlab"):
                found.add(mod)
                found.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("seqlab"))
    return found


def _layer(unit: str) -> int:
    for i, names in enumerate(LAYERS):
        if unit in names:
            return i
    raise AssertionError(f"seqlab/{unit} is in no layer of the design")


SOURCES = sorted(p for p in PKG.rglob("*.py") if p.name != "__init__.py" or p.parent != PKG)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_go_down_the_layers(path):
    mine = _layer(_unit(path))
    for mod in _imports(path):
        parts = mod.split(".")
        if len(parts) < 2 or parts[1] == "__version__":
            continue
        target = parts[1]
        if not (PKG / target).exists() and not (PKG / f"{target}.py").exists():
            continue
        assert _layer(target) <= mine, f"{path.relative_to(PKG)} imports {mod}, a layer above it"
        if _unit(path) in LIBRARY:
            assert target not in {"chapter", "book", "experiments", "cli"}, f"library module imports {mod}"


def test_no_import_cycles():
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph = {m: {i for i in _imports(p) if i in modules and i != m} for m, p in modules.items()}
    state: dict[str, int] = {}

    def visit(m, stack):
        state[m] = 1
        for n in graph[m]:
            if state.get(n) == 1:
                cycle = stack[stack.index(n):] + [n] if n in stack else [m, n]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n, stack + [n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_the_bottom_layer_holds_the_store_and_the_switch():
    import seqlab.files as files
    import seqlab.store as store

    assert callable(store.heavy_eval) and callable(store.verify_artifacts) and callable(files.atomic_write)
    # one home for each: whole-file writes are not the artifact store's
    assert files.atomic_write.__module__ == "seqlab.files" and "atomic_write" not in store.__all__
    assert not (PKG / "report").exists()
