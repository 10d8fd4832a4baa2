"""The classical models on all of M3 monthly: one process against a local Dask cluster (statsforecast's fugue backend).

Fits Naive, SeasonalNaive, RandomWalkWithDrift, Naive2, AutoETS, Theta and AutoTheta on the 1,428 M3 monthly
series (official hold-out) three ways: in one process (n_jobs=1), with statsforecast's own process pool
(n_jobs=2), and on a local Dask cluster of ``--workers`` worker processes, one thread each; it checks that the
cluster's forecasts equal the single-process ones (to the last bit, which AutoTheta's optimiser may round
differently on differently aligned arrays) and prints the times. On a 2-core machine no speed-up is
expected: the workers share the same two cores, and the cluster adds its start-up, the shuffle of the series to
the workers and the trip back. Run alone on a quiet machine:

    python benchmarks/bench_forecast_engine.py [--workers 2]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from seqlab.experiments.forecast import CLASSICAL_MODELS
from seqlab.forecast import Engine, Forecaster, competition


def timed(fc: Forecaster, train, test, h):
    t0 = time.perf_counter()
    cv = fc.cross_validation(h, train, n_windows=1, test_df=test)
    return cv, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    train, test, season, h = competition("M3", "monthly")
    n = train.unique_id.nunique()
    print(f"M3 monthly: {n} series, h = {h}, {len(CLASSICAL_MODELS)} models; {os.cpu_count()} CPU cores here")
    single, t_single = timed(Forecaster(CLASSICAL_MODELS, season_length=season, n_jobs=1), train, test, h)
    print(f"  one process (n_jobs=1):              {t_single:6.1f} s")
    _, t_pool = timed(Forecaster(CLASSICAL_MODELS, season_length=season, n_jobs=2), train, test, h)
    print(f"  statsforecast's pool (n_jobs=2):     {t_pool:6.1f} s")

    from distributed import LocalCluster

    t0 = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        t_start = time.perf_counter() - t0
        with Forecaster(CLASSICAL_MODELS, season_length=season,
                        engine=Engine("dask", cluster.scheduler_address)) as fc:
            on_cluster, t_cluster = timed(fc, train, test, h)
            _, t_warm = timed(fc, train, test, h)
    print(f"  local Dask cluster, {args.workers} workers:        {t_cluster:6.1f} s "
          f"(second run {t_warm:.1f} s; the cluster took {t_start:.1f} s to start)")
    pd.testing.assert_frame_equal(on_cluster, single, rtol=1e-10, atol=0)
    cols = [c for c in single.columns if c not in ("unique_id", "ds", "cutoff", "y")]
    a, b = single[cols].to_numpy(float), on_cluster[cols].to_numpy(float)
    rel = np.nanmax(np.abs(a - b) / np.maximum(np.abs(a), 1e-300))
    print(f"  cluster / one process: {t_cluster / t_single:.2f}x the time; forecasts equal: {np.mean(a == b):.2%} "
          f"bit for bit, the rest within {rel:.1e} relative (the last bit of AutoTheta's optimiser)")


if __name__ == "__main__":  # the cluster's workers are processes that import this file
    main()
