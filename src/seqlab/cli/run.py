"""``seqlab list`` and ``seqlab run``: the chapter's sections as tables, notes and figures (text or JSON)."""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

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
    """The JSON contract: section, title, tables (name -> list of rows), figures, notes, seconds."""
    return {"section": res.section, "title": res.title, "tables": {n: _records(df) for n, df in res.tables.items()},
            "figures": [str(p) for p in res.figures], "notes": list(res.notes), "seconds": res.seconds}


def _print_text(res, out=None) -> None:
    import pandas as pd

    out = sys.stdout if out is None else out
    print(f"\n§{res.section} {res.title}  ({res.seconds:.1f} s)", file=out)
    with pd.option_context("display.width", 140, "display.max_columns", 20, "display.max_rows", 30,
                           "display.precision", 4):
        for name, df in res.tables.items():
            print(f"\n  [{name}]", file=out)
            print("  " + df.to_string(index=False, max_rows=24).replace("\n", "\n  "), file=out)
    for note in res.notes:
        print(f"  note: {note}", file=out)
    for f in res.figures:
        print(f"  figure: {f}", file=out)


def _cmd_list(args) -> int:
    from ..chapter import registry

    for sid, entry in registry().items():
        print(f"{sid:<8} {entry.title}")
    return 0


def _cmd_run(args) -> int:
    from ..chapter import get_section, registry, run_section

    ids = list(registry()) if args.section == "all" else [get_section(args.section).id]
    out = check_output_dir(args.out) if args.out else Path(tempfile.mkdtemp(prefix="seqlab-"))
    results, t0 = [], time.perf_counter()
    for sid in ids:
        # with --json, stdout carries exactly one JSON object: anything a section prints goes to stderr
        with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
            res = run_section(sid, out, seed=args.seed, figures=not args.no_figures)
        results.append(res)
        if not args.json:
            _print_text(res)
            sys.stdout.flush()
    total = time.perf_counter() - t0
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
    r.add_argument("--out", help="folder for figures (default: a new temporary folder)")
    r.add_argument("--seed", type=int_at_least(0, _SEED_LIMIT),
                   help="replace the chapter's seed(s); shifts every seed by the same amount")
    r.add_argument("--no-figures", action="store_true", help="compute tables only")
    r.set_defaults(func=_cmd_run)


