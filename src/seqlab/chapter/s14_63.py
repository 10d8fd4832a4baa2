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
    nbeats_results,
    validation_units,
)
from .base import section
from .s14_63_intervals import coverage_summary, intervals
from .s14_63_nbeats import ablation, chosen, member_scores, recipe, rounds, selection_figure
from .s14_63_reference import anchors
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


def validation_scores(units: pd.DataFrame) -> pd.DataFrame:
    """Mean MASE of every model over the validation windows (those before each series' last), per data set.

    For N-BEATS these windows also chose its step count and ensemble size, so its
    score here is the best of the grid: a selection score, not a test score.
    """
    v = validation_units(units)
    out = v.groupby(["dataset", "model"], sort=False).mase.mean().rename("validation_mase").reset_index()
    out["units"] = v.groupby(["dataset", "model"], sort=False).mase.count().to_numpy()
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


def horizon_ends(horizon: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Last-step MASE over first-step MASE, one row per model and one column per competition set."""
    ho = horizon[horizon.scope == scope].sort_values("step")
    g = ho.groupby(["dataset", "model"], sort=False).mase
    ratio = (g.last() / g.first()).rename("ratio").reset_index()
    out = ratio.pivot(index="model", columns="dataset", values="ratio")
    out.columns.name = None
    return out.reset_index()


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
