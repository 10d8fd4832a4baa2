"""§14.63's prediction intervals: every model's 80% and 95% bands, native and conformal, scored on every set,
and the verdicts the page reads on their coverage."""
from __future__ import annotations

import math

import pandas as pd

from ..claims import claim_source, verdict
from ..experiments.forecast import interval_results


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
    below the nominal level and the mean distance from it (``mean_miss``, either side).

    Only the data sets that every kind scores count, so that the kinds' means cover the same sets (conformal
    bands need earlier windows to calibrate on, which a set with a single series and window lacks)."""
    shared = set.intersection(*(set(g.dataset) for _, g in iv.groupby("kind")))
    iv = iv[iv.dataset.isin(shared)]
    rows = []
    for kind, g in iv.groupby("kind", sort=False):
        for level in (80, 95):
            c = g[f"coverage_{level}"]
            rows.append(dict(kind=kind, level=level, scored=len(c), lowest=c.min(), highest=c.max(),
                             mean=c.mean(), mean_shortfall=float((level / 100 - c).mean()),
                             mean_miss=float((c - level / 100).abs().mean())))
    return pd.DataFrame(rows)


def native_by_model(iv: pd.DataFrame) -> pd.DataFrame:
    """Each statistical model's own intervals: coverage averaged over the competition hold-outs."""
    nat = iv[(iv.kind == "native") & (iv.dataset != "AirPassengers")]
    g = nat.groupby("model", sort=False)
    out = g[["coverage_80", "coverage_95"]].mean()
    out["sets"] = g.dataset.count()
    return out.reset_index()


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
        # what the record states: calibrating by group does not bring every model's farthest group nearer
        verdict("s63_grp_models", bool(worse) or bool(same), helped=helped, same=same, worse=worse,
                n_helped=len(helped), **where),
    ]


def coverage_by_step(groups: pd.DataFrame, dataset: str = "M3 monthly", level: int = 80,
                     shown=(("N-BEATS", "conformal"), ("AutoETS", "conformal"), ("AutoETS", "native"))):
    """Hold-out coverage at each horizon step of a few (model, kind) intervals on one set: one column each."""
    st = groups[(groups.dataset == dataset) & (groups.by == "step")]
    cols = {}
    for model, kind in shown:
        r = st[(st.model == model) & (st.kind == kind)]
        cols[f"{model} {kind}"] = pd.Series(r[f"coverage_{level}"].to_numpy(), index=r.group.astype(int).to_numpy())
    return pd.DataFrame(cols).rename_axis("step").reset_index()


@claim_source
def step_claims(by_step: pd.DataFrame, level: int = 80):
    """Does the conformal band stay nearer its level than a native one at every horizon step?"""
    far = {c: float((by_step[c] - level / 100).abs().max()) for c in by_step.columns if c != "step"}
    conf = {c: v for c, v in far.items() if c.endswith("conformal")}
    nat = {c: v for c, v in far.items() if c.endswith("native")}
    def rows(cs):
        return [dict(name=c.rsplit(" ", 1)[0], lo=float(by_step[c].min()), hi=float(by_step[c].max())) for c in cs]
    return [verdict("s63_step_cov", max(conf.values()) < min(nat.values()), level=level, conf_rows=rows(conf),
                    native_rows=rows(nat), conformal_points=100 * max(conf.values()),
                    native_points=100 * min(nat.values()), steps=len(by_step))]


@claim_source
def fallback_claims(groups: pd.DataFrame, iv: pd.DataFrame):
    """Which length groups had too few scores of their own (their band calibrated on every series instead), and how
    many hold-out series have no earlier window, so that their band is built from other series' errors alone."""
    mond = groups[(groups.kind == "conformal by length group") & (groups.by == "length")]
    fell = []
    for (d, g), rows in mond.groupby(["dataset", "group"], sort=False):
        levels = [int(c.rsplit("_", 1)[1]) for c in rows.columns if c.startswith("calibrated_on_")
                  and (rows[c] == "every series").any()]
        if levels:
            fell.append(dict(dataset=d, group=g, levels=levels))
    conf = iv[(iv.kind == "conformal") & (iv.scope == "official hold-out")].drop_duplicates("dataset")
    borrowed = [dict(dataset=r.dataset, borrowed=int(r.borrowed_series), series=int(r.series))
                for r in conf.itertuples() if r.borrowed_series > 0]
    return [verdict("s63_grp_fallback", bool(fell), fell=fell),
            verdict("s63_borrowed", bool(borrowed), rows=borrowed)]


@claim_source
def native_claims(iv: pd.DataFrame):
    """Which models' own intervals under-cover on the competition hold-outs, named from the numbers."""
    mean = native_by_model(iv).set_index("model")
    under = [m for m, r in mean.iterrows() if r.coverage_80 < 0.80 and r.coverage_95 < 0.95]
    over = [m for m in mean.index if m not in under]

    def rows(ms):
        return [dict(model=m, c80=mean.coverage_80[m], c95=mean.coverage_95[m]) for m in ms]
    # what the record states: every model's own intervals fall short of both levels
    return [verdict("s63_native_who", bool(under) and not over, under=under, over=over,
                    under_rows=rows(under), over_rows=rows(over))]


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
