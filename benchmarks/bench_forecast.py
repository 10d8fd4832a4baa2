"""M3 monthly, official hold-out: the best neural model (N-BEATS) against AutoTheta, with the training time.

One run prints:

1. the seven classical models on the 1,428 M3 monthly series (Naive, SeasonalNaive, RandomWalkWithDrift, Naive2,
   AutoETS, Theta, AutoTheta; no AutoARIMA), timed against the 60 s budget;
2. the N-BEATS ensemble trained up to the origin with the step count and ensemble size that the last HEAVY_EVAL run
   chose on M3 monthly's validation windows (read from the verified artifacts; nothing here looks at the hold-out
   before scoring), timed against the 10-minute budget, and its hold-out MASE beside AutoTheta's and the best
   classical model's (targets: <= 0.845, stretch <= 0.832), plus a check that it reproduces the artifact's number;
3. the accuracy anchors: M1 yearly AutoTheta MASE ~ 3.61 (statsforecast's own benchmark, reproduced) and M3 yearly
   Naive sMAPE ~ 17.9 (the M3 competition).

With --neural the GRU and Transformer are retrained and timed as well.
Run alone on a quiet machine: flock /tmp/seqlab-heavy.lock python benchmarks/bench_forecast.py [--neural]
"""
from __future__ import annotations

import time

import pandas as pd

from seqlab.experiments.forecast import CLASSICAL_MODELS, NBEATS_PLAN, chosen_nbeats, forecast_results
from seqlab.forecast import Forecaster, competition, evaluate, summarize

TARGET, STRETCH, BUDGET = 0.845, 0.832, 600


def run(name, group, n_jobs=2):
    train, test, season, h = competition(name, group)
    fc = Forecaster(CLASSICAL_MODELS, season_length=season, n_jobs=n_jobs)
    t0 = time.perf_counter()
    cv = fc.cross_validation(h, train, n_windows=1, test_df=test)
    secs = time.perf_counter() - t0
    return summarize(evaluate(cv, pd.concat([train, test]), season, fc.names)).set_index("model"), secs


def holdout_mase(models, train, test, season, h) -> pd.Series:
    """Hold-out MASE of fitted global models (each predicts from the end of ``train``)."""
    cv = test.copy()
    for m in models:
        preds = m.predict(train, h)
        cv[m.name] = [v for uid in cv.unique_id.unique() for v in preds[uid]]
    cv["cutoff"] = cv.groupby("unique_id").ds.transform("min") - 1
    names = [m.name for m in models]
    return summarize(evaluate(cv, pd.concat([train, test]), season, names), naive2=None).set_index("model").mase


def nbeats(classical):
    """Train the chosen N-BEATS ensemble on M3 monthly up to the origin, time it, and score it on the hold-out."""
    train, test, season, h = competition("M3", "monthly")
    steps, size = chosen_nbeats("M3 monthly")
    model = NBEATS_PLAN.forecaster("M3 monthly", season, steps, size=size)
    t0 = time.perf_counter()
    model.fit(train, h)
    secs = time.perf_counter() - t0
    score = holdout_mase([model], train, test, season, h)["N-BEATS"]
    best_c = classical.mase[classical.index.isin(CLASSICAL_MODELS)].idxmin()
    theta = classical.mase["AutoTheta"]
    print(f"N-BEATS on M3 monthly: {size} members x {steps} steps (chosen on the validation windows), trained up to "
          f"the origin in {secs:.0f} s on {model.workers or 2} processes (budget {BUDGET} s: "
          f"{'PASS' if secs <= BUDGET else 'FAIL'})")
    print(f"M3 monthly official hold-out MASE: N-BEATS {score:.4f} | AutoTheta {theta:.4f} "
          f"({score / theta - 1:+.1%}) | best classical {best_c} {classical.mase[best_c]:.4f} | "
          f"SeasonalNaive {classical.mase['SeasonalNaive']:.4f}")
    print(f"target <= {TARGET}: {'PASS' if score <= TARGET else 'FAIL'}; stretch <= {STRETCH}: "
          f"{'PASS' if score <= STRETCH else 'FAIL'}; ahead of AutoTheta: {'PASS' if score < theta else 'FAIL'}")
    summary = forecast_results()[0]
    art = summary[(summary.dataset == "M3 monthly") & (summary.scope == "official hold-out")].set_index("model").mase
    from seqlab.experiments.forecast import nbeats_results

    r = nbeats_results()["rounds"]
    for row in r[r.dataset == "M3 monthly"].itertuples():
        print(f"  round '{row.pool}' (artifact): {row.members} members x {row.steps} steps, validation MASE "
              f"{row.validation_mase:.4f}, hold-out MASE {row.last_window_mase:.4f}{' <- used' if row.chosen else ''}")
    print(f"the HEAVY_EVAL artifact's N-BEATS hold-out MASE {art['N-BEATS']:.4f} "
          f"({'reproduced' if abs(art['N-BEATS'] - score) < 1e-4 else 'NOT reproduced'}); its GRU "
          f"{art['GRU']:.4f}, Transformer {art['Transformer']:.4f}")


def gru_transformer(classical):
    """Retrain the GRU and the Transformer on M3 monthly (their own early stopping) and score them."""
    from seqlab.experiments.forecast import NEURAL_CONFIG
    from seqlab.forecast import NeuralForecaster
    from seqlab.threads import single_threaded

    train, test, season, h = competition("M3", "monthly")
    models = []
    for name, arch in (("GRU", "gru"), ("Transformer", "transformer")):
        m = NeuralForecaster(arch, name=name, config=NEURAL_CONFIG, season_length=season)
        t0 = time.perf_counter()
        with single_threaded():
            m.fit(train, h)
        print(f"  {name}: trained in {time.perf_counter() - t0:.0f} s")
        models.append(m)
    s = holdout_mase(models, train, test, season, h)
    print("M3 monthly hold-out MASE: " + ", ".join(f"{k} {v:.4f}" for k, v in s.items()))


def main():
    import sys

    s, secs = run("M3", "monthly")
    print(f"M3 monthly, 1,428 series, 7 classical models: {secs:.1f} s "
          f"(budget 60 s, ratio {secs / 60:.2f}: {'PASS' if secs <= 60 else 'FAIL'})")
    print(s[["mase", "smape", "owa"]].round(4).to_string())
    nbeats(s)
    if "--neural" in sys.argv:
        gru_transformer(s)
    m1, _ = run("M1", "yearly")
    m3y, _ = run("M3", "yearly")
    print(f"anchor M1 yearly AutoTheta MASE: {m1.mase['AutoTheta']:.3f} (reference 3.61, statsforecast's own "
          "benchmark; an independent one gives 3.659)")
    print(f"anchor M3 yearly Naive sMAPE:    {m3y.smape['Naive']:.2f} (reference 17.9, the M3 competition)")


if __name__ == "__main__":
    main()
