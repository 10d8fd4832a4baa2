"""The forecasting experiment's settings: the data sets, models and combinations, the neural and N-BEATS configurations,
the N-BEATS grid of each round and round 3's pre-registered recipe rule."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import pandas as pd

from ...forecast.combination import COMBINATIONS as LIBRARY_COMBINATIONS
from ...forecast.nbeats import GENERIC_MEMBER, INTERPRETABLE_MEMBER, NBeatsForecaster
from ...forecast.neural import NeuralConfig


NAME = "forecast"


CLASSICAL_MODELS = ["Naive", "SeasonalNaive", "RandomWalkWithDrift", "Naive2", "AutoETS", "Theta", "AutoTheta",
                    "M4 Comb"]


NEURAL = {"GRU": "gru", "Transformer": "transformer", "N-BEATS": "nbeats"}


#: the combinations, each the pointwise mean of its members' forecasts (no weights, nothing fitted): the classical
#: one of the statistical models that are best on their own, and a neural + classical one; the library's own
#: named combinations (what ``seqlab forecast evaluate --models Combination`` fits), copied so that the
#: experiment's manifest keeps recording them
COMBINATIONS = {k: tuple(v) for k, v in LIBRARY_COMBINATIONS.items()}


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
        return {"configs": [c.record() for c in self.configs], "seeds": list(self.seeds), "losses": list(self.losses),
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
