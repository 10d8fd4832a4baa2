"""A Sphinx extension that reports, on stderr, each page of the chapter as it is read and executed.

A cold build runs for minutes; without this it prints nothing until the end. Each page gets
one line: its number, its name, the seconds it took, the time since the start and an estimate
of the time left (from the previous build's times where there are some, else the mean so far).
The build passes the estimates in ``SEQLAB_BOOK_ESTIMATES`` (JSON) and a file to record this
build's times in ``SEQLAB_BOOK_TIMINGS``; outside the build both are optional. A lane of pages
executed beside another (``SEQLAB_BOOK_LANE``) writes one whole line per page when it is done.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

__all__ = ["Progress", "clock", "setup"]


def clock(seconds: float) -> str:
    """``seconds`` for a person: ``"42 s"``, ``"2 min 05 s"``."""
    s = max(0, round(seconds))
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


class Progress:
    def __init__(self, estimates: dict[str, float] | None = None, record: Path | None = None, stream=None,
                 lane: str | None = None):
        self.lane = lane  # a lane of pages executed beside another (seqlab.book.lanes)
        self.estimates = dict(estimates or {})
        self.record = record
        self.stream = stream
        self.todo: list[str] = []
        self.done: dict[str, float] = {}
        self.t0 = self.t_page = time.perf_counter()

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(text)
        stream.flush()

    def begin(self, docnames, sources=None) -> None:
        """``sources``: each page's text, where known; a page with no code cell takes no time to speak of."""
        self.todo = list(docnames)
        for doc, text in (sources or {}).items():
            if "{code-cell}" not in text:
                self.estimates.setdefault(doc, 0.0)
        self.t0 = time.perf_counter()

    def start(self, docname: str) -> None:
        self.t_page = time.perf_counter()
        if docname in self.todo and not self.lane:
            self._write(f"[{self.todo.index(docname) + 1}/{len(self.todo)}] {docname} ...")

    def finish(self, docname: str) -> None:
        if docname not in self.todo or docname in self.done:
            return
        now = time.perf_counter()
        self.done[docname] = now - self.t_page
        if self.lane:  # lanes share one terminal: a whole line per page, and only pages with cells
            if self.estimates.get(docname) != 0.0:
                self._write(f"  lane {self.lane}: {docname} {self.done[docname]:.1f} s "
                            f"(elapsed {clock(now - self.t0)})\n")
            self._save()
            return
        left = self.time_left()
        tail = "" if left is None or left < 0.5 else f", about {clock(left)} left"
        self._write(f" {self.done[docname]:.1f} s (elapsed {clock(now - self.t0)}{tail})\n")
        self._save()

    def time_left(self) -> float | None:
        """Seconds the remaining pages should take; ``None`` once every page is done."""
        remaining = [d for d in self.todo if d not in self.done]
        if not remaining:
            return None
        # a page with no estimate of its own counts as the mean page with cells: estimated, else measured so far
        known = [s for d, s in self.estimates.items() if d in self.todo and s > 0] \
            or [s for d, s in self.done.items() if self.estimates.get(d) != 0.0]
        typical = sum(known) / len(known) if known else 0.0
        return sum(self.estimates.get(d, typical) for d in remaining)

    def _save(self) -> None:
        if self.record is None:
            return
        try:
            seen = json.loads(self.record.read_text()) if self.record.is_file() else {}
        except (OSError, ValueError):
            seen = {}
        seen.update(self.done)
        try:
            self.record.parent.mkdir(parents=True, exist_ok=True)
            self.record.write_text(json.dumps(seen, indent=1))
        except OSError:  # an estimate for next time is not worth failing the build over
            pass


def setup(app):
    record = os.environ.get("SEQLAB_BOOK_TIMINGS")
    progress = Progress(json.loads(os.environ.get("SEQLAB_BOOK_ESTIMATES") or "{}"),
                        Path(record) if record else None, lane=os.environ.get("SEQLAB_BOOK_LANE") or None)

    def begin(app, env, docnames):
        # the chapter's pages: those in folders (the guide and the reference) execute nothing and read in seconds
        pages = [d for d in docnames if "/" not in d]
        progress.begin(pages, {d: Path(env.doc2path(d)).read_text(encoding="utf-8") for d in pages})

    app.connect("env-before-read-docs", begin)
    app.connect("source-read", lambda app, docname, source: progress.start(docname))
    app.connect("doctree-read", lambda app, doctree: progress.finish(app.env.docname))
    return {"parallel_read_safe": False, "parallel_write_safe": True}
