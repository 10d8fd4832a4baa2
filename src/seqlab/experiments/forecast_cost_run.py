"""A stored run of ``benchmarks/bench_forecast_cost.py`` (``forecast_cost_side_by_side``): every entry fitted and
forecast on M3 monthly's official hold-out in one run, on one machine, with one torch thread.

Unlike :mod:`seqlab.experiments.forecast_cost`, which times §14.63's own entries (round 3's twelve-member N-BEATS)
in rounds, this is the benchmark's table: seqlab's default N-BEATS and its hybrid with Combination over three
seeds, the classical models, and neuralforecast's NBEATS and NHITS and mlforecast's LightGBM at their defaults,
each scored and timed in the same process. The peers need the ``peers`` extra and the run takes about 20 minutes
alone, so ``HEAVY_EVAL`` does not repeat it: ``python benchmarks/bench_forecast_cost.py --sets "M3 monthly"
--peers --store`` measures and stores it again, and ``--store-json PATH`` stores an earlier run's ``--json``.
"""
from __future__ import annotations

import json

import pandas as pd

from ..store import ArtifactError, read_artifact_csv, read_artifact_json, verify_artifacts, write_artifacts

__all__ = ["NAME", "SETS", "run_config", "store_run", "stored_run"]

NAME = "forecast_cost_side_by_side"
#: the data sets of the stored run
SETS = ("M3 monthly",)
STORE_HINT = ('store it again with python benchmarks/bench_forecast_cost.py --sets "M3 monthly" --peers --store '
              "(the peers extra, about 20 minutes alone)")
#: the columns every stored row has (the reference row has no interval against itself)
COLUMNS = ("dataset", "entry", "seeds", "mase", "mase_low", "mase_high", "cpu_s", "wall_s", "series",
           "gain_per_kcpu_s")


def run_config(sets=SETS, threads: int = 1, peers: bool = True) -> dict:
    """Every setting the stored run depends on besides the machine: the sets, the thread count, whether the peers
    ran, and the default N-BEATS member it trained (a changed default makes the stored run stale)."""
    from ..forecast.nbeats.forecaster import DEFAULT_MEMBERS
    from ..forecast.nbeats.training import FAST_MEMBER

    return {"bench": "benchmarks/bench_forecast_cost.py", "sets": list(sets), "torch_threads": int(threads),
            "peers": bool(peers), "neural_seeds": [1, 2, 3], "nbeats_member": FAST_MEMBER.record(),
            "nbeats_members": DEFAULT_MEMBERS, "nbeats_dtype": "bfloat16 where native, else float32"}


def store_run(run: dict, measured_at: str, root=None):
    """Write a run (the benchmark's ``--json`` content: ``rows`` and the machine's facts) as the stored set.

    Raises :class:`~seqlab.errors.ArtifactError` for a smoke run, a run of other sets or thread count, or rows
    without the benchmark's columns."""
    if not isinstance(run, dict) or not isinstance(run.get("rows", []), list):
        raise ArtifactError("a run is the JSON object bench_forecast_cost.py --json writes, with a list of rows")
    rows = pd.DataFrame(run.get("rows") or [])
    missing = [c for c in COLUMNS if c not in rows.columns]
    if missing:
        raise ArtifactError(f"the run's rows lack {', '.join(missing)}: not a bench_forecast_cost.py --json")
    if run.get("complete") is False:
        raise ArtifactError("an unfinished run (interrupted; --resume finishes it) is not stored")
    if run.get("smoke"):
        raise ArtifactError("a smoke run (--series or --max-steps) is not the benchmark; it is not stored")
    sets = tuple(dict.fromkeys(rows["dataset"]))
    peers = bool(rows["entry"].str.startswith("neuralforecast").any())
    config = run_config(sets, run.get("threads", 0), peers)
    if sets != SETS or config["torch_threads"] != 1 or not peers:
        raise ArtifactError(f"the stored run is {', '.join(SETS)} with one thread and the peers; this run has "
                            f"{', '.join(sets)}, {config['torch_threads']} thread(s), peers {peers}")
    meta = {k: run[k] for k in ("threads", "cpus", "bfloat16", "load_average", "torch", "machine", "segments")
            if k in run}
    meta["measured_at"] = measured_at
    files = {"rows.csv": rows.to_csv(index=False, float_format="%.17g").encode(),
             "run.json": json.dumps(meta, indent=1, sort_keys=True).encode()}
    return write_artifacts(NAME, files, config, root)


def stored_run(root=None) -> tuple[pd.DataFrame, dict]:
    """The stored run, verified: its rows (one per entry) and the machine's facts (``measured_at`` among them)."""
    verify_artifacts(NAME, run_config(), root, hint=STORE_HINT)
    return read_artifact_csv(NAME, "rows.csv", root), read_artifact_json(NAME, "run.json", root)
