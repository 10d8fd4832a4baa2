"""The fresh test's verdicts (docs/forecast-fresh-sets.md), computed from the stored forecasts at every build.

:func:`entry_errors` gives each entry's MASE per hold-out series, :func:`fresh_tests` the
Holm-corrected comparisons per seed set, :func:`fresh_verdicts` the "every seed set" verdict with
the union of the seed sets' intervals, and :func:`fresh_mcb` the ranks of the four entries.
"""
from __future__ import annotations

import functools

import pandas as pd

from ...forecast.comparison import bootstrap_pvalue, holm_family, mcb
from ...forecast.evaluation import evaluate, unit_mase
from ...forecast.intervals import window_index
from ...store import artifact_dir, read_artifact_csv, verify_artifacts
from ..forecast.results import stored_forecasts
from ..forecast.sets import _load
from ..forecast.settings import CLASSICAL_ENTRIES, CLASSICAL_MODELS, NAME as FORECAST
from .run import FRESH_SETS, SEED_SETS, SEEDS_SET, artifact_name, seed_label

#: each comparison of the verdict: (entry, baseline)
COMPARISONS = (("N-BEATS", "Combination"), ("N-BEATS + Combination", "Combination"),
               ("N-BEATS", "best classical"), ("N-BEATS + Combination", "best classical"))
ALPHA = 0.05


def stored_sets(root=None) -> list[str]:
    """The fresh sets (and M3 monthly's seed sets) whose artifacts exist, in the protocol's order."""
    return [k for k in [*FRESH_SETS, SEEDS_SET] if (artifact_dir(artifact_name(k), root) / "manifest.json").exists()]


def _forecasts(name: str, root=None) -> pd.DataFrame:
    verify_artifacts(name, None, root)
    return pd.read_csv(artifact_dir(name, root) / "forecasts.csv.gz", float_precision="round_trip",
                       dtype={"unique_id": str})


def _best_on_validation(frame: pd.DataFrame, history: pd.DataFrame, season: int) -> tuple[str, pd.Series]:
    """The classical model with the lowest mean MASE over the validation windows (the protocol's pick)."""
    val = frame[window_index(frame) > 0]
    u = unit_mase(evaluate(val, history, season, CLASSICAL_MODELS, level=[]))
    means = u.groupby("model").mase.mean().reindex(CLASSICAL_MODELS)
    return str(means.idxmin()), means


def entry_errors(label: str, root=None) -> pd.DataFrame:
    """A copy of :func:`_entry_errors`'s frame, computed once per process for each (set, root)."""
    return _entry_errors(label, None if root is None else str(root)).copy()


@functools.lru_cache(maxsize=16)
def _entry_errors(label: str, root=None) -> pd.DataFrame:
    """MASE per hold-out series of every entry, one column per (entry, seed set): ``unique_id, model, seeds, mase``.

    Entries: ``best classical`` (chosen on validation; for M3 monthly §14.63's best classical
    entry on the hold-out, as that page reports it), ``Combination``, and per seed set
    ``N-BEATS`` and ``N-BEATS + Combination``.
    """
    src = _load(FRESH_SETS[label][0] if label in FRESH_SETS else "M3/monthly")
    ids = {str(u): u for u in src.history.unique_id.unique()}
    if label == SEEDS_SET:
        stored = stored_forecasts()
        frame = stored[stored.dataset == SEEDS_SET].drop(columns="dataset")
        frame = frame[window_index(frame) == 0].copy()
        frame[seed_label(SEED_SETS[0])] = frame["N-BEATS"]
        new = _forecasts(artifact_name(SEEDS_SET), root)
        step = frame.groupby("unique_id").cumcount() + 1
        keyed = frame.assign(step=step.to_numpy()).merge(new, on=["unique_id", "step"], how="left",
                                                          validate="one_to_one")
        frame = keyed.drop(columns="step")
        summary = read_artifact_csv(FORECAST, "summary.csv")
        s = summary[(summary.dataset == SEEDS_SET) & (summary.scope == "official hold-out")]
        best = s[s.model.isin(CLASSICAL_ENTRIES)].sort_values("mase").model.iloc[0]
    else:
        frame = _forecasts(artifact_name(label), root)
        best, _ = _best_on_validation(frame.assign(unique_id=frame.unique_id.map(ids)), src.history, src.season)
        frame = frame[window_index(frame) == 0].copy()
    frame["unique_id"] = frame.unique_id.map(ids)
    frame["Combination"] = frame[["AutoETS", "AutoTheta", "Theta"]].mean(axis=1)
    frame["best classical"] = frame[best]
    cols = {("best classical", ""): "best classical", ("Combination", ""): "Combination"}
    for seeds in SEED_SETS:
        key = seed_label(seeds)
        frame[f"hybrid {key}"] = (frame[key] + frame["Combination"]) / 2
        cols |= {("N-BEATS", key): key, ("N-BEATS + Combination", key): f"hybrid {key}"}
    u = unit_mase(evaluate(frame, src.history, src.season, list(cols.values()), level=[]))
    back = {v: k for k, v in cols.items()}
    u["seeds"] = u.model.map(lambda m: back[m][1])
    u["model"] = u.model.map(lambda m: back[m][0])
    return u.assign(dataset=label, best_classical=best)


def fresh_tests(labels, root=None, n_boot: int = 5000) -> pd.DataFrame:
    """Every comparison of :data:`COMPARISONS` per set and seed set, one Holm family over all of them.

    The protocol makes the fresh sets one family and M3 monthly's seed sets another: call it once
    for each. Where the best classical entry is Combination itself, its comparisons are made once.
    """
    rows = []
    for label in labels:
        u = entry_errors(label, root)
        best = u.best_classical.iloc[0]
        for seeds in SEED_SETS:
            key = seed_label(seeds)
            e = u[(u.seeds == key) | (u.seeds == "")]
            for a, b in COMPARISONS:
                if b == "best classical" and best == "Combination":
                    continue
                rows.append(dict(dataset=label, seeds=key, best_classical=best,
                                 **bootstrap_pvalue(e, a, b, n_boot=n_boot, seed=0)))
    return holm_family(pd.DataFrame(rows), ALPHA)


def fresh_verdicts(tests: pd.DataFrame) -> pd.DataFrame:
    """Per set and comparison: ahead / behind / not told apart by the every-seed-set rule, the seed sets' union."""
    rows = []
    for (label, a, b), g in tests.groupby(["dataset", "model", "against"], sort=False):
        ahead = bool((g.significant & (g.mean_difference < 0)).all())
        behind = bool((g.significant & (g.mean_difference > 0)).all())
        rows.append(dict(dataset=label, model=a, against=b, best_classical=g.best_classical.iloc[0],
                         mean_difference_lowest=float(g.mean_difference.min()),
                         mean_difference_highest=float(g.mean_difference.max()),
                         ci_low=float(g.ci_low.min()), ci_high=float(g.ci_high.max()),
                         p_holm_highest=float(g.p_holm.max()), seed_sets=len(g),
                         verdict="ahead" if ahead else "behind" if behind else "not told apart"))
    return pd.DataFrame(rows)


def seed_spread(labels, root=None) -> pd.DataFrame:
    """Mean hold-out MASE of every entry per set and seed set (the seed sets' spread in one table)."""
    rows = []
    for label in labels:
        u = entry_errors(label, root)
        for (model, seeds), g in u.groupby(["model", "seeds"], sort=False):
            rows.append(dict(dataset=label, model=model, seeds=seeds or "none", mase=float(g.mase.mean()),
                             series=int(g.unique_id.nunique())))
    return pd.DataFrame(rows)


def fresh_mcb(labels, root=None) -> pd.DataFrame:
    """Multiple comparisons with the best of the four entries (seed set 1, 2) per set and over the sets together."""
    key = seed_label(SEED_SETS[0])
    wides = {}
    for label in labels:
        u = entry_errors(label, root)
        u = u[(u.seeds == key) | (u.seeds == "")]
        wides[label] = u.pivot_table(index="unique_id", columns="model", values="mase").dropna()
    if len(wides) > 1:
        wides["all sets"] = pd.concat(wides.values(), ignore_index=True)
    out = []
    for label, w in wides.items():
        r = mcb(w, ALPHA)
        out.append(r.assign(dataset=label, series=len(w), critical_distance=r.attrs["critical_distance"]))
    return pd.concat(out, ignore_index=True)
