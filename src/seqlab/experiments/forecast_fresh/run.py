"""The fresh test's trainings (docs/forecast-fresh-sets.md): one set at a time, stored as soon as it is done.

Each fresh set is its own artifact set (``fresh_m1_monthly`` ...): the classical models on its
three windows, round 3's N-BEATS members on its two validation windows, the choice of step count
and ensemble size there, and the chosen ensemble trained up to the official origin once per seed
set. M3 monthly's seed sets (``fresh_m3_monthly_seeds``) retrain §14.63's round 3 ensemble with the
other seed sets only.
"""
from __future__ import annotations

import gzip
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from ...errors import InvalidParameterError
from ...forecast.core import Forecaster
from ...forecast.nbeats import ensemble_median
from ...forecast.origins import training_windows
from ...store import read_artifact_csv, verify_artifacts, write_artifacts
from ..forecast.results import _csv
from ..forecast.sets import DataSet, _load
from ..forecast.settings import (
    CLASSICAL_MODELS, NAME as FORECAST, NBEATS_PLAN, min_train_length, recipe_plan, round3_recipe,
)
from ..forecast.training import _Round, _choose_ensembles, _classical_windows, _final_ensembles, \
    _validation_trainings

#: label -> (loader key, windows); the last window of each is its official hold-out
FRESH_SETS = {"M1 quarterly": ("M1/quarterly", 3), "Tourism quarterly": ("Tourism/quarterly", 3),
              "M1 monthly": ("M1/monthly", 3), "Tourism monthly": ("Tourism/monthly", 3)}

#: each fresh set takes the input lengths and step grid of the §14.63 set of its frequency
DONORS = {"M1 quarterly": "Tourism quarterly", "Tourism quarterly": "Tourism quarterly",
          "M1 monthly": "M3 monthly", "Tourism monthly": "M3 monthly"}

#: the member seeds of each seed set; the first is round 3's own
SEED_SETS = ((1, 2), (3, 4), (5, 6))

SEEDS_SET = "M3 monthly"


def artifact_name(label: str) -> str:
    """The artifact set of one fresh set (``fresh_m1_monthly``), or of M3 monthly's seed sets."""
    if label == SEEDS_SET:
        return "fresh_m3_monthly_seeds"
    if label not in FRESH_SETS:
        raise InvalidParameterError(f"no fresh set {label!r}; choose from {', '.join(FRESH_SETS)} or {SEEDS_SET}")
    return "fresh_" + label.lower().replace(" ", "_")


def seed_label(seeds: tuple) -> str:
    """The column of a seed set's N-BEATS: ``N-BEATS seeds 1,2``."""
    return "N-BEATS seeds " + ",".join(map(str, seeds))


def round3_plan():
    """Round 3's member plan, from §14.63's stored recipe table (the adopted changes applied to every member)."""
    verify_artifacts(FORECAST)
    return recipe_plan(NBEATS_PLAN, round3_recipe_table())


def round3_recipe_table() -> pd.DataFrame:
    """§14.63's stored recipe: the round 3 rule's decision on each ablation variant."""
    recipe = read_artifact_csv(FORECAST, "nbeats_recipe.csv")
    again = round3_recipe(_ablation_means(recipe))
    if again.adopted.tolist() != recipe.adopted.astype(bool).tolist():
        raise RuntimeError("the stored recipe does not follow from its own ablation means")
    return recipe.assign(adopted=recipe.adopted.astype(bool))


def _ablation_means(recipe: pd.DataFrame) -> pd.DataFrame:
    """An ablation table with one window whose means are the recipe's (enough for the rule to decide again)."""
    ref = recipe.groupby("dataset", sort=False).reference_mase.first()
    rows = [dict(dataset=d, ingredient="reference: the first member", change="", window=1, validation_mase=v)
            for d, v in ref.items()]
    rows += [dict(dataset=r.dataset, ingredient=r.ingredient, change=r.change, window=1,
                  validation_mase=r.validation_mase) for r in recipe.itertuples()]
    return pd.DataFrame(rows)


def fresh_plan():
    """Round 3's plan for the fresh sets: its members, each set with its donor's input lengths and step grid."""
    plan = round3_plan()
    return replace(plan, inputs={**plan.inputs, **{k: plan.inputs[v] for k, v in DONORS.items()}},
                   steps={**plan.steps, **{k: plan.steps[v] for k, v in DONORS.items()}}, like={})


def _seed_finals(sets: dict, plan, steps_size: dict, workers) -> dict:
    """label -> seed set -> (N, h) forecasts of the last window: the chosen ensemble trained once per seed set."""
    plans = {seed_label(s): replace(plan, seeds=s) for s in SEED_SETS}
    rounds = {label: [_Round(3, key, "all", size, steps, size, np.nan) for key in plans]
              for label, (steps, size) in steps_size.items()}
    finals = _final_ensembles(sets, plans, rounds, workers)
    return {label: {key: ensemble_median([by_member[m][steps_size[label][0]] for m in range(steps_size[label][1])])
                    for key, by_member in finals[label].items()} for label in steps_size}


def run_fresh_set(label: str, root=None, workers: int | None = None, log=print, plan=None, **quick) -> None:
    """Train and store one fresh set under the protocol (the classical windows, the selection, three seed sets).

    ``root``: where the artifact set is written (default: the package's); §14.63's stored
    artifacts are always read from the package. ``plan``: a smaller plan for a quick run (its
    manifest records it); default :func:`fresh_plan`.
    """
    name = artifact_name(label)
    if label == SEEDS_SET:
        return run_m3_seed_sets(root, workers, log, plan, **quick)
    t0 = time.perf_counter()
    plan = fresh_plan() if plan is None else plan
    sets = _classical_windows({label: FRESH_SETS[label]}, log)
    _, members, _ = _validation_trainings(sets, None, plan, workers, log, " fresh")
    selection, chosen, _ = _choose_ensembles(sets, members, plan, log, " (fresh)")
    d = sets[label]
    last = d.win[0]
    preds = _seed_finals(sets, plan, chosen, workers)[label]
    frame = d.cv[["unique_id", "ds", "cutoff", "y", *CLASSICAL_MODELS]].copy()
    hold = frame.cutoff == frame.groupby("unique_id").cutoff.transform("max")
    for key, f in preds.items():
        col = pd.DataFrame({"unique_id": np.repeat(last.ids, d.h), "step": np.tile(np.arange(d.h), len(last.ids)),
                            key: np.asarray(f, float).ravel()})
        at = frame[hold].assign(step=frame[hold].groupby("unique_id").cumcount())
        frame.loc[hold, key] = at.merge(col, on=["unique_id", "step"], how="left", validate="one_to_one")[key].to_numpy()
    if frame.loc[hold, list(preds)].isna().any().any():
        raise RuntimeError("a seed set left a hold-out series without forecasts")
    steps, size = chosen[label]
    seconds = dict(d.seconds, whole=time.perf_counter() - t0)
    files = {"forecasts.csv.gz": gzip.compress(_csv(frame.assign(unique_id=frame.unique_id.map(str))), mtime=0),
             "selection.csv": _csv(pd.concat(selection, ignore_index=True)),
             "chosen.csv": _csv(pd.DataFrame([dict(dataset=label, steps=steps, members=size)])),
             "timings.csv": _csv(pd.DataFrame([seconds]))}
    write_artifacts(name, files, fresh_config(label, plan), root)
    log(f"{label}: stored as {name} in {seconds['whole']:.0f} s")


def _holdout_window(label: str, key: str) -> dict:
    """One data set with its official hold-out window alone, cut by a Naive cross-validation (nothing else fitted)."""
    src = _load(key)
    cv = Forecaster(["Naive"], freq=src.freq, season_length=src.season).cross_validation(
        src.h, src.train, n_windows=1, step_size=src.h, test_df=src.test,
        min_train_length=min_train_length(src.h, src.season))
    return {label: DataSet(label, key, 1, src.season, src.h, src.history, cv, training_windows(cv, src.history),
                           src.train.unique_id.nunique(), official=True)}


def run_m3_seed_sets(root=None, workers: int | None = None, log=print, plan=None, steps_size=None) -> None:
    """Retrain §14.63's round 3 ensemble on M3 monthly with the seed sets after the first, and store their forecasts.

    ``steps_size``: (steps, members) for a quick run with a smaller ``plan`` (default: §14.63's stored choice).
    """
    t0 = time.perf_counter()
    plan = round3_plan() if plan is None else plan
    if steps_size is None:
        rounds = read_artifact_csv(FORECAST, "nbeats_rounds.csv")
        r3 = rounds[(rounds.dataset == SEEDS_SET) & (rounds["round"] == 3)].iloc[0]
        steps_size = int(r3.steps), int(r3.members)
    steps, size = steps_size
    sets = _holdout_window(SEEDS_SET, "M3/monthly")
    plans = {seed_label(s): replace(plan, seeds=s) for s in SEED_SETS[1:]}
    finals = _final_ensembles(sets, plans, {SEEDS_SET: [_Round(3, k, "all", size, steps, size, np.nan)
                                                         for k in plans]}, workers)[SEEDS_SET]
    last = sets[SEEDS_SET].win[0]
    h = sets[SEEDS_SET].h
    frame = pd.DataFrame({"unique_id": np.repeat(last.ids, h), "step": np.tile(np.arange(1, h + 1), len(last.ids))})
    for key, by_member in finals.items():
        frame[key] = ensemble_median([by_member[m][steps] for m in range(size)]).ravel()
    seconds = dict(sets[SEEDS_SET].seconds, whole=time.perf_counter() - t0)
    files = {"forecasts.csv.gz": gzip.compress(_csv(frame.assign(unique_id=frame.unique_id.map(str))), mtime=0),
             "chosen.csv": _csv(pd.DataFrame([dict(dataset=SEEDS_SET, steps=steps, members=size)])),
             "timings.csv": _csv(pd.DataFrame([seconds]))}
    write_artifacts(artifact_name(SEEDS_SET), files, fresh_config(SEEDS_SET, plan), root)
    log(f"{SEEDS_SET} seed sets: stored in {seconds['whole']:.0f} s")


def fresh_config(label: str, plan) -> dict:
    """What a fresh artifact set was made with (its manifest's config)."""
    return {"dataset": label, "protocol": "docs/forecast-fresh-sets.md", "seed_sets": [list(s) for s in SEED_SETS],
            "sets": {k: list(v) for k, v in FRESH_SETS.items()}, "donors": DONORS, "nbeats": plan.describe(),
            "classical": CLASSICAL_MODELS}
