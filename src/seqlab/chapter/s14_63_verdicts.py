"""§14.63's verdicts on the comparison itself: each claim source takes the section's tables and returns predicates
with the numbers, labels and yes/no facts that the forecasting page's ``{claim}`` wordings quote. No sentence is
written here."""
from __future__ import annotations

import pandas as pd

from ..claims import claim_source, require, verdict
from ..experiments.forecast import CLASSICAL_MODELS
from .s14_63_comparison import entry_tests, horizon_ends


HO, ALL = "official hold-out", "all windows"


def _lead(v: pd.DataFrame, d: str, scope: str = HO):
    return v.set_index(["dataset", "scope"]).loc[(d, scope)]


def _sides(r) -> dict:
    """The two leaders of one verdict row, and the gap between them as a share of the classical score."""
    return dict(best_neural=r.best_neural, neural=r.best_neural_mase, best_classical=r.best_classical,
                classical=r.best_classical_mase, gap=abs(r.neural_vs_best_classical))


@claim_source
def comparison_claims(v: pd.DataFrame, summary: pd.DataFrame):
    """The verdict per set: who leads, by how much, where GRU and Transformer stand, seasonal naive beaten."""
    m, ma = _lead(v, "M3 monthly"), _lead(v, "M3 monthly", ALL)
    S = summary[(summary.dataset == "M3 monthly") & (summary.scope == HO)].set_index("model").mase
    g, t = float(S["GRU"]), float(S["Transformer"])
    cl = {k: float(S[k]) for k in CLASSICAL_MODELS if k in S.index}
    order = sorted(cl, key=cl.get)
    tq, m1, y = _lead(v, "Tourism quarterly"), _lead(v, "M1 yearly"), _lead(v, "M3 yearly")
    ya = _lead(v, "M3 yearly", ALL)
    ho = v[v.scope == HO]
    lost_ho = list(ho.loc[~ho.neural_beats_best_classical, "dataset"])
    lost_sn = [dict(dataset=r.dataset, scope=r.scope) for r in v.itertuples() if not r.neural_beats_seasonal_naive]
    return [
        verdict("s63_m3m_lead", m.neural_beats_best_classical, series=int(m.series), **_sides(m)),
        verdict("s63_m3m_seq", min(g, t) > min(cl.values()), gru=g, transformer=t, classical=cl,
                behind=[k for k in order if cl[k] < min(g, t)], ahead=[k for k in order if cl[k] > max(g, t)]),
        # what the record states: over all windows the order of the two means is the reverse of the hold-out's
        verdict("s63_m3m_all", ma.neural_beats_best_classical != m.neural_beats_best_classical, **_sides(ma)),
        verdict("s63_tq_lead", tq.neural_beats_best_classical, **_sides(tq)),
        verdict("s63_m1y_lead", m1.neural_beats_best_classical, **_sides(m1)),
        verdict("s63_m3y_behind", not y.neural_beats_best_classical, **_sides(y), all_neural=ya.best_neural,
                all_classical=ya.best_classical, all_gap=abs(ya.neural_vs_best_classical),
                all_ahead=bool(ya.neural_vs_best_classical < 0)),
        verdict("s63_only_m3y", lost_ho == ["M3 yearly"], lost=lost_ho),
        verdict("s63_sn", not lost_sn, lost=lost_sn),
    ]


#: the sets of the head-to-head verdict, each with the suffix of its claim's name and what the forecasting page
#: states of N-BEATS against the set's best classical entry: "ahead" or "behind" (the interval excludes zero and
#: Holm's correction keeps it), "held back" (the interval excludes zero, Holm's correction does not keep it) or
#: "open" (the interval contains zero); a set's verdict holds where the build's outcome is the stated one
ENTRY_SETS = (("m3m", "M3 monthly", "open"), ("m3y", "M3 yearly", "behind"), ("tq", "Tourism quarterly", "ahead"),
              ("m1y", "M1 yearly", "held back"))


def entry_outcome(excludes: bool, p_holm: float, difference: float, alpha: float = 0.05) -> str:
    """One head-to-head read in words: "ahead", "behind", "held back" or "open" (see :data:`ENTRY_SETS`)."""
    if not excludes:
        return "open"
    if not p_holm < alpha:
        return "held back"
    return "ahead" if difference < 0 else "behind"


@claim_source
def entry_claims(h2h: pd.DataFrame, family: int, alpha: float = 0.05):
    """The verdict against the best classical entry: per set, is N-BEATS's difference told from zero, does the
    untuned combination beat every single classical model, and does the neural + classical mean beat both parts?

    ``h2h`` is :func:`~seqlab.chapter.s14_63.head_to_head` with its ``family``'s Holm p-values; ``family`` the
    number of comparisons in that family. A difference is settled where its interval excludes zero and its
    Holm-adjusted p is below ``alpha``."""
    H = h2h.set_index("dataset")
    out = []
    for key, d, stated in ENTRY_SETS:
        if d not in H.index:
            continue
        r = H.loc[d]
        excludes = bool(r.nbeats_significant)
        outcome = entry_outcome(excludes, float(r.nbeats_p_holm), float(r.nbeats_difference), alpha)
        out.append(verdict(f"s63_entry_{key}", outcome == stated, outcome=outcome, stated=stated,
                           best_entry=r.best_entry, best_entry_mase=r.best_entry_mase, nbeats_mase=r.nbeats_mase,
                           difference=r.nbeats_difference, ci=[r.nbeats_ci_low, r.nbeats_ci_high],
                           share_won=r.nbeats_share_won, ahead=bool(r.nbeats_difference < 0), excludes=excludes,
                           p_holm=r.nbeats_p_holm, family=family))
    comb_wins = [d for d, r in H.iterrows() if r.combination_mase < r.best_single_mase]
    # what the record states: the untuned mean does not beat the best single model on every set
    out.append(verdict("s63_comb_single", len(comb_wins) < len(H), sets=comb_wins, n_sets=len(H),
                       n_wins=len(comb_wins)))
    both_best = [d for d, r in H.iterrows() if r.both_mase < min(r.nbeats_mase, r.best_entry_mase)]
    both_sig = [d for d, r in H.iterrows() if r.both_significant and r.both_p_holm < alpha and r.both_difference < 0]
    both_behind = [d for d, r in H.iterrows() if r.both_significant and r.both_p_holm < alpha
                   and r.both_difference > 0]
    # what the page states: the hybrid is settled ahead of the best classical entry somewhere and behind it nowhere
    out.append(verdict("s63_both", bool(both_sig) and not both_behind, lower_than_both=both_best,
                       significant=both_sig, behind=both_behind))
    return out


@claim_source
def cost_claims(eff: pd.DataFrame, cost: pd.DataFrame, members: int, dataset: str = "M3 monthly"):
    """Is the final N-BEATS ensemble cheaper to fit than one Transformer on the same set, in every round of the
    CPU-time measurement (``eff``: :func:`seqlab.chapter.s14_63_cost.efficiency`)? The search on top is the stored
    wall-clock seconds of its jobs (``cost``: :func:`seqlab.chapter.s14_63.cost_table`)."""
    e, c = eff.set_index("entry"), cost.set_index("dataset").loc[dataset]
    nb, tr = e.loc["N-BEATS"], e.loc["Transformer"]
    grid = float(c.nbeats_validation + c.nbeats_ablation + c.round3_validation)
    # what the record states: the ensemble is not cheaper to fit than one Transformer in every round
    return [verdict("s63_cost", not bool(nb.cpu_hi < tr.cpu_lo), members=members, dataset=dataset,
                    nbeats_final=nb.cpu_seconds, transformer=tr.cpu_seconds, grid=grid,
                    ratio=nb.cpu_seconds / tr.cpu_seconds, ratio_lo=nb.cpu_lo / tr.cpu_hi,
                    ratio_hi=nb.cpu_hi / tr.cpu_lo)]


def _nbeats_key(index, dataset: str) -> tuple:
    """N-BEATS's row of the residual check on ``dataset``: its own, or the best neural one where it leads."""
    return (dataset, "N-BEATS") if (dataset, "N-BEATS") in index else (dataset, "best neural")


def _lean(mean: float, p_holm: float, alpha: float = 0.05) -> int:
    """+1 over-forecasting, -1 under-forecasting, where the mean's Holm-adjusted p is below ``alpha``; else 0."""
    return 0 if not p_holm < alpha else 1 if mean > 0 else -1


@claim_source
def bias_claims(check: pd.DataFrame):
    """Which way the leaders lean on M3 monthly, and whether N-BEATS and the best classical entry lean apart on M3
    yearly and on Tourism. ``check`` is :func:`~seqlab.chapter.s14_63_comparison.series_bias`: a lean counts only
    where its Holm-adjusted p (over the table's rows) is below 0.05."""
    R = check.set_index(["dataset", "role"])
    b, se, ph = R.mean_scaled_error, R.mean_scaled_error_se, R.p_holm
    k, kc = _nbeats_key(R.index, "M3 monthly"), ("M3 monthly", "best classical")
    nn, cl = float(b[k]), float(b[kc])
    same = _lean(nn, float(ph[k])) == _lean(cl, float(ph[kc])) != 0
    lean, used = {}, []
    for key, d in (("y", "M3 yearly"), ("t", "Tourism quarterly")):
        kn, kd = _nbeats_key(R.index, d), (d, "best classical")
        a, c = _lean(float(b[kn]), float(ph[kn])), _lean(float(b[kd]), float(ph[kd]))
        used += [float(ph[kn]), float(ph[kd])]
        lean.update({f"{key}_nbeats": float(b[kn]), f"{key}_nbeats_se": float(se[kn]),
                     f"{key}_classical": float(b[kd]), f"{key}_classical_se": float(se[kd]),
                     f"{key}_model": R.model[kd], f"{key}_clear": a != 0 and c != 0, f"{key}_apart": a > 0 > c,
                     f"{key}_same": a == c})
    y_best = R.model[("M3 yearly", "best neural")]
    kb = ("M3 yearly", "best neural")
    other = {} if y_best == "N-BEATS" else dict(y_other=y_best, y_other_bias=float(b[kb]), y_other_p=float(ph[kb]),
                                                y_other_over=_lean(float(b[kb]), float(ph[kb])) > 0)
    return [
        verdict("s63_m3m_bias", same, neural=nn, classical=cl, neural_se=float(se[k]), classical_se=float(se[kc]),
                neural_p=float(ph[k]), classical_p=float(ph[kc]), series=int(R.series[k]),
                share_over=float(R.share_over[k]), over=nn > 0, family=len(check)),
        verdict("s63_apart", lean["y_apart"] and lean["t_apart"], apart=[lean["y_apart"], lean["t_apart"]],
                weakest=max(used), other=bool(other), **other, **lean),
    ]


#: the N-BEATS comparisons the page reads in words: (data set, scope, claim name)
#: the comparisons of SIGNIFICANCE_READ that the record states are not settled
UNSETTLED_READ = ("s63_sig_tq_all",)

SIGNIFICANCE_READ = [("M3 monthly", HO, "s63_sig_m3m"), ("M3 monthly", ALL, "s63_sig_m3m_all"),
                     ("M3 yearly", HO, "s63_sig_m3y"), ("Tourism quarterly", HO, "s63_sig_tq"),
                     ("Tourism quarterly", ALL, "s63_sig_tq_all")]


@claim_source
def verdict_significance_claims(family: pd.DataFrame, v: pd.DataFrame,
                                sets=("M3 monthly", "Tourism quarterly", "M1 yearly", "M3 yearly")):
    """Which of the hold-out verdicts the paired bootstrap settles once the verdict's comparisons are judged as one
    family (``family``: :func:`~seqlab.chapter.s14_63.verdict_family`): the best neural model against the best
    classical entry, as in the verdict."""
    V = v.set_index(["dataset", "scope"])
    F = family.set_index(["dataset", "model"])
    sure, open_, sides, p = [], [], {"neural": [], "classical": []}, {}
    for d in sets:
        r = F.loc[(d, V.loc[(d, HO)].best_neural)]
        settled = bool(r.significant) and (r.ci_low > 0 or r.ci_high < 0)
        (sure if settled else open_).append(d)
        p[d] = float(r.p_holm)
        if settled:
            sides["neural" if float(r.mean_difference) < 0 else "classical"].append(d)
    return [verdict("s63_verdict_sig", not open_, significant=sure, not_significant=open_, sides=sides,
                    neural_ahead=sides["neural"], classical_ahead=sides["classical"], family=len(family),
                    both_sides=bool(sides["neural"]) and bool(sides["classical"]), p_holm=p)]


@claim_source
def significance_claims(sig: pd.DataFrame, family: pd.DataFrame, alpha: float = 0.05):
    """Each bootstrap interval read in words: does it exclude zero, does Holm's correction over the family
    (``family``: :func:`~seqlab.chapter.s14_63.nbeats_family`) keep it, and on which side lies N-BEATS?"""
    nb = entry_tests(sig)
    nb = nb[nb.model == "N-BEATS"]
    testable = nb[nb.testable.astype(bool)]
    computed = (testable.ci_low > 0) | (testable.ci_high < 0)
    out = [require("s63_sig_flag", bool((computed == testable.significant.astype(bool)).all()),
                   mismatched=list(testable.loc[computed != testable.significant.astype(bool), "dataset"]))]
    G, F = nb.set_index(["dataset", "scope"]), family.set_index(["dataset", "scope"])
    for d, scope, name in SIGNIFICANCE_READ:
        r = G.loc[(d, scope)]
        lo, hi, mean = float(r.ci_low), float(r.ci_high), float(r.mean_difference)
        excludes, p = lo > 0 or hi < 0, float(F.p_holm[(d, scope)])
        settled = excludes and p < alpha
        # what the record states of each: settled, except those of UNSETTLED_READ
        out.append(verdict(name, not settled if name in UNSETTLED_READ else settled, ci_low=lo, ci_high=hi,
                           mean_difference=mean,
                           size=abs(mean), lead=mean < 0, below=hi < 0, excludes=excludes, p_holm=p,
                           family=len(family)))
    return out


@claim_source
def horizon_claims(horizon: pd.DataFrame, nn_model: str, cl_model: str, dataset: str = "M3 monthly",
                   scope: str = HO):
    """Errors by step: do they grow on every competition set, and where does the neural leader gain?"""
    ho = horizon[horizon.scope == scope]
    ends = horizon_ends(horizon, scope).set_index("model")
    shrink = [dict(dataset=d, models=[m for m, r in ends[d].items() if r <= 1]) for d in ends.columns]
    shrink = [s for s in shrink if s["models"]]
    steps = ho[ho.dataset == dataset].pivot(index="step", columns="model", values="mase")
    nn, cl = steps[nn_model], steps[cl_model]
    # the unit of one step, a label of the data set's frequency
    unit = {"M3 monthly": "month", "Tourism quarterly": "quarter"}.get(dataset, "step")
    names = dict(neural_model=nn_model, classical_model=cl_model, unit=unit)
    return [
        # what the record states: some model errs no more at the last step than at the first
        verdict("s63_h_grow", bool(shrink), exceptions=shrink),
        verdict("s63_h_first", nn.iloc[0] > cl.iloc[0], neural=nn.iloc[0], classical=cl.iloc[0], **names),
        verdict("s63_h_last", nn.iloc[-1] < cl.iloc[-1], neural=nn.iloc[-1], classical=cl.iloc[-1],
                won=int((nn < cl).sum()), steps=len(steps), **names),
    ]


@claim_source
def yearly_claims(val: pd.DataFrame, coll: pd.DataFrame, picked: pd.DataFrame, grids: dict, check: pd.DataFrame,
                  noise: float, verdict_: pd.DataFrame):
    """Why M3 yearly goes to the classical side: seen on validation (by more than ``noise``, the largest seed
    difference of one of its members), whether short series explain it (against M1 yearly's, scored in
    ``verdict_``), the smallest step counts."""
    VS = val.set_index(["dataset", "model"]).validation_mase
    nb, th = float(VS[("M3 yearly", "N-BEATS")]), float(VS[("M3 yearly", "AutoTheta")])
    K = coll.set_index("dataset")
    P = picked.set_index("dataset").steps
    yearly = [d for d in ("M3 yearly", "M1 yearly") if d in P.index]
    R = check.set_index(["dataset", "role"])
    kn, kc = _nbeats_key(R.index, "M3 yearly"), ("M3 yearly", "best classical")
    y_nn, y_cl = float(R.mean_scaled_error[kn]), float(R.mean_scaled_error[kc])
    nn_se, cl_se = float(R.mean_scaled_error_se[kn]), float(R.mean_scaled_error_se[kc])
    nn_p, cl_p = float(R.p_holm[kn]), float(R.p_holm[kc])
    best = R.model[("M3 yearly", "best neural")]
    return [
        verdict("s63_y_seen", nb - th > noise, nbeats=nb, autotheta=th, seed_spread=noise, behind=nb > th,
                gap=nb - th),
        _length_claim(K, verdict_),
        verdict("s63_y_steps", all(int(P[d]) == min(grids[d]) for d in yearly), sets=yearly,
                steps={d: int(P[d]) for d in yearly}),
        verdict("s63_y_dir", _lean(y_nn, nn_p) > 0 > _lean(y_cl, cl_p), neural=y_nn, classical=y_cl,
                neural_se=nn_se, classical_se=cl_se, best_neural=best, other=best != "N-BEATS",
                best_bias=float(R.mean_scaled_error[("M3 yearly", "best neural")]),
                best_over=_lean(float(R.mean_scaled_error[("M3 yearly", "best neural")]),
                                float(R.p_holm[("M3 yearly", "best neural")])) > 0),
    ]


def _length_claim(K: pd.DataFrame, verdict_: pd.DataFrame):
    """Are short series the reason? M3 yearly against M3 monthly, and against M1 yearly, shorter still."""
    my, mm = float(K.median_length["M3 yearly"]), float(K.median_length["M3 monthly"])
    cy, cm = int(K.cuts["M3 yearly"]), int(K.cuts["M3 monthly"])
    m1 = float(K.median_length["M1 yearly"])
    V = verdict_.set_index(["dataset", "scope"])
    m1_neural = bool(V.neural_beats_best_classical[("M1 yearly", HO)])
    shorter = my < mm and cy < cm
    # what the record states: the medians do not single out length (the negation of "short series may be why")
    return verdict("s63_y_short", not (shorter and not (m1 < my and m1_neural)), median_yearly=my,
                   median_monthly=mm,
                   cuts_yearly=cy, cuts_monthly=cm, median_m1_yearly=m1, m1_neural_wins=m1_neural,
                   shorter_collection=shorter)
