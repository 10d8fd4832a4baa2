"""M3 monthly, official hold-out: other libraries' models, like with like, against seqlab's classical fit.

One run on the 1,428 M3 monthly series (h = 18, season 12), every model fitted up to the hold-out origin:

1. seqlab's classical fit: AutoETS, AutoTheta and Theta through :class:`seqlab.forecast.Forecaster` in one
   statsforecast call (as ``bench_forecast.py`` fits them), timed; "Combination" is their pointwise mean and
   the reference of every comparison. Naive2 is fitted apart from it (timed on its own) as the floor of the
   accuracy-per-second column;
2. neuralforecast's ``NBEATS`` and ``NHITS``, each with ``input_size = 2 * h`` (36) and every other argument at
   the installed release's default (1,000 steps, MAE loss, no scaling, ``random_seed=1``: the defaults are
   printed at the start of a run). ``input_size = 3 * h`` (54), the other lookback often quoted for N-BEATS,
   cannot run here: the shortest M3 monthly series has 48 observations before the hold-out, and neuralforecast
   refuses a series shorter than the input (``ValueError: NBEATS requires at least 54 training timestamp(s)``);
   ``start_padding_enabled`` would pad it with zeros, which is not the default, so it is not used. Only
   Lightning's progress bar, model summary, logger and checkpoints are turned off;
3. mlforecast with ``lightgbm.LGBMRegressor()`` at its defaults (``verbosity=-1`` silences its log and changes
   nothing else; with no bagging and no feature sampling by default it draws nothing at random), lags 1-24 of
   the series differenced at lag 12 (``Differences([12])``), forecasting 18 steps recursively;
4. each peer averaged with Combination ("<peer> + Combination", the pointwise mean of the two forecasts), and
   seqlab's stored N-BEATS and "N-BEATS + Combination" (round 3's ensemble, read from the artifact's stored
   hold-out forecasts; their wall seconds are the stored final retraining's, labelled "stored", and their CPU
   seconds those that ``seqlab.experiments.forecast_cost`` measured for the same ensemble on a quiet machine).

It prints one table: MASE, sMAPE, the difference in mean MASE against Combination with its 95% paired cluster
bootstrap interval (``*``: it excludes 0), the share of series won against Combination, the seconds to fit and
forecast (wall and CPU: this process and its reaped children, user + system), the wall-time ratio to the
classical fit of the same run, and the MASE gained over Naive2 per 1,000 seconds (wall and CPU). A hybrid's
seconds are its two parts' together. Seconds measured on a shared machine are under whatever load it had:
the load average is printed before and after.

    python benchmarks/bench_forecast_peers.py [--series N] [--max-steps N] [--json PATH]

``--series N``: N series evenly spaced in id order (a smoke run); ``--max-steps N``: the neural peers' training
steps (a smoke run only: the comparison is at the default); ``--json PATH``: the table's rows at full precision.
Needs the ``peers`` extra: ``pip install -e ".[peers]"``.
"""
from __future__ import annotations

import argparse
import inspect
import json
import logging
import math
import os
import resource
import sys
import time
import warnings

import numpy as np
import pandas as pd

CLASSICAL = ["AutoETS", "AutoTheta", "Theta"]  # Combination's members (seqlab.forecast.combination.COMBINATIONS)
REF = "Combination"
SEED = 1  # neuralforecast's default random_seed, given explicitly
LABEL = "M3 monthly"


def _peers():
    """The peers' modules, or one line naming the extra and exit status 2."""
    try:
        import lightgbm
        import mlforecast
        import neuralforecast
        from mlforecast.target_transforms import Differences
        from neuralforecast.models import NBEATS, NHITS
    except ImportError as e:
        print(f"bench_forecast_peers: the peers' packages are missing ({e}); install them with "
              f'pip install -e ".[peers]"', file=sys.stderr)
        raise SystemExit(2) from None
    return dict(lightgbm=lightgbm, mlforecast=mlforecast, neuralforecast=neuralforecast, Differences=Differences,
                NBEATS=NBEATS, NHITS=NHITS)


class Clock:
    """Wall and CPU seconds of a block (CPU: this process's threads and the child processes it has reaped)."""

    @staticmethod
    def _cpu():
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

    def __enter__(self):
        self.t0, self.c0 = time.perf_counter(), self._cpu()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.t0, self._cpu() - self.c0

    @staticmethod
    def sum(*clocks: "Clock") -> "Clock":
        """One clock holding the seconds of several blocks together (a hybrid's two parts)."""
        total = Clock()
        total.wall, total.cpu = sum(c.wall for c in clocks), sum(c.cpu for c in clocks)
        return total


def _quiet():
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "lightning_fabric", "pytorch_lightning"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _subset(train, test, n):
    ids = np.array(sorted(train.unique_id.unique()))
    if n is not None:
        if not 10 <= n <= len(ids):
            raise SystemExit(f"bench_forecast_peers: --series must lie between 10 and {len(ids)}, got {n}")
        ids = ids[np.unique(np.linspace(0, len(ids) - 1, n).round().astype(int))]
    keep = set(ids)
    return train[train.unique_id.isin(keep)], test[test.unique_id.isin(keep)]


def _neural(cls, train, h, max_steps, seed=SEED):
    kw = dict(h=h, input_size=2 * h, random_seed=seed, enable_progress_bar=False, enable_model_summary=False,
              logger=False, enable_checkpointing=False)
    if max_steps is not None:
        kw["max_steps"] = max_steps
    from neuralforecast import NeuralForecast

    nf = NeuralForecast([cls(**kw)], freq=1)
    with Clock() as c:
        nf.fit(train)
        pred = nf.predict()
    return pred[["unique_id", "ds", cls.__name__]], c


def _lightgbm(p, train, h):
    from mlforecast import MLForecast

    mlf = MLForecast(models={"LightGBM": p["lightgbm"].LGBMRegressor(verbosity=-1)}, freq=1, lags=range(1, 25),
                     target_transforms=[p["Differences"]([12])])
    with Clock() as c:
        mlf.fit(train)
        pred = mlf.predict(h)
    return pred[["unique_id", "ds", "LightGBM"]], c


def _stored(ids):
    """The artifact's M3 monthly hold-out forecasts of N-BEATS and its classical members, for ``ids``."""
    from seqlab.experiments.forecast.results import stored_forecasts
    from seqlab.experiments.forecast.sets import official_holdout

    s = stored_forecasts()
    s = official_holdout(s[s.dataset == LABEL])
    s = s[s.unique_id.isin(set(ids))].copy()
    for col in ("ds", "cutoff"):
        s[col] = pd.to_numeric(s[col]).astype("int64")
    s["stored Combination"] = s[CLASSICAL].mean(axis=1)
    return s[["unique_id", "ds", "N-BEATS", "stored Combination"]]


def _stored_seconds():
    """The stored ensemble's wall seconds of its final retraining and of its search, the set's series count, and
    its CPU seconds to fit as ``forecast_cost`` measured them (median of its rounds, on a quiet machine)."""
    from seqlab.experiments.forecast_cost import cost_summary, forecast_cost
    from seqlab.store import read_artifact_csv

    t = read_artifact_csv("forecast", "timings.csv").set_index("dataset").loc[LABEL]
    cpu = cost_summary(forecast_cost()["entries"], {}).set_index("entry").cpu_seconds["N-BEATS"]
    return float(t.round3_final_seconds), float(t.round3_validation_seconds), int(t.series), float(cpu)


def _fmt(x, spec, na="n/a"):
    return na if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def run(args) -> dict:
    p = _peers()
    _quiet()
    import torch

    from seqlab.forecast import Forecaster, bootstrap_difference, competition, evaluate, summarize, unit_mase

    load0 = os.getloadavg()
    steps_default = inspect.signature(p["NBEATS"].__init__).parameters["max_steps"].default
    versions = {m: __import__(m).__version__ for m in ("torch", "neuralforecast", "mlforecast", "lightgbm",
                                                       "statsforecast")}
    train, test, season, h = competition("M3", "monthly")
    train, test = _subset(train, test, args.series)
    n = train.unique_id.nunique()
    steps = args.max_steps if args.max_steps is not None else steps_default
    print(f"{LABEL}, official hold-out: {n} series, h = {h}, season {season}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"torch threads {torch.get_num_threads()}, CPUs {os.cpu_count()}, load average {load0[0]:.2f} at start; "
          f"neural peers: input_size {2 * h}, max_steps {steps}"
          + (" (SMOKE RUN: not the default)" if args.max_steps is not None else " (default)"), flush=True)

    clocks = {}
    with Clock() as c:
        cv = Forecaster(CLASSICAL, season_length=season, n_jobs=2).cross_validation(h, train, n_windows=1,
                                                                                    test_df=test)
    clocks["classical"] = c
    print(f"classical fit (AutoETS, AutoTheta, Theta): {c.wall:.1f} s", flush=True)
    with Clock() as c:
        naive2 = Forecaster(["Naive2"], season_length=season).cross_validation(h, train, n_windows=1, test_df=test)
    clocks["Naive2"] = c
    cv = cv.merge(naive2[["unique_id", "ds", "Naive2"]], on=["unique_id", "ds"], how="left", validate="one_to_one")
    cv[REF] = cv[CLASSICAL].mean(axis=1)

    peers = []
    for name, fit in (("NBEATS", lambda: _neural(p["NBEATS"], train, h, args.max_steps)),
                      ("NHITS", lambda: _neural(p["NHITS"], train, h, args.max_steps)),
                      ("LightGBM", lambda: _lightgbm(p, train, h))):
        pred, c = fit()
        clocks[name] = c
        print(f"{name}: {c.wall:.1f} s", flush=True)
        cv = cv.merge(pred, on=["unique_id", "ds"], how="left", validate="one_to_one")
        cv[f"{name} + {REF}"] = (cv[name] + cv[REF]) / 2
        peers.append(name)

    stored = _stored(cv.unique_id.unique())
    cv = cv.merge(stored, on=["unique_id", "ds"], how="left", validate="one_to_one")
    cv = cv.rename(columns={"N-BEATS": "seqlab N-BEATS"})
    cv[f"seqlab N-BEATS + {REF}"] = (cv["seqlab N-BEATS"] + cv["stored Combination"]) / 2
    entries = [*peers, *[f"{m} + {REF}" for m in peers], REF, "seqlab N-BEATS", f"seqlab N-BEATS + {REF}", "Naive2"]
    missing = [m for m in entries if cv[m].isna().any()]
    if missing:
        raise SystemExit(f"bench_forecast_peers: no forecast for some hold-out steps of {missing}")

    history = pd.concat([train, test])
    err = evaluate(cv, history, season, [*entries, "stored Combination"], level=[])
    summary = summarize(err).set_index("model")
    units = unit_mase(err)
    nb_final, nb_validation, nb_series, nb_cpu = _stored_seconds()

    cls = clocks["classical"]
    seconds = {REF: (cls.wall, cls.cpu, False), "Naive2": (clocks["Naive2"].wall, clocks["Naive2"].cpu, False),
               "seqlab N-BEATS": (nb_final, nb_cpu, True),
               f"seqlab N-BEATS + {REF}": (nb_final + cls.wall, nb_cpu + cls.cpu, True)}
    for m in peers:
        seconds[m] = (clocks[m].wall, clocks[m].cpu, False)
        seconds[f"{m} + {REF}"] = (clocks[m].wall + cls.wall, clocks[m].cpu + cls.cpu, False)
    floor = float(summary.loc["Naive2", "mase"])
    rows = []
    for m in entries:
        mase, smape = float(summary.loc[m, "mase"]), float(summary.loc[m, "smape"])
        wall, cpu, was_stored = seconds[m]
        row = dict(entry=m, mase=mase, smape=smape, diff=None, ci_low=None, ci_high=None, significant=None,
                   won=None, wall_s=wall, cpu_s=cpu, seconds="stored" if was_stored else "this run",
                   ratio_to_classical=wall / cls.wall, gain_per_kwall_s=(floor - mase) / wall * 1000,
                   gain_per_kcpu_s=None if cpu is None else (floor - mase) / cpu * 1000)
        if m != REF:
            b = bootstrap_difference(units, m, REF)
            row |= dict(diff=b["mean_difference"], ci_low=b["ci_low"], ci_high=b["ci_high"],
                        significant=b["significant"], won=b["share_of_units_better"])
        rows.append(row)

    print(f"\n{LABEL}, official hold-out, {n} series, h = {h}: every entry against {REF} (mean of AutoETS, AutoTheta "
          f"and Theta)")
    head = (f"{'entry':38s} {'MASE':>7s} {'sMAPE':>7s} {'dMASE vs Combination [95% CI]':>33s} {'won':>6s} "
            f"{'wall s':>8s} {'CPU s':>8s} {'x cls':>6s} {'gain/kwall-s':>12s} {'gain/kCPU-s':>11s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if r["diff"] is None:
            diff, won = "(the reference)", ""
        else:
            diff = f"{r['diff']:+.4f} [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]" + (" *" if r["significant"] else "  ")
            won = f"{r['won']:.1%}"
        name = r["entry"] + (" (stored)" if r["seconds"] == "stored" else "")
        print(f"{name:38s} {r['mase']:7.4f} {r['smape']:7.3f} {diff:>33s} {won:>6s} {r['wall_s']:8.1f} "
              f"{_fmt(r['cpu_s'], '8.1f', '     n/a')} {r['ratio_to_classical']:6.2f} "
              f"{r['gain_per_kwall_s']:12.3f} {_fmt(r['gain_per_kcpu_s'], '11.3f', '        n/a')}")
    load1 = os.getloadavg()
    stored_comb = float(summary.loc["stored Combination", "mase"])
    gap = float(np.max(np.abs(cv["stored Combination"] - cv[REF]) / np.maximum(np.abs(cv[REF]), 1e-12)))
    notes = [
        "dMASE: mean MASE minus Combination's, 95% paired cluster bootstrap interval (5,000 draws of series, seed 0),"
        " * where it excludes 0; won: share of series with a lower MASE than Combination",
        "wall s / CPU s: seconds to fit and forecast (CPU: user + system of this process and its reaped children); a"
        " hybrid counts both parts; x cls: wall seconds over the classical fit's "
        f"({cls.wall:.1f} s wall, {cls.cpu:.1f} s CPU)",
        f"gain/k...-s: Naive2's MASE ({floor:.4f}) minus the entry's, per 1,000 seconds",
        f"stored: seqlab's round-3 N-BEATS ensemble, final retraining {nb_final:.0f} s wall (timings.csv "
        f"round3_final_seconds; choosing it on the validation windows took another {nb_validation:.0f} s) and "
        f"{nb_cpu:.0f} CPU s (forecast_cost, on a quiet machine); its hybrid averages the stored forecasts with the"
        " stored Combination and adds this run's classical fit seconds",
        *([f"--series {n}: the stored seconds are the whole set's ({nb_series:,} series), the others this subset's"]
          if args.series is not None else []),
        f"stored Combination MASE {stored_comb:.4f} vs this run's {float(summary.loc[REF, 'mase']):.4f} (largest "
        f"relative forecast difference {gap:.2e})",
        f"load average {load0[0]:.2f} at start, {load1[0]:.2f} at end on {os.cpu_count()} CPUs shared with other work:"
        " the seconds are under that load",
    ]
    for line in notes:
        print("  " + line)
    return dict(dataset=LABEL, scope="official hold-out", series=int(n), h=int(h), season=int(season),
                max_steps=int(steps), smoke=args.series is not None or args.max_steps is not None, versions=versions,
                torch_threads=torch.get_num_threads(), load_average=[load0[0], load1[0]], rows=rows,
                stored_combination_mase=stored_comb, stored_nbeats_validation_s=nb_validation)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=None, help="a deterministic subset of N series (smoke run)")
    ap.add_argument("--max-steps", type=int, default=None, help="the neural peers' training steps (smoke run)")
    ap.add_argument("--json", default=None, help="write the table's rows here, floats at full precision")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = run(args)
    out["run_wall_s"] = time.perf_counter() - t0
    print(f"whole run: {out['run_wall_s']:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, allow_nan=False)
            f.write("\n")


if __name__ == "__main__":
    main()
