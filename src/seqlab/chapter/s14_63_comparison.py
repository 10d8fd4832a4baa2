"""§14.63's comparison itself: the stored results, the verdict per set and scope, the head-to-head against the
best classical entry, the residual check and the errors by horizon."""
from __future__ import annotations

import pandas as pd

from ..analysis.multiple import holm
from ..experiments.forecast import (
    CLASSICAL_ENTRIES,
    CLASSICAL_MODELS,
    NEURAL,
    forecast_results,
    nbeats_results,
    validation_units,
)
from ..forecast.comparison import bootstrap_pvalue, holm_family
from ..forecast.intervals import window_index


def last_window(units: pd.DataFrame) -> pd.DataFrame:
    """Each series' last window (window index 0: the official hold-out of a competition set)."""
    return units[window_index(units) == 0]


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


#: the competition sets whose official hold-out the verdict reads
VERDICT_SETS = ("M3 monthly", "Tourism quarterly", "M1 yearly", "M3 yearly")


def verdict_family(units: pd.DataFrame, summary: pd.DataFrame, sets=VERDICT_SETS, n_boot: int = 5000,
                   seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Every hold-out comparison the verdict reads, judged as one family.

    Per set: N-BEATS, N-BEATS + Combination and the best neural model, each against the best classical entry,
    on the series' last window. ``p_value`` is the cluster bootstrap's
    (:func:`~seqlab.forecast.comparison.bootstrap_pvalue`, the same draws as the intervals), ``p_holm`` Holm's
    adjustment over the whole family, ``significant`` whether it is below ``alpha``
    (:func:`~seqlab.forecast.comparison.holm_family`).
    """
    v = verdict(summary).set_index(["dataset", "scope"])
    rows = []
    for d in sets:
        last = last_window(units[units.dataset == d])
        best = v.loc[(d, "official hold-out")]
        for m in dict.fromkeys(["N-BEATS", "N-BEATS + Combination", best.best_neural]):
            rows.append(dict(dataset=d, **bootstrap_pvalue(last, m, best.best_classical, n_boot, seed)))
    out = holm_family(pd.DataFrame(rows), alpha)
    # TRANSITIONAL: summary.md still reads this column as ``settled``; drop the copy once it reads ``significant``
    return out.assign(settled=out.significant)


def nbeats_family(units: pd.DataFrame, summary: pd.DataFrame, n_boot: int = 5000, seed: int = 0,
                  alpha: float = 0.05) -> pd.DataFrame:
    """N-BEATS against each set's best classical entry in both scopes, as one family: the cluster bootstrap's p
    (whole series with all their windows resampled, the same draws as the intervals) and Holm's adjustment over
    every set and scope with more than one series."""
    rows = []
    for r in verdict(summary).itertuples():
        u = units[units.dataset == r.dataset]
        if r.scope == "official hold-out":
            u = last_window(u)
        if u.unique_id.nunique() > 1:
            rows.append(dict(dataset=r.dataset, scope=r.scope,
                             **bootstrap_pvalue(u, "N-BEATS", r.best_classical, n_boot, seed)))
    return holm_family(pd.DataFrame(rows), alpha)


def head_to_head(summary: pd.DataFrame, sig: pd.DataFrame, scope: str = "official hold-out",
                 family: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per set: the best classical entry and its rivals (the best single model, both combinations, N-BEATS, and
    N-BEATS with the classical combination), each neural entry with its bootstrap interval against that entry;
    with ``family`` (:func:`verdict_family`) also its Holm-adjusted p (``nbeats_p_holm``, ``both_p_holm``)."""
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
            if family is not None:
                f = family[(family.dataset == d) & (family.model == m)]
                row[f"{key}_p_holm"] = float(f.p_holm.iloc[0]) if len(f) else float("nan")
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


def series_bias(check: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`residual_check` (official hold-out) with the spread behind each mean: ``series`` and
    ``mean_scaled_error_se``, the standard error of the mean over series of each series' mean signed scaled error
    (forecast - actual, over its scale), from the stored forecasts; ``p`` tests each mean against zero and
    ``p_holm`` adjusts it by Holm's rule over all the rows."""
    import numpy as np

    from ..experiments.forecast.results import holdout_forecasts
    from ..forecast.metrics import mase_scale

    out = []
    for d, g in check.groupby("dataset", sort=False):
        x, src = holdout_forecasts(d)
        hist = dict(tuple(src.history.groupby("unique_id")))
        scale = {(u, c): mase_scale(hist[u].loc[hist[u].ds <= c, "y"].to_numpy(float), src.season)
                 for u, c in x[["unique_id", "cutoff"]].drop_duplicates().itertuples(index=False)}
        x = x.assign(scale=[scale[k] for k in zip(x.unique_id, x.cutoff)])
        x = x[x.scale > 0]
        for row in g.itertuples():
            per = ((x[row.model] - x.y) / x.scale).groupby([x.unique_id, x.cutoff]).mean()
            out.append(dict(dataset=d, model=row.model, role=row.role, series=len(per),
                            mean_scaled_error_se=float(per.std(ddof=1) / np.sqrt(len(per)))))
    merged = check.merge(pd.DataFrame(out), on=["dataset", "role", "model"], how="left", validate="one_to_one")
    # each mean against zero (normal approximation), the table's rows as one family under Holm's correction
    from scipy.stats import norm

    p = 2 * norm.sf((merged.mean_scaled_error / merged.mean_scaled_error_se).abs().to_numpy())
    return merged.assign(p=p, p_holm=holm(p))


def horizon_ends(horizon: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Last-step MASE over first-step MASE, one row per model and one column per competition set."""
    ho = horizon[horizon.scope == scope].sort_values("step")
    g = ho.groupby(["dataset", "model"], sort=False).mase
    ratio = (g.last() / g.first()).rename("ratio").reset_index()
    out = ratio.pivot(index="model", columns="dataset", values="ratio")
    out.columns.name = None
    return out.reset_index()
