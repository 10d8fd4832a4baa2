"""§14.63 Neural vs classical forecasting (heavy: computed under HEAVY_EVAL, else loaded)."""
from __future__ import annotations

import pandas as pd

from ..experiments.forecast import CLASSICAL_MODELS, NEURAL, forecast_results
from .base import section

#: (data set, scope, model, metric, published value)
ANCHORS = [("M1 yearly", "official hold-out", "AutoTheta", "mase", 3.61),
           ("M3 yearly", "official hold-out", "Naive", "smape", 17.9),
           ("AirPassengers", "all windows", "SeasonalNaive", "mase", 1.25),
           ("AirPassengers", "all windows", "AutoTheta", "mase", 0.80)]


def _verdict(summary: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (d, scope), g in summary.groupby(["dataset", "scope"], sort=False):
        g = g.set_index("model")
        best_c = g.loc[[m for m in CLASSICAL_MODELS if m in g.index]].mase.idxmin()
        best_n = g.loc[list(NEURAL)].mase.idxmin()
        rows.append(dict(dataset=d, scope=scope, series=int(g.series.max()), units=int(g.units.max()),
                         best_classical=best_c, best_classical_mase=g.mase[best_c], best_neural=best_n,
                         best_neural_mase=g.mase[best_n], neural_vs_best_classical=g.mase[best_n] / g.mase[best_c] - 1,
                         seasonal_naive_mase=g.mase["SeasonalNaive"],
                         neural_beats_seasonal_naive=bool(g.mase[best_n] < g.mase["SeasonalNaive"])))
    return pd.DataFrame(rows)


@section("14.63", "Neural vs classical forecasting")
def run(ctx):
    summary, horizon, sig, timings, _, mode = forecast_results()
    s = summary.set_index(["dataset", "scope", "model"])
    anchors = pd.DataFrame([dict(dataset=d, scope=sc, model=m, metric=k, reference=ref,
                                 measured=float(s.loc[(d, sc, m), k]),
                                 relative_difference=float(s.loc[(d, sc, m), k]) / ref - 1)
                            for d, sc, m, k, ref in ANCHORS])
    verdict = _verdict(summary)
    notes = [f"Results {mode} (artifact set 'forecast', every file's sha256 checked)."]
    notes.append("Neural models: one global GRU and one global Transformer per data set and window, trained on "
                 "per-window scaled windows with early stopping on the last horizon of each training part; classical "
                 "models are fitted per series by statsforecast. Competition sets: the official hold-out is the last "
                 "window, and two earlier windows (one horizon apart) include each series whose training part still "
                 "has max(2h, h + 2m) observations. 'official hold-out' scores the last window only; 'all windows' "
                 "averages over every (series, window) pair.")
    for r in verdict[verdict.dataset == "M3 monthly"].itertuples():
        notes.append(f"M3 monthly ({r.scope}, {r.units} series-windows): best neural {r.best_neural} "
                     f"{r.best_neural_mase:.3f} vs best classical {r.best_classical} {r.best_classical_mase:.3f} "
                     f"({r.neural_vs_best_classical:+.1%}; the target was within 5%: "
                     f"{'met' if r.neural_vs_best_classical <= 0.05 else 'not met'}).")
    lose = [f"{r.dataset} ({r.scope})" for r in verdict.itertuples() if not r.neural_beats_seasonal_naive]
    notes.append("The better neural model beats SeasonalNaive on every set, in both scopes." if not lose else
                 f"The better neural model does not beat SeasonalNaive on: {', '.join(lose)}.")
    for r in sig.itertuples():
        head = f"{r.dataset} ({r.scope}): {r.model} - {r.against} mean MASE difference {r.mean_difference:+.3f}"
        if not r.testable:  # one series (AirPassengers): nothing to resample across
            notes.append(f"{head} on {r.series} series; too few series for a significance test.")
            continue
        notes.append(f"{head} (95% interval of a paired bootstrap that resamples the {r.series} series, each with "
                     f"all of its windows ({r.units} series-windows): {r.ci_low:+.3f} to {r.ci_high:+.3f}; "
                     f"{'significant' if r.significant else 'not significant'}).")
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        widest = horizon.groupby("dataset").scope.transform(lambda x: "all windows" if (x == "all windows").any()
                                                             else "official hold-out")
        keep = horizon[horizon.model.isin(["SeasonalNaive", "AutoETS", "AutoTheta", *NEURAL])
                       & (horizon.scope == widest)]
        gg, fig = line_pair(keep, "step", "mase", "model", facet="dataset", points=False,
                            title="MASE by forecast horizon, classical vs neural",
                            subtitle="Every window of each set (M1 yearly: its official hold-out only)",
                            xlab="Steps ahead", ylab="Mean scaled absolute error")
        figs = ctx.save("neural_vs_classical_horizon", gg, fig)
    return {"comparison": summary, "verdict": verdict, "significance": sig, "anchors": anchors,
            "per_horizon": horizon, "timings": timings}, figs, notes
