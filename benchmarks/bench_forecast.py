"""Classical baselines on all of M3 monthly: time against the 60 s budget, and the accuracy anchors.

Targets (issue: forecasting): Naive, SeasonalNaive, RandomWalkWithDrift, Naive2, AutoETS, Theta, AutoTheta
(no AutoARIMA) on the 1,428 M3 monthly series, official hold-out, in <= 60 s on this 2-core CPU;
anchors M1 yearly AutoTheta MASE ~ 3.61 and M3 yearly Naive sMAPE ~ 17.9.
With --neural: the neural models' training on M3 monthly (target <= 10 minutes) is timed, and their hold-out
MASE is set beside the classical models' (targets: beat SeasonalNaive; the better one within 5% of the best).
Run alone on a quiet machine: python benchmarks/bench_forecast.py [--neural]
"""
from __future__ import annotations

import time

import pandas as pd

from seqlab.forecast import Forecaster, competition, evaluate, summarize
from seqlab.experiments.forecast import CLASSICAL_MODELS


def run(name, group, n_jobs=2):
    train, test, season, h = competition(name, group)
    fc = Forecaster(CLASSICAL_MODELS, season_length=season, n_jobs=n_jobs)
    t0 = time.perf_counter()
    cv = fc.cross_validation(train, h, n_windows=1, test_df=test)
    secs = time.perf_counter() - t0
    return summarize(evaluate(cv, pd.concat([train, test]), season, fc.names)).set_index("model"), secs


def neural():
    """Time the neural training on M3 monthly, then score it beside the classical models on the official hold-out."""
    from seqlab.forecast import NeuralForecaster
    from seqlab.experiments.forecast import NEURAL, NEURAL_CONFIG

    train, test, season, h = competition("M3", "monthly")
    total, models = 0.0, []
    for name, arch in NEURAL.items():
        m = NeuralForecaster(arch, name=name, config=NEURAL_CONFIG, season_length=season)
        t0 = time.perf_counter()
        m.fit(train, h)
        secs = time.perf_counter() - t0
        total += secs
        models.append(m)
        print(f"  {name}: {secs:.0f} s")
    print(f"neural training on M3 monthly: {total:.0f} s (budget 600 s, ratio {total / 600:.2f}: "
          f"{'PASS' if total <= 600 else 'FAIL'})")
    classical, _ = run("M3", "monthly")
    hist = pd.concat([train, test])
    cv = test.copy()
    for m in models:
        preds = m.predict(train, h)
        cv[m.name] = [v for uid in cv.unique_id.unique() for v in preds[uid]]
    cv["cutoff"] = cv.groupby("unique_id").ds.transform("min") - 1
    s = summarize(evaluate(cv, hist, season, list(NEURAL)), naive2=None).set_index("model")
    best_c = classical.mase[classical.index.isin(CLASSICAL_MODELS)].idxmin()
    best_n = s.mase.idxmin()
    gap = s.mase[best_n] / classical.mase[best_c] - 1
    print(f"M3 monthly hold-out MASE: {', '.join(f'{k} {v:.3f}' for k, v in s.mase.items())}; best classical "
          f"{best_c} {classical.mase[best_c]:.3f}; SeasonalNaive {classical.mase['SeasonalNaive']:.3f}")
    print(f"best neural vs best classical: {gap:+.1%} (target within 5%: {'PASS' if gap <= 0.05 else 'FAIL'}); "
          f"beats SeasonalNaive: {'PASS' if s.mase[best_n] < classical.mase['SeasonalNaive'] else 'FAIL'}")


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
