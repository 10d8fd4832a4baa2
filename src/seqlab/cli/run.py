"""``seqlab list`` and ``seqlab run``: the chapter's sections as tables, notes and figures (text or JSON)."""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import shlex
import shutil
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from ..files import folder_lock
from ._common import check_output_dir, int_at_least

__all__ = ["add_commands", "result_to_dict", "jsonable"]


def jsonable(v):
    """One table cell as a JSON value: numbers at full precision, dates as ISO 8601, NaN and NaT as null."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, np.float32):
        v = float(str(v))  # float32's shortest round-tripping decimal (0.304, not 0.30399999...)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if math.isfinite(v) else None
    import pandas as pd

    if v is pd.NaT or (isinstance(v, np.datetime64) and np.isnat(v)):
        return None
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):  # pd.Timestamp is a datetime
        return v.isoformat()
    if isinstance(v, (pd.Timedelta, dt.timedelta)):
        return pd.Timedelta(v).isoformat()
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return [jsonable(x) for x in v]
    raise TypeError(f"no JSON form for a table cell of type {type(v).__name__}")


def _records(df) -> list[dict]:
    cols = [str(c) for c in df.columns]
    return [{c: jsonable(v) for c, v in zip(cols, row)} for row in df.itertuples(index=False, name=None)]


def result_to_dict(res) -> dict:
    """The JSON contract: section, title, tables (name -> list of rows), figures, notes, claims (name, holds,
    required, evidence: the verdicts the page's sentences are chosen by), seconds."""
    return {"section": res.section, "title": res.title, "tables": {n: _records(df) for n, df in res.tables.items()},
            "figures": [str(p) for p in res.figures], "notes": list(res.notes),
            "claims": [dict(c) for c in getattr(res, "claims", [])], "seconds": res.seconds}


def _width() -> int:
    """The terminal's width ($COLUMNS first; 80 when stdout is not a terminal), at least 40."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def _table_text(df, width: int) -> str:
    """``df`` as text no wider than ``width``: columns that do not fit go to further blocks below, long cells are
    cut short with '...' (``--json`` has every cell in full)."""
    import pandas as pd

    with pd.option_context("display.max_columns", 20, "display.max_rows", 30, "display.precision", 4):
        text = df.to_string(index=False, max_rows=24, line_width=width, max_colwidth=max(12, width // 2))
    # a single column wider than the line (a long header) is the one thing line_width cannot split
    return "\n".join(line if len(line) <= width else line[: width - 3] + "..." for line in text.splitlines())


def _shown(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, float):
        return format(value, ".4g")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    return str(value)


def _claim_text(c: dict) -> str:
    """``name = true (required): key=value, ...``: a verdict and its numbers, rounded for display."""
    evidence = ", ".join(f"{k}={_shown(v)}" for k, v in c["evidence"].items())
    return (f"{c['name']} = {_shown(c['holds'])}{' (required)' if c['required'] else ''}"
            + (f": {evidence}" if evidence else ""))


def _print_text(res, out=None, width: int | None = None) -> None:
    out = sys.stdout if out is None else out
    width = _width() if width is None else width
    head = f"§{res.section} {res.title}"
    tail = f"  ({res.seconds:.1f} s)"
    if len(head) + len(tail) > width:
        head = head[: max(0, width - len(tail) - 3)] + "..."
    print(f"\n{head}{tail}", file=out)
    for name, df in res.tables.items():
        print(f"\n  [{name}]", file=out)
        print(textwrap.indent(_table_text(df, width - 2), "  "), file=out)
    for note in res.notes:
        print(textwrap.fill(note, width, initial_indent="  note: ", subsequent_indent="    ",
                            break_on_hyphens=False), file=out)
    for c in getattr(res, "claims", []):
        print(textwrap.fill(_claim_text(c), width, initial_indent="  claim: ", subsequent_indent="    ",
                            break_on_hyphens=False), file=out)
    for f in res.figures:
        print(f"  figure: {f}", file=out)  # a path is not wrapped: it must stay one piece to be copied


def _cmd_list(args) -> int:
    from ..chapter import registry

    for sid, entry in registry().items():
        print(f"{sid:<8} {entry.title}")
    return 0


#: said once, after the tables, when a run computed no figure files because no --out was given
FIGURES_NOT_WRITTEN = "figures not written; pass --out DIR to write them"


def _run_into(out, sid: str, args, progress):
    """One section with its figures written into ``out`` as one complete set (an interrupted section writes none)."""
    from ..chapter import run_section
    from ..files import OutputSet

    outputs = OutputSet(out, shlex.join(["seqlab", *args.argv]))
    try:
        with outputs:
            res = run_section(sid, outputs.staging, seed=args.seed, figures=True, progress=progress)
            outputs.commit()
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"in §{sid}: {outputs.fate()}") from None
    res.figures = [outputs.final(p) for p in res.figures]
    return res


def _run_sections(ids, args, out, figures, progress):
    """Each section in turn, its text printed as it finishes; returns the results and the start time."""
    from ..chapter import run_section
    from ..chapter.base import run_section_once
    from ..results import results_dir

    results, t0 = [], time.perf_counter()
    for sid in ids:
        # with --json, stdout carries exactly one JSON object: anything a section prints goes to stderr
        with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
            if not figures and args.seed is None and results_dir() is not None:
                res = run_section_once(sid)  # a result store is set: a section that ran is read back
            elif figures:
                res = _run_into(out, sid, args, progress)
            else:
                res = run_section(sid, None, seed=args.seed, figures=False, progress=progress)
        results.append(res)
        if not args.json:
            _print_text(res)
            sys.stdout.flush()
    return results, t0


def _cmd_run(args) -> int:
    from ..chapter import Progress, get_section, registry

    ids = list(registry()) if args.section == "all" else [get_section(args.section).id]
    # no --out: no figures at all, rather than files in a temporary folder that nobody removes
    out = check_output_dir(args.out) if args.out else None
    figures = out is not None and not args.no_figures
    progress = Progress(sys.stderr)  # slow steps, on stderr: stdout stays the tables (or the one JSON object)
    # --out is held from the start: a second writer is refused at once, not after a section's work
    with folder_lock(out, shlex.join(["seqlab", *args.argv])) if out is not None else contextlib.nullcontext():
        results, t0 = _run_sections(ids, args, out, figures, progress)
    total = time.perf_counter() - t0
    if not args.json and out is None and not args.no_figures:
        print(f"\n{FIGURES_NOT_WRITTEN}")
    if args.json:
        payload = result_to_dict(results[0]) if len(results) == 1 else {
            "sections": [result_to_dict(r) for r in results], "seconds": total}
        json.dump(payload, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    elif len(results) > 1:
        print("\nPer-section seconds:")
        for r in results:
            print(f"  {r.section:<8} {r.seconds:7.2f}  {r.title}")
        print(f"  {'total':<8} {total:7.2f}")
    return 0


#: ``--seed`` shifts every seed of a section by the same amount; this bound keeps the shifted seeds valid
_SEED_LIMIT = 2 ** 62


def add_commands(sub) -> None:
    sub.add_parser("list", help="every section id with its title").set_defaults(func=_cmd_list)
    r = sub.add_parser("run", help="run one section (or 'all')")
    r.add_argument("section", help="section id such as 14.50.2, or 'all'")
    r.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    r.add_argument("--out", help="folder to write the figures to (default: none, and no figure is written)")
    r.add_argument("--seed", type=int_at_least(0, _SEED_LIMIT),
                   help="replace the chapter's seed(s); shifts every seed by the same amount (default: the chapter's seeds)")
    r.add_argument("--no-figures", action="store_true", help="compute tables only")
    r.set_defaults(func=_cmd_run)


