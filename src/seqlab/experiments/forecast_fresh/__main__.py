"""Run the fresh test's trainings: ``python -m seqlab.experiments.forecast_fresh [SET ...]``."""
import argparse
import sys
import time

from ...errors import SeqlabError
from .run import FRESH_SETS, SEEDS_SET, run_fresh_set
from .verdicts import stored_sets


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m seqlab.experiments.forecast_fresh",
                                description="Train and store sets of the fresh test (docs/forecast-fresh-sets.md).")
    p.add_argument("sets", nargs="*", help=f"any of: {SEEDS_SET}, {', '.join(FRESH_SETS)} (default: those not "
                   "stored yet, in that order)")
    p.add_argument("--workers", type=int, default=None, help="worker processes for the trainings (default: 2)")
    a = p.parse_args(argv)
    done = set(stored_sets())
    todo = a.sets or [k for k in [SEEDS_SET, *FRESH_SETS] if k not in done]
    try:
        for label in todo:
            run_fresh_set(label, workers=a.workers,
                          log=lambda m: print(time.strftime("%H:%M:%S"), m, flush=True))
    except SeqlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
