"""Two build reports side by side: did a change to the pages or the claim sources change what a reader reads?

    python -m seqlab.book.compare BEFORE/build_report.json AFTER/build_report.json

For every claim of the first report it checks that the second has it on the same page with
the same verdict (``holds``, ``required``), the same sentence (whitespace aside) and the same
value for every piece of evidence the first recorded (new evidence may be added). For every
glued number it checks the same text; a sentence glued under a claim's name in the first (the
old way) is compared with that claim's sentence in the second. It prints each difference and a
last line with the counts, and exits 1 when anything differs.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

__all__ = ["compare", "main"]


def _same(a, b, rel: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=rel, abs_tol=0))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], rel) for k in a)
    return a == b


def _squash(text) -> str:
    return " ".join(str(text).split())


def compare(before: dict, after: dict, rel: float = 0.0) -> tuple[list[str], dict]:
    """The differences (one line each) and the counts of what was compared."""
    diffs = []
    new = {(c["page"], c["name"]): c for c in after.get("claims", [])}
    sentences = {name: c["text"] for (_, name), c in new.items()}
    for c in before.get("claims", []):
        key = (c["page"], c["name"])
        where = f"{c['page']}: claim {c['name']!r}"
        if key not in new:
            diffs.append(f"{where} is gone")
            continue
        n = new[key]
        for field in ("holds", "required"):
            if c[field] != n[field]:
                diffs.append(f"{where}: {field} was {c[field]}, is {n[field]}")
        if _squash(c["text"]) != _squash(n["text"]):
            diffs.append(f"{where}: the sentence was {_squash(c['text'])!r}, is {_squash(n['text'])!r}")
        for k, v in c.get("evidence", {}).items():
            if k not in n.get("evidence", {}):
                diffs.append(f"{where}: evidence {k!r} is gone")
            elif not _same(v, n["evidence"][k], rel):
                diffs.append(f"{where}: evidence {k!r} was {v!r}, is {n['evidence'][k]!r}")
    numbers = 0
    for page, values in before.get("glued", {}).items():
        later = after.get("glued", {}).get(page, {})
        for name, text in values.items():
            numbers += 1
            now = later.get(name, sentences.get(name))
            if now is None:
                diffs.append(f"{page}: glued {name!r} is gone")
            elif _squash(text) != _squash(now):
                diffs.append(f"{page}: glued {name!r} was {_squash(text)!r}, is {_squash(now)!r}")
    return diffs, {"claims": len(before.get("claims", [])), "numbers": numbers}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m seqlab.book.compare", description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rel", type=float, default=0.0, help="relative tolerance for evidence numbers (default exact)")
    args = ap.parse_args(argv)
    reports = []
    for path in (args.before, args.after):
        try:
            reports.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as e:
            print(f"seqlab: error: {path}: not a readable build report ({e})", file=sys.stderr)
            return 2
    diffs, counts = compare(*reports, rel=args.rel)
    for line in diffs:
        print(line)
    print(f"{counts['claims']} claims and {counts['numbers']} glued numbers compared: "
          f"{len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
