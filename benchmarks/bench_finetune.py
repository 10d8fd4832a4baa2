"""Does fine-tuning pay? A run trained on tinyshakespeare, fine-tuned on another text, against the same model
trained from scratch on that text for the same seconds; both scored by ``seqlab lm eval`` on the other text's
held-out 10% (the split lm train never trains on).

    python benchmarks/bench_finetune.py --text OTHER.txt [--base-seconds 600] [--seconds 60] [--work DIR]

Everything runs through the CLI a user has: ``lm train --schedule-seconds`` (the cosine fitted to that many
seconds of training, evaluations not counted), ``lm train --init-from``, ``lm eval --split val --json``. The base run is kept in ``--work`` and
reused by a second call. Run it alone: a training beside other work gets fewer steps in its seconds. Prints
one JSON line per entry and a last line with the difference.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def seqlab(*args: str) -> str:
    p = subprocess.run([sys.executable, "-m", "seqlab", *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"seqlab {' '.join(args)} failed: {p.stderr.strip()}")
    return p.stdout


def score(checkpoint: Path, text: str) -> dict:
    return json.loads(seqlab("lm", "eval", "--checkpoint", str(checkpoint), "--text", text, "--split", "val",
                             "--json"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--text", required=True, help="the other text (UTF-8)")
    ap.add_argument("--base-seconds", type=float, default=600.0, help="training seconds of the base run")
    ap.add_argument("--seconds", type=float, default=60.0, help="training seconds of each run on the other text")
    ap.add_argument("--work", default=None, help="folder for the runs (default: a new temporary folder)")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="seqlab-finetune-"))
    base = work / "base"
    started = time.perf_counter()
    # the chapter's GPT with its cosine fitted to the seconds (resumed, and trained no further, if it is there)
    seqlab("lm", "train", "--out", str(base), "--schedule-seconds", f"{args.base_seconds:g}")
    entries = {"fine-tuned": ["--init-from", str(base)], "from scratch": []}
    results = {}
    for name, extra in entries.items():
        out = work / name.replace(" ", "_")
        seqlab("lm", "train", "--text", args.text, "--out", str(out), "--schedule-seconds", f"{args.seconds:g}",
               "--restart", *extra)
        results[name] = score(out, args.text)
        print(json.dumps({"entry": name, "seconds": args.seconds, **results[name]}), flush=True)
    base_on_other = score(base, args.text)
    print(json.dumps({"entry": "base, not fine-tuned", **base_on_other}), flush=True)
    gain = results["from scratch"]["bits_per_char"] - results["fine-tuned"]["bits_per_char"]
    print(f"fine-tuned {results['fine-tuned']['bits_per_char']:.4f} against from scratch "
          f"{results['from scratch']['bits_per_char']:.4f} bits/char on the held-out 10% of {args.text} "
          f"(fine-tuning {'ahead' if gain > 0 else 'behind'} by {abs(gain):.4f}); base {args.base_seconds:g} s, "
          f"{args.seconds:g} s each after; {time.perf_counter() - started:.0f} s wall in all on "
          f"{platform.processor() or platform.machine()}")


if __name__ == "__main__":
    main()
