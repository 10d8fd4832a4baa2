"""The inputs of every figure function of the chapter, as the sections pass them, for tests/test_figure_layout.py.

A *figure function* is a top-level function of ``seqlab/chapter/s14_*.py`` other than ``run`` that draws with
seqlab.plotting or plotly (``figure``, ``*_figure``, ``ratio_surface``, the explorers). Its inputs (the frames
and arrays the section computes) are stored in ``tests/data/figure_inputs/MODULE.FUNCTION.pkl`` as
``(args, kwargs)``. To record them again after a section changes what it plots, run the sections through this
file, which wraps every figure function, runs the section and writes what each one receives:

    /work/heavy python tests/figure_inputs.py 14.49 14.62      # or: all
"""
from __future__ import annotations

import ast
import functools
import importlib
import pickle
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAPTER = REPO / "src" / "seqlab" / "chapter"
DATA = Path(__file__).resolve().parent / "data" / "figure_inputs"


def _language_model():
    """The chapter's verified character-level GPT and its tokenizer (3 MB of weights: loaded, not recorded)."""
    from seqlab.chapter import s14_58

    gpt, tok, *_ = s14_58.lm()
    return gpt, tok


#: figure functions whose positional inputs are loaded from the chapter's stored artifacts instead of recorded
LIVE_INPUTS = {"s14_58.explorer": _language_model}


def figure_functions() -> list[str]:
    """``module.function`` of every figure function in the chapter, found in the source."""
    names = []
    for path in sorted(CHAPTER.glob("s14_*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and node.name != "run" and not node.name.startswith("_"):
                body = ast.get_source_segment(source, node) or ""
                if "plotting import" in body or "plotly" in body or "plotnine" in body:
                    names.append(f"{path.stem}.{node.name}")
    return names


def load(name: str):
    """``(function, args, kwargs)`` for ``module.function``."""
    module, function = name.split(".")
    args, kwargs = pickle.loads((DATA / f"{name}.pkl").read_bytes())
    if name in LIVE_INPUTS:
        args = LIVE_INPUTS[name]()
    return getattr(importlib.import_module(f"seqlab.chapter.{module}"), function), args, kwargs


def record(sections: list[str], out: Path) -> None:
    """Run ``sections`` with every figure function wrapped to store its inputs under :data:`DATA`."""
    from seqlab.chapter.base import registry, run_section

    DATA.mkdir(parents=True, exist_ok=True)
    for name in figure_functions():
        module, function = name.split(".")
        mod = importlib.import_module(f"seqlab.chapter.{module}")
        original = getattr(mod, function)

        def wrapped(*args, _original=original, _name=name, **kwargs):
            (DATA / f"{_name}.pkl").write_bytes(pickle.dumps((None if _name in LIVE_INPUTS else args, kwargs)))
            return _original(*args, **kwargs)

        setattr(mod, function, functools.wraps(original)(wrapped))
    for sid in (list(registry()) if sections == ["all"] else sections):
        run_section(sid, out=out)
        print(f"recorded §{sid}", flush=True)


if __name__ == "__main__":  # the sections start worker processes: nothing above may run on import
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        record(sys.argv[1:], Path(tmp))
