"""What each forecasting entry costs to fit: CPU seconds on M3 monthly's official hold-out (``forecast_cost``).

§14.63 sets accuracy beside cost. Its stored training seconds are wall-clock times of jobs
that shared the machine, so they carry whatever load it had; this set measures the CPU time
(``time.process_time``: every thread of this process, one torch thread) of fitting and
forecasting each entry once on the official hold-out, in ``ROUNDS`` rounds so that every
number comes with its spread:

* each classical model alone (statsforecast in this process, ``n_jobs=1``);
* the GRU and the Transformer, as the comparison trains them (early stopping included);
* N-BEATS, round 3's ensemble as §14.63 chose it (``steps`` steps, ``members`` members):
  each member is timed for ``SHORT`` and for ``LONG`` steps, the difference gives its cost
  per step and the rest its fixed cost, and the ensemble costs the sum over members of
  fixed cost plus ``steps`` times the cost per step. Training all of it takes about twenty
  minutes; the two short runs take seconds, and a step costs the same at step 80 as at 2,500.

``HEAVY_EVAL=1`` measures again (on a quiet machine: CPU time leaves out waiting for a core,
not the slowdown of sharing its caches); otherwise the stored set is verified and loaded.
"""
from __future__ import annotations

import time

import pandas as pd

from ..store import heavy_eval, read_artifact_csv, read_artifact_json, verify_artifacts, write_artifacts

__all__ = ["NAME", "ROUNDS", "measure", "forecast_cost"]

NAME = "forecast_cost"
DATASET, KEY = "M3 monthly", "M3/monthly"
ROUNDS = 3
SHORT, LONG = 20, 80


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _chosen() -> tuple[int, int]:
    """Round 3's step count and ensemble size on M3 monthly, as stored by §14.63's comparison."""
    from .forecast.settings import NAME as FORECAST

    r = read_artifact_csv(FORECAST, "nbeats_rounds.csv")
    r3 = r[(r.dataset == DATASET) & (r["round"] == 3)].iloc[0]
    return int(r3.steps), int(r3.members)


def config() -> dict:
    from .forecast.settings import CLASSICAL_MODELS, NEURAL_CONFIG
    from .forecast_fresh import round3_plan

    steps, members = _chosen()
    return dict(dataset=DATASET, rounds=ROUNDS, short=SHORT, long=LONG, classical=list(CLASSICAL_MODELS),
                neural=repr(NEURAL_CONFIG), nbeats=round3_plan().describe(), steps=steps, members=members,
                clock="process_time", threads=1)


def measure(rounds: int = ROUNDS, log=print) -> dict[str, pd.DataFrame]:
    """The CPU seconds of every entry in each round: tables ``entries`` (round, entry, cpu_seconds) and
    ``nbeats_members`` (round, member, short_seconds, long_seconds)."""
    from ..forecast.core import Forecaster
    from ..forecast.neural import NeuralForecaster
    from ..parallel import call_single_threaded
    from ..threads import single_threaded
    from .forecast.sets import _load
    from .forecast.settings import CLASSICAL_MODELS, NEURAL, NEURAL_CONFIG
    from .forecast_fresh import round3_plan
    from .forecast_fresh.run import _holdout_window

    src = _load(KEY)
    window = _holdout_window(DATASET, KEY)[DATASET]
    frame, h, season = window.win[0].frame, window.h, window.season
    steps, size = _chosen()
    ensemble = round3_plan().forecaster(DATASET, season, steps, size=size)
    rows, member_rows = [], []
    for r in range(rounds):
        with single_threaded():
            for m in CLASSICAL_MODELS:
                fc = Forecaster([m], freq=src.freq, season_length=src.season, n_jobs=1)
                rows.append(dict(round=r, entry=m, cpu_seconds=_cpu(lambda: fc.forecast(src.h, src.train))))
            for name, arch in NEURAL.items():
                if arch == "nbeats":
                    continue
                net = NeuralForecaster(arch, name=name, config=NEURAL_CONFIG, season_length=season, device="cpu")
                rows.append(dict(round=r, entry=name, cpu_seconds=_cpu(lambda: net.fit(frame, h).predict(frame, h))))
        for k in range(size):
            (fn_s, a_s), = ensemble.member_jobs(frame, h, (SHORT,), members=[k])
            (fn_l, a_l), = ensemble.member_jobs(frame, h, (LONG,), members=[k])
            member_rows.append(dict(round=r, member=k, short_seconds=_cpu(lambda: call_single_threaded(fn_s, a_s)),
                                    long_seconds=_cpu(lambda: call_single_threaded(fn_l, a_l))))
        log(f"round {r + 1} of {rounds} timed")
    return {"entries": pd.DataFrame(rows), "nbeats_members": pd.DataFrame(member_rows)}


def nbeats_cost(members: pd.DataFrame, steps: int) -> pd.DataFrame:
    """Per round: the ensemble's CPU seconds for ``steps`` steps, from each member's two timed runs."""
    per_step = (members.long_seconds - members.short_seconds) / (LONG - SHORT)
    fixed = members.short_seconds - SHORT * per_step
    each = members.assign(cpu_seconds=fixed + steps * per_step)
    return each.groupby("round", as_index=False).cpu_seconds.sum().assign(entry="N-BEATS")


def forecast_cost(root=None) -> dict:
    """The stored measurement (measured again under ``HEAVY_EVAL=1``): ``entries`` with N-BEATS's ensemble added,
    ``nbeats_members`` as timed, the ``machine`` it ran on and ``steps`` / ``members`` of the ensemble."""
    from ..machine import describe

    cfg = config()
    if heavy_eval():
        import json

        t0 = time.perf_counter()
        tables = measure()
        meta = {"machine": describe(), "measured_at": pd.Timestamp.now(tz="UTC").isoformat(),
                "seconds": time.perf_counter() - t0}
        files = {f"{t}.csv": df.to_csv(index=False, float_format="%.17g").encode() for t, df in tables.items()}
        files["machine.json"] = json.dumps(meta, indent=1, sort_keys=True).encode()
        write_artifacts(NAME, files, cfg, root)
    verify_artifacts(NAME, cfg, root)
    entries = read_artifact_csv(NAME, "entries.csv", root)
    members = read_artifact_csv(NAME, "nbeats_members.csv", root)
    both = pd.concat([entries, nbeats_cost(members, cfg["steps"])], ignore_index=True)
    return dict(entries=both, nbeats_members=members, machine=read_artifact_json(NAME, "machine.json", root),
                steps=cfg["steps"], members=cfg["members"])


def cost_summary(entries: pd.DataFrame, combinations: dict) -> pd.DataFrame:
    """Per entry: median, lowest and highest CPU seconds over the rounds; a combination costs the sum of its
    members in each round (``combinations``: name -> member names)."""
    wide = entries.pivot(index="round", columns="entry", values="cpu_seconds")
    for name, parts in combinations.items():
        if all(p in wide for p in parts):
            wide[name] = wide[list(parts)].sum(axis=1)
    return pd.DataFrame({"entry": wide.columns, "cpu_seconds": wide.median().to_numpy(),
                         "cpu_lo": wide.min().to_numpy(), "cpu_hi": wide.max().to_numpy(),
                         "rounds": wide.notna().sum().to_numpy()}).reset_index(drop=True)


if __name__ == "__main__":  # pragma: no cover - the measurement itself
    import os

    os.environ["HEAVY_EVAL"] = "1"
    out = forecast_cost()
    print(out["entries"].groupby("entry").cpu_seconds.agg(["median", "min", "max"]))
