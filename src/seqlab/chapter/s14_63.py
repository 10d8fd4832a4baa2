"""§14.63 Neural vs classical forecasting (heavy: computed under HEAVY_EVAL, else loaded).

Steps the page calls: :func:`results` (the comparison, loaded or recomputed),
:func:`verdict`, :func:`anchors`, :func:`validation_scores`, :func:`selection_grid`,
:func:`member_scores`, :func:`rounds`, :func:`ablation`, :func:`residual_check`, and the figures
:func:`selection_figure` and :func:`horizon_figure`.
"""
from __future__ import annotations

import pandas as pd

from ..experiments.forecast import (
    CLASSICAL_MODELS,
    COMBINATIONS,
    NEURAL,
    interval_group_results,
)
from ._util import provenance
from .base import section
from .s14_63_intervals import coverage_summary, intervals
from .s14_63_nbeats import ablation, chosen, member_scores, recipe, rounds, selection_figure
from .s14_63_reference import anchors
# the comparison's steps, which the page calls as s14_63.*
from .s14_63_comparison import (entry_tests, head_to_head, horizon_ends, residual_check, results, series_bias,
                                validation_scores, verdict, verdict_family, nbeats_family)


# ----------------------------------------------------------------------------------------------------------------
# Tables the page shows beside its sentences
# ----------------------------------------------------------------------------------------------------------------
def model_table(summary: pd.DataFrame, scope: str = "official hold-out") -> pd.DataFrame:
    """Every model's mean MASE on every set in one scope: models as rows, data sets as columns."""
    g = summary[summary.scope == scope]
    wide = g.pivot(index="model", columns="dataset", values="mase")
    order = [m for m in (*NEURAL, *COMBINATIONS, *CLASSICAL_MODELS) if m in wide.index]
    return wide.reindex(index=order, columns=list(dict.fromkeys(g.dataset))).reset_index()

__all__ = ["results", "verdict", "verdict_family", "nbeats_family", "entry_tests", "head_to_head",
           "validation_scores", "residual_check", "series_bias",
           "horizon_ends", "model_table", "validation_table", "cost_table", "horizon_figure", "run"]


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


#: the horizon figure's lines: seasonal naive as the floor, the two leaders the text compares (Combination,
#: N-BEATS), the hybrid and the best single-pass sequence model; one distinct hue each (Okabe and Ito's palette)
HORIZON_COLORS = {"SeasonalNaive": "#999999", "best classical entry": "#000000", "GRU": "#E69F00",
                  "Transformer": "#009E73", "N-BEATS": "#0072B2", "N-BEATS + Combination": "#CC79A7"}


def horizon_figure(horizon: pd.DataFrame, verdict_: pd.DataFrame, scope: str = "official hold-out"):
    """MASE by forecast step on each set's ``scope``: each set's best classical entry (from ``verdict_``, drawn as
    one line whatever model it is), the neural models, the hybrid and SeasonalNaive."""
    from ..plotting import line_pair

    best = verdict_[verdict_.scope == scope].set_index("dataset").best_classical.to_dict()
    h = horizon[horizon.scope == scope]
    lead = pd.concat([h[(h.dataset == d) & (h.model == m)] for d, m in best.items()]).assign(
        model="best classical entry")
    keep = pd.concat([lead, h[h.model.isin([m for m in HORIZON_COLORS if m != "best classical entry"])]])
    if keep.empty:
        raise ValueError(f"no horizon errors for scope {scope!r}")
    named = "; ".join(f"{d}: {m}" for d, m in best.items() if d in set(keep.dataset))
    return line_pair(keep, "step", "mase", "model", facet="dataset", points=False, colors=HORIZON_COLORS,
                     free_x=True, title="MASE by forecast horizon, classical vs neural",
                     subtitle=f"The {scope} of each set, each panel over its own horizon; means over the series, "
                              f"without intervals. Best classical entry, {named}",
                     xlab="Steps ahead", ylab="Mean scaled absolute error")


@section("14.63", "Neural vs classical forecasting")
def run(ctx):
    summary, horizon, sig, timings, units, nb, mode = results()
    v, family = verdict(summary), verdict_family(units, summary)
    from .s14_63_verdicts import comparison_claims, significance_claims, verdict_significance_claims

    from . import s14_63_fresh as fresh

    iv = intervals()
    goals, avg = fresh.targets(summary, sig), fresh.averaging("M3 monthly")
    seeds, seed_v = fresh.m3_seed_sets(), fresh.m3_seed_verdicts()
    fresh_v, ranks = fresh.fresh_verdict_table(), fresh.fresh_ranks()
    # provenance, then the verdicts the page reads (the tables carry every number behind them)
    notes = [provenance("forecast", mode),
             *comparison_claims(v, summary), *significance_claims(sig, nbeats_family(units, summary)),
             *verdict_significance_claims(family, v),
             *fresh.target_claims(goals), *fresh.averaging_claims(avg), *fresh.seed_claims(seeds, seed_v),
             *fresh.fresh_claims(fresh_v, ranks)]
    from .s14_63_intervals import coverage_by_step, fallback_claims, step_claims

    groups = interval_group_results()
    notes += [*fallback_claims(groups, iv), *step_claims(coverage_by_step(groups))]
    from ..experiments.forecast_cost_run import stored_run
    from . import s14_63_cost as cost

    side, _ = stored_run()  # the benchmark's side-by-side run, and round 3's cost measured in rounds
    efficiency = cost.efficiency(summary)
    notes += [*cost.default_cost_claims(side), *cost.efficiency_claims(efficiency)]
    figs = []
    if ctx.figures:
        figs = ctx.save("neural_vs_classical_horizon", *horizon_figure(horizon, v))
        figs += ctx.save("nbeats_selection", *selection_figure(nb))
    return {"comparison": summary, "verdict": v, "significance": sig, "anchors": anchors(summary),
            "per_horizon": horizon, "timings": timings, "validation": validation_scores(units),
            "nbeats_chosen": chosen(nb), "nbeats_rounds": rounds(nb), "nbeats_selection": nb["selection"],
            "nbeats_recipe": recipe(nb), "head_to_head": head_to_head(summary, sig, family=family),
            "verdict_family": family,
            "interval_groups": interval_group_results(),
            "nbeats_members": member_scores(nb),
            "nbeats_ablation": ablation(nb), "residual_check": series_bias(residual_check(nb, summary)),
            "intervals": iv, "interval_coverage": coverage_summary(iv), "round3_targets": goals,
            "averaging": avg, "m3_seed_sets": seeds, "m3_seed_verdicts": seed_v, "fresh_mase": fresh.fresh_table(),
            "fresh_verdicts": fresh_v, "fresh_ranks": ranks, "cost_side_by_side": side,
            "cost_per_cpu_second": efficiency}, figs, notes
