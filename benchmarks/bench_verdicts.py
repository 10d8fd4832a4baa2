"""Do the chapter's sentences say the same thing on a quiet machine and on a busy one?

Builds the whole chapter twice from cold caches, first with nothing else running, then with
CPU-bound processes beside it (one per core by default, each a busy loop), and compares the two
build reports claim by claim: every sentence that interprets a number is a claim, so the same
verdict in every claim means the same sentence on the page. Prints each build's time, every
claim whose verdict or sentence differs, and the verdict.

Sentences that read a stored timing reference cannot change with the load; sentences that set
"on this machine" beside the reference may, and this is the check that they do not.

Run alone (about 12 minutes on two cores): python benchmarks/bench_verdicts.py [--burners N]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _burn(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def build(root: Path, label: str) -> tuple[dict, float]:
    out, cache = root / label / "site", root / label / "cache"
    env = {k: v for k, v in os.environ.items() if k != "SEQLAB_RESULTS"}
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "seqlab", "chapter", "build", "--out", str(out), "--cache", str(cache)],
                       env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"the {label} build failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return json.loads((out / "build_report.json").read_text(encoding="utf-8")), seconds


def claims(report: dict) -> dict[tuple[str, str], dict]:
    return {(c["page"], c["name"]): c for c in report["claims"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 1,
                    help="CPU-bound processes beside the busy build (default: one per core)")
    ap.add_argument("--keep", metavar="DIR", help="build into DIR and keep both sites (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="seqlab-verdicts-") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        quiet, t_quiet = build(root, "quiet")
        stop = mp.Event()
        burners = [mp.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.burners)]
        for b in burners:
            b.start()
        try:
            busy, t_busy = build(root, "busy")
        finally:
            stop.set()
            for b in burners:
                b.join()
    a, b = claims(quiet), claims(busy)
    print(f"quiet build: {t_quiet:.0f} s; busy build ({args.burners} CPU-bound processes beside it): {t_busy:.0f} s "
          f"({t_busy / t_quiet:.2f}x the quiet build)")
    only = sorted(set(a) ^ set(b))
    for key in only:
        print(f"  only in the {'quiet' if key in a else 'busy'} build: {key[0]} {key[1]}")
    both = sorted(set(a) & set(b))
    verdicts = [k for k in both if a[k]["holds"] != b[k]["holds"]]
    sentences = [k for k in both if a[k]["holds"] == b[k]["holds"] and a[k]["text"] != b[k]["text"]]
    for key in verdicts:
        print(f"  verdict differs: {key[0]} {key[1]}: quiet {a[key]['holds']} ({a[key]['text']!r}) / "
              f"busy {b[key]['holds']} ({b[key]['text']!r})")
    for key in sentences:
        print(f"  same verdict, numbers in the sentence differ: {key[0]} {key[1]}:\n"
              f"    quiet: {a[key]['text']}\n    busy:  {b[key]['text']}")
    failed = [k for k in both if b[k]["required"] and not b[k]["holds"]] + \
             [k for k in both if a[k]["required"] and not a[k]["holds"]]
    same = len(both) - len(verdicts)
    print(f"claims: {len(a)} quiet, {len(b)} busy; same verdict in {same} of {len(both)}; "
          f"{len(sentences)} sentences with the same verdict quote different numbers")
    ok = not verdicts and not only and not failed
    print(f"verdict: {'the same verdict in every claim' if ok else 'the builds disagree'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
