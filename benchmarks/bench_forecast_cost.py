"""Accuracy per CPU-second: every forecasting entry fitted in one run, on one machine, at one thread count.

For each data set's official hold-out (M3 monthly, then the four fresh sets of §14.63: M1 quarterly, M1 monthly,
Tourism quarterly, Tourism monthly), fitted up to the hold-out origin and scored there:

* AutoETS, AutoTheta and Theta, each fitted and timed alone (statsforecast through
  :class:`seqlab.forecast.Forecaster`, ``n_jobs=1``), and Combination, their mean, the reference of every
  comparison, whose seconds are the three fits' together; Naive2, the floor;
* seqlab's default N-BEATS (``NBeatsForecaster.default``: four interpretable members, 2,000 steps, bfloat16 where
  the CPU multiplies it natively) for each of three seeds (``seed=1, 2, 3``: twelve different members), one worker;
  nothing about it was chosen on these hold-outs (its settings come from M3 monthly's validation windows); it
  needed no search of its own beyond that one, whose cost is stated beside the table;
* "N-BEATS + Combination", the pointwise mean of the two;
* with ``--peers`` (the ``peers`` extra): neuralforecast's NBEATS and NHITS at their defaults with
  ``input_size = 2h`` and ``random_seed`` 1, 2, 3, and mlforecast's LightGBM at its defaults on lags 1 to 2 seasons
  of the series differenced at the season (as ``bench_forecast_peers.py`` fits them).

Seconds: process CPU time (user + system of this process and its reaped children) and wall time of fitting and
forecasting; a hybrid counts both parts; a seeded entry's are the mean over its seeds. torch runs on one thread
(``--threads``) so every entry has the same cores. MASE: mean over series; a seeded entry gives the mean over its
seeds with the lowest and highest; its interval against Combination is the paired cluster bootstrap of its
seed-averaged per-series MASE. "gain/kCPU-s" is Naive2's MASE minus the entry's, per 1,000 CPU-seconds.

    python benchmarks/bench_forecast_cost.py [--sets "M3 monthly,M1 monthly"] [--peers] [--json PATH] [--forecasts DIR]
                                             [--series N] [--max-steps N]   # the last two: smoke runs only
    python benchmarks/bench_forecast_cost.py --sets "M3 monthly" --peers --store   # the run §14.63 reads
    python benchmarks/bench_forecast_cost.py --store-json PATH     # store an earlier run's --json instead
    python benchmarks/bench_forecast_cost.py --peers --json run.json --resume   # go on after an interruption

With ``--json`` the file is rewritten after every set, marked unfinished until the last; ``--resume`` continues
such a file with the same settings on the same machine (CPU, cores, torch, bfloat16), skipping its finished sets,
and records each part's start, seconds and load. An unfinished run is never stored.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_forecast_peers import Clock, _neural, _peers, _quiet, _subset

SETS = {"M3 monthly": ("M3", "monthly"), "M1 quarterly": ("M1", "quarterly"), "M1 monthly": ("M1", "monthly"),
        "Tourism quarterly": ("Tourism", "quarterly"), "Tourism monthly": ("Tourism", "monthly")}
CLASSICAL = ["AutoETS", "AutoTheta", "Theta"]
REF, SEEDS = "Combination", (1, 2, 3)


def _lightgbm(train, h, season):
    from lightgbm import LGBMRegressor
    from mlforecast import MLForecast
    from mlforecast.target_transforms import Differences

    mlf = MLForecast(models={"LightGBM": LGBMRegressor(verbosity=-1)}, freq=1, lags=range(1, 2 * season + 1),
                     target_transforms=[Differences([season])])
    with Clock() as c:
        mlf.fit(train)
        pred = mlf.predict(h)
    return pred[["unique_id", "ds", "LightGBM"]], c


def one_set(label: str, args) -> list[dict]:
    """Fit every entry on one set's hold-out; one row per entry (seeded entries summarised over their seeds)."""
    from seqlab.forecast import Forecaster, bootstrap_difference, competition, evaluate, summarize, unit_mase
    from seqlab.forecast.nbeats import NBeatsForecaster

    train, test, season, h = competition(*SETS[label])
    train, test = _subset(train, test, args.series)
    n = train.unique_id.nunique()
    print(f"\n{label}: {n} series, h = {h}, season {season}", flush=True)
    clocks, seeded = {}, {}

    def column(frame, name, c, group=None):
        nonlocal cv
        cv = cv.merge(frame, on=["unique_id", "ds"], how="left", validate="one_to_one")
        clocks[name] = c
        if group:
            seeded.setdefault(group, []).append(name)
        print(f"  {name}: {c.cpu:.1f} CPU s, {c.wall:.1f} wall s", flush=True)

    # statsforecast compiles its models on first use (numba): that one-time cost is paid untimed on three series,
    # so Combination's seconds are its steady cost, the stricter reference for the neural entries
    few = train[train.unique_id.isin(train.unique_id.unique()[:3])]
    Forecaster(CLASSICAL, season_length=season, n_jobs=1).forecast(h, few)
    cv = None
    for m in CLASSICAL:  # each fitted and timed on its own; Combination's seconds are their sum
        with Clock() as c:
            f = Forecaster([m], season_length=season, n_jobs=1).cross_validation(h, train, n_windows=1, test_df=test)
        if cv is None:
            cv, clocks[m] = f, c
            print(f"  {m}: {c.cpu:.1f} CPU s, {c.wall:.1f} wall s", flush=True)
        else:
            column(f[["unique_id", "ds", m]], m, c)
    cv[REF] = cv[CLASSICAL].mean(axis=1)
    clocks[REF] = Clock.sum(*(clocks[m] for m in CLASSICAL))
    with Clock() as c:
        naive2 = Forecaster(["Naive2"], season_length=season).cross_validation(h, train, n_windows=1, test_df=test)
    column(naive2[["unique_id", "ds", "Naive2"]], "Naive2", c)
    for s in SEEDS:
        nb = NBeatsForecaster.default(season, seed=s, max_steps=args.max_steps, device="cpu", workers=1,
                                      name=f"N-BEATS s{s}")
        with Clock() as c:
            f = Forecaster([nb], season_length=season).cross_validation(h, train, n_windows=1, test_df=test)
        column(f[["unique_id", "ds", nb.name]], nb.name, c, "N-BEATS (seqlab default)")
        cv[f"N-BEATS s{s} + {REF}"] = (cv[nb.name] + cv[REF]) / 2
        clocks[f"N-BEATS s{s} + {REF}"] = Clock.sum(c, clocks[REF])
        seeded.setdefault(f"N-BEATS (seqlab default) + {REF}", []).append(f"N-BEATS s{s} + {REF}")
    if args.peers:
        from neuralforecast.models import NBEATS, NHITS

        for cls in (NBEATS, NHITS):
            for s in SEEDS:
                pred, c = _neural(cls, train, h, args.max_steps, seed=s)
                column(pred.rename(columns={cls.__name__: f"{cls.__name__} s{s}"}), f"{cls.__name__} s{s}", c,
                       f"neuralforecast {cls.__name__}")
        pred, c = _lightgbm(train, h, season)
        column(pred, "LightGBM", c, "mlforecast LightGBM")

    if args.forecasts:  # every entry's forecasts beside the actual values, so the table can be recomputed
        Path(args.forecasts).mkdir(parents=True, exist_ok=True)
        cv.to_csv(Path(args.forecasts) / f"{label.replace(' ', '_')}.csv.gz", index=False, float_format="%.17g")
    entries = [m for m in cv.columns if m not in ("unique_id", "ds", "cutoff", "y")]
    err = evaluate(cv, pd.concat([train, test]), season, entries, level=[])
    units = unit_mase(err)
    summary = summarize(err).set_index("model")
    floor = float(summary.loc["Naive2", "mase"])
    groups = {REF: [REF], **{m: [m] for m in CLASSICAL}, "Naive2": ["Naive2"], **seeded}
    rows = []
    for entry, members in groups.items():
        mases = [float(summary.loc[m, "mase"]) for m in members]
        cpu = float(np.mean([clocks[m].cpu for m in members]))
        wall = float(np.mean([clocks[m].wall for m in members]))
        row = dict(dataset=label, entry=entry, seeds=len(members), mase=float(np.mean(mases)), mase_low=min(mases),
                   mase_high=max(mases), cpu_s=cpu, wall_s=wall, series=int(n),
                   gain_per_kcpu_s=(floor - float(np.mean(mases))) / cpu * 1000 if cpu > 0 else None)
        if entry != REF:
            mean_units = units[units.model.isin(members)].groupby(["unique_id", "cutoff"], as_index=False).mase.mean()
            both = pd.concat([mean_units.assign(model=entry), units[units.model == REF]], ignore_index=True)
            b = bootstrap_difference(both, entry, REF)
            row |= dict(diff=b["mean_difference"], ci_low=b["ci_low"], ci_high=b["ci_high"])
        rows.append(row)
    return rows


def _print(rows: list[dict]) -> None:
    head = (f"{'data set':18s} {'entry':40s} {'MASE':>7s} {'[seed range]':>17s} {'vs Combination [95% CI]':>27s} "
            f"{'CPU s':>7s} {'wall s':>7s} {'gain/kCPU-s':>11s}")
    print("\n" + head + "\n" + "-" * len(head))
    for r in rows:
        rng = f"[{r['mase_low']:.4f}, {r['mase_high']:.4f}]" if r["seeds"] > 1 else ""
        diff = f"{r['diff']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]" if "diff" in r else "(reference)"
        gain = "n/a" if r["gain_per_kcpu_s"] is None else f"{r['gain_per_kcpu_s']:.3f}"
        print(f"{r['dataset']:18s} {r['entry']:40s} {r['mase']:7.4f} {rng:>17s} {diff:>27s} {r['cpu_s']:7.1f} "
              f"{r['wall_s']:7.1f} {gain:>11s}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated data sets (default: all five)")
    ap.add_argument("--peers", action="store_true", help="add neuralforecast and mlforecast (the peers extra)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for every entry (default: 1)")
    ap.add_argument("--series", type=int, default=None, help="a deterministic subset of N series (smoke run)")
    ap.add_argument("--max-steps", type=int, default=None, help="every neural entry's steps (smoke run)")
    ap.add_argument("--json", default=None,
                    help="write the rows here, floats at full precision, after every set (an interrupted run keeps "
                         "the sets it finished)")
    ap.add_argument("--resume", action="store_true",
                    help="go on with the unfinished run in --json PATH (same settings and machine), skipping the "
                         "sets it finished")
    ap.add_argument("--forecasts", default=None, metavar="DIR",
                    help="write each set's forecasts of every entry (and the actual values) to DIR/<set>.csv.gz")
    ap.add_argument("--store", action="store_true",
                    help="store this run as the chapter's forecast_cost_side_by_side (M3 monthly, one thread, peers)")
    ap.add_argument("--store-json", default=None, metavar="PATH",
                    help="store an earlier run's --json output instead of running (no new measurement)")
    args = ap.parse_args(argv)
    if args.store_json:
        return _store_json(ap, args.store_json)
    labels = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in labels if s not in SETS]
    if unknown or not labels:
        ap.error(f"--sets takes names from {', '.join(SETS)}; got {', '.join(unknown) or 'none'}")
    settings = dict(sets=labels, peers=args.peers, threads=args.threads, series=args.series,
                    max_steps=args.max_steps)
    earlier = _earlier_run(ap, args, settings) if args.resume else None
    if args.peers:
        _peers()
        _quiet()
    import torch

    torch.set_num_threads(args.threads)
    from seqlab.devices import native_bfloat16
    from seqlab.machine import describe

    t0, load0 = time.perf_counter(), os.getloadavg()
    bf16 = native_bfloat16("cpu")
    smoke = args.series is not None or args.max_steps is not None
    print(f"torch {torch.__version__}, {args.threads} torch thread(s), {os.cpu_count()} CPUs, load average "
          f"{load0[0]:.2f}; bfloat16: {bf16[1]}" + (" (SMOKE RUN: not the benchmark)" if smoke else ""), flush=True)
    out = dict(rows=[], threads=args.threads, cpus=os.cpu_count(), bfloat16=bf16[1], smoke=smoke,
               load_average=[load0[0], load0[0]], torch=torch.__version__, machine=describe(), settings=settings,
               sets_done=[], segments=[], complete=False)
    if earlier is not None:
        _same_machine(ap, earlier, out)
        out |= {k: earlier[k] for k in ("rows", "sets_done", "segments", "load_average")}
        print(f"resuming {args.json}: {', '.join(out['sets_done'])} done before", flush=True)
    segment = dict(started=pd.Timestamp.now(tz="UTC").isoformat(), seconds=0.0, load_average=[load0[0], None])
    out["segments"].append(segment)
    for label in labels:
        if label in out["sets_done"]:
            continue
        out["rows"] += one_set(label, args)
        out["sets_done"].append(label)
        load1 = os.getloadavg()
        segment |= dict(seconds=time.perf_counter() - t0, load_average=[load0[0], load1[0]])
        out["load_average"][1] = load1[0]
        out["complete"] = len(out["sets_done"]) == len(labels)
        if args.json:  # after every set, so an interrupted run keeps what it measured (--resume goes on from it)
            _write_json(args.json, out)
    _print(out["rows"])
    total = sum(s["seconds"] for s in out["segments"])
    print(f"\nload average {out['load_average'][0]:.2f} at start, {out['load_average'][1]:.2f} at end; whole run "
          f"{total:.0f} s" + (f" in {len(out['segments'])} parts" if len(out["segments"]) > 1 else ""))
    if args.store:
        from seqlab.experiments.forecast_cost_run import store_run
        from seqlab.store import ArtifactError

        try:
            print(f"stored as {store_run(out, pd.Timestamp.now(tz='UTC').isoformat())}")
        except ArtifactError as e:
            ap.error(str(e))


def _write_json(path: str, out: dict) -> None:
    """Replace ``path`` in one step: an interruption leaves the earlier version or this one, never half of one."""
    tmp = f"{path}.partial"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, allow_nan=False)
    os.replace(tmp, path)


def _earlier_run(ap, args, settings: dict) -> dict:
    """The unfinished run that ``--resume`` continues: the --json file of a run with these settings."""
    if not args.json:
        ap.error("--resume continues the run written to --json PATH; give that path")
    try:
        with open(args.json, encoding="utf-8") as f:
            run = json.load(f)
        done, earlier, rows = list(run["sets_done"]), dict(run["settings"]), list(run["rows"])
        if not (run["machine"].get("cpu") and run["segments"]):
            raise ValueError("it names no machine or no part of a run")
        if {r["dataset"] for r in rows} != set(done) or not set(done) <= set(settings["sets"]):
            raise ValueError(f"its rows cover {sorted({r['dataset'] for r in rows})}, its finished sets {done}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        ap.error(f"cannot resume from {args.json}: {e.__class__.__name__}: {e} (not an unfinished run of this "
                 "benchmark)")
    if run.get("complete"):
        ap.error(f"{args.json} holds a finished run; nothing to resume")
    if earlier != settings:
        changed = ", ".join(f"{k} {earlier.get(k)!r} -> {v!r}" for k, v in settings.items() if earlier.get(k) != v)
        ap.error(f"cannot resume {args.json} with other settings ({changed}): one run has one set of settings")
    return run


def _same_machine(ap, earlier: dict, now: dict) -> None:
    """A resumed run must continue on the machine (and torch) it started on: one run, one machine."""
    keys = ("cpu", "cores", "torch")
    was, is_ = ({k: run["machine"].get(k) for k in keys} for run in (earlier, now))
    if was != is_ or earlier.get("bfloat16") != now["bfloat16"]:
        ap.error(f"the run in --json started on {was} (bfloat16 {earlier.get('bfloat16')}); this machine is {is_} "
                 f"(bfloat16 {now['bfloat16']}): one run, one machine")

def _store_json(ap, path: str) -> None:
    """Store the run a --json file holds, dated by the file's last change (when the run wrote it)."""
    from seqlab.experiments.forecast_cost_run import store_run
    from seqlab.store import ArtifactError

    try:
        with open(path, encoding="utf-8") as f:
            run = json.load(f)
        when = pd.Timestamp(os.path.getmtime(path), unit="s", tz="UTC").isoformat()
        print(f"stored as {store_run(run, when)} (measured {when})")
    except (OSError, ValueError, ArtifactError) as e:
        ap.error(f"cannot store {path}: {e}")


if __name__ == "__main__":
    main()
