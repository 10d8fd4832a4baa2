"""M3 monthly and M3 yearly, official hold-out: the best neural ensemble against the best classical entry.

One run, for each of the two sets:

1. fits the classical models (Naive, SeasonalNaive, RandomWalkWithDrift, Naive2, AutoETS, Theta, AutoTheta,
   M4 Comb) up to the hold-out origin, timed;
2. trains round 3's N-BEATS ensemble up to the origin with the step count and ensemble size that the last
   HEAVY_EVAL run chose on the set's validation windows (read from the verified artifacts), timed against the
   10-minute budget;
3. forms the combinations (the mean of AutoETS, AutoTheta and Theta; N-BEATS with that mean);
4. prints every entry's hold-out MASE, its paired-bootstrap interval against the best classical entry (single
   model or combination), the share of series it wins, and its training time;
5. judges the reproduction of the artifact's N-BEATS number within the spread between the ensemble's two seed
   halves measured in the same run (training on another CPU differs in the last bits, and so do seeds).

Targets (round 3's protocol): M3 monthly MASE <= 0.829 and significantly below the best classical entry; M3
yearly <= AutoTheta's 2.598; each final ensemble trained in <= 600 s.
Run alone on a quiet machine: flock /tmp/seqlab-heavy.lock python benchmarks/bench_forecast.py
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from seqlab.experiments.forecast import (CLASSICAL_ENTRIES, CLASSICAL_MODELS, COMBINATIONS, ROUND3, forecast_results,
                                         nbeats_results, recipe_plan, NBEATS_PLAN)
from seqlab.forecast import Forecaster, bootstrap_difference, competition, evaluate, unit_mase

TARGETS = {"M3 monthly": 0.829, "M3 yearly": 2.598}


def _median_of(model, train, h, members):
    """Hold-out forecasts of a subset of a fitted ensemble's members."""
    keep = model.members
    try:
        model.members = members
        return model.predict(train, h)
    finally:
        model.members = keep


def one_set(label, name, group):
    train, test, season, h = competition(name, group)
    history = pd.concat([train, test])
    fc = Forecaster(CLASSICAL_MODELS, season_length=season, n_jobs=2)
    t0 = time.perf_counter()
    cv = fc.cross_validation(h, train, n_windows=1, test_df=test)
    seconds = {m: time.perf_counter() - t0 for m in CLASSICAL_MODELS}  # one statsforecast call fits them together

    nb = nbeats_results()
    sel = nb["selection"]
    row = sel[(sel.dataset == label) & (sel["round"] == 3) & sel.chosen].iloc[0]
    steps, size = int(row.steps), int(row.members)
    plan = recipe_plan(NBEATS_PLAN, nb["recipe"], ROUND3)
    model = plan.forecaster(label, season, steps, size=size)
    t0 = time.perf_counter()
    model.fit(train, h)
    seconds["N-BEATS"] = time.perf_counter() - t0
    preds = model.predict(train, h)
    cv = cv.sort_values(["unique_id", "ds"], kind="stable")
    cv["N-BEATS"] = np.concatenate([preds[u] for u in cv.unique_id.unique()])
    halves = {}
    for s in plan.seeds:
        mine = [(c, net) for c, net in model.members if c.seed // 1000 == s]
        if mine:
            p = _median_of(model, train, h, mine)
            halves[s] = np.concatenate([p[u] for u in cv.unique_id.unique()])
    for k, parts in COMBINATIONS.items():
        cv[k] = cv[list(parts)].mean(axis=1)
        # the classical models are fitted together in one call, so a combination of them costs that one call
        seconds[k] = seconds[CLASSICAL_MODELS[0]] + (seconds["N-BEATS"] if "N-BEATS" in parts else 0.0)
    names = CLASSICAL_MODELS + ["N-BEATS", *COMBINATIONS]
    err = evaluate(cv, history, season, names, level=[])
    units = unit_mase(err)
    mase = units.groupby("model").mase.mean()
    entries = mase[mase.index.isin(CLASSICAL_ENTRIES)]
    best_entry, best_single = entries.idxmin(), mase[mase.index.isin(CLASSICAL_MODELS)].idxmin()
    print(f"\n{label}: {train.unique_id.nunique()} series, h = {h}; N-BEATS round 3: {size} members x {steps} steps")
    print(f"best classical entry: {best_entry} {mase[best_entry]:.4f}; best single classical model: {best_single} "
          f"{mase[best_single]:.4f}")
    print(f"{'entry':24s} {'MASE':>7s} {'minus best entry [95% interval]':>36s} {'series won':>10s} {'train s':>8s}")
    for m in ["N-BEATS", "N-BEATS + Combination", "Combination", "M4 Comb", best_single]:
        if m == best_entry:
            diff = "(the reference)"
            won = ""
        else:
            b = bootstrap_difference(units, m, best_entry)
            diff = f"{b['mean_difference']:+.4f} [{b['ci_low']:+.4f}, {b['ci_high']:+.4f}]" + \
                   (" *" if b["significant"] else "")
            won = f"{b['share_of_units_better']:.1%}"
        print(f"{m:24s} {mase[m]:7.4f} {diff:>36s} {won:>10s} {seconds[m]:8.0f}")
    print(f"(train s: the {len(CLASSICAL_MODELS)} classical models are fitted in one statsforecast call of "
          f"{seconds[CLASSICAL_MODELS[0]]:.0f} s, which each classical entry shows)")
    target = TARGETS[label]
    print(f"target MASE <= {target}: {'PASS' if mase['N-BEATS'] <= target else 'FAIL'} ({mase['N-BEATS']:.4f}); "
          f"final ensemble in {seconds['N-BEATS']:.0f} s, budget {ROUND3.budget_final_seconds:.0f} s: "
          f"{'PASS' if seconds['N-BEATS'] <= ROUND3.budget_final_seconds else 'FAIL'}")
    art = forecast_results()[0]
    art = art[(art.dataset == label) & (art.scope == "official hold-out")].set_index("model").mase
    if len(halves) < 2:
        gap = abs(art["N-BEATS"] - mase["N-BEATS"])
        print(f"artifact's N-BEATS {art['N-BEATS']:.4f}, this run {mase['N-BEATS']:.4f} (gap {gap:.4f}); the chosen "
              f"ensemble has members of one seed only, so there are no seed halves to judge the gap by")
    if len(halves) == 2:
        half = {}
        for s, f in halves.items():
            e = evaluate(cv.assign(half=f), history, season, ["half"], level=[])
            half[s] = unit_mase(e).mase.mean()
        spread = abs(half[plan.seeds[0]] - half[plan.seeds[1]])
        gap = abs(art["N-BEATS"] - mase["N-BEATS"])
        print(f"artifact's N-BEATS {art['N-BEATS']:.4f}, this run {mase['N-BEATS']:.4f} (gap {gap:.4f}); the two seed "
              f"halves give {half[plan.seeds[0]]:.4f} and {half[plan.seeds[1]]:.4f} (spread {spread:.4f}): "
              f"{'reproduced within the seed spread' if gap <= spread else 'NOT reproduced within the seed spread'}")


def main():
    for label, (name, group) in {"M3 monthly": ("M3", "monthly"), "M3 yearly": ("M3", "yearly")}.items():
        one_set(label, name, group)


if __name__ == "__main__":
    main()
