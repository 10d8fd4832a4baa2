"""The experiment's trainings: the global models on every window in worker processes, N-BEATS's members on the
validation windows over each round's grid, the choice of step count and ensemble size there, and the final
ensembles retrained up to the last origin."""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...forecast.core import Forecaster
from ...forecast.intervals import interval_columns
from ...forecast.metrics import mase_by_row
from ...forecast.nbeats import NBeatsConfig, NBeatsForecaster, ensemble_median
from ...forecast.neural import NeuralConfig, NeuralForecaster
from ...forecast.origins import TrainingWindow, training_windows
from ...parallel import run_calls
from .scoring import _attach, native_interval_models
from .sets import DataSet, _load
from .settings import (
    ABLATIONS, CLASSICAL_MODELS, LEVELS, NBeatsPlan, NEURAL, ROUND_NAMES, min_train_length, recipe_plan,
    round3_recipe,
)


# ---------------------------------------------------------------------------------------------------------------
# The jobs (top-level functions, so that worker processes can run them)
# ---------------------------------------------------------------------------------------------------------------
def _global_job(arch: str, name: str, config: NeuralConfig, season: int, frame: pd.DataFrame, h: int):
    t0 = time.perf_counter()
    preds = NeuralForecaster(arch, name=name, config=config, season_length=season,
                             device="cpu").fit(frame, h).predict(frame, h)  # the stored results are the CPU's
    return preds, time.perf_counter() - t0


def _one_member(config: NBeatsConfig, seed: int, season: int) -> NBeatsForecaster:
    """An ensemble of the one member ``config`` (an ablation's variant): its member is ``config`` itself."""
    one = NBeatsForecaster(config, input_multiples=(config.input_multiple,), losses=(config.loss,), seeds=(seed,),
                           season_length=season, device="cpu")
    if one.member_configs() != [config]:
        raise RuntimeError("an ablation variant's member is not the config it was built from")
    return one


def _cost(fn, args) -> float:
    """Rough seconds of a job on one core, for longest-first scheduling."""
    if fn is _global_job:
        arch, _, c, season, frame, h = args
        L = min(60, max(2 * h, 2 * season))
        return c.max_steps * c.batch_size * L * (2.5e-6 if arch == "transformer" else 1.5e-6)
    c = args[3]  # an N-BEATS member's job (NBeatsForecaster.member_jobs): series, h, season, config, ...
    per_step = 12e-3 * (c.width / 256) ** 2 * c.blocks * c.layers / 6 * c.batch_size / 512
    return c.max_steps * per_step


# ---------------------------------------------------------------------------------------------------------------
# Windows and validation
# ---------------------------------------------------------------------------------------------------------------
def _unit_mase(pred: np.ndarray, w: TrainingWindow) -> np.ndarray:
    """MASE of each series of a window, as :func:`seqlab.forecast.evaluate` computes it (NaN where the scale is 0)."""
    return mase_by_row(w.test, pred, w.scale)


def choose_on_validation(members: list[dict], windows: list[TrainingWindow]) -> pd.DataFrame:
    """Validation MASE of the median of the first ``k`` members after ``s`` steps, for every (s, k).

    ``members[m][j][s]`` is member ``m``'s forecast on validation window ``j`` after
    ``s`` steps. The score is the mean over all (series, window) units, as in the
    "all windows" scope. The row with the lowest score is marked ``chosen`` (ties:
    fewer steps, then fewer members).
    """
    rows = []
    steps = sorted(members[0][windows[0].j])
    for s in steps:
        for k in range(1, len(members) + 1):
            units = np.concatenate([_unit_mase(ensemble_median([m[w.j][s] for m in members[:k]]), w)
                                    for w in windows])
            rows.append(dict(steps=s, members=k, validation_mase=float(np.nanmean(units)),
                             units=int(np.isfinite(units).sum())))
    table = pd.DataFrame(rows)
    table["chosen"] = table.index == _lowest(table).name
    return table


# ---------------------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------------------
def _classical_windows(datasets: dict, log) -> dict:
    """Step 1: the classical models on every window of every data set; what the later steps need per set."""
    sets = {}
    for label, (key, windows) in datasets.items():
        src = _load(key)
        fc = Forecaster(CLASSICAL_MODELS, freq=src.freq, season_length=src.season, n_jobs=2)
        t0 = time.perf_counter()
        cv = fc.cross_validation(src.h, src.train, n_windows=windows, step_size=src.h, test_df=src.test,
                                 min_train_length=None if src.test is None else min_train_length(src.h, src.season),
                                 level=list(LEVELS), intervals="native")
        sets[label] = DataSet(label, key, windows, src.season, src.h, src.history, cv,
                              training_windows(cv, src.history), src.train.unique_id.nunique(),
                              official=src.test is not None, seconds={"classical": time.perf_counter() - t0})
        log(f"{label}: classical models in {sets[label].seconds['classical']:.0f} s")
    return sets


def _validation_trainings(sets: dict, neural_config: NeuralConfig | None, plan: NBeatsPlan, workers, log,
                          suffix: str = ""):
    """Step 2: the global models on every window; N-BEATS members (and the ablation) on the validation windows.

    With ``neural_config=None`` only the N-BEATS members run (round 3's). Returns ``(preds,
    members, ablation)``: label -> model -> window -> forecasts.
    """
    calls, tags = [], []
    for label, d in sets.items():
        for w in d.win:
            for name, arch in NEURAL.items():
                if arch != "nbeats" and neural_config is not None:
                    calls.append((_global_job, (arch, name, neural_config, d.season, w.frame, d.h)))
                    tags.append(("global", label, name, w.j))
            if w.j > 0:
                top = plan.forecaster(label, d.season, max(plan.grid(label)))
                jobs = top.member_jobs(w.frame, d.h, plan.grid(label))
                calls += jobs
                tags += [("member", label, m, w.j) for m in range(len(jobs))]
                if plan.ablation:
                    first = top.member_configs()[0]
                    for variant, (where, change) in ABLATIONS.items():
                        if where != label:
                            continue
                        calls += _one_member(replace(first, **change), plan.seeds[0], d.season).member_jobs(
                            w.frame, d.h, plan.grid(label))
                        tags.append(("ablation", label, variant, w.j))
    log(f"{len(calls)} trainings on the validation windows")
    results = run_calls(calls, workers=workers, cost=_cost)
    preds = {label: {} for label in sets}  # label -> model -> j -> {uid: forecast}
    members = {label: {} for label in sets}  # label -> m -> j -> {steps: (N, h)}
    ablation = {}
    seconds_key = {"member": "N-BEATS validation" + suffix, "ablation": "N-BEATS ablation"}
    for (kind, label, what, j), (out, secs) in zip(tags, results):
        target = {"global": preds, "member": members}.get(kind)
        if target is None:
            ablation.setdefault(label, {}).setdefault(what, {})[j] = out
        else:
            target[label].setdefault(what, {})[j] = out
        sec = sets[label].seconds
        key = seconds_key.get(kind, what)
        sec[key] = sec.get(key, 0.0) + secs
    return preds, members, ablation


def _choose_ensembles(sets: dict, members: dict, plan: NBeatsPlan, log, tag: str = ""):
    """Step 3: step count and ensemble size per data set, chosen on its validation windows (or a donor's).

    Returns ``(selection tables, chosen, pools)``. ``pools[label]`` maps each pool of members
    (the first architecture's, then all of them) to the choice the same rule makes within
    it, ``(steps, size, validation MASE)``.
    """
    selection, chosen, rounds = [], {}, {}
    for label, d in sets.items():
        val = [w for w in d.win if w.j > 0]
        if val:
            mem = [members[label][m] for m in sorted(members[label])]
            table = choose_on_validation(mem, val)
            selection.append(table.assign(dataset=label, chosen_on=label))
            rounds[label] = {name: _best(table[table.members <= size])
                             for name, size in plan.pools(label).items()}
            best = table[table.chosen].iloc[0]
            chosen[label] = (int(best.steps), int(best.members))
    for label in sets:
        if label not in chosen:
            donor = plan.like.get(label)
            if donor in chosen:
                chosen[label], rounds[label] = chosen[donor], rounds[donor]
                rows = [r for r in selection if r.dataset.iloc[0] == donor][0]
                selection.append(rows.assign(dataset=label, chosen_on=donor))
            else:  # no validation window anywhere: the largest step count, every member
                top = plan.forecaster(label, sets[label].season, max(plan.grid(label)))
                chosen[label] = (max(plan.grid(label)), len(top.member_configs()))
                rounds[label] = {name: (chosen[label][0], size, np.nan) for name, size in plan.pools(label).items()}
        log(f"{label}{tag}: N-BEATS with {chosen[label][1]} members, {chosen[label][0]} steps (chosen on validation)")
    return selection, chosen, rounds


def _lowest(table: pd.DataFrame) -> pd.Series:
    """The row with the lowest validation MASE (ties: fewer steps, then fewer members): the selection rule."""
    return table.sort_values(["validation_mase", "steps", "members"]).iloc[0]


def _best(table: pd.DataFrame) -> tuple[int, int, float]:
    """(steps, members, validation MASE) that the selection rule picks from ``table``."""
    best = _lowest(table)
    return int(best.steps), int(best.members), float(best.validation_mase)


@dataclass(frozen=True)
class _Round:
    number: int
    plan: str  # which trained pool of members: "round 2" (rounds 1 and 2) or "round 3"
    pool: str
    pool_size: int
    steps: int
    members: int
    validation_mase: float


def _final_ensembles(sets: dict, plans: dict, rounds: dict, workers) -> dict:
    """Step 4: retrain each round's members up to the last origin; returns label -> plan -> member -> steps -> (N, h).

    Each member is trained once, to the largest step count any round needs, with a
    checkpoint at each round's count (the learning rate is constant, so a checkpoint is
    the model a shorter run ends with).
    """
    calls, tags = [], []
    for label, d in sets.items():
        last = d.win[0]
        for key, plan in plans.items():
            need = [(r.steps, r.members) for r in rounds[label] if r.plan == key]
            size = max(k for _, k in need)
            ensemble = plan.forecaster(label, d.season, max(plan.grid(label)), size=size)
            by_marks: dict = {}  # members that share the step counts of the rounds they are in train in one call
            for m in range(size):
                by_marks.setdefault(tuple(sorted({s for s, k in need if m < k})), []).append(m)
            for marks, ms in by_marks.items():
                calls += ensemble.member_jobs(last.frame, d.h, marks, members=ms)
                tags += [(label, key, m) for m in ms]
    finals = {}
    for (label, key, m), (out, secs) in zip(tags, run_calls(calls, workers=workers, cost=_cost)):
        finals.setdefault(label, {}).setdefault(key, {})[m] = out
        sec = sets[label].seconds
        name = "N-BEATS final" if key == "round 2" else "N-BEATS round 3 final"
        sec[name] = sec.get(name, 0.0) + secs
    return finals


def _round_forecasts(d: "DataSet", r: _Round, members: dict, finals: dict) -> dict:
    """One round's N-BEATS forecasts on every window: window -> {series: forecast} (the median of its members)."""
    out = {}
    for w in d.win:
        if w.j == 0:
            f = ensemble_median([finals[r.plan][m][r.steps] for m in range(r.members)])
        else:
            mem = members[r.plan]
            f = ensemble_median([mem[m][w.j][r.steps] for m in sorted(mem)[: r.members]])
        out[w.j] = dict(zip(w.ids, f))
    return out


def _train(datasets: dict, neural_config: NeuralConfig, plan: NBeatsPlan, workers, log) -> dict:
    """Steps 1-4: every model's forecasts on every window, and the N-BEATS search's evidence."""
    sets = _classical_windows(datasets, log)
    preds, members2, ablation = _validation_trainings(sets, neural_config, plan, workers, log)
    selection2, chosen2, pools2 = _choose_ensembles(sets, members2, plan, log, " (round 2)")
    ablation_table = _ablation_table(sets, members2, ablation, chosen2) if ablation else \
        pd.DataFrame(columns=["dataset", "ingredient", "change", "window", "validation_mase", "steps"])
    recipe = round3_recipe(ablation_table)
    plan3 = recipe_plan(plan, recipe)
    log("round 3 recipe: " + (", ".join(recipe[recipe.adopted].change) or "no change"))
    _, members3, _ = _validation_trainings(sets, None, plan3, workers, log, " round 3")
    selection3, chosen3, pools3 = _choose_ensembles(sets, members3, plan3, log, " (round 3)")
    rounds = {}
    for label in sets:
        p2, p3 = list(pools2[label].items()), list(pools3[label].items())
        rounds[label] = [_Round(1, "round 2", p2[0][0], plan.pools(label)[p2[0][0]], *p2[0][1]),
                         _Round(2, "round 2", p2[-1][0], plan.pools(label)[p2[-1][0]], *p2[-1][1]),
                         _Round(3, "round 3", p3[-1][0], plan3.pools(label)[p3[-1][0]], *p3[-1][1])]
    finals = _final_ensembles(sets, {"round 2": plan, "round 3": plan3}, rounds, workers)
    frames = []
    for label, d in sets.items():
        mem = {"round 2": members2[label], "round 3": members3[label]}
        for r in rounds[label]:
            preds[label][ROUND_NAMES[r.number]] = _round_forecasts(d, r, mem, finals[label])
        # statsforecast's own bounds are kept; the others' come from the stored points (conformal_from_windows)
        own = set(native_interval_models(d.cv))
        drop = [c for m in CLASSICAL_MODELS if m not in own for c in interval_columns(m, LEVELS) if c in d.cv.columns]
        frames.append(_attach(d.cv.drop(columns=drop), d.win, preds[label], d.h).assign(dataset=label))
    selection = pd.concat([pd.concat(selection2, ignore_index=True).assign(round=2),
                           pd.concat(selection3, ignore_index=True).assign(round=3)], ignore_index=True)
    round_rows = pd.DataFrame([dict(dataset=label, round=r.number, pool=r.pool, pool_size=r.pool_size, steps=r.steps,
                                    members=r.members, validation_mase=r.validation_mase)
                               for label in sets for r in rounds[label]])
    members_table = pd.concat([_members_table(sets, members2, plan).assign(round=2),
                               _members_table(sets, members3, plan3).assign(round=3)], ignore_index=True)
    return dict(sets=sets, forecasts=pd.concat(frames, ignore_index=True), selection=selection, rounds=round_rows,
                members=members_table, ablation=ablation_table, recipe=recipe, timings=_timings(sets))


def _timings(sets: dict) -> pd.DataFrame:
    rows = []
    for label, d in sets.items():
        sec = d.seconds
        rows.append(dict(
            dataset=label, series=d.series, windows=d.windows, series_windows=sum(len(w.ids) for w in d.win),
            seconds=sum(sec.values()), classical_seconds=sec["classical"], gru_seconds=sec.get("GRU", 0.0),
            transformer_seconds=sec.get("Transformer", 0.0),
            nbeats_validation_seconds=sec.get("N-BEATS validation", 0.0),
            nbeats_ablation_seconds=sec.get("N-BEATS ablation", 0.0),
            nbeats_final_seconds=sec.get("N-BEATS final", 0.0),
            round3_validation_seconds=sec.get("N-BEATS validation round 3", 0.0),
            round3_final_seconds=sec.get("N-BEATS round 3 final", 0.0)))
    return pd.DataFrame(rows)


def _members_table(sets, members, plan) -> pd.DataFrame:
    """Each member's own validation MASE after each step count: the evidence for input lengths and step counts."""
    rows = []
    for label, by_member in members.items():
        d = sets[label]
        val = {w.j: w for w in d.win if w.j > 0}
        if not by_member:
            continue
        configs = plan.forecaster(label, d.season, max(plan.grid(label))).member_configs()
        for m, by_window in sorted(by_member.items()):
            for s in sorted(next(iter(by_window.values()))):
                units = np.concatenate([_unit_mase(f[s], val[j]) for j, f in by_window.items()])
                rows.append(dict(dataset=label, member=m, stack=configs[m].stack,
                                 input_multiple=configs[m].input_multiple,
                                 loss=configs[m].loss, seed=configs[m].seed, steps=s,
                                 validation_mase=float(np.nanmean(units))))
    return pd.DataFrame(rows)


def _ablation_table(sets, members, ablation, chosen) -> pd.DataFrame:
    """Validation MASE of the first member with one setting changed, at the set's chosen step count, per window.

    Each set's rows start with the unchanged first member (the reference) and end
    with the chosen ensemble, so every change reads against the same member.
    """
    rows = []
    for label, variants in ablation.items():
        d = sets[label]
        s, k = chosen[label]
        val = {w.j: w for w in d.win if w.j > 0}
        mem = [members[label][m] for m in sorted(members[label])]
        runs = {"reference: the first member": ("", mem[0])}
        runs |= {name: (", ".join(f"{a}={b}" for a, b in ABLATIONS[name][1].items()), f)
                 for name, f in variants.items()}
        for name, (change, by_window) in runs.items():
            for j in sorted(val):
                rows.append(dict(dataset=label, ingredient=name, change=change, window=j, steps=s,
                                 validation_mase=float(np.nanmean(_unit_mase(by_window[j][s], val[j])))))
        for j in sorted(val):
            f = ensemble_median([m[j][s] for m in mem[:k]])
            rows.append(dict(dataset=label, ingredient=f"ensemble: median of {k} members", change=f"members={k}",
                             window=j, steps=s, validation_mase=float(np.nanmean(_unit_mase(f, val[j])))))
    return pd.DataFrame(rows)
