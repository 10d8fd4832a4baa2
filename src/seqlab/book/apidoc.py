"""The API reference, generated from the library's docstrings: what is public, and the Sphinx directive that shows it.

A package's public names are its ``__all__``: the reference shows exactly those, so a name
cannot be exported undocumented or documented unexported. A page holds one directive per
package, inside an ``eval-rst`` block (autodoc's output is reStructuredText, which MyST would
misread)::

    ```{eval-rst}
    .. seqlab-api:: seqlab.nn
    ```

It documents each name under the package's path (``seqlab.nn.GPT``), grouped by the module
that defines it. A name without a docstring is a build warning, and so an error under ``-W``.
Docstrings refer to objects by their defining module (``seqlab.nn.transformer.GPT``) or, inside
their module, by their bare name; :func:`documented_name` maps both to the documented path, so
such a reference links instead of failing the nitpicky build.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from types import ModuleType

__all__ = ["REFERENCE", "public_names", "public_object", "home_module", "public_modules", "docstring",
           "undocumented", "without_example", "documented_name", "setup"]

#: the packages the reference documents, in page order (``seqlab.errors``: the exceptions every package raises)
REFERENCE = ("seqlab.nn", "seqlab.text", "seqlab.analysis", "seqlab.tasks", "seqlab.forecast", "seqlab.errors")


def public_names(package: str) -> list[str]:
    """The names ``package`` exports (its ``__all__``)."""
    return list(importlib.import_module(package).__all__)


def public_object(package: str, name: str):
    return getattr(importlib.import_module(package), name)


def _is_code(obj) -> bool:
    return inspect.isclass(obj) or inspect.isroutine(obj)


def _submodules(package: str) -> list[ModuleType]:
    """``package`` and every module under it that imports without error."""
    top = importlib.import_module(package)
    found = [top]
    for info in pkgutil.walk_packages(getattr(top, "__path__", []), package + "."):
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:  # an optional dependency's module: nothing public lives there
            continue
    return found


def _attr_docs(module: str) -> dict[str, str]:
    """``#:`` comments of ``module``'s top-level names (what autodoc shows for data)."""
    from sphinx.pycode import ModuleAnalyzer

    try:
        docs = ModuleAnalyzer.for_module(module).find_attr_docs()
    except Exception:  # a module without source (a C extension) has no comments to read
        return {}
    return {name: "\n".join(lines).strip() for (scope, name), lines in docs.items() if scope == ""}


def home_module(package: str, name: str) -> str:
    """The module that defines ``package.name``: a class's or function's own, else the one whose ``#:`` documents it."""
    obj = public_object(package, name)
    if _is_code(obj):
        return obj.__module__
    for module in _submodules(package):
        if name in _attr_docs(module.__name__) and getattr(module, name, None) is obj:
            return module.__name__
    return package


def public_modules(package: str) -> list[str]:
    """``package`` and the modules that define its public names: where their docstrings, and examples, live."""
    return list(dict.fromkeys([package, *(home_module(package, n) for n in public_names(package))]))


def docstring(package: str, name: str) -> str:
    """The docstring the reference shows for ``package.name`` ("" for none); a dataclass's generated signature and
    an inherited docstring do not count."""
    obj = public_object(package, name)
    if not _is_code(obj):
        return _attr_docs(home_module(package, name)).get(name, "")
    doc = obj.__doc__ or ""  # a class's own: __doc__ is not inherited
    if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):  # what @dataclass writes for a class without one
        return ""
    return inspect.cleandoc(doc)


def undocumented(package: str) -> list[str]:
    """The public names of ``package`` without a docstring."""
    return [n for n in public_names(package) if not docstring(package, n).strip()]


def without_example(package: str) -> list[str]:
    """The public classes and functions of ``package`` whose docstring has no doctest example (a ``>>>`` line).

    Data (a constant) is shown with its value, which is its example."""
    return [n for n in public_names(package) if _is_code(public_object(package, n)) and ">>>" not in docstring(package, n)]


@functools.lru_cache(maxsize=1)
def _documented() -> dict[tuple[str, str], str]:
    """``(defining module, qualified name) -> documented path`` for every public name of :data:`REFERENCE`."""
    found = {}
    for package in REFERENCE:
        for name in public_names(package):
            obj = public_object(package, name)
            key = (obj.__module__, obj.__qualname__) if _is_code(obj) else (home_module(package, name), name)
            found.setdefault(key, f"{package}.{name}")
    return found


def _lookup(documented: dict, module: ModuleType, path: list[str]) -> str | None:
    """The documented path of ``module.path[0]`` (then ``.path[1:]``), if that object is documented."""
    if not path or not hasattr(module, path[0]):
        return None
    obj = getattr(module, path[0])
    key = (obj.__module__, obj.__qualname__) if _is_code(obj) else (module.__name__, path[0])
    top = documented.get(key)
    return None if top is None else ".".join([top, *path[1:]])


def _import(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def documented_name(target: str, context: str | None, documented: dict) -> str | None:
    """Where the reference documents ``target``: a dotted path through a defining module
    (``seqlab.forecast.core.Forecaster.cross_validation``), or a bare name as written inside a docstring of
    ``context``'s package (``CheckpointMismatchError``); ``None`` when it documents no such object."""
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest importable module prefix
        module = _import(".".join(parts[:cut])) if parts[0] == "seqlab" else None
        if module is not None:
            return _lookup(documented, module, parts[cut:])
    if context is None or not context.startswith("seqlab"):
        return None
    package = next((p for p in REFERENCE if context == p or context.startswith(p + ".")), None)
    if package is None:
        return None
    homes = [importlib.import_module(m) for m in public_modules(package)]
    found = {name for m in homes if (name := _lookup(documented, m, parts)) is not None}
    return found.pop() if len(found) == 1 else None


def _rst(package: str) -> list[str]:
    """The reStructuredText of one package's reference: its names, by the module that defines them (those the
    package itself defines first, under no heading of their own)."""
    lines = [f".. py:module:: {package}", ""]
    groups: dict[str, list[str]] = {package: []}
    for name in public_names(package):
        groups.setdefault(home_module(package, name), []).append(name)
    for module, names in groups.items():
        if module != package:
            title = f"``{module}``"
            lines += [title, "-" * len(title), ""]
            summary = (inspect.getdoc(importlib.import_module(module)) or "").split("\n\n")[0]
            lines += [*_escape(summary.splitlines()), ""]
        for name in names:
            lines += _entry(package, name) + [""]
    return lines


_LITERAL = re.compile(r"(``.+?``)")


def _escape(lines: list[str]) -> list[str]:
    """Docstrings are written for ``help()`` too: a ``|x|`` there is an absolute value, not an rST substitution.
    Every bar outside inline literals and doctest lines is escaped."""
    out = []
    for line in lines:
        if line.lstrip().startswith((">>>", "...")) or "|" not in line:
            out.append(line)
            continue
        out.append("".join(part if part.startswith("``") else part.replace("|", "\\|")
                           for part in _LITERAL.split(line)))
    return out


#: attribute and property docstrings as they were before napoleon, which would read the words before a first
#: colon as the type; seqlab's attribute docstrings are prose, so napoleon's reading of them is undone
_PROSE: dict[str, list[str]] = {}


def _before_napoleon(app, what, name, obj, options, lines) -> None:
    lines[:] = _escape(lines)
    if what in ("attribute", "property"):
        _PROSE[name] = list(lines)


def _after_napoleon(app, what, name, obj, options, lines) -> None:
    if what in ("attribute", "property") and name in _PROSE:
        lines[:] = _PROSE.pop(name)


def _entry(package: str, name: str) -> list[str]:
    obj, path = public_object(package, name), f"{package}.{name}"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return [f".. autoexception:: {path}", "   :show-inheritance:"]
    if inspect.isclass(obj):
        return [f".. autoclass:: {path}", "   :members:"]
    if inspect.isroutine(obj):
        return [f".. autofunction:: {path}"]
    from sphinx.util.inspect import object_description

    doc = docstring(package, name).splitlines() or [""]
    return [f".. py:data:: {name}", f"   :value: {object_description(obj)}", "",  # in the package's py:module
            *(f"   {line}" for line in _escape(doc))]


def _directive():
    from docutils import nodes
    from docutils.parsers.rst import Directive
    from docutils.statemachine import StringList
    from sphinx.util.nodes import nested_parse_with_titles

    class SeqlabApi(Directive):
        """``.. seqlab-api:: PACKAGE``: every public name of ``PACKAGE``, documented by autodoc."""

        required_arguments = 1

        def run(self):
            package = self.arguments[0].strip()
            reporter = self.state.document.reporter
            try:
                lines = _rst(package)
            except (ImportError, AttributeError) as e:
                return [reporter.error(f"seqlab-api {package}: {e}", line=self.lineno)]
            pending = set(self.state.document.settings.env.config.seqlab_api_pending.get(package, ()))
            out = [reporter.warning(f"{package}.{name} is public ({package}.__all__) and has no docstring",
                                    line=self.lineno) for name in undocumented(package) if name not in pending]
            body = nodes.section()
            body.document = self.state.document
            nested_parse_with_titles(self.state, StringList(lines, source=f"<seqlab-api {package}>"), body)
            return out + list(body.children)

    return SeqlabApi


def _missing_reference(app, env, node, contnode):
    """Resolve a Python reference that names a documented object by its defining module or its bare name."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if node["reftype"] == "mod":  # a module of a documented package: that package's reference
        package = next((p for p in REFERENCE if target.startswith(p + ".")), None)
        if package is None or _import(target) is None:
            return None
        name = package
    else:
        name = documented_name(target, node.get("py:module"), _documented())
    if name is None or name == target:
        return None
    found = node.deepcopy()
    found["reftarget"], found["refspecific"] = name, False
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"], name, found,
                                             contnode)


def setup(app):
    """Sphinx: the ``seqlab-api`` directive, and references by defining module resolved to the documented name."""
    app.setup_extension("sphinx.ext.autodoc")
    app.add_directive("seqlab-api", _directive())
    app.connect("missing-reference", _missing_reference)
    app.connect("autodoc-process-docstring", _before_napoleon, priority=400)  # napoleon's runs at 500
    app.connect("autodoc-process-docstring", _after_napoleon, priority=600)
    app.add_config_value("seqlab_api_pending", {}, "env")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
