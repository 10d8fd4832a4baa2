"""§14.63's N-BEATS: how its step count and ensemble were chosen on validation windows over three rounds,
what each member and each ingredient of the recipe scored, and the verdicts the page reads on them."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.multiple import holm
from ..analysis.seeds import seed_noise_pvalues
from ..claims import claim_source, require, verdict
from ..experiments.forecast import CLASSICAL_ENTRIES


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
    ho_ahead = bool(v.set_index(["dataset", "scope"]).neural_beats_best_classical[("M3 monthly", "official hold-out")])
    d_interp = float(ab.set_index("ingredient").difference["interpretable basis (trend, seasonality)"])
    return [
        verdict("s63_r_carry", better_val == better_hold, validation=[r1.validation_mase, r2.validation_mase],
                holdout=[r1.last_window_mase, r2.last_window_mase]),
        # what the record states: the validation windows put the two means in the other order from the hold-out's
        verdict("s63_visible", (nb_val < cl_val[best_cl]) != ho_ahead, nbeats=nb_val, classical=cl_val[best_cl],
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
        # what the record states: one design is best in every seed round
        verdict("s63_no_best_design", len(designs) <= 1, best=best, first_stack=first["stack"],
                first_input=first["input"], second_stack=second["stack"], second_input=second["input"],
                same_basis=len({b["stack"] for b in best.values()}) == 1),
        verdict("s63_seed_spread", spread < hi - lo, seed_spread=spread, member_range=hi - lo),
    ]


#: the ablation's rows that form its family of tests, each with a short name
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


def ablation_pairs(nbeats: dict, ab: pd.DataFrame, round: int = 2) -> dict:
    """Per data set of the ablation, its seed pairs' differences (:func:`seed_pairs`) from ``round``."""
    return {d: seed_pairs(nbeats, d, round).difference.to_numpy() for d in ab.dataset.unique()}


def ablation_tests(ab: pd.DataFrame, pairs: dict) -> pd.DataFrame:
    """:func:`ablation` with each change's two-sided ``p`` against its set's seed pairs
    (:func:`~seqlab.analysis.seeds.seed_noise_pvalues`) and ``holm_p``, Holm's adjustment over the family of
    :data:`INGREDIENTS` present; the reference row has neither, the ensemble row no ``holm_p``."""
    out = ab.copy()
    out["p"], out["holm_p"] = np.nan, np.nan
    changed = ~out.ingredient.str.startswith("reference")
    for d, idx in out[changed].groupby("dataset", sort=False).groups.items():
        out.loc[idx, "p"] = seed_noise_pvalues(out.loc[idx, "difference"], pairs[d])
    family = out.ingredient.isin(list(INGREDIENTS))
    out.loc[family, "holm_p"] = holm(out.loc[family, "p"].to_numpy())
    return out


@claim_source
def ablation_claims(tested: pd.DataFrame, chosen_steps: dict, largest: dict, alpha: float = 0.05):
    """The ingredients against the seed pairs of their sets, as one family: does any setting earn its place?

    ``tested`` is :func:`ablation_tests`; ``chosen_steps`` maps a data set to the step count its seed pairs were
    scored at, which must be the ablation's own; ``largest`` to its largest seed-pair difference. A setting helps
    only where the change makes the member worse with a Holm-adjusted p below ``alpha`` (it hurts where the change
    makes it better so); one run per setting against six seed pairs settles a direction in neither sense otherwise.
    """
    out = []
    for d, g in tested.groupby("dataset", sort=False):
        out.append(require(f"s63_ab_steps_{d.replace(' ', '_').lower()}",
                           int(g.steps.iloc[0]) == int(chosen_steps[d]),
                           ablation_steps=int(g.steps.iloc[0]), member_steps=int(chosen_steps[d])))
    D = tested.set_index("ingredient")
    fam = D[D.index.isin(list(INGREDIENTS))]
    settled = fam.holm_p < alpha
    helps, hurts = fam[settled & (fam.difference > 0)], fam[settled & (fam.difference < 0)]
    record = lambda rows: [dict(setting=k, difference=float(r.difference), p=float(r.p), holm_p=float(r.holm_p))
                           for k, r in rows.iterrows()]
    if len(fam):
        low = fam.holm_p.idxmin()
        # what the record states: no setting earns its place once Holm's correction is made
        out.append(verdict("s63_ab_family", len(helps) == 0, family=len(fam), helps=record(helps),
                           hurts=record(hurts), unadjusted=record(fam[fam.p < alpha]),
                           smallest=record(fam.loc[[low]])[0]["holm_p"], smallest_setting=low,
                           expected=len(fam) * alpha))
    ens = tested[tested.ingredient.str.startswith("ensemble") & (tested.dataset == "M3 monthly")]
    if len(ens):
        e, p = float(ens.difference.iloc[0]), float(ens.p.iloc[0])
        top = largest["M3 monthly"]
        out.append(verdict("s63_ab_ensemble", -e > top and p < alpha, difference=e, p=p,
                           largest_seed_difference=top))
    return out


@claim_source
def pad_claims(recipe_: pd.DataFrame, rounds_: pd.DataFrame, dataset: str = "M3 yearly"):
    """Did round 3 pad short histories, and what did its yearly hold-out do against round 2's?"""
    r = recipe_.set_index("ingredient")
    name = next(row for row, claim in INGREDIENTS.items() if claim == "s63_ab_pad")
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
