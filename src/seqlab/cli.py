"""The ``seqlab`` command: list and run the chapter's sections."""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import __version__


class UsageError(Exception):
    """A bad command line: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage and exits; we want one line
        raise UsageError(message)


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.float32):
        v = float(str(v))  # shortest decimal that round-trips in float32: 0.304, not 0.30399999
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def _records(df) -> list[dict]:
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == np.float32:  # keep float32's own shortest decimals through the float64 JSON
            df[c] = [float(str(x)) for x in df[c].to_numpy()]
    return [{str(k): _jsonable(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def result_to_dict(res) -> dict:
    tables = {name: _records(df) for name, df in res.tables.items()}
    return {"section": res.section, "title": res.title, "tables": tables, "figures": [str(p) for p in res.figures],
            "notes": list(res.notes), "seconds": round(res.seconds, 3)}


def _print_text(res, out=None) -> None:
    import pandas as pd

    out = sys.stdout if out is None else out
    print(f"\n§{res.section} {res.title}  ({res.seconds:.1f} s)", file=out)
    with pd.option_context("display.width", 140, "display.max_columns", 20, "display.max_rows", 30):
        for name, df in res.tables.items():
            print(f"\n  [{name}]", file=out)
            print("  " + df.to_string(index=False, max_rows=24).replace("\n", "\n  "), file=out)
    for note in res.notes:
        print(f"  note: {note}", file=out)
    for f in res.figures:
        print(f"  figure: {f}", file=out)


def _cmd_list(args) -> int:
    from .chapter import registry

    for sid, entry in registry().items():
        print(f"{sid:<8} {entry.title}")
    return 0


def _cmd_run(args) -> int:
    from .chapter import get_section, registry, run_section

    ids = list(registry()) if args.section == "all" else [get_section(args.section).id]
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="seqlab-"))
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    results, t0 = [], time.perf_counter()
    for sid in ids:
        res = run_section(sid, out, seed=args.seed, figures=not args.no_figures)
        results.append(res)
        if not args.json:
            _print_text(res)
            sys.stdout.flush()
    total = time.perf_counter() - t0
    if args.json:
        payload = result_to_dict(results[0]) if len(results) == 1 else {
            "sections": [result_to_dict(r) for r in results], "seconds": round(total, 3)}
        json.dump(payload, sys.stdout)
        sys.stdout.write("\n")
    elif len(results) > 1:
        print("\nPer-section seconds:")
        for r in results:
            print(f"  {r.section:<8} {r.seconds:7.2f}  {r.title}")
        print(f"  {'total':<8} {total:7.2f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="seqlab", description="Companion to Chapter 14, Part 3: recurrence and attention.")
    p.add_argument("--version", action="version", version=f"seqlab {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("list", help="every section id with its title").set_defaults(func=_cmd_list)
    r = sub.add_parser("run", help="run one section (or 'all')")
    r.add_argument("section", help="section id such as 14.50.2, or 'all'")
    r.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    r.add_argument("--out", help="folder for figures (default: a new temporary folder)")
    r.add_argument("--seed", type=int, help="replace the chapter's seed(s); shifts every seed by the same amount")
    r.add_argument("--no-figures", action="store_true", help="compute tables only")
    r.set_defaults(func=_cmd_run)
    return p


def main(argv: list[str] | None = None) -> int:
    from .chapter import UnknownSectionError

    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError("missing command; try `seqlab list` or `seqlab run SECTION`")
        return args.func(args)
    except (UsageError, UnknownSectionError, ValueError, FileNotFoundError, OSError) as e:
        print(f"seqlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("seqlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
