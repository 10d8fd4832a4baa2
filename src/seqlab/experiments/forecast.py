"""§14.63's comparison: classical baselines against global neural forecasters on competition data.

``HEAVY_EVAL=1`` recomputes it (1,873 s alone on two cores when last run, with the second N-BEATS round) and
rewrites ``seqlab/artifacts/forecast``; otherwise the committed, manifest-verified CSVs load.

The run has four steps, and the N-BEATS ensemble's settings are chosen in the second:

1. the classical models are cross-validated by statsforecast on every window;
2. the global models are trained on every window's training part, each training an
   independent job in worker processes. N-BEATS members are trained on the
   *validation windows* only (the windows before each set's last), with their forecasts
   recorded at every step count of a grid; the ablation variants run beside them;
3. per data set the step count and the ensemble size with the lowest validation MASE
   are chosen (:func:`choose_on_validation`); nothing of the last window is looked at;
4. the chosen members are retrained up to the last origin (for the competition sets,
   the official hold-out) and everything is scored.
"""
from __future__ import annotations

import gzip
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from ..forecast.core import Forecaster
from ..forecast.data import air_passengers, competition
from ..forecast.evaluation import bootstrap_difference, evaluate, per_horizon, summarize, unit_mase
from ..forecast.intervals import conformal_from_windows, interval_columns, min_calibration_size
from ..forecast.intervals import window_index as series_window_index
from ..forecast.metrics import mase_by_row
from ..forecast.nbeats import GENERIC_MEMBER, INTERPRETABLE_MEMBER, NBeatsConfig, NBeatsForecaster, ensemble_median
from ..forecast.neural import NeuralConfig, NeuralForecaster
from ..forecast.origins import TrainingWindow, training_windows
from ..parallel import run_calls
from ..store import artifact_dir, heavy_eval, read_artifact_csv, verify_artifacts, write_artifacts

__all__ = ["DATASETS", "SCOPES", "CLASSICAL_MODELS", "COMBINATIONS", "CLASSICAL_ENTRIES", "ROUND_NAMES", "ROUND3",
           "Round3Protocol", "round3_recipe", "recipe_plan", "add_combinations", "score_forecast_artifacts",
           "TRAINING_FILES", "NEURAL", "NEURAL_CONFIG", "NBEATS_CONFIG", "NBeatsPlan",
           "NBEATS_PLAN", "ABLATIONS", "ABLATION_SETS", "nbeats_plan", "min_train_length", "official_holdout",
           "window_index", "validation_units", "choose_on_validation", "chosen_nbeats", "experiment_config",
           "run_forecast_experiment", "forecast_results", "nbeats_results", "interval_results", "interval_group_results",
           "length_groups", "LENGTH_GROUPS",
           "native_interval_models", "LEVELS"]

NAME = "forecast"
CLASSICAL_MODELS = ["Naive", "SeasonalNaive", "RandomWalkWithDrift", "Naive2", "AutoETS", "Theta", "AutoTheta",
                    "M4 Comb"]
NEURAL = {"GRU": "gru", "Transformer": "transformer", "N-BEATS": "nbeats"}
#: the combinations, each the pointwise mean of its members' forecasts (no weights, nothing fitted): the classical
#: one of the statistical models that are best on their own, and a neural + classical one
COMBINATIONS = {"Combination": ("AutoETS", "AutoTheta", "Theta"), "N-BEATS + Combination": ("N-BEATS", "Combination")}
#: the classical entries a neural model must beat: every classical model and the classical combination
CLASSICAL_ENTRIES = CLASSICAL_MODELS + ["Combination"]
#: the N-BEATS ensemble of each round, as stored in the forecasts; the chapter's "N-BEATS" is round 3's
ROUND_NAMES = {1: "N-BEATS round 1", 2: "N-BEATS round 2", 3: "N-BEATS"}
#: name -> (loader, windows). The last window of a competition set is its official hold-out; earlier windows
#: step back one horizon at a time and include only the series long enough for them (see min_train_length).
#: M1 yearly is there for the AutoTheta anchor on its hold-out; its two earlier windows are its N-BEATS validation
#: windows and the calibration set of its conformal intervals.
DATASETS = {"AirPassengers": ("air", 4), "M3 monthly": ("M3/monthly", 3), "M3 yearly": ("M3/yearly", 3),
            "Tourism quarterly": ("Tourism/quarterly", 3), "M1 yearly": ("M1/yearly", 3)}
#: the prediction intervals scored on every set: conformal ones for every model, calibrated on the windows before
#: the scored one (:func:`seqlab.forecast.intervals.conformal_from_windows`, no refits), and the statsforecast
#: models' own
LEVELS = (80, 95)
#: "all windows" averages over every (series, window) pair; "official hold-out" scores the competition's own
#: test period only (AirPassengers has none: its four rolling windows are the design)
SCOPES = ("all windows", "official hold-out")
NEURAL_CONFIG = NeuralConfig(hidden_size=64, max_steps=1500, batch_size=256, learning_rate=1e-3, val_check_steps=100,
                             patience=5, seed=1)
#: what every N-BEATS member shares (chosen on M3 monthly's validation windows; see the ablation)
NBEATS_CONFIG = GENERIC_MEMBER


@dataclass(frozen=True)
class NBeatsPlan:
    """The N-BEATS ensemble of one run: shared settings, members, and the grids searched on validation windows.

    ``configs``: the member architectures, in member order (the generic stack, then the
    interpretable one); ``inputs[dataset]``: the input lengths (multiples of the horizon) of its members;
    ``steps[dataset]``: the step counts tried; ``like[dataset]``: a set takes the grids of the
    named one (and, when it has no validation windows of its own, its choices). ``ablation``: run the
    one-change-at-a-time variants of :data:`ABLATIONS`.
    """

    configs: tuple = (NBEATS_CONFIG,)
    seeds: tuple = (1, 2)
    losses: tuple = ("mase",)
    inputs: dict = field(default_factory=dict)
    steps: dict = field(default_factory=dict)
    like: dict = field(default_factory=dict)
    ablation: bool = True

    def forecaster(self, dataset: str, season: int, steps: int, size: int | None = None, **kw) -> NBeatsForecaster:
        """The ensemble of ``dataset`` trained for ``steps`` steps, its first ``size`` members."""
        d = self.like.get(dataset, dataset)
        return NBeatsForecaster(tuple(replace(c, max_steps=int(steps)) for c in self.configs),
                                input_multiples=self.inputs[d],
                                losses=self.losses, seeds=self.seeds, season_length=season, size=size,
                                **{"device": "cpu", **kw})  # the stored results are the CPU's

    def grid(self, dataset: str) -> tuple:
        return tuple(self.steps[self.like.get(dataset, dataset)])

    def pools(self, dataset: str) -> dict[str, int]:
        """The nested pools an ensemble size is chosen from: the first architecture's members, then all of them.

        The members come architecture first, so each pool is a prefix of the member list;
        its name lists the stacks it holds ("generic", "generic + interpretable").
        """
        per = len(self.seeds) * len(self.losses) * len(self.inputs[self.like.get(dataset, dataset)])
        stacks = [c.stack for c in self.configs]
        return {" + ".join(stacks[: a + 1]): per * (a + 1) for a in range(len(stacks))}

    def describe(self) -> dict:
        return {"configs": [asdict(c) for c in self.configs], "seeds": list(self.seeds), "losses": list(self.losses),
                "inputs": {k: list(v) for k, v in self.inputs.items()},
                "steps": {k: list(v) for k, v in self.steps.items()}, "like": dict(self.like),
                "ablation": self.ablation}


NBEATS_PLAN = NBeatsPlan(
    configs=(NBEATS_CONFIG, INTERPRETABLE_MEMBER),
    inputs={"AirPassengers": (2.0, 3.0, 4.0), "M3 monthly": (2.0, 3.0, 4.0), "M3 yearly": (1.5, 2.0, 3.0),
            "Tourism quarterly": (1.5, 2.0, 3.0)},
    steps={"AirPassengers": (100, 250, 500), "M3 monthly": (1000, 1500, 2000, 2500),
           "M3 yearly": (100, 200, 300, 500), "Tourism quarterly": (100, 250, 500, 750)},
    like={"M1 yearly": "M3 yearly"})
#: the ablation: each variant changes one setting of the ensemble's first member and is scored on the validation
#: windows of the data set where that setting can matter (M3 monthly's series are long, so its cut points are
#: never limited by ``history``, and few of its inputs are masked; Tourism's and M3 yearly's are)
ABLATIONS = {
    "windows stop one horizon before the origin": ("M3 monthly", {"reach_origin": False}),
    "windows drawn uniformly (long series weigh more)": ("M3 monthly", {"sampling": "windows"}),
    "loss: scaled MAE instead of MASE": ("M3 monthly", {"loss": "mae"}),
    "loss: sMAPE instead of MASE": ("M3 monthly", {"loss": "smape"}),
    "raw weights instead of their moving average": ("M3 monthly", {"ema": None}),
    "no naive level under the blocks": ("M3 monthly", {"level": False}),
    "interpretable basis (trend, seasonality)": ("M3 monthly", {"stack": INTERPRETABLE_MEMBER.stack,
                                                                 "blocks": INTERPRETABLE_MEMBER.blocks}),
    "short histories padded with their first value": ("M3 yearly", {"short": "pad"}),
    "every cut point, not the last five horizons": ("Tourism quarterly", {"history": None}),
}
ABLATION_SETS = tuple(dict.fromkeys(d for d, _ in ABLATIONS.values()))


@dataclass(frozen=True)
class Round3Protocol:
    """Round 3 of the N-BEATS search, fixed before any of its hold-out numbers existed (docs/forecast-round-3.md).

    The recipe: each one-change variant of :data:`ABLATIONS`, except those in ``by_pools``,
    is adopted when its mean validation MASE over its data set's validation windows (at the
    step count round 2 chose there) is lower than the unchanged first member's; of the
    variants in one ``exclusive`` group only the lowest can be adopted. The adopted changes
    apply to every member of every set. The members are round 2's (both stacks, the same
    input lengths and seeds), trained with the recipe on the validation windows; step count
    and ensemble size are chosen by the same rule as before (:func:`choose_on_validation`).
    Round 3's ensemble is the chapter's N-BEATS. The verdict compares it on the official
    hold-out with the best classical entry (:data:`CLASSICAL_ENTRIES`, the one with the lowest
    hold-out MASE), by the paired bootstrap over series and the share of series won.
    """

    by_pools: tuple = ("interpretable basis (trend, seasonality)",)  # the stacks are chosen as pools of members
    exclusive: tuple = (("loss: scaled MAE instead of MASE", "loss: sMAPE instead of MASE"),)
    seeds: tuple = (1, 2)
    #: targets, benchmarks only: M3 monthly MASE at most 0.829 and significantly below the best classical entry;
    #: M3 yearly at most AutoTheta's 2.598; each set's final ensemble trained in at most 10 minutes
    budget_final_seconds: float = 600.0


ROUND3 = Round3Protocol()


def round3_recipe(ablation: pd.DataFrame, protocol: Round3Protocol = ROUND3) -> pd.DataFrame:
    """The recipe rule of :class:`Round3Protocol` applied to an ablation table: one row per variant, ``adopted``
    marked, with the mean validation MASE of the variant and of the reference."""
    rows = []
    ref_name = "reference: the first member"
    for label, g in ablation.groupby("dataset", sort=False):
        ref = g[g.ingredient == ref_name].validation_mase.mean()
        for name, v in g[g.ingredient.isin(list(ABLATIONS))].groupby("ingredient", sort=False):
            rows.append(dict(dataset=label, ingredient=name, change=v.change.iloc[0],
                             validation_mase=float(v.validation_mase.mean()), reference_mase=float(ref),
                             considered=name not in protocol.by_pools))
    table = pd.DataFrame(rows, columns=["dataset", "ingredient", "change", "validation_mase", "reference_mase",
                                        "considered"])
    better = table.considered & (table.validation_mase < table.reference_mase)
    for group in protocol.exclusive:
        inside = better & table.ingredient.isin(group)
        if inside.sum() > 1:
            keep = table[inside].validation_mase.idxmin()
            better &= ~inside | (table.index == keep)
    return table.assign(adopted=better)


def recipe_plan(plan: NBeatsPlan, recipe: pd.DataFrame, protocol: Round3Protocol = ROUND3) -> NBeatsPlan:
    """``plan`` with the adopted changes of ``recipe`` in every member (a loss change replaces the losses)."""
    changes = {}
    for name in recipe[recipe.adopted].ingredient:
        changes |= ABLATIONS[name][1]
    loss = changes.pop("loss", None)
    return replace(plan, configs=tuple(replace(c, **changes) for c in plan.configs),
                   losses=(loss,) if loss else plan.losses, ablation=False)


def nbeats_plan(neural_config: NeuralConfig | None = None) -> NBeatsPlan:
    """The chapter's plan; for a quick run with a smaller ``neural_config``, one small member of the same size."""
    if neural_config is None or neural_config == NEURAL_CONFIG:
        return NBEATS_PLAN
    c = replace(NBEATS_CONFIG, width=neural_config.hidden_size, batch_size=neural_config.batch_size)
    inputs = {k: v[:1] for k, v in NBEATS_PLAN.inputs.items()}
    steps = {k: (neural_config.max_steps,) for k in NBEATS_PLAN.steps}
    return NBeatsPlan(configs=(c,), seeds=(neural_config.seed,), inputs=inputs, steps=steps, like=NBEATS_PLAN.like,
                      ablation=False)


def experiment_config(datasets: dict | None = None, neural_config: NeuralConfig | None = None,
                      nbeats: NBeatsPlan | None = None) -> dict:
    datasets = DATASETS if datasets is None else datasets
    neural_config = NEURAL_CONFIG if neural_config is None else neural_config
    plan = nbeats_plan(neural_config) if nbeats is None else nbeats
    return {"datasets": {k: list(v) for k, v in datasets.items()}, "classical": CLASSICAL_MODELS,
            "neural": NEURAL, "neural_config": asdict(neural_config), "nbeats": plan.describe(),
            "ablation": {k: [d, c] for k, (d, c) in ABLATIONS.items()} if plan.ablation else None,
            "airpassengers_h": 12, "min_train_length": "max(2 h, h + 2 season)", "scopes": list(SCOPES),
            "combinations": {k: list(v) for k, v in COMBINATIONS.items()}, "round3": asdict(ROUND3)}


def min_train_length(h: int, season: int) -> int:
    """Shortest training part a series may have in a rolling window: two horizons, or a horizon plus two seasons.

    The GRU and Transformer hold the last horizon of it out for early stopping, and the
    seasonal models need two full seasons in what remains.
    """
    return max(2 * h, h + 2 * season)


def official_holdout(err: pd.DataFrame) -> pd.DataFrame:
    """Each series' last window (the official hold-out of a competition set)."""
    return err[err.cutoff == err.groupby("unique_id").cutoff.transform("max")]


def window_index(frame: pd.DataFrame) -> pd.Series:
    """How many windows before its series' last each row's window is: 0 for the last (the official hold-out).

    Series are told apart by ``unique_id`` within each ``dataset`` when the frame has that column.
    """
    out = np.zeros(len(frame), dtype=int)
    sets = frame.groupby("dataset", sort=False).indices if "dataset" in frame.columns else {"": np.arange(len(frame))}
    for pos in sets.values():  # cutoffs are dates in one set and period numbers in another
        out[pos] = series_window_index(frame.iloc[pos])
    return pd.Series(out, index=frame.index)


def validation_units(units: pd.DataFrame) -> pd.DataFrame:
    """The (series, window) units of the validation windows: every window before each series' last."""
    return units[window_index(units) > 0]


@dataclass(frozen=True)
class Source:
    """One data set as loaded: training part, official hold-out (None: rolling windows only), season, horizon, and
    the calendar the classical models see."""

    train: pd.DataFrame
    test: pd.DataFrame | None
    season: int
    h: int
    freq: object

    @property
    def history(self) -> pd.DataFrame:
        """Everything observed: the training part with the hold-out after it."""
        if self.test is None:
            return self.train
        return pd.concat([self.train, self.test]).sort_values(["unique_id", "ds"], kind="stable")


def _load(key: str) -> Source:
    if key == "air":  # one series with a date index and no official hold-out: the rolling windows are the design
        return Source(air_passengers(), None, 12, 12, "ME")
    name, group = key.split("/")
    train, test, season, h = competition(name, group)
    return Source(train, test, season, h, 1)


@dataclass
class DataSet:
    """One data set of the comparison, as the steps of the run pass it on: where its series come from, its rolling
    origins, the classical models' forecasts there (``cv``), the windows cut from them (``win``) and the seconds
    each step took."""

    label: str
    key: str
    windows: int
    season: int
    h: int
    history: pd.DataFrame
    cv: pd.DataFrame
    win: list
    series: int
    official: bool  # an official hold-out (a competition's test period) is the last window
    seconds: dict = field(default_factory=dict)


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


def native_interval_models(cv: pd.DataFrame) -> list[str]:
    """The models of a cross-validation frame whose intervals are their own (``cv.attrs["intervals"]``)."""
    return [m for m, kind in cv.attrs.get("intervals", {}).items() if kind == "native"]


def _interval_scores(cv: pd.DataFrame, d: dict, names: list[str]) -> pd.DataFrame:
    """Coverage, Winkler score, scaled pinball loss and scaled CRPS of the 80% and 95% intervals of one set.

    Conformal intervals for every model, each window calibrated on the windows before it;
    scored on the official hold-out (a competition set) or on every window with enough
    calibration scores (AirPassengers: one series, so its three earlier windows give three
    scores per step, fewer than the four an 80% interval needs, and none is scored).
    Native intervals (statsforecast's own) on the same windows, or on all four of
    AirPassengers.
    """
    point = cv[["unique_id", "ds", "cutoff", "y", *names]]
    conf = conformal_from_windows(point, d.history, d.season, names, LEVELS)
    need = max(min_calibration_size(v) for v in LEVELS)
    j = window_index(conf)
    counts = conf.attrs["calibration_scores"]
    ok = [w for w, n in counts.items() if n >= need]
    if d.official:
        ok = [w for w in ok if w == 0]
    rows = []
    native = _native_models(cv)
    for kind, frame, models, keep in (("conformal", conf, names, np.isin(j, ok)),
                                      ("native", cv, native, np.isin(window_index(cv), [0] if d.official
                                                                      else list(range(d.windows))))):
        if not keep.any() or not models:
            continue
        e = evaluate(frame[keep], d.history, d.season, models, level=list(LEVELS))
        s = summarize(e, naive2=None)
        cal = min(counts[w] for w in ok) if kind == "conformal" else np.nan
        rows.append(s.assign(kind=kind, scope="official hold-out" if d.official else "all windows",
                             calibration_scores=cal))
    return pd.concat(rows, ignore_index=True)


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


def add_combinations(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with a column per :data:`COMBINATIONS` entry: the pointwise mean of its members, in order."""
    out = frame.copy()
    for name, parts in COMBINATIONS.items():
        out[name] = out[list(parts)].mean(axis=1)
    return out


#: the length groups of :func:`length_groups`, shortest first
LENGTH_GROUPS = ("short", "medium", "long")


def length_groups(d: "DataSet") -> pd.Series:
    """Each series' third of its set by the length of its training part at the last origin (ties: set order)."""
    last = d.win[0]
    lengths = pd.Series([len(y) for y in last.series], index=last.ids)
    return pd.qcut(lengths.rank(method="first"), len(LENGTH_GROUPS), labels=list(LENGTH_GROUPS)).astype(str)


def _interval_groups(cv: pd.DataFrame, d: "DataSet", names: list[str]) -> pd.DataFrame:
    """Coverage of the last window's intervals by length group and by horizon step (competition sets only).

    Three kinds: conformal with the scores pooled over all series, conformal calibrated
    within each length group (Mondrian), and statsforecast's own intervals. One row per
    (model, kind, grouping, group).
    """
    if not d.official:
        return pd.DataFrame()
    point = cv[["unique_id", "ds", "cutoff", "y", *names]]
    groups = length_groups(d)
    lengths = pd.Series([len(y) for y in d.win[0].series], index=d.win[0].ids)
    kinds = {"conformal": (conformal_from_windows(point, d.history, d.season, names, LEVELS), names),
             "conformal by length group": (conformal_from_windows(point, d.history, d.season, names, LEVELS,
                                                                  groups=groups), names),
             "native": (cv, _native_models(cv))}
    rows = []
    for kind, (frame, models) in kinds.items():
        last = frame[window_index(frame) == 0]
        step = last.groupby(["unique_id", "cutoff"]).cumcount() + 1
        group = last.unique_id.map(groups)
        for m in models:
            inside = {lv: ((last.y >= last[f"{m}-lo-{lv}"]) & (last.y <= last[f"{m}-hi-{lv}"])).astype(float)
                      for lv in LEVELS}
            for by, key in (("length", group), ("step", step)):
                for g, idx in key.groupby(key).groups.items():
                    ids = last.unique_id[idx].unique()
                    rows.append(dict(model=m, kind=kind, by=by, group=str(g), series=len(ids),
                                     shortest=int(lengths[ids].min()), longest=int(lengths[ids].max()),
                                     **{f"coverage_{lv}": float(inside[lv][idx].mean()) for lv in LEVELS}))
    return pd.DataFrame(rows)


def _native_models(frame: pd.DataFrame) -> list[str]:
    """The classical models whose own intervals the forecasts hold."""
    return [m for m in CLASSICAL_MODELS if all(c in frame.columns for c in interval_columns(m, LEVELS))]


def _score_sets(sets: dict, forecasts: pd.DataFrame, log) -> dict[str, list]:
    """Step 5: errors, summaries, per-horizon MASE, significance, residuals and intervals of every data set."""
    out = {k: [] for k in ("summary", "horizon", "tests", "units", "residuals", "intervals", "rounds", "groups")}
    names = CLASSICAL_MODELS + list(NEURAL) + list(COMBINATIONS)
    for label, d in sets.items():
        cv = add_combinations(forecasts[forecasts.dataset == label].drop(columns="dataset"))
        err = evaluate(cv, d.history, d.season, names, level=[])
        out["intervals"].append(_interval_scores(cv, d, names).assign(dataset=label))
        out["groups"].append(_interval_groups(cv, d, names).assign(dataset=label))
        out["units"].append(unit_mase(err).assign(dataset=label))
        out["residuals"].append(_residuals(cv, d.win, names, d.official, d.windows).assign(dataset=label))
        s, ph, sig = _score(label, d.official, d.windows, err, d.h, d.season, log)
        out["summary"] += s
        out["horizon"] += ph
        out["tests"] += sig
        last = cv[window_index(cv) == 0]
        for r, name in ROUND_NAMES.items():
            e = evaluate(last, d.history, d.season, [name], level=[])
            out["rounds"].append(dict(dataset=label, round=r, last_window_mase=float(unit_mase(e).mase.mean())))
    return out


def _sets_from_forecasts(forecasts: pd.DataFrame, datasets: dict) -> dict:
    """What scoring needs of each data set: its history, season, horizon and windows (from the stored forecasts)."""
    sets = {}
    for label, (key, windows) in datasets.items():
        src = _load(key)
        ids = {str(u): u for u in src.history.unique_id.unique()}  # the ids were written as text
        rows = forecasts.dataset == label
        forecasts.loc[rows, "unique_id"] = forecasts.loc[rows, "unique_id"].map(ids)
        cv = forecasts[rows]
        sets[label] = DataSet(label, key, windows, src.season, src.h, src.history, cv,
                              training_windows(cv, src.history, src.season), src.train.unique_id.nunique(),
                              official=src.test is not None)
    return sets


def _typed(frame: pd.DataFrame, columns=("cutoff", "ds")) -> pd.DataFrame:
    """CSV mixes AirPassengers' dates with the competition sets' period numbers; give each set its own type back."""
    parts = []
    for _, g in frame.groupby("dataset", sort=False):
        g = g.copy()
        for col in columns:
            c = pd.to_numeric(g[col], errors="coerce")
            g[col] = c.astype("int64") if c.notna().all() else pd.to_datetime(g[col])
        parts.append(g)
    return pd.concat(parts)


def _csv(frame: pd.DataFrame) -> bytes:
    """Full precision: 17 significant digits read back as the same float."""
    return frame.to_csv(index=False, float_format="%.17g").encode()


TRAINING_FILES = ("forecasts.csv.gz", "timings.csv", "nbeats_selection.csv", "nbeats_members.csv",
                  "nbeats_ablation.csv", "nbeats_recipe.csv", "nbeats_rounds.csv")


def score_forecast_artifacts(root=None, log=print, *, datasets: dict | None = None, config: dict | None = None):
    """Step 5 from the stored forecasts alone: rewrite every scored table of the artifact set.

    The trainings' files (:data:`TRAINING_FILES`) are verified and kept as they are; the
    summaries, significance tests, intervals, residuals and the rounds' hold-out MASE are
    computed again from ``forecasts.csv.gz`` and the raw data. ``config``: the manifest's
    (default: the stored one).
    """
    manifest = verify_artifacts(NAME, config, root)
    config = manifest["config"] if config is None else config
    datasets = {k: tuple(v) for k, v in config["datasets"].items()} if datasets is None else datasets
    raw = {f: (artifact_dir(NAME, root) / f).read_bytes() for f in TRAINING_FILES}
    forecasts = _typed(pd.read_csv(artifact_dir(NAME, root) / "forecasts.csv.gz", float_precision="round_trip",
                                   dtype={"unique_id": str}))
    sets = _sets_from_forecasts(forecasts, datasets)
    scored = _score_sets(sets, forecasts, log)
    rounds = read_artifact_csv(NAME, "nbeats_rounds.csv", root).drop(columns=["last_window_mase"], errors="ignore")
    rounds = rounds.merge(pd.DataFrame(scored["rounds"]), on=["dataset", "round"], how="left", validate="one_to_one")
    files = dict(raw) | {"nbeats_rounds.csv": _csv(rounds),
                         "summary.csv": _csv(pd.concat(scored["summary"])),
                         "per_horizon.csv": _csv(pd.concat(scored["horizon"])),
                         "significance.csv": _csv(pd.DataFrame(scored["tests"])),
                         "unit_mase.csv": _csv(pd.concat(scored["units"])),
                         "residuals.csv": _csv(pd.concat(scored["residuals"])),
                         "intervals.csv": _csv(pd.concat(scored["intervals"], ignore_index=True)),
                         "interval_groups.csv": _csv(pd.concat(scored["groups"], ignore_index=True))}
    write_artifacts(NAME, files, config, root)


def run_forecast_experiment(root=None, log=print, *, datasets: dict | None = None,
                            neural_config: NeuralConfig | None = None, nbeats: NBeatsPlan | None = None,
                            workers: int | None = None) -> None:
    """Cross-validate every model on every data set and write the artifact set.

    ``datasets`` (label -> (loader key, windows)), ``neural_config`` and ``nbeats``
    default to the chapter's; smaller ones make a quick run (a smaller ``neural_config``
    alone brings a one-member N-BEATS of the same size, see :func:`nbeats_plan`) whose
    manifest records what it used. ``workers``: processes for the trainings. The
    trainings' results are written first, so that scoring can be run again from them
    (:func:`score_forecast_artifacts`) without training anything.
    """
    datasets = DATASETS if datasets is None else datasets
    neural_config = NEURAL_CONFIG if neural_config is None else neural_config
    plan = nbeats_plan(neural_config) if nbeats is None else nbeats
    config = experiment_config(datasets, neural_config, plan)
    t_run = time.perf_counter()
    raw = _train(datasets, neural_config, plan, workers, log)
    log(f"trainings: {time.perf_counter() - t_run:.0f} s")
    f = raw["forecasts"]
    first = ["dataset", "unique_id", "ds", "cutoff", "y"]
    f = f[first + [c for c in f.columns if c not in first]].assign(unique_id=lambda x: x.unique_id.map(str))
    files = {"forecasts.csv.gz": gzip.compress(_csv(f), mtime=0), "timings.csv": _csv(raw["timings"]),
             "nbeats_selection.csv": _csv(raw["selection"]), "nbeats_members.csv": _csv(raw["members"]),
             "nbeats_ablation.csv": _csv(raw["ablation"]), "nbeats_recipe.csv": _csv(raw["recipe"]),
             "nbeats_rounds.csv": _csv(raw["rounds"])}
    write_artifacts(NAME, files, config, root)
    score_forecast_artifacts(root, log, datasets=datasets, config=config)
    log(f"whole run: {time.perf_counter() - t_run:.0f} s")


def _attach(cv: pd.DataFrame, windows: list[TrainingWindow], preds: dict, h: int) -> pd.DataFrame:
    """The cross-validation frame with one column per global model, matched by (series, window, step)."""
    keyed = cv.assign(j=window_index(cv), step=cv.groupby(["unique_id", "cutoff"]).cumcount())
    for name, by_window in preds.items():
        parts = [pd.DataFrame({"unique_id": np.repeat(list(f), h), "j": j, "step": np.tile(np.arange(h), len(f)),
                               name: np.concatenate([np.asarray(v, float) for v in f.values()])})
                 for j, f in by_window.items()]
        keyed = keyed.merge(pd.concat(parts), on=["unique_id", "j", "step"], how="left", validate="one_to_one")
    if keyed[list(preds)].isna().any().any():
        raise RuntimeError("a global model left a window without forecasts")
    return keyed.drop(columns=["j", "step"])


def _residuals(cv: pd.DataFrame, windows: list[TrainingWindow], names: list[str], official: bool,
               n_windows: int) -> pd.DataFrame:
    """The residual check: mean signed scaled error (forecast - actual) / MASE scale by model and step, per scope.

    A mean near zero at every step says the forecasts are not biased; MASE alone
    cannot tell over- from under-forecasting.
    """
    scale = pd.concat([pd.DataFrame({"unique_id": w.ids, "j": w.j, "scale": w.scale}) for w in windows])
    c = cv.assign(j=window_index(cv), step=cv.groupby(["unique_id", "cutoff"]).cumcount() + 1)
    c = c.merge(scale, on=["unique_id", "j"], how="left", validate="many_to_one")
    c = c[c.scale > 0]
    scopes = {"all windows": c} if n_windows > 1 else {}
    if official:
        scopes["official hold-out"] = c[c.j == 0]
    rows = []
    for scope, e in scopes.items():
        for m in names:
            r = (e[m] - e.y) / e.scale
            g = pd.DataFrame({"step": e.step, "r": r, "over": r > 0}).groupby("step")
            rows.append(pd.DataFrame({"scope": scope, "model": m, "step": g.r.mean().index,
                                      "mean_scaled_error": g.r.mean().to_numpy(),
                                      "share_over": g.over.mean().to_numpy()}))
    return pd.concat(rows, ignore_index=True)


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


def _score(label: str, official: bool, windows: int, err: pd.DataFrame, h: int, season: int,
           log) -> tuple[list, list, list]:
    """Summary, per-horizon and significance rows of one data set in each of its scopes."""
    summaries, horizons, tests = [], [], []
    scopes = {"all windows": err} if windows > 1 else {}
    if official:  # AirPassengers has none
        scopes["official hold-out"] = official_holdout(err)
    for scope, e in scopes.items():
        s = summarize(e).assign(dataset=label, scope=scope, horizon=h, season_length=season)
        summaries.append(s)
        horizons.append(per_horizon(e).assign(dataset=label, scope=scope))
        ranked = s.sort_values("mase", kind="stable")
        single = ranked[ranked.model.isin(CLASSICAL_MODELS)].model.iloc[0]
        entry = ranked[ranked.model.isin(CLASSICAL_ENTRIES)].model.iloc[0]
        against = {"best classical model": single, "best classical entry": entry}
        for name in [*NEURAL, "N-BEATS + Combination"]:
            for baseline, b in against.items():
                tests.append(bootstrap_difference(e, name, b) | {"dataset": label, "scope": scope,
                                                                 "baseline": baseline})
        log(f"{label} ({scope}):\n{s[['model', 'mase', 'smape', 'owa', 'units']].to_string(index=False)}")
    return summaries, horizons, tests


def forecast_results(root=None):
    """``(summary, per_horizon, significance, timings, unit_mase, mode)``; recomputed first under HEAVY_EVAL=1.

    ``unit_mase`` holds the MASE of every (data set, model, series, window), enough to
    redo the significance tests (or any other summary) without refitting.
    """
    mode = "recomputed now (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
    if heavy_eval():
        run_forecast_experiment(root)
    verify_artifacts(NAME, experiment_config(), root)
    tables = [read_artifact_csv(NAME, f, root) for f in ("summary.csv", "per_horizon.csv", "significance.csv",
                                                          "timings.csv", "unit_mase.csv")]
    tables[-1] = _typed(tables[-1], ("cutoff",))
    return (*tables, mode)


def nbeats_results(root=None) -> dict:
    """The N-BEATS evidence and the residual check of the last run (verified artifacts).

    ``selection``: validation MASE of every (step count, ensemble size), the chosen one
    marked; ``members``: each member's own validation MASE; ``ablation``: one change at
    a time; ``rounds``: the choice within each pool of members (generic only, then generic
    + interpretable), its validation MASE and its MASE on the last window (the official
    hold-out of a competition set); ``recipe``: round 3's rule applied to the ablation (what was adopted);
    ``residuals``: mean signed scaled error by data set,
    scope, model and step.
    """
    verify_artifacts(NAME, experiment_config(), root)
    out = {k: read_artifact_csv(NAME, f"nbeats_{k}.csv", root)
           for k in ("selection", "members", "ablation", "rounds", "recipe")}
    out["residuals"] = read_artifact_csv(NAME, "residuals.csv", root)
    return out


def interval_results(root=None) -> pd.DataFrame:
    """Coverage, Winkler, scaled pinball and scaled CRPS of every model's 80% and 95% intervals on every set.

    One row per (data set, model, kind): ``kind`` is ``conformal`` (calibrated on the earlier
    windows of the same run) or ``native`` (statsforecast's own); ``calibration_scores`` is the
    fewest conformal scores behind any step.
    """
    verify_artifacts(NAME, experiment_config(), root)
    return read_artifact_csv(NAME, "intervals.csv", root)


def interval_group_results(root=None) -> pd.DataFrame:
    """Coverage of the last window's intervals by length group and by step, pooled and Mondrian conformal and native
    (one row per data set, model, kind, grouping and group; competition sets only)."""
    verify_artifacts(NAME, experiment_config(), root)
    return read_artifact_csv(NAME, "interval_groups.csv", root)


def chosen_nbeats(dataset: str = "M3 monthly", root=None, round: int = 3) -> tuple[int, int]:
    """``(steps, members)`` the last run chose for ``dataset`` on its validation windows in ``round`` (2 or 3)."""
    sel = nbeats_results(root)["selection"]
    row = sel[(sel.dataset == dataset) & (sel["round"] == round) & sel.chosen].iloc[0]
    return int(row.steps), int(row.members)
