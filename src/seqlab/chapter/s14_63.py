"""§14.63 Neural vs classical forecasting (heavy: computed under HEAVY_EVAL, else loaded).

Steps the page calls: :func:`results` (the comparison, loaded or recomputed),
:func:`verdict`, :func:`anchors`, :func:`validation_scores`, :func:`selection_grid`,
:func:`member_scores`, :func:`rounds`, :func:`ablation`, :func:`residual_check`, and the figures
:func:`selection_figure` and :func:`horizon_figure`.
"""
from __future__ import annotations

import pandas as pd

from ..experiments.forecast import (
    CLASSICAL_ENTRIES,
    CLASSICAL_MODELS,
    COMBINATIONS,
    NEURAL,
    forecast_results,
    interval_group_results,
    interval_results,
    nbeats_results,
    validation_units,
)
from .base import section
from .s14_62 import REFERENCE

#: (data set, scope, model, metric, reference value, where the reference comes from)
ANCHORS = [("M1 yearly", "official hold-out", "AutoTheta", "mase", 3.61,
            "statsforecast's own benchmark of its models on M1 yearly: a reproduction by the library's authors, "
            "not an independent publication"),
           ("M3 yearly", "official hold-out", "Naive", "smape", 17.88,
            "M3 competition (Makridakis and Hibon, 2000): Naive2, the same forecast as Naive on yearly data"),
           ("M3 monthly", "official hold-out", "Naive2", "smape", 16.91,
            "M3 competition (Makridakis and Hibon, 2000): Naive2 on the monthly series"),
           ("AirPassengers", "all windows", "SeasonalNaive", "mase", REFERENCE["SeasonalNaive"],
            "the value §14.62 states for four 12-month windows, without an outside source: a check of the setup, "
            "not an independent result"),
           ("AirPassengers", "all windows", "AutoTheta", "mase", REFERENCE["AutoTheta"],
            "the value §14.62 states for four 12-month windows, without an outside source: a check of the setup, "
            "not an independent result")]


#: figures published or reported elsewhere for M3 monthly's official hold-out, each named for what it is (they are
#: quoted, not reproduced here): (source, what was run, metric, value)
REPORTED_ELSEWHERE = [
    ("Oreshkin et al. (2020), N-BEATS paper, Table 14", "N-BEATS-I+G ensemble", "smape", 13.11),
    ("Oreshkin et al. (2020), N-BEATS paper, Table 14", "N-BEATS-G ensemble", "smape", 13.19),
    ("Oreshkin et al. (2020), N-BEATS paper, Table 14", "N-BEATS-I ensemble", "smape", 13.15),
    ("ServiceNow N-BEATS repository, reproduction notebook", "N-BEATS ensemble", "smape", 13.24),
    ("fev benchmark, zero-shot (no training on M3)", "TimeCopilot", "mase", 0.8286),
    ("fev benchmark, zero-shot (no training on M3)", "TiRex", "mase", 0.8308),
    ("fev benchmark, zero-shot (no training on M3)", "TimesFM-2.0", "mase", 0.8321),
]


def reported_elsewhere(summary: pd.DataFrame, dataset: str = "M3 monthly") -> pd.DataFrame:
    """:data:`REPORTED_ELSEWHERE` beside this comparison's N-BEATS on the same hold-out and metric."""
    s = summary[(summary.dataset == dataset) & (summary.scope == "official hold-out")].set_index("model")
    return pd.DataFrame([dict(source=src, model=what, metric=k, reported=v, seqlab_nbeats=float(s.loc["N-BEATS", k]))
                         for src, what, k, v in REPORTED_ELSEWHERE])


def results():
    """``(summary, per_horizon, significance, timings, unit_mase, nbeats, mode)``: the comparison and its evidence."""
    summary, horizon, sig, timings, units, mode = forecast_results()
    return summary, horizon, sig, timings, units, nbeats_results(), mode


def verdict(summary: pd.DataFrame) -> pd.DataFrame:
    """Per data set and scope: the best classical entry (model or combination) and the best neural model, and both
    against SeasonalNaive."""
    rows = []
    for (d, scope), g in summary.groupby(["dataset", "scope"], sort=False):
        g = g.set_index("model")
        best_c = g.loc[[m for m in CLASSICAL_ENTRIES if m in g.index]].mase.idxmin()
        best_n = g.loc[[m for m in NEURAL if m in g.index]].mase.idxmin()
        rows.append(dict(dataset=d, scope=scope, series=int(g.series.max()), units=int(g.units.max()),
                         best_classical=best_c, best_classical_mase=g.mase[best_c], best_neural=best_n,
                         best_neural_mase=g.mase[best_n], neural_vs_best_classical=g.mase[best_n] / g.mase[best_c] - 1,
                         seasonal_naive_mase=g.mase["SeasonalNaive"],
                         neural_beats_seasonal_naive=bool(g.mase[best_n] < g.mase["SeasonalNaive"]),
                         neural_beats_best_classical=bool(g.mase[best_n] < g.mase[best_c])))
    return pd.DataFrame(rows)


def entry_tests(sig: pd.DataFrame) -> pd.DataFrame:
    """The bootstrap tests against each set's best classical entry (model or combination): the verdict's."""
    return sig[sig.baseline == "best classical entry"].drop(columns="baseline").reset_index(drop=True)


def head_to_head(summary: pd.DataFrame, sig: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Per set: the best classical entry and its rivals (the best single model, both combinations, N-BEATS, and
    N-BEATS with the classical combination), each neural entry with its bootstrap interval against that entry."""
    S = summary[summary.scope == scope]
    T = entry_tests(sig)
    T = T[T.scope == scope].set_index(["dataset", "model"])
    rows = []
    for d, g in S.groupby("dataset", sort=False):
        g = g.set_index("model").mase
        entry = g[[m for m in CLASSICAL_ENTRIES if m in g.index]].idxmin()
        single = g[[m for m in CLASSICAL_MODELS if m in g.index]].idxmin()
        row = dict(dataset=d, best_entry=entry, best_entry_mase=g[entry], best_single=single,
                   best_single_mase=g[single], combination_mase=g["Combination"], m4_comb_mase=g["M4 Comb"])
        for key, m in (("nbeats", "N-BEATS"), ("both", "N-BEATS + Combination")):
            t = T.loc[(d, m)]
            row |= {f"{key}_mase": g[m], f"{key}_difference": t.mean_difference, f"{key}_ci_low": t.ci_low,
                    f"{key}_ci_high": t.ci_high, f"{key}_significant": bool(t.significant),
                    f"{key}_share_won": t.share_of_units_better, f"{key}_testable": bool(t.testable)}
        rows.append(row)
    return pd.DataFrame(rows)


def anchors(summary: pd.DataFrame) -> pd.DataFrame:
    """The published or reference values this comparison reproduces, with their sources."""
    s = summary.set_index(["dataset", "scope", "model"])
    return pd.DataFrame([dict(dataset=d, scope=sc, model=m, metric=k, reference=ref,
                              measured=float(s.loc[(d, sc, m), k]),
                              relative_difference=float(s.loc[(d, sc, m), k]) / ref - 1, source=src)
                         for d, sc, m, k, ref, src in ANCHORS])


#: Naive2's sMAPE over each M3 group's official hold-out, as the M3 competition published it (Makridakis and
#: Hibon, 2000); yearly and "other" series are never seasonally adjusted, so there Naive2 is the naive forecast
NAIVE2_PUBLISHED = {"yearly": 17.88, "quarterly": 9.95, "monthly": 16.91, "other": 6.30}

#: Theta's sMAPE over every M3 series as the competition published it, and as Hyndman's Mcomp vignette "Forecast
#: comparisons" recomputes it from the submitted forecasts (quoted, not reproduced here): (series, published,
#: recomputed)
M3_TABLE_RECOMPUTED = (3003, 13.01, 12.76)

#: readings of Naive2's seasonality test: (label, critical value; None adjusts every series that can be adjusted)
NAIVE2_READINGS = (("test at 80%", 1.2816), ("test at 90% (the definition)", 1.645), ("test at 95%", 1.96),
                   ("every series adjusted", None))


def _naive2_smape(group: str, critical: float | None = 1.645) -> tuple[float, float]:
    """Mean sMAPE of Naive2 over an M3 group's hold-out, and the share of its series the test adjusts."""
    import numpy as np

    from ..forecast.classical import _seasonal_indices, seasonality_test
    from ..forecast.data import competition

    train, test, m, h = competition("M3", group)
    actual = {u: g.y.to_numpy(float) for u, g in test.sort_values(["unique_id", "ds"]).groupby("unique_id")}
    scores, adjusted = [], []
    for u, g in train.sort_values(["unique_id", "ds"]).groupby("unique_id"):
        y = g.y.to_numpy(float)
        n = len(y)
        seasonal = m > 1 and (y > 0).all() and n >= 3 * m and (critical is None or seasonality_test(y, m, critical))
        if seasonal:
            s = _seasonal_indices(y, m)
            f = y[-1] / s[(n - 1) % m] * s[np.arange(n, n + h) % m]
        else:
            f = np.full(h, y[-1])
        a = actual[u]
        scores.append(np.mean(200 * np.abs(a - f) / (np.abs(a) + np.abs(f))))
        adjusted.append(seasonal)
    return float(np.mean(scores)), float(np.mean(adjusted))


def naive2_by_group() -> pd.DataFrame:
    """Naive2 (the 90% seasonality test) on each of M3's four groups, beside the competition's published sMAPE."""
    from ..forecast.data import COMPETITIONS

    rows = []
    for group, ref in NAIVE2_PUBLISHED.items():
        smape, share = _naive2_smape(group)
        rows.append(dict(group=group, season_length=COMPETITIONS[("M3", group)][0], share_adjusted=share,
                         smape=smape, published=ref, difference=smape - ref))
    return pd.DataFrame(rows)


def naive2_variants(groups=("quarterly", "monthly")) -> pd.DataFrame:
    """Naive2's hold-out sMAPE on M3's seasonal groups under other readings of its seasonality test.

    Naive2 adjusts a series only when the 90% autocorrelation test finds its season; each
    row reads the test another way, one column per group.
    """
    return pd.DataFrame([{"variant": label} | {g: _naive2_smape(g, z)[0] for g in groups}
                         for label, z in NAIVE2_READINGS])


def validation_scores(units: pd.DataFrame) -> pd.DataFrame:
    """Mean MASE of every model over the validation windows (those before each series' last), per data set.

    For N-BEATS these windows also chose its step count and ensemble size, so its
    score here is the best of the grid: a selection score, not a test score.
    """
    v = validation_units(units)
    out = v.groupby(["dataset", "model"], sort=False).mase.mean().rename("validation_mase").reset_index()
    out["units"] = v.groupby(["dataset", "model"], sort=False).mase.count().to_numpy()
    return out


def selection_grid(nbeats: dict, dataset: str = "M3 monthly", round: int = 3) -> pd.DataFrame:
    """Validation MASE by ensemble size (rows: the median of the first k members) and step count (columns).

    ``added`` names the member row k brings in (its stack, input length and seed round),
    so the rows read as a growing ensemble; the chosen cell is the lowest of the table.
    ``round``: 3 (the chapter's N-BEATS) or 2 (the members of rounds 1 and 2).
    """
    sel = nbeats["selection"]
    sel = sel[(sel.dataset == dataset) & (sel["round"] == round)]
    wide = sel.pivot(index="members", columns="steps", values="validation_mase")
    wide.columns = [f"steps_{s}" for s in wide.columns]
    mem = nbeats["members"]
    donor = sel.chosen_on.iloc[0]
    mem = mem[(mem.dataset == donor) & (mem["round"] == round)].drop_duplicates("member").set_index("member")
    added = {m + 1: f"{r.stack}, {r.input_multiple:g}h, seed {r.seed // 1000}" for m, r in mem.iterrows()}
    wide.insert(0, "added", [added.get(k, "") for k in wide.index])
    return wide.reset_index()


def rounds(nbeats: dict) -> pd.DataFrame:
    """Per data set and round, the rule's choice, its validation MASE and its last-window MASE.

    Round 1 offered the generic members, round 2 the generic and interpretable members
    together, round 3 the same pool trained with the recipe its protocol chose on the
    ablation (:func:`recipe`); round 3's ensemble is the chapter's N-BEATS.
    ``last_window_mase`` is the official hold-out on the competition sets.
    """
    return nbeats["rounds"][["dataset", "round", "pool", "pool_size", "steps", "members", "validation_mase",
                             "last_window_mase"]].copy()


def recipe(nbeats: dict) -> pd.DataFrame:
    """Round 3's recipe rule on the ablation: each change, its mean validation MASE, the reference's, adopted or not."""
    return nbeats["recipe"].copy()


def chosen(nbeats: dict, round: int = 3) -> pd.DataFrame:
    """Per data set, the step count and ensemble size chosen on validation windows (and where they were chosen)."""
    sel = nbeats["selection"]
    sel = sel[sel["round"] == round]
    return sel[sel.chosen][["dataset", "chosen_on", "steps", "members", "validation_mase"]].reset_index(drop=True)


def member_scores(nbeats: dict, round: int = 3) -> pd.DataFrame:
    """Each member's own validation MASE at its data set's chosen step count, beside the ensemble's."""
    mem = nbeats["members"]
    mem = mem[mem["round"] == round]
    ch = chosen(nbeats, round).set_index("dataset")
    rows = []
    for d, g in mem.groupby("dataset", sort=False):
        g = g[g.steps == ch.steps[d]]
        rows.append(g[["dataset", "member", "stack", "input_multiple", "seed", "validation_mase"]])
    out = pd.concat(rows, ignore_index=True)
    return out.merge(ch[["validation_mase"]].rename(columns={"validation_mase": "ensemble_mase"}),
                     left_on="dataset", right_index=True)


def ablation(nbeats: dict) -> pd.DataFrame:
    """One change at a time: validation MASE per window and on average, and the change against the reference member.

    ``difference`` > 0: the change makes the member worse, i.e. the chapter's setting helps.
    """
    a = nbeats["ablation"]
    wide = a.pivot_table(index=["dataset", "ingredient"], columns="window", values="validation_mase", sort=False)
    wide.columns = [f"window_{j}" for j in wide.columns]  # window_1: one window before the last, window_2: two
    wide["mean"] = a.groupby(["dataset", "ingredient"], sort=False).validation_mase.mean()
    ref = wide.xs("reference: the first member", level="ingredient")["mean"]
    wide["difference"] = wide["mean"] - ref.reindex(wide.index.get_level_values("dataset")).to_numpy()
    changes = a.drop_duplicates(["dataset", "ingredient"]).set_index(["dataset", "ingredient"])[["change", "steps"]]
    out = wide.join(changes).reset_index()
    out["ingredient"] = out.ingredient.str.replace("median of 1 members", "median of 1 member", regex=False)
    return out


def residual_check(nbeats: dict, summary: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Bias of the best classical and the best neural model (and of N-BEATS where another neural model leads): mean
    signed scaled error over all steps and at the last.

    (forecast - actual) / MASE scale: above 0 over-forecasts. The share of
    over-forecasts is averaged over the steps.
    """
    r = nbeats["residuals"]
    v = verdict(summary)
    rows = []
    for x in v[v.scope == scope].itertuples():
        roles = [("best classical", x.best_classical), ("best neural", x.best_neural)]
        if x.best_neural != "N-BEATS":  # the prose reads N-BEATS on every set, so it always has its row
            roles.append(("N-BEATS", "N-BEATS"))
        for role, m in roles + [("SeasonalNaive", "SeasonalNaive")]:
            g = r[(r.dataset == x.dataset) & (r.scope == scope) & (r.model == m)].sort_values("step")
            rows.append(dict(dataset=x.dataset, role=role, model=m, mean_scaled_error=g.mean_scaled_error.mean(),
                             last_step_error=g.mean_scaled_error.iloc[-1], share_over=g.share_over.mean()))
    return pd.DataFrame(rows)


#: the models the interval table shows: the neural ones, the combinations, the classical leaders and the benchmark
INTERVAL_MODELS = ("N-BEATS", "GRU", "Transformer", "N-BEATS + Combination", "Combination", "AutoTheta", "AutoETS",
                   "SeasonalNaive")


def intervals() -> pd.DataFrame:
    """Every model's 80% and 95% intervals scored on every set (the artifact's ``intervals.csv``)."""
    return interval_results()


def interval_table(iv: pd.DataFrame, models=INTERVAL_MODELS) -> pd.DataFrame:
    """One row per (data set, model): coverage and MSIS (the 95% Winkler score over MASE's scale) of both kinds.

    ``conformal_*``: calibrated on the set's earlier windows, for every model;
    ``native_*``: statsforecast's own intervals (NaN for the models without any, and
    for every conformal entry of AirPassengers, whose one series cannot calibrate them).
    """
    keep = iv[iv.model.isin(models)]
    wide = keep.pivot_table(index=["dataset", "model"], columns="kind",
                            values=["coverage_80", "coverage_95", "winkler_95", "scrps"], sort=False)
    wide.columns = [f"{kind}_{metric.replace('winkler_95', 'msis')}" for metric, kind in wide.columns]
    order = [f"{k}_{m}" for k in ("conformal", "native") for m in ("coverage_80", "coverage_95", "msis", "scrps")]
    wide = wide.reindex(columns=order).reset_index()
    rank = {m: i for i, m in enumerate(models)}
    sets = list(dict.fromkeys(iv.dataset))
    return wide.sort_values(["dataset", "model"], key=lambda c: c.map({d: i for i, d in enumerate(sets)})
                            if c.name == "dataset" else c.map(rank)).reset_index(drop=True)


def coverage_by_set(iv: pd.DataFrame, kind: str = "conformal", level: int = 80) -> pd.DataFrame:
    """Per data set: the lowest, highest and mean coverage of one kind of interval over every model scored."""
    g = iv[iv.kind == kind].groupby("dataset", sort=False)[f"coverage_{level}"]
    return pd.DataFrame({"models": g.count(), "lowest": g.min(), "highest": g.max(), "mean": g.mean()}).reset_index()


def coverage_summary(iv: pd.DataFrame) -> pd.DataFrame:
    """Per kind and level: the range of coverage over every (data set, model) scored, the mean shortfall
    below the nominal level and the mean distance from it (``mean_miss``, either side)."""
    rows = []
    for kind, g in iv.groupby("kind", sort=False):
        for level in (80, 95):
            c = g[f"coverage_{level}"]
            rows.append(dict(kind=kind, level=level, scored=len(c), lowest=c.min(), highest=c.max(),
                             mean=c.mean(), mean_shortfall=float((level / 100 - c).mean()),
                             mean_miss=float((c - level / 100).abs().mean())))
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------------------
# Tables the page shows beside its sentences
# ----------------------------------------------------------------------------------------------------------------
def model_table(summary: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Every model's mean MASE on every set in one scope: models as rows, data sets as columns."""
    g = summary[summary.scope == scope]
    wide = g.pivot(index="model", columns="dataset", values="mase")
    order = [m for m in (*NEURAL, *COMBINATIONS, *CLASSICAL_MODELS) if m in wide.index]
    return wide.reindex(index=order, columns=list(dict.fromkeys(g.dataset))).reset_index()


def validation_table(units: pd.DataFrame) -> pd.DataFrame:
    """:func:`validation_scores` as models by data sets (mean validation MASE).

    Rounded to six significant figures, the precision at which the N-BEATS selection stores its scores, so
    that N-BEATS's cell prints as the selection tables print it (2.43885 and 2.4388544 differ at four places).
    """
    v = validation_scores(units)
    v["validation_mase"] = [float(f"{x:.6g}") for x in v.validation_mase]
    wide = v.pivot(index="model", columns="dataset", values="validation_mase")
    order = [m for m in (*NEURAL, *COMBINATIONS, *CLASSICAL_MODELS) if m in wide.index]
    return wide.reindex(index=order, columns=list(dict.fromkeys(v.dataset))).reset_index()


def cost_table(timings: pd.DataFrame) -> pd.DataFrame:
    """The stored training seconds per set: each global model per window, N-BEATS's grid and its final ensemble.

    ``timings.csv`` sums the seconds of every training job of a kind over the set's windows; the
    GRU and the Transformer train once per window, so their per-window cost is that sum over
    ``windows``. ``nbeats_validation`` is the grid of rounds 1 and 2 on the validation windows,
    ``nbeats_ablation`` the one-change variants, ``round3_validation`` round 3's grid, and
    ``nbeats_final`` the one retraining of round 3's chosen members up to the origin.
    """
    t = timings.copy()
    return pd.DataFrame({"dataset": t.dataset, "windows": t.windows,
                         "gru_per_window": t.gru_seconds / t.windows,
                         "transformer_per_window": t.transformer_seconds / t.windows,
                         "nbeats_validation": t.nbeats_validation_seconds,
                         "nbeats_ablation": t.nbeats_ablation_seconds,
                         "round3_validation": t.round3_validation_seconds,
                         "nbeats_final": t.round3_final_seconds})


def seed_pairs(nbeats: dict, dataset: str = "M3 monthly", round: int = 3) -> pd.DataFrame:
    """Members that differ only in their seed (same basis, same input length), at the set's chosen step count.

    ``difference`` is the absolute gap in validation MASE: how much a change of seed alone moves a member.
    """
    m = member_scores(nbeats, round)
    m = m[m.dataset == dataset]
    rows = []
    for (stack, mult), g in m.groupby(["stack", "input_multiple"], sort=False):
        if len(g) == 2:
            a, b = g.validation_mase.to_numpy()
            rows.append(dict(dataset=dataset, stack=stack, input_multiple=mult, first_seed=a, second_seed=b,
                             difference=abs(a - b)))
    return pd.DataFrame(rows)


def seed_spread(nbeats: dict, dataset: str, round: int = 3, how: str = "mean") -> float:
    """The mean (``how="mean"``) or the largest (``how="largest"``) of :func:`seed_pairs`' differences: the
    typical and the largest effect of a change of seed on one member."""
    d = seed_pairs(nbeats, dataset, round).difference
    if how not in ("mean", "largest"):
        raise ValueError(f"how must be 'mean' or 'largest', got {how!r}")
    return float(d.mean() if how == "mean" else d.max())




def native_by_model(iv: pd.DataFrame) -> pd.DataFrame:
    """Each statistical model's own intervals: coverage averaged over the competition hold-outs."""
    nat = iv[(iv.kind == "native") & (iv.dataset != "AirPassengers")]
    g = nat.groupby("model", sort=False)
    out = g[["coverage_80", "coverage_95"]].mean()
    out["sets"] = g.dataset.count()
    return out.reset_index()


def horizon_ends(horizon: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Last-step MASE over first-step MASE, one row per model and one column per competition set."""
    ho = horizon[horizon.scope == scope].sort_values("step")
    g = ho.groupby(["dataset", "model"], sort=False).mase
    ratio = (g.last() / g.first()).rename("ratio").reset_index()
    out = ratio.pivot(index="model", columns="dataset", values="ratio")
    out.columns.name = None
    return out.reset_index()


def selection_figure(nbeats: dict, dataset: str = "M3 monthly", round: int = 3):
    """Validation MASE against the ensemble size, one line per step count, for one round's grid."""
    from ..plotting import line_pair

    sel = nbeats["selection"]
    sel = sel[(sel.dataset == dataset) & (sel["round"] == round)].assign(
        training=lambda d: d.steps.map(lambda s: f"{s:,} steps"))
    # rounds 1 and 2 offered the generic pool and then the whole one; round 3 keeps that member order
    r = nbeats["rounds"]
    pools = r[(r.dataset == dataset) & (r["round"] <= 2)].pool_size.tolist()
    extra = (f"; members {pools[0] + 1}-{pools[-1]} are interpretable" if len(pools) > 1 else "")
    return line_pair(sel, "members", "validation_mase", "training", points=True,
                     title=f"Round {round}: choosing N-BEATS on {dataset}'s validation windows",
                     subtitle="Mean MASE over the windows before the official hold-out, median of the first k "
                              f"members{extra}",
                     xlab="Members in the ensemble (k)", ylab="Validation MASE")


def horizon_figure(horizon: pd.DataFrame):
    """MASE by forecast step for the leading classical and neural models, every set in its widest scope."""
    from ..plotting import line_pair

    widest = horizon.groupby("dataset").scope.transform(lambda x: "all windows" if (x == "all windows").any()
                                                         else "official hold-out")
    keep = horizon[horizon.model.isin(["SeasonalNaive", "AutoETS", "AutoTheta", *NEURAL]) & (horizon.scope == widest)]
    return line_pair(keep, "step", "mase", "model", facet="dataset", points=False,
                     title="MASE by forecast horizon, classical vs neural",
                     subtitle="Every window of each set",
                     xlab="Steps ahead", ylab="Mean scaled absolute error")


@section("14.63", "Neural vs classical forecasting")
def run(ctx):
    summary, horizon, sig, timings, units, nb, mode = results()
    v = verdict(summary)
    from .s14_63_verdicts import comparison_claims, significance_claims, verdict_significance_claims

    iv = intervals()
    # provenance, then the verdicts the page reads (the tables carry every number behind them)
    notes = [f"Results {mode} (artifact set 'forecast', every file's sha256 checked).",
             *comparison_claims(v, summary), *significance_claims(sig), *verdict_significance_claims(sig, v)]
    figs = []
    if ctx.figures:
        figs = ctx.save("neural_vs_classical_horizon", *horizon_figure(horizon))
        figs += ctx.save("nbeats_selection", *selection_figure(nb))
    return {"comparison": summary, "verdict": v, "significance": sig, "anchors": anchors(summary),
            "per_horizon": horizon, "timings": timings, "validation": validation_scores(units),
            "nbeats_chosen": chosen(nb), "nbeats_rounds": rounds(nb), "nbeats_selection": nb["selection"],
            "nbeats_recipe": recipe(nb), "head_to_head": head_to_head(summary, sig),
            "interval_groups": interval_group_results(),
            "nbeats_members": member_scores(nb),
            "nbeats_ablation": ablation(nb), "residual_check": residual_check(nb, summary),
            "intervals": iv, "interval_coverage": coverage_summary(iv)}, figs, notes
