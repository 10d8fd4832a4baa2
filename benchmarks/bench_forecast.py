"""Classical baselines on all of M3 monthly: time against the 60 s budget, and the accuracy anchors.

Targets (issue: forecasting): Naive, SeasonalNaive, RandomWalkWithDrift, Naive2, AutoETS, Theta, AutoTheta
(no AutoARIMA) on the 1,428 M3 monthly series, official hold-out, in <= 60 s on this 2-core CPU;
anchors M1 yearly AutoTheta MASE ~ 3.61 and M3 yearly Naive sMAPE ~ 17.9.
The neural models' training on M3 monthly (target <= 10 minutes, HEAVY only) is timed with --neural.
Run alone on a quiet machine: python benchmarks/bench_forecast.py [--neural]
"""
from __future__ import annotations

import time

import pandas as pd

from seqlab.forecast import Forecaster, competition, evaluate, summarize
from seqlab.forecast.experiments import CLASSICAL_MODELS


def run(name, group, n_jobs=2):
    train, test, season, h = competition(name, group)
    fc = Forecaster(CLASSICAL_MODELS, season_length=season, n_jobs=n_jobs)
    t0 = time.perf_counter()
    cv = fc.cross_validation(train, h, n_windows=1, test_df=test)
    secs = time.perf_counter() - t0
    return summarize(evaluate(cv, pd.concat([train, test]), season, fc.names)).set_index("model"), secs


def neural():
    from seqlab.forecast import NeuralForecaster
    from seqlab.forecast.experiments import NEURAL, NEURAL_CONFIG

    train, test, season, h = competition("M3", "monthly")
    total = 0.0
    for name, arch in NEURAL.items():
        t0 = time.perf_counter()
        NeuralForecaster(arch, name=name, config=NEURAL_CONFIG, season_length=season).fit(train, h)
        secs = time.perf_counter() - t0
        total += secs
        print(f"  {name}: {secs:.0f} s")
    print(f"neural training on M3 monthly: {total:.0f} s (budget 600 s, ratio {total / 600:.2f}: "
          f"{'PASS' if total <= 600 else 'FAIL'})")


def main():
    import sys

    if "--neural" in sys.argv:
        neural()
        return
    s, secs = run("M3", "monthly")
    print(f"M3 monthly, 1,428 series, 7 classical models: {secs:.1f} s "
          f"(budget 60 s, ratio {secs / 60:.2f}: {'PASS' if secs <= 60 else 'FAIL'})")
    print(s[["mase", "smape", "owa"]].round(3).to_string())
    m1, _ = run("M1", "yearly")
    m3y, _ = run("M3", "yearly")
    print(f"anchor M1 yearly AutoTheta MASE: {m1.mase['AutoTheta']:.3f} (reference 3.61)")
    print(f"anchor M3 yearly Naive sMAPE:    {m3y.smape['Naive']:.2f} (reference 17.9)")


if __name__ == "__main__":
    main()
