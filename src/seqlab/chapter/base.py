"""SectionResult, the run context, and the registry keyed by the chapter's section numbers."""
from __future__ import annotations

import contextlib
import importlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

import pandas as pd

from ..claims import Claim, reporting
from ..errors import InvalidParameterError, SeqlabError

__all__ = ["SectionResult", "Context", "Progress", "section", "registry", "get_section", "run_section",
           "UnknownSectionError", "SLOW_STEP_SECONDS"]

#: a step still running after this many seconds is reported (``seqlab run`` reports on stderr)
SLOW_STEP_SECONDS = 3.0


class UnknownSectionError(SeqlabError, KeyError):
    """Raised for a section id that the chapter does not have."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return self.args[0]


@dataclass
class SectionResult:
    section: str
    title: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the verdicts of the section's claim sources, as records (name, holds, required, evidence): the facts the
    #: page's sentences are written from
    claims: list[dict] = field(default_factory=list)
    #: name -> plotly Figure of every figure written (for embedding; not part of the JSON contract)
    interactive: dict = field(default_factory=dict, repr=False)


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"


class Progress:
    """Reports the slow steps of a run on ``stream``: nothing for a step that ends within ``after`` seconds;
    for a longer one ``"  name ..."`` once it passes the mark, completed by its seconds when it ends
    (``"  training the reversal model ... 41 s"``). Steps may nest."""

    def __init__(self, stream: TextIO, after: float | None = None):
        self.stream = stream
        self.after = SLOW_STEP_SECONDS if after is None else after
        self._lock = threading.Lock()
        self._open = None  # the step whose "..." line still waits for its seconds
        self._active = []  # [token, name, shown] of the steps under way, in the order they began

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _announce(self, token) -> None:
        # timers fire in any order under load: an inner step's mark may pass before its outer step's timer
        # runs, so the steps begun before this one are announced first, each on its own line
        with self._lock:
            for entry in self._active:
                if not entry[2]:
                    if self._open is not None:
                        self._write("\n")
                    self._write(f"  {entry[1]} ...")
                    self._open, entry[2] = entry[0], True
                if entry[0] is token:
                    return

    @contextlib.contextmanager
    def step(self, name: str):
        token, t0 = object(), time.perf_counter()
        entry = [token, name, False]
        with self._lock:
            self._active.append(entry)
        timer = threading.Timer(self.after, self._announce, args=(token,))
        timer.daemon = True
        if self.after <= 0:
            self._announce(token)
        else:
            timer.start()
        try:
            yield
        finally:
            timer.cancel()
            if timer.is_alive():
                timer.join()  # an announcement in progress finishes before the step's end is written
            with self._lock:
                self._active.remove(entry)
                if entry[2]:
                    took = _seconds(time.perf_counter() - t0)
                    if self._open is token:
                        self._write(f" {took}\n")
                    else:
                        self._write(("\n" if self._open is not None else "") + f"  {name} ... {took}\n")
                    self._open = None


@dataclass
class Context:
    """What a section needs from the caller: where figures go and an optional seed override.

    ``seed(default)`` returns the chapter's seed unless the user passed ``--seed``;
    with an override every seed the section uses is shifted by the same amount, so
    seeds that differ in the chapter still differ.
    """

    out: Path | None
    seed_override: int | None = None
    figures: bool = True
    _base: int | None = None
    interactive: dict = field(default_factory=dict)
    #: where slow steps are reported; ``None`` (the library's default, and the book's) keeps a run silent
    progress: Progress | None = None

    def step(self, name: str):
        """``with ctx.step("training the reversal model"):`` reports the step if it is slow (see Progress)."""
        return contextlib.nullcontext() if self.progress is None else self.progress.step(name)

    def seed(self, chapter_seed: int) -> int:
        if self.seed_override is None:
            return chapter_seed
        if self._base is None:
            self._base = chapter_seed
        return self.seed_override + (chapter_seed - self._base)

    def save(self, name: str, gg, fig) -> list[Path]:
        """Write a static figure and its interactive twin; no-op when figures are off."""
        if not self.figures:
            return []
        from ..plotting import write_pair

        self.interactive[name] = fig
        return write_pair(gg, fig, self.out / name)

    def save_plotly(self, name: str, fig) -> list[Path]:
        if not self.figures:
            return []
        from ..plotting import write_plotly

        self.interactive[name] = fig
        return [write_plotly(fig, self.out / f"{name}.html")]


@dataclass(frozen=True)
class _Entry:
    id: str
    title: str
    module: str
    func: Callable[[Context], SectionResult] | None = None


_SECTIONS: dict[str, _Entry] = {}

#: section id -> module, in the chapter's order; modules are imported on first use
_MODULES = [
    ("14.45", "s14_45"), ("14.46", "s14_46"), ("14.46.1", "s14_46_1"), ("14.47", "s14_47"),
    ("14.47.1", "s14_47_1"), ("14.48", "s14_48"), ("14.49", "s14_49"),
    ("14.50", "s14_50"), ("14.50.2", "s14_50_2"), ("14.51", "s14_51"), ("14.52", "s14_52"),
    ("14.53", "s14_53"), ("14.54", "s14_54"), ("14.55", "s14_55"),
    ("14.56", "s14_56"), ("14.57", "s14_57"), ("14.58", "s14_58"), ("14.59", "s14_59"), ("14.60", "s14_60"),
    ("14.61", "s14_61"), ("14.62", "s14_62"), ("14.63", "s14_63"), ("14.64", "s14_64"),
]


def section(id: str, title: str):
    """Register ``func(ctx) -> (tables, figures, notes)`` as chapter section ``id``."""

    def wrap(func):
        _SECTIONS[id] = _Entry(id, title, func.__module__, func)
        return func

    return wrap


def registry() -> dict[str, _Entry]:
    """All sections in chapter order."""
    for sid, mod in _MODULES:
        if sid not in _SECTIONS:
            importlib.import_module(f"{__package__}.{mod}")
    return {sid: _SECTIONS[sid] for sid, _ in _MODULES}


def get_section(id: str) -> _Entry:
    reg = registry()
    if id not in reg:
        raise UnknownSectionError(f"unknown section {id!r}; `seqlab list` shows the {len(reg)} sections")
    return reg[id]


def run_section(id: str, out: Path | str | None = None, seed: int | None = None, figures: bool = True,
                progress: Progress | None = None) -> SectionResult:
    """Run one section; figures are written under ``out`` (needed unless ``figures=False``).

    With ``progress`` the section as a whole, and each step it marks with ``ctx.step``, is reported there
    when it runs longer than the progress's threshold. With ``seed`` a required claim that is false at those
    seeds is returned among the verdicts (holds false) rather than raised as :class:`~seqlab.claims.ClaimError`.
    """
    entry = get_section(id)
    if figures and out is None:
        raise InvalidParameterError(f"section {id}: figures need an output folder (pass out=, or figures=False)")
    ctx = Context(None if out is None else Path(out), seed, figures, progress=progress)
    t0 = time.perf_counter()
    # at the chapter's seeds a false required claim stops the run (the page could not state it); at other seeds
    # it is one of the run's verdicts
    with ctx.step(f"running §{entry.id}"), contextlib.nullcontext() if seed is None else reporting():
        tables, figs, notes = entry.func(ctx)
    claims = [c.record() for c in notes if isinstance(c, Claim)]
    notes = [n for n in notes if not isinstance(n, Claim)]
    return SectionResult(entry.id, entry.title, tables, figs, notes, time.perf_counter() - t0,
                         interactive=ctx.interactive, claims=claims)


def section_tables(id: str) -> dict:
    """One section's run without figures, as plain data: section, title, tables, notes, seconds, claims."""
    res = run_section(id, None, figures=False)
    return {"section": res.section, "title": res.title, "tables": dict(res.tables), "notes": list(res.notes),
            "seconds": res.seconds, "claims": list(res.claims)}


def run_section_once(id: str) -> SectionResult:
    """:func:`run_section` without figures at the chapter's seeds, through :func:`seqlab.results.once`: where a
    result store is set (``SEQLAB_RESULTS``: a build, a test session), a section that ran is not run again in any
    process. A section whose tables the store cannot hold runs here."""
    from ..results import ResultStoreError, once

    entry = get_section(id)
    try:
        got = once(section_tables, entry.id)
    except ResultStoreError:
        got = section_tables(entry.id)
    return SectionResult(got["section"], got["title"], got["tables"], [], got["notes"], got["seconds"],
                         claims=got.get("claims", []))
