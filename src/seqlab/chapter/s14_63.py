"""§14.63 Neural vs classical forecasting (heavy: computed under HEAVY_EVAL, else loaded)."""
from __future__ import annotations

import pandas as pd

from ..forecast.experiments import CLASSICAL_MODELS, NEURAL, forecast_results
from .base import section

ANCHORS = [("M1 yearly", "AutoTheta", "mase", 3.61), ("M3 yearly", "Naive", "smape", 17.9),
           ("AirPassengers", "SeasonalNaive", "mase", 1.25), ("AirPassengers", "AutoTheta", "mase", 0.80)]


@section("14.63", "Neural vs classical forecasting")
def run(ctx):
    summary, horizon, sig, timings, mode = forecast_results()
    s = summary.set_index(["dataset", "model"])
    anchors = pd.DataFrame([dict(dataset=d, model=m, metric=k, reference=ref, measured=round(float(s.loc[(d, m), k]), 3),
                                 relative_difference=round(float(s.loc[(d, m), k]) / ref - 1, 4))
                            for d, m, k, ref in ANCHORS])
    rows, notes = [], [f"Results {mode} (artifact set 'forecast', every file's sha256 checked)."]
    for d, g in summary.groupby("dataset", sort=False):
        g = g.set_index("model")
        best_c = g.loc[[m for m in CLASSICAL_MODELS if m in g.index]].mase.idxmin()
        best_n = g.loc[list(NEURAL)].mase.idxmin()
        rows.append(dict(dataset=d, best_classical=best_c, best_classical_mase=g.mase[best_c], best_neural=best_n,
                         best_neural_mase=g.mase[best_n], neural_vs_best_classical=g.mase[best_n] / g.mase[best_c] - 1,
                         seasonal_naive_mase=g.mase["SeasonalNaive"],
                         neural_beats_seasonal_naive=bool(g.mase[best_n] < g.mase["SeasonalNaive"])))
    verdict = pd.DataFrame(rows)
    v = verdict.set_index("dataset")
    m3 = v.loc["M3 monthly"]
    notes.append("Neural models: one global GRU and one global Transformer per data set, trained on per-window "
                 "scaled windows with early stopping on the last horizon of each training part; classical models "
                 "are fitted per series by statsforecast. Competition sets use their official hold-out.")
    notes.append(f"M3 monthly: best neural {m3.best_neural} {m3.best_neural_mase:.3f} vs best classical "
                 f"{m3.best_classical} {m3.best_classical_mase:.3f} ({m3.neural_vs_best_classical:+.1%}; the target "
                 f"was within 5%: {'met' if m3.neural_vs_best_classical <= 0.05 else 'not met'}).")
    lose = [d for d, r in v.iterrows() if not r.neural_beats_seasonal_naive]
    notes.append("The better neural model beats SeasonalNaive on every set." if not lose else
                 f"The better neural model does not beat SeasonalNaive on: {', '.join(lose)}.")
    for r in sig.itertuples():
        if r.series < 10:  # one series (AirPassengers): nothing to resample across
            notes.append(f"{r.dataset}: {r.model} - {r.against} mean MASE difference {r.mean_difference:+.3f} "
                         f"on {r.series} series; too few series for a significance test.")
            continue
        notes.append(f"{r.dataset}: {r.model} - {r.against} mean MASE difference {r.mean_difference:+.3f} "
                     f"(95% paired bootstrap interval over {r.series} series {r.ci_low:+.3f} to {r.ci_high:+.3f}; "
                     f"{'significant' if r.significant else 'not significant'}).")
    figs = []
    if ctx.figures:
        from ..plotting import line_pair

        keep = horizon[horizon.model.isin(["SeasonalNaive", "AutoETS", "AutoTheta", *NEURAL])]
        gg, fig = line_pair(keep, "step", "mase", "model", facet="dataset", points=False,
                            title="MASE by forecast horizon, classical vs neural",
                            subtitle="Official hold-outs (AirPassengers: four rolling windows)",
                            xlab="Steps ahead", ylab="Mean scaled absolute error")
        figs = ctx.save("neural_vs_classical_horizon", gg, fig)
    return {"comparison": summary, "verdict": verdict, "significance": sig, "anchors": anchors,
            "per_horizon": horizon, "timings": timings}, figs, notes
