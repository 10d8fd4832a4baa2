"""§14.63's verdicts: each claim source takes the section's tables and returns predicates with the numbers,
labels and yes/no facts that the forecasting page's ``{claim}`` wordings quote. No sentence is written here."""
from __future__ import annotations

import math

import pandas as pd

from ..claims import claim_source, require, verdict
from ..experiments.forecast import CLASSICAL_ENTRIES, CLASSICAL_MODELS
from .s14_62 import REPRODUCED
from .s14_63 import (
    M3_TABLE_RECOMPUTED,
    coverage_by_set,
    entry_tests,
    horizon_ends,
    native_by_model,
)

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
        verdict("s63_m3m_all", ma.neural_beats_best_classical == m.neural_beats_best_classical, **_sides(ma)),
        verdict("s63_tq_lead", tq.neural_beats_best_classical, **_sides(tq)),
        verdict("s63_m1y_lead", m1.neural_beats_best_classical, **_sides(m1)),
        verdict("s63_m3y_behind", not y.neural_beats_best_classical, **_sides(y), all_neural=ya.best_neural,
                all_classical=ya.best_classical, all_gap=abs(ya.neural_vs_best_classical),
                all_ahead=bool(ya.neural_vs_best_classical < 0)),
        verdict("s63_only_m3y", lost_ho == ["M3 yearly"], lost=lost_ho),
        verdict("s63_sn", not lost_sn, lost=lost_sn),
    ]


@claim_source
def selection_claims(rounds_: pd.DataFrame, grid: pd.DataFrame, picked: pd.DataFrame, val: pd.DataFrame,
                     v: pd.DataFrame, ab: pd.DataFrame, grids: dict):
    """What the validation windows chose and whether the choice carried over to the hold-out.

    ``grids`` maps each data set to its step counts; ``val`` is :func:`~seqlab.chapter.s14_63.validation_scores`.
    """
    R = rounds_[rounds_.dataset == "M3 monthly"]
    r1, r2 = R.iloc[0], R.iloc[-1]
    better_val, better_hold = r2.validation_mase < r1.validation_mase, r2.last_window_mase < r1.last_window_mase
    changed, same = [], []
    for d, g in rounds_.groupby("dataset", sort=False):
        (changed if g[["steps", "members"]].drop_duplicates().shape[0] > 1 else same).append(d)
    P = picked.set_index("dataset")
    tq_steps, tq_k = int(P.steps["Tourism quarterly"]), int(P.members["Tourism quarterly"])
    G = grid.set_index("members")
    col = G[f"steps_{int(P.steps['M3 monthly'])}"]
    largest, k = int(G.index.max()), int(P.members["M3 monthly"])
    VS = val.set_index(["dataset", "model"]).validation_mase
    cl_val = {m: float(VS[("M3 monthly", m)]) for m in CLASSICAL_ENTRIES if ("M3 monthly", m) in VS.index}
    best_cl = min(cl_val, key=cl_val.get)
    nb_val = float(VS[("M3 monthly", "N-BEATS")])
    ho_ahead = bool(_lead(v, "M3 monthly").neural_beats_best_classical)
    d_interp = float(ab.set_index("ingredient").difference["interpretable basis (trend, seasonality)"])
    return [
        verdict("s63_r_carry", better_val == better_hold, validation=[r1.validation_mase, r2.validation_mase],
                holdout=[r1.last_window_mase, r2.last_window_mase]),
        verdict("s63_visible", (nb_val < cl_val[best_cl]) == ho_ahead, nbeats=nb_val, classical=cl_val[best_cl],
                best_classical=best_cl),
        verdict("s63_rounds_same", bool(same), changed=changed, same=same),
        verdict("s63_tq_short", tq_steps == min(grids["Tourism quarterly"]), steps=tq_steps, members=tq_k,
                single=tq_k == 1, grid=list(grids["Tourism quarterly"])),
        verdict("s63_m3m_edge", k == largest, members=k, largest=largest),
        verdict("s63_m3m_falling", col.loc[largest] < col.loc[largest - 1], previous=col.loc[largest - 1],
                last=col.loc[largest], largest=largest, before=largest - 1),
        verdict("s63_interp_member", d_interp < 0, difference=d_interp),
    ]


@claim_source
def round3_claims(rounds_: pd.DataFrame, recipe_: pd.DataFrame, noise: float, dataset: str = "M3 monthly"):
    """Round 3 (fixed in advance): what its recipe rule adopted, and whether its validation and hold-out scores moved
    the same way from round 2's, by more than ``noise`` (the mean seed difference of one member,
    :func:`~seqlab.chapter.s14_63.seed_spread`)."""
    adopted = recipe_[recipe_.adopted.astype(bool)]
    left = recipe_[recipe_.considered.astype(bool) & ~recipe_.adopted.astype(bool)]
    R = rounds_[rounds_.dataset == dataset].set_index("round")
    v2, v3 = float(R.validation_mase[2]), float(R.validation_mase[3])
    h2, h3 = float(R.last_window_mase[2]), float(R.last_window_mase[3])
    changes = [dict(ingredient=r.ingredient, measured_on=r.dataset, validation=r.validation_mase,
                    reference=r.reference_mase) for r in adopted.itertuples()]
    return [
        verdict("s63_r3_recipe", len(adopted) > 0, adopted=list(adopted.ingredient), changes=changes,
                n_adopted=len(adopted), considered=len(adopted) + len(left), n_left=len(left)),
        verdict("s63_r3_carry", (v3 < v2) == (h3 < h2) and abs(h3 - h2) > noise, dataset=dataset,
                improved=v3 < v2, within=abs(h3 - h2) <= noise, change=abs(h3 - h2),
                validation=[v2, v3], holdout=[h2, h3], seed_spread=noise),
    ]


@claim_source
def round3_member_claims(members: pd.DataFrame, ablation: pd.DataFrame, recipe_: pd.DataFrame, largest_seed: float,
                         dataset: str = "M3 monthly"):
    """Where round 3's validation change on ``dataset`` comes from: its first member against round 2's (same design,
    same seed), less what the ablation measured for the adopted changes on that set, against ``largest_seed`` (the
    largest seed difference of a round-3 pair there)."""
    A = ablation[ablation.dataset == dataset]
    steps = int(A.steps.iloc[0])
    M = members[(members.dataset == dataset) & (members.member == 0) & (members.steps == steps)]
    if len(M[["stack", "input_multiple", "seed"]].drop_duplicates()) != 1:
        raise ValueError(f"round 2's and round 3's first members on {dataset} differ in design or seed")
    M = M.set_index("round").validation_mase
    r2, r3 = float(M[2]), float(M[3])
    window_mean = A.groupby("ingredient").validation_mase.mean()
    ref = float(window_mean[[i for i in window_mean.index if i.startswith("reference")][0]])
    adopted = recipe_[recipe_.adopted.astype(bool)]
    here = [i for i in adopted.ingredient[adopted.dataset == dataset] if i in window_mean.index]
    elsewhere = [dict(ingredient=r.ingredient, measured_on=r.dataset) for r in adopted.itertuples()
                 if r.dataset != dataset]
    measured = sum(float(window_mean[i]) - ref for i in here)
    rest = (r3 - r2) - measured
    # the members are scored over all validation windows pooled, the ablation window by window: the same member
    # (round 2's) read both ways bounds what mixing the two can move
    mixing = abs(r2 - ref)
    return [verdict("s63_r3_member", rest > largest_seed + mixing, dataset=dataset, round2=r2, round3=r3,
                    reference=ref, here=here, elsewhere=elsewhere, measured_here=measured, rest=rest,
                    largest_seed=largest_seed, steps=steps, pooled_vs_window_mean=mixing)]


#: the sets of the head-to-head verdict, each with the suffix of its claim's name
ENTRY_SETS = (("m3m", "M3 monthly"), ("m3y", "M3 yearly"), ("tq", "Tourism quarterly"), ("m1y", "M1 yearly"))


@claim_source
def entry_claims(h2h: pd.DataFrame):
    """The verdict against the best classical entry: per set, is N-BEATS's difference told from zero, does the
    untuned combination beat every single classical model, and does the neural + classical mean beat both parts?"""
    H = h2h.set_index("dataset")
    out = []
    for key, d in ENTRY_SETS:
        if d not in H.index:
            continue
        r = H.loc[d]
        out.append(verdict(f"s63_entry_{key}", bool(r.nbeats_significant), best_entry=r.best_entry,
                           best_entry_mase=r.best_entry_mase, nbeats_mase=r.nbeats_mase,
                           difference=r.nbeats_difference, ci=[r.nbeats_ci_low, r.nbeats_ci_high],
                           share_won=r.nbeats_share_won, ahead=bool(r.nbeats_difference < 0)))
    comb_wins = [d for d, r in H.iterrows() if r.combination_mase < r.best_single_mase]
    out.append(verdict("s63_comb_single", len(comb_wins) == len(H), sets=comb_wins, n_sets=len(H),
                       n_wins=len(comb_wins)))
    both_best = [d for d, r in H.iterrows() if r.both_mase < min(r.nbeats_mase, r.best_entry_mase)]
    both_sig = [d for d, r in H.iterrows() if r.both_significant and r.both_difference < 0]
    out.append(verdict("s63_both", len(both_best) == len(H), lower_than_both=both_best, significant=both_sig))
    return out


@claim_source
def group_claims(groups: pd.DataFrame, dataset: str = "M3 monthly", model: str = "N-BEATS", level: int = 80):
    """Coverage by series length: does the pooled calibration under-cover the long series and over-cover the short,
    and does calibrating within each group bring every group nearer the level?"""
    col = f"coverage_{level}"
    g = groups[(groups.dataset == dataset) & (groups.model == model) & (groups.by == "length")].set_index(
        ["kind", "group"])[col]
    pooled = {k: float(g[("conformal", k)]) for k in ("short", "medium", "long")}
    own = {k: float(g[("conformal by length group", k)]) for k in ("short", "medium", "long")}
    miss_p = max(abs(x - level / 100) for x in pooled.values())
    miss_o = max(abs(x - level / 100) for x in own.values())
    helped, same, worse = [], [], []
    for m, gm in groups[(groups.dataset == dataset) & (groups.by == "length")].groupby("model", sort=False):
        G = gm.set_index(["kind", "group"])[col]
        if not {("conformal", "long"), ("conformal by length group", "long")} <= set(G.index):
            continue
        # compared at the precision the page prints coverage (0.1 percentage point), so a reader can check it
        far = [round(max(abs(float(G[(kind, k)]) - level / 100) for k in ("short", "medium", "long")), 3)
               for kind in ("conformal", "conformal by length group")]
        (helped if far[1] < far[0] else same if far[1] == far[0] else worse).append(m)
    where = dict(dataset=dataset, model=model, level=level)
    return [
        verdict("s63_grp_split", pooled["long"] < level / 100 < pooled["short"], pooled=pooled, **where),
        verdict("s63_grp_mondrian", miss_o < miss_p, pooled=miss_p, by_group=miss_o, own=own,
                pooled_points=100 * miss_p, by_group_points=100 * miss_o),
        verdict("s63_grp_models", not worse and not same, helped=helped, same=same, worse=worse,
                n_helped=len(helped), **where),
    ]


@claim_source
def native_claims(iv: pd.DataFrame):
    """Which models' own intervals under-cover on the competition hold-outs, named from the numbers."""
    mean = native_by_model(iv).set_index("model")
    under = [m for m, r in mean.iterrows() if r.coverage_80 < 0.80 and r.coverage_95 < 0.95]
    over = [m for m in mean.index if m not in under]

    def rows(ms):
        return [dict(model=m, c80=mean.coverage_80[m], c95=mean.coverage_95[m]) for m in ms]
    return [verdict("s63_native_who", bool(under) and bool(over), under=under, over=over,
                    under_rows=rows(under), over_rows=rows(over))]


@claim_source
def member_claims(members: pd.DataFrame, pairs: pd.DataFrame):
    """Does the median beat every member, does one member design win in every seed round, how much do seeds move?"""
    lo, hi = float(members.validation_mase.min()), float(members.validation_mase.max())
    ens = float(members.ensemble_mase.iloc[0])
    best = {}
    for r, g in members.groupby(members.seed // 1000):
        b = g.loc[g.validation_mase.idxmin()]
        best[int(r)] = dict(stack=b.stack, input=float(b.input_multiple))
    first, *later = best.values()
    second = later[0] if later else first
    designs = {(b["stack"], b["input"]) for b in best.values()}
    spread = float(pairs.difference.mean())
    return [
        verdict("s63_median_beats_all", ens < lo, lowest=lo, highest=hi, ensemble=ens),
        verdict("s63_no_best_design", len(designs) > 1, best=best, first_stack=first["stack"],
                first_input=first["input"], second_stack=second["stack"], second_input=second["input"],
                same_basis=len({b["stack"] for b in best.values()}) == 1),
        verdict("s63_seed_spread", spread < hi - lo, seed_spread=spread, member_range=hi - lo),
    ]


#: the ablation's rows the page reads, each with its claim's name
INGREDIENTS = {
    "raw weights instead of their moving average": "s63_ab_ema",
    "loss: scaled MAE instead of MASE": "s63_ab_mae",
    "loss: sMAPE instead of MASE": "s63_ab_smape",
    "windows stop one horizon before the origin": "s63_ab_origin",
    "no naive level under the blocks": "s63_ab_level",
    "windows drawn uniformly (long series weigh more)": "s63_ab_sampling",
    "interpretable basis (trend, seasonality)": "s63_ab_interp",
    "every cut point, not the last five horizons": "s63_ab_history",
    "short histories padded with their first value": "s63_ab_pad",
}


@claim_source
def ablation_claims(ab: pd.DataFrame, spreads: dict, chosen_steps: dict, largest: dict):
    """Each ingredient against the seed pairs of its set: does the chapter's setting earn its place?

    ``spreads`` and ``largest`` map a data set to the mean and the largest difference of its seed pairs
    (:func:`~seqlab.chapter.s14_63.seed_spread`); ``chosen_steps`` to the step count the members of those pairs
    were scored at, which must be the ablation's own. A difference counts only past the largest seed difference:
    inside it, a change of seed alone has moved a member as far.
    """
    out = []
    for d, g in ab.groupby("dataset", sort=False):
        out.append(require(f"s63_ab_steps_{d.replace(' ', '_').lower()}",
                           int(g.steps.iloc[0]) == int(chosen_steps[d]),
                           ablation_steps=int(g.steps.iloc[0]), member_steps=int(chosen_steps[d])))
    D = ab.set_index("ingredient")
    for row, name in INGREDIENTS.items():
        if row not in D.index:
            continue
        d, where = float(D.difference[row]), D.dataset[row]
        mean, top = spreads[where], largest[where]
        out.append(verdict(name, d > top, difference=d, seed_spread=mean, largest_seed_difference=top,
                           dataset=where, past_typical=d > mean, inside=d >= -top))
    ens = ab[ab.ingredient.str.startswith("ensemble") & (ab.dataset == "M3 monthly")]
    if len(ens):
        e = float(ens.difference.iloc[0])
        top = largest["M3 monthly"]
        out.append(verdict("s63_ab_ensemble", -e > top, difference=e, largest_seed_difference=top))
    return out


@claim_source
def cost_claims(cost: pd.DataFrame, members: int, dataset: str = "M3 monthly"):
    """Is the final N-BEATS ensemble cheaper to train than one Transformer training on the same set?"""
    c = cost.set_index("dataset").loc[dataset]
    fin, tr = float(c.nbeats_final), float(c.transformer_per_window)
    grid = float(c.nbeats_validation + c.nbeats_ablation + c.round3_validation)
    return [verdict("s63_cost", fin < tr, members=members, dataset=dataset, nbeats_final=fin, transformer=tr,
                    grid=grid, ratio=fin / tr)]


def _nbeats_key(index, dataset: str) -> tuple:
    """N-BEATS's row of the residual check on ``dataset``: its own, or the best neural one where it leads."""
    return (dataset, "N-BEATS") if (dataset, "N-BEATS") in index else (dataset, "best neural")


def _nbeats_bias(b: pd.Series, dataset: str) -> float:
    """N-BEATS's mean scaled error on ``dataset`` from the residual check."""
    return float(b[_nbeats_key(b.index, dataset)])


@claim_source
def bias_claims(check: pd.DataFrame):
    """Which way the leaders lean on M3 monthly, and whether N-BEATS and the best classical entry lean apart on M3
    yearly and on Tourism."""
    R = check.set_index(["dataset", "role"])
    b = R.mean_scaled_error
    nn, cl = _nbeats_bias(b, "M3 monthly"), float(b[("M3 monthly", "best classical")])
    share = float(R.share_over[_nbeats_key(R.index, "M3 monthly")])
    lean = {}
    for key, d in (("y", "M3 yearly"), ("t", "Tourism quarterly")):
        y_nn, y_cl = _nbeats_bias(b, d), float(b[(d, "best classical")])
        lean.update({f"{key}_nbeats": y_nn, f"{key}_classical": y_cl, f"{key}_model": R.model[(d, "best classical")],
                     f"{key}_apart": y_nn > 0 > y_cl, f"{key}_same": (y_nn > 0) == (y_cl > 0)})
    return [
        verdict("s63_m3m_bias", (nn > 0) == (cl > 0), neural=nn, classical=cl, share_over=share, over=nn > 0),
        verdict("s63_apart", lean["y_apart"] and lean["t_apart"], apart=[lean["y_apart"], lean["t_apart"]], **lean),
    ]


#: the N-BEATS comparisons the page reads in words: (data set, scope, claim name)
SIGNIFICANCE_READ = [("M3 monthly", HO, "s63_sig_m3m"), ("M3 monthly", ALL, "s63_sig_m3m_all"),
                     ("M3 yearly", HO, "s63_sig_m3y"), ("Tourism quarterly", HO, "s63_sig_tq"),
                     ("Tourism quarterly", ALL, "s63_sig_tq_all")]


@claim_source
def verdict_significance_claims(sig: pd.DataFrame, v: pd.DataFrame,
                                sets=("M3 monthly", "Tourism quarterly", "M1 yearly", "M3 yearly")):
    """Which of the hold-out verdicts the paired bootstrap tells from zero (the best neural model against the best
    classical one, as in the verdict)."""
    V = v.set_index(["dataset", "scope"])
    S = entry_tests(sig)
    S = S[S.scope == HO].set_index(["dataset", "model"])
    sure, open_, sides = [], [], {"neural": [], "classical": []}
    for d in sets:
        r = S.loc[(d, V.loc[(d, HO)].best_neural)]
        (sure if bool(r.significant) else open_).append(d)
        if bool(r.significant):
            sides["neural" if float(r.mean_difference) < 0 else "classical"].append(d)
    return [verdict("s63_verdict_sig", not open_, significant=sure, not_significant=open_, sides=sides,
                    neural_ahead=sides["neural"], classical_ahead=sides["classical"],
                    both_sides=bool(sides["neural"]) and bool(sides["classical"]))]


@claim_source
def significance_claims(sig: pd.DataFrame):
    """Each bootstrap interval read in words: does it exclude zero, and on which side lies N-BEATS?"""
    nb = entry_tests(sig)
    nb = nb[nb.model == "N-BEATS"]
    testable = nb[nb.testable.astype(bool)]
    computed = (testable.ci_low > 0) | (testable.ci_high < 0)
    out = [require("s63_sig_flag", bool((computed == testable.significant.astype(bool)).all()),
                   mismatched=list(testable.loc[computed != testable.significant.astype(bool), "dataset"]))]
    G = nb.set_index(["dataset", "scope"])
    for d, scope, name in SIGNIFICANCE_READ:
        r = G.loc[(d, scope)]
        lo, hi, mean = float(r.ci_low), float(r.ci_high), float(r.mean_difference)
        out.append(verdict(name, lo > 0 or hi < 0, ci_low=lo, ci_high=hi, mean_difference=mean, size=abs(mean),
                           lead=mean < 0, below=hi < 0))
    return out


@claim_source
def demo_claims(n_scores: int, half_first: float, half_last: float, level: float = 0.95):
    """The conformal demo: is the calibration set just large enough, and does the band widen with the horizon?"""
    rank = math.ceil((n_scores + 1) * level)
    return [
        verdict("s63_demo_enough", rank == n_scores, scores=n_scores, rank=rank, unbounded=rank > n_scores),
        verdict("s63_demo_grows", half_last > half_first, half_first=half_first, half_last=half_last),
    ]


@claim_source
def interval_claims(iv: pd.DataFrame, cov: pd.DataFrame):
    """Conformal against native coverage, the M1 and M3 monthly cases, and the sets where conformal runs wide."""
    C = cov.set_index(["kind", "level"])
    miss = {k: (float(C.mean_miss[(k, 80)]), float(C.mean_miss[(k, 95)])) for k in ("conformal", "native")}
    nat = (float(C["mean"][("native", 80)]), float(C["mean"][("native", 95)]))
    # percentage points off the nominal level, as the page reads them
    points = dict(conf80=100 * miss["conformal"][0], conf95=100 * miss["conformal"][1],
                  own80=100 * miss["native"][0], own95=100 * miss["native"][1])
    I = iv.set_index(["dataset", "model", "kind"])
    m1n = float(I.coverage_95[("M1 yearly", "AutoTheta", "native")])
    m1c = float(I.coverage_95[("M1 yearly", "AutoTheta", "conformal")])
    m3 = iv[iv.dataset == "M3 monthly"]
    by_msis, by_crps = m3.sort_values("winkler_95").iloc[0], m3.sort_values("scrps").iloc[0]
    wide, narrow = [], []
    for r in coverage_by_set(iv, "conformal", 80).itertuples():
        row = dict(dataset=r.dataset, mean=r.mean, lowest=r.lowest, highest=r.highest)
        if r.lowest > 0.80:
            wide.append(row)
        elif r.mean < 0.80:
            narrow.append(row)
    conf95 = (float(C.lowest[("conformal", 95)]), float(C.highest[("conformal", 95)]))
    return [
        verdict("s63_conf_nearer", miss["conformal"][0] < miss["native"][0] and miss["conformal"][1] < miss["native"][1],
                miss=miss, **points),
        verdict("s63_native_short", nat[0] < 0.80 and nat[1] < 0.95, native_mean=nat),
        verdict("s63_m1_theta", abs(m1c - 0.95) < abs(m1n - 0.95), native=m1n, conformal=m1c),
        verdict("s63_m3m_scores_split", (by_msis.model, by_msis.kind) != (by_crps.model, by_crps.kind),
                msis=[by_msis.model, by_msis.kind], crps=[by_crps.model, by_crps.kind], msis_model=by_msis.model,
                msis_kind=by_msis.kind, crps_model=by_crps.model, crps_kind=by_crps.kind, crps_score=by_crps.scrps),
        verdict("s63_conf_wide", bool(wide), wide=wide, narrow=narrow),
        verdict("s63_width_first", abs(nat[1] - 0.95) > conf95[1] - conf95[0], conformal_95=conf95,
                conf_low=conf95[0], conf_high=conf95[1], native_mean_95=nat[1]),
    ]


@claim_source
def anchor_claims(anchors_: pd.DataFrame):
    """Are the reference values reproduced within :data:`~seqlab.chapter.s14_62.REPRODUCED`?"""
    worst = float(anchors_.relative_difference.abs().max())
    A = anchors_.set_index(["dataset", "model"])
    return [verdict("s63_anchors", worst < REPRODUCED, largest_relative_difference=worst, n=len(anchors_),
                    m1_autotheta=A.measured[("M1 yearly", "AutoTheta")], m3_naive=A.measured[("M3 yearly", "Naive")])]


#: half a unit in the published figures' last digit: a value this close is the published one
_PUBLISHED_ROUNDING = 0.005


@claim_source
def naive2_claims(by_group: pd.DataFrame, variants: pd.DataFrame, anchors_: pd.DataFrame | None = None):
    """Where Naive2 departs from the M3 competition's published figures, and whether a reading of its test explains it.

    ``anchors_``, when given, must hold the experiment's own M3 monthly Naive2: the value
    recomputed here from the raw data has to equal it.
    """
    G = by_group.set_index("group")
    checked = []
    if anchors_ is not None:
        stored = float(anchors_.set_index(["dataset", "model"]).measured[("M3 monthly", "Naive2")])
        checked.append(require("s63_naive2_stored", abs(stored - float(G.smape["monthly"])) < 1e-9,
                               experiment=stored, recomputed=float(G.smape["monthly"])))
    plain, seasonal = G[G.season_length == 1], G[G.season_length > 1]

    def rows(d):
        return [dict(group=g, smape=r.smape, published=r.published) for g, r in d.iterrows()]

    off = seasonal[seasonal.difference.abs() >= _PUBLISHED_ROUNDING]
    first = verdict("s63_naive2", bool((plain.difference.abs() < _PUBLISHED_ROUNDING).all()),
                    unadjusted=list(plain.index), seasonal_off=list(off.index), plain_rows=rows(plain),
                    seasonal_rows=rows(seasonal))
    cols = [g for g in variants.columns if g != "variant"]
    hit = {g: set(variants.variant[(variants[g] - float(G.published[g])).abs() < _PUBLISHED_ROUNDING]) for g in cols}
    every = set.intersection(*hit.values()) if hit else set()
    second = verdict("s63_naive2_readings", not every, reproducing=sorted(every),
                     per_group={g: sorted(v) for g, v in hit.items()},
                     hits=[dict(group=g, readings=sorted(v)) for g, v in hit.items() if v])
    series, published, recomputed = M3_TABLE_RECOMPUTED
    worst = float(seasonal.difference.abs().max())
    third = verdict("s63_naive2_recomputed", worst < abs(published - recomputed), largest_gap=worst,
                    recomputation_gap=abs(published - recomputed), published=published, recomputed=recomputed,
                    series=series)
    return checked + [first, second, third]


@claim_source
def elsewhere_claims(reported: pd.DataFrame, both: float | None = None):
    """Where this comparison's N-BEATS (and, given ``both``, its mean with the classical combination) stands against
    the figures reported elsewhere for the same hold-out."""
    out = []
    if both is not None:
        z = reported[reported.metric == "mase"]
        out.append(verdict("s63_elsewhere_both", bool((both < z.reported).all()), both=both))
    for metric in ("mase", "smape"):
        r = reported[reported.metric == metric]
        ours = float(r.seqlab_nbeats.iloc[0])
        better = list(r.model[r.reported < ours])
        out.append(verdict(f"s63_elsewhere_{metric}", not better, ours=ours, better=better,
                           all=len(better) == len(r), lowest=r.reported.min(), highest=r.reported.max()))
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
        verdict("s63_h_grow", not shrink, exceptions=shrink),
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
    b = check.set_index(["dataset", "role"]).mean_scaled_error
    y_nn, y_cl = _nbeats_bias(b, "M3 yearly"), float(b[("M3 yearly", "best classical")])
    return [
        verdict("s63_y_seen", nb - th > noise, nbeats=nb, autotheta=th, seed_spread=noise, behind=nb > th,
                gap=nb - th),
        _length_claim(K, verdict_),
        verdict("s63_y_steps", all(int(P[d]) == min(grids[d]) for d in yearly), sets=yearly,
                steps={d: int(P[d]) for d in yearly}),
        verdict("s63_y_dir", y_nn > 0 > y_cl, neural=y_nn, classical=y_cl),
    ]


def _length_claim(K: pd.DataFrame, verdict_: pd.DataFrame):
    """Are short series the reason? M3 yearly against M3 monthly, and against M1 yearly, shorter still."""
    my, mm = float(K.median_length["M3 yearly"]), float(K.median_length["M3 monthly"])
    cy, cm = int(K.cuts["M3 yearly"]), int(K.cuts["M3 monthly"])
    m1 = float(K.median_length["M1 yearly"])
    V = verdict_.set_index(["dataset", "scope"])
    m1_neural = bool(V.neural_beats_best_classical[("M1 yearly", HO)])
    shorter = my < mm and cy < cm
    return verdict("s63_y_short", shorter and not (m1 < my and m1_neural), median_yearly=my, median_monthly=mm,
                   cuts_yearly=cy, cuts_monthly=cm, median_m1_yearly=m1, m1_neural_wins=m1_neural,
                   shorter_collection=shorter)


@claim_source
def pad_claims(recipe_: pd.DataFrame, rounds_: pd.DataFrame, dataset: str = "M3 yearly"):
    """Did round 3 pad short histories, and what did its yearly hold-out do against round 2's?"""
    r = recipe_.set_index("ingredient")
    name = "short histories padded with their first value"
    R = rounds_[rounds_.dataset == dataset].set_index("round").last_window_mase
    h2, h3 = float(R[2]), float(R[3])
    return [verdict("s63_y_pad", name in r.index and bool(r.adopted[name]), padded=name in r.index and
                    bool(r.adopted[name]), holdout=[h2, h3], round2=h2, round3=h3, lowered=h3 < h2,
                    dataset=dataset)]


@claim_source
def validation_claims(val: pd.DataFrame):
    """N-BEATS against the Transformer on M3 monthly's validation windows."""
    VS = val.set_index(["dataset", "model"]).validation_mase
    nb, tr = float(VS[("M3 monthly", "N-BEATS")]), float(VS[("M3 monthly", "Transformer")])
    return [verdict("s63_val_nb_tr", nb < tr, nbeats=nb, transformer=tr)]
