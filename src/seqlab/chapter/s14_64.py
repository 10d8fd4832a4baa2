"""§14.64 Summary: the verdicts of Part 3, gathered from the earlier sections.

Cheap by design: the measurements that take seconds are repeated with their sections'
settings; the trained results (copy task, decoding, forecasting) are read from the
verified artifact sets, never retrained. The two timing verdicts (§14.55, §14.60) depend
on the machine and take minutes; the notes name the commands that measure them.
"""
from __future__ import annotations

import pandas as pd
import torch

from .base import section

#: the widths at which the operation-count crossover of attention and an LSTM layer is stated
COST_WIDTHS = (32, 64, 128, 256)
#: the copy task's lengths that the summary quotes (§14.48's protocol, stored with §14.54's comparison)
COPY_LENGTHS = (4, 32)


def objectives() -> pd.DataFrame:
    """One row per learning objective: the smallest measurement that settles it, with its section's settings."""
    from ..analysis.gradients import grad_by_lag, input_gradient_reach
    from ..analysis.params import count_parameters
    from ..analysis.softmax import logit_spread
    from ..nn import MultiHeadAttention
    from ..nn import problem_shapes as ps
    from . import s14_45, s14_46_1, s14_47, s14_51, s14_52

    g = grad_by_lag(0.7, T=s14_46_1.T, d=s14_46_1.D, seed=s14_46_1.SEED)[::-1]
    reach = {c: input_gradient_reach(c, T=s14_47.T, d=32, seed=s14_47.SEED)[0] for c in ("rnn", "lstm")}
    gen = torch.Generator().manual_seed(0)
    raw, scaled = logit_spread(1024, generator=gen), logit_spread(1024, scaled=True, generator=gen)
    heads = {h: count_parameters(MultiHeadAttention(s14_51.PARAM_D_MODEL, h)) for h in s14_51.PARAM_HEADS}
    order = s14_52.order_sensitivity(*s14_52.equivariance_setup())
    rows = [
        ("14.45", "the problem class", "many-to-one parameters (any length)",
         count_parameters(ps.ManyToOne(s14_45.D_IN, s14_45.D_H, s14_45.D_OUT))),
        ("14.46.1", "the vanishing-gradient product", "gradient factor per step at rho = 0.7", (g[40] / g[10]) ** (1 / 30)),
        ("14.46.1", "the vanishing-gradient product", "gradient left at lag 40, rho = 0.7", g[40]),
        ("14.47", "gating as an additive path", "LSTM / RNN input-gradient reach at lag 79", reach["lstm"] / reach["rnn"]),
        ("14.50", "scaled dot-product attention", "sd of q.k at d_k = 1024", raw),
        ("14.50", "scaled dot-product attention", "sd of q.k / sqrt(d_k) at d_k = 1024", scaled),
        ("14.51", "multi-head attention", f"distinct parameter counts over {len(heads)} head counts",
         len(set(heads.values()))),
        ("14.52", "positional encoding", "largest change under a permutation, no positions",
         order.max_abs_difference[0]),
        ("14.52", "positional encoding", "largest change under a permutation, sinusoidal positions",
         order.max_abs_difference[1]),
    ]
    return pd.DataFrame([dict(section=s, objective=o, measure=m, value=float(v)) for s, o, m, v in rows])


def copy_bottleneck() -> pd.DataFrame:
    """Held-out copy accuracy of the fixed-vector GRU and the GRU with attention (§14.48's protocol), stored."""
    from ..experiments.transformer_tasks import transformer_task_results

    c = transformer_task_results()["comparison"]
    keep = c[(c.task == "copy") & c.model.isin(["GRU", "GRU + attention"]) & c.sequence_length.isin(COPY_LENGTHS)]
    return keep[["model", "sequence_length", "heldout_teacher_forced", "heldout_free_running"]].reset_index(drop=True)


def decoding_at_matched_diversity() -> pd.DataFrame:
    """Each decoding knob at the middle distinct-3 target of §14.59 (the stored decoding sweep)."""
    from . import s14_59
    from .s14_58 import decoding_results, knob_summary

    scores, _, _ = decoding_results()
    matched = s14_59.at_matched_diversity(knob_summary(scores), "distinct_3")
    middle = matched[matched.target == sorted(matched.target.unique())[1]]
    return middle[["knob", "setting", "distinct_3", "nll_judge"]].assign(
        knob=middle.knob.map(s14_59.KNOB_NAMES)).reset_index(drop=True)


def forecasting():
    """``(verdict, interval_coverage)`` of §14.63, from the verified forecasting artifacts."""
    from ..experiments.forecast import forecast_results
    from . import s14_63

    summary = forecast_results()[0]
    return s14_63.verdict(summary), s14_63.coverage_summary(s14_63.intervals())


def _notes(obj, copy, decoding, verdict, cover) -> list[str]:
    v = obj.set_index("measure").value
    acc = copy.set_index(["model", "sequence_length"]).heldout_teacher_forced
    lo, hi = COPY_LENGTHS
    best = decoding.set_index("knob").nll_judge
    m3 = verdict[(verdict.dataset == "M3 monthly") & (verdict.scope == "all windows")].iloc[0]
    ahead = verdict[verdict.neural_vs_best_classical < 0]
    cov = cover.set_index(["kind", "level"])["mean"]
    return [
        f"Gradient: at rho = 0.7 each step back multiplies the gradient by about "
        f"{v['gradient factor per step at rho = 0.7']:.3f}; before training the LSTM's gradient at lag 79 is "
        f"{v['LSTM / RNN input-gradient reach at lag 79']:,.0f} times the plain RNN's.",
        f"Bottleneck: teacher-forced held-out copy accuracy of the fixed-vector model falls from {acc['GRU', lo]:.3f} "
        f"at T = {lo} to {acc['GRU', hi]:.3f} at T = {hi}; with attention it is {acc['GRU + attention', hi]:.3f} at "
        f"T = {hi} (stored runs of §14.54's comparison, which uses §14.48's protocol and seed).",
        f"Attention against recurrence: by operation count the layers cost the same at T = 2d "
        f"(T = {2 * 128} at d = 128). The measured crossover depends on the machine: `seqlab run 14.55` measures it "
        "(minutes), width by width, forward and training step.",
        f"Decoding: at an equal distinct-3 of {decoding.distinct_3.iloc[0]:.3f}, {best.idxmin()} gives the most "
        f"plausible text (judge NLL {best.min():.3f}, temperature {best['temperature']:.3f}). The key-value cache's "
        "equality with the full pass and its per-step cost are timed by `seqlab run 14.60`.",
        f"Forecasting: on M3 monthly ({m3.units:,} series-windows) the best neural model ({m3.best_neural}) scores "
        f"MASE {m3.best_neural_mase:.3f} against {m3.best_classical_mase:.3f} for {m3.best_classical} "
        f"({m3.neural_vs_best_classical:+.1%}); the neural models beat the seasonal naive benchmark in "
        f"{int(verdict.neural_beats_seasonal_naive.sum())} of {len(verdict)} comparisons and the best classical "
        f"method in {len(ahead)} of {len(verdict)}.",
        f"Intervals: conformal intervals held {cov['conformal', 80]:.1%} and {cov['conformal', 95]:.1%} of the "
        f"hold-out values at the 80 and 95 percent levels; the classical models' own intervals "
        f"{cov['native', 80]:.1%} and {cov['native', 95]:.1%}.",
        "Read from artifacts, not retrained: the copy runs (transformer_tasks), the decoding sweep (lm_decoding) "
        "and the forecasting comparison (forecast); HEAVY_EVAL=1 retrains them in their own sections.",
    ]


@section("14.64", "Summary: the verdicts")
def run(ctx):
    with ctx.step("repeating the objectives' measurements"):
        obj = objectives()
    copy = copy_bottleneck()
    decoding = decoding_at_matched_diversity()
    with ctx.step("reading the forecasting artifacts"):
        verdict, cover = forecasting()
    cost = pd.DataFrame([dict(d=d, flop_T_star=2 * d) for d in COST_WIDTHS])
    tables = {"objectives": obj, "copy_bottleneck": copy, "cost_by_operation_count": cost,
              "decoding_at_matched_diversity": decoding, "forecast_verdict": verdict, "interval_coverage": cover}
    return tables, [], _notes(obj, copy, decoding, verdict, cover)
