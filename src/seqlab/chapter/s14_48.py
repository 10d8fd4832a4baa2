"""§14.48 Encoder-decoder and the bottleneck: the copy task with and without attention."""
from __future__ import annotations

import pandas as pd

from ..claims import claim_source, join_and, require, verdict
from ..experiments.seq2seq import copy_experiment
from ..parallel import run_calls
from ..results import once, share
from ._util import provenance
from .base import section

#: the chapter's settings: source lengths and seed
LENGTHS = (4, 8, 16, 32)
SEED = 41
#: the copy model and its training (the defaults of ``copy_experiment``): vocabulary, widths, data, steps
VOCAB, D_EMBED, D_HIDDEN, N_TRAIN, N_TEST, EPOCHS, LR = 8, 16, 24, 400, 400, 250, 5e-3
#: accuracy after each held-out sequence's first free-running mistake, decoding freely and with the true prefix,
#: and the share of positions that come after one (``after_first_error``)
AFTER_ERROR = ("heldout_after_error_free_running", "heldout_after_error_teacher_forced", "heldout_after_error_positions",
               "heldout_after_error_one_behind", "heldout_after_error_one_ahead")
#: how closely the page's own training must reproduce the library's at the same length (accuracies, loss)
REPRODUCE_TOL = 0.005


def copy_sweep(seed: int = SEED, lengths=LENGTHS) -> pd.DataFrame:
    """``copy_experiment`` at every length, without and with attention, in worker processes (longest first).

    §14.64 quotes it through :func:`seqlab.results.once`; the section and its page train it within
    :func:`copy_runs` and hand it over with :func:`seqlab.results.share`, so it is trained once per build.
    """
    settings = (D_HIDDEN, N_TRAIN, EPOCHS, LR, VOCAB, N_TEST)
    calls = [(copy_experiment, (T, att, seed, *settings)) for att in (None, "general") for T in lengths]
    return pd.DataFrame(run_calls(calls, cost=lambda fn, args: args[0] * (1.2 if args[1] else 1.0)))


def more_seeds() -> pd.DataFrame:
    """Both models at every length under the further seeds of §14.54's grid, in :func:`copy_sweep`'s form plus
    ``seed``: that grid's GRU and GRU-with-attention rows on the copy task are ``copy_experiment`` under its
    protocol, which is this section's (HEAVY_EVAL=1 trains them again, else the verified artifacts)."""
    from ..experiments.transformer_task_seeds import grid_seed_results

    g = grid_seed_results()
    g = g[(g.task == "copy") & g.model.isin(["GRU", "GRU + attention"])]
    return pd.DataFrame(dict(sequence_length=g.sequence_length, attention=g.model.map({"GRU": "none",
                                                                                        "GRU + attention": "general"}),
                             final_loss=g.final_loss, copy_accuracy=g.train_teacher_forced,
                             heldout_teacher_forced=g.heldout_teacher_forced,
                             heldout_free_running=g.heldout_free_running,
                             **{c: g[c] for c in AFTER_ERROR}, seed=g.seed)).reset_index(drop=True)


def copy_runs(seed: int = SEED, lengths=LENGTHS) -> pd.DataFrame:
    """:func:`copy_sweep` under ``seed``, trained now, together with :func:`more_seeds` at the same lengths; every
    row carries its ``seed``."""
    now = copy_sweep(seed, lengths).assign(seed=seed)
    more = more_seeds()
    more = more[more.sequence_length.isin(lengths) & (more.seed != seed)]  # a seed trained now is not read again
    return pd.concat([now, more], ignore_index=True)


def sweep_of(runs: pd.DataFrame, seed: int = SEED) -> pd.DataFrame:
    """The rows of :func:`copy_runs` that :func:`copy_sweep` returns, in its form (no seed column)."""
    return runs[runs.seed == seed].drop(columns="seed").reset_index(drop=True)


def seed_table(runs: pd.DataFrame, T: int | None = None) -> pd.DataFrame:
    """The runs of :func:`copy_runs` (at length ``T`` only, if given): one row per model, length and seed."""
    rows = runs if T is None else runs[runs.sequence_length == T]
    return rows.sort_values(["attention", "sequence_length", "seed"], ignore_index=True)


def seed_spread(runs: pd.DataFrame) -> pd.DataFrame:
    """Per model and length: the seeds, and each accuracy's mean, lowest and highest over them."""
    cols = ["copy_accuracy", "heldout_teacher_forced", "heldout_free_running"]
    g = runs.groupby(["attention", "sequence_length"])[cols]
    out = g.agg(["mean", "min", "max"])
    out.columns = [f"{c}_{a.replace('min', 'lowest').replace('max', 'highest')}" for c, a in out.columns]
    out = out.reset_index().assign(seeds=g.size().to_numpy())
    first = out.attention.map({"none": 0, "general": 1})  # the chapter's model first
    return out.assign(_o=first).sort_values(["_o", "sequence_length"]).drop(columns="_o").reset_index(drop=True)


def spread_view(spread: pd.DataFrame) -> pd.DataFrame:
    """:func:`seed_spread` for reading: per model and length, each measure as "mean (lowest\u2013highest)"."""
    out = pd.DataFrame(dict(model=spread.attention.map({"none": "fixed vector", "general": "with attention"}),
                            sequence_length=spread.sequence_length))
    for m in ("copy_accuracy", "heldout_teacher_forced", "heldout_free_running"):
        out[m] = [f"{a:.3f} ({lo:.3f}\u2013{hi:.3f})" for a, lo, hi in
                  zip(spread[f"{m}_mean"], spread[f"{m}_lowest"], spread[f"{m}_highest"])]
    return out


def _order(a, b) -> int:
    """1 where every value of ``a`` is above every value of ``b``, -1 the other way round, 0 where they overlap."""
    return 1 if min(a) > max(b) else -1 if min(b) > max(a) else 0


@claim_source
def copy_claims(runs: pd.DataFrame, shown: dict, seed: int = SEED) -> list:
    """The chapter's measure falls with T; held-out free running is harsher; what attention fixes, and what not;
    each over the seeds of ``runs`` (:func:`copy_runs`), a model ahead only where its worst seed beats the other's
    best.

    ``shown`` is the page's own training at one length (keys sequence_length, final_loss,
    copy_accuracy, heldout_teacher_forced, heldout_free_running); it must reproduce the
    library's row for that length without attention, under ``seed``.
    """
    lengths = sorted(int(t) for t in runs.sequence_length.unique())
    T_lo, T_hi = lengths[0], lengths[-1]
    chance = 1 / VOCAB
    fixed_runs = runs[runs.attention == "none"]
    row = fixed_runs[fixed_runs.seed == seed].set_index("sequence_length").loc[shown["sequence_length"]]
    gaps = {k: abs(float(row[k]) - float(shown[k]))
            for k in ("copy_accuracy", "heldout_teacher_forced", "heldout_free_running")}
    loss_gap = abs(float(row.final_loss) - float(shown["final_loss"])) / float(row.final_loss)
    # per seed, in order of length (a seed's runs at different lengths share no data, so this is a per-seed trend)
    tf = fixed_runs.pivot(index="sequence_length", columns="seed", values="copy_accuracy").sort_index()
    free = fixed_runs.pivot(index="sequence_length", columns="seed", values="heldout_free_running").sort_index()
    spread = seed_spread(runs).set_index(["attention", "sequence_length"])
    def at(model, T, measure):
        r = spread.loc[(model, T)]
        return [float(r[f"{measure}_lowest"]), float(r[f"{measure}_highest"])]
    order = {T: _order(at("general", T, "heldout_teacher_forced"), at("none", T, "heldout_teacher_forced"))
             for T in lengths}
    a_tf, f_tf = at("general", T_hi, "heldout_teacher_forced"), at("none", T_hi, "heldout_teacher_forced")
    a_free = at("general", T_hi, "heldout_free_running")
    short = {m: at(m, T_lo, "heldout_free_running") for m in ("none", "general")}
    late = runs[(runs.attention == "general") & (runs.sequence_length == T_hi)]
    a_after = [late[c].agg(["min", "max"]).astype(float).tolist() for c in AFTER_ERROR]
    short_order = _order(short["general"], short["none"])
    n = int(spread.seeds.min())
    return [
        require("s48_shown_is_library", max(gaps.values()) <= REPRODUCE_TOL and loss_gap <= REPRODUCE_TOL,
                T=shown["sequence_length"], tolerance=REPRODUCE_TOL, loss_rel_gap=loss_gap, **gaps),
        verdict("s48_falls", bool((tf.diff().dropna() < 0).all().all()), seeds=n, T_lo=T_lo, T_hi=T_hi,
                at_T_lo=float(tf.loc[T_lo, seed]), at_T_hi=float(tf.loc[T_hi, seed]), hidden_size=D_HIDDEN,
                highest_at_T_hi=float(tf.loc[T_hi].max()), lowest_at_T_lo=float(tf.loc[T_lo].min())),
        verdict("s48_harsher", bool((free < tf).all().all()), seeds=n, T_lo=T_lo, T_hi=T_hi,
                free_at_T_lo=float(free.loc[T_lo, seed]), free_at_T_hi=float(free.loc[T_hi, seed]), vocab=VOCAB,
                chance=chance),
        verdict("s48_attention_tf", order[T_hi] == 1, T=T_hi, seeds=n, attention_worst=a_tf[0],
                attention_best=a_tf[1], fixed_worst=f_tf[0], fixed_best=f_tf[1], fixed_ahead=order[T_hi] == -1,
                separated=join_and([str(T) for T in lengths if order[T] == 1]) or "no length",
                not_separated=[T for T in lengths if order[T] != 1]),
        verdict("s48_attention_free", a_free[1] < a_tf[0] - 0.2, T_hi=T_hi, seeds=n, free_lowest=a_free[0],
                free_highest=a_free[1], teacher_forced_lowest=a_tf[0]),
        verdict("s48_derails", bool((late[AFTER_ERROR[0]] < late[AFTER_ERROR[1]] - 0.2).all()
                                    and (late[list(AFTER_ERROR[3:])].max(axis=1) < late[AFTER_ERROR[1]] - 0.2).all()),
                T_hi=T_hi, seeds=n, free_lowest=a_after[0][0], free_highest=a_after[0][1],
                forced_lowest=a_after[1][0], forced_highest=a_after[1][1], share_lowest=a_after[2][0],
                share_highest=a_after[2][1], shifted_highest=max(a_after[3][1], a_after[4][1]), margin=0.2,
                slipped=bool((late[list(AFTER_ERROR[3:])].max(axis=1) >= late[AFTER_ERROR[1]] - 0.2).any())),
        verdict("s48_short", short_order == 0, T_lo=T_lo, seeds=n, fixed_lowest=short["none"][0],
                fixed_highest=short["none"][1], attention_lowest=short["general"][0],
                attention_highest=short["general"][1], attention_ahead=short_order == 1),
    ]


def figure(spread: pd.DataFrame):
    """The three measures on one 0-1 scale over the seeds (:func:`seed_spread`): the mean, shaded from the
    lowest seed to the highest, with chance (1/vocabulary) dashed."""
    import warnings

    from plotnine import scale_y_continuous, theme

    from ..plotting import line_pair

    names = {"copy_accuracy": "training, teacher-forced", "heldout_teacher_forced": "held-out, teacher-forced",
             "heldout_free_running": "held-out, free-running"}
    long = pd.concat([pd.DataFrame(dict(sequence_length=spread.sequence_length, measure=label,
                                        model=spread.attention.map({"none": "fixed vector",
                                                                    "general": "with attention"}),
                                        accuracy=spread[f"{m}_mean"], lowest=spread[f"{m}_lowest"],
                                        highest=spread[f"{m}_highest"]))
                      for m, label in names.items()], ignore_index=True)
    long["measure"] = pd.Categorical(long.measure, categories=list(names.values()), ordered=True)
    gg, fig = line_pair(long, "sequence_length", "accuracy", "model", facet="measure", points=True, log_x=True,
                        band=("lowest", "highest"), title="Copying through a fixed-size vector, and with attention",
                        subtitle=f"Hidden size 24, mean of {int(spread.seeds.min())} seeds per length and model, "
                                 "shaded lowest to highest; the first panel is the printed chapter's score. "
                                 f"Dashed: chance, 1/{VOCAB}",
                        xlab="Sequence length (log scale)", ylab="Token-level copy accuracy",
                        colors={"fixed vector": "steelblue", "with attention": "#D8433B"},
                        hline=1 / VOCAB)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one scale for every panel, so that the panels compare
        gg += scale_y_continuous(limits=(0, 1), breaks=[0, 0.25, 0.5, 0.75, 1])
    gg += theme(figure_size=(6.8, 3.5))  # three short panels: a shorter figure reads as well
    fig.update_yaxes(range=[0, 1.04], tickvals=[0, 0.25, 0.5, 0.75, 1])
    return gg, fig


@section("14.48", "Encoder-decoder and the bottleneck")
def run(ctx):
    with ctx.step(f"training the copy models ({2 * len(LENGTHS)} runs in worker processes)"):
        runs = once(copy_runs, seed=ctx.seed(SEED))
    results = share(copy_sweep, sweep_of(runs, ctx.seed(SEED)), seed=ctx.seed(SEED))
    spread = seed_spread(runs)
    chapter = results[results.attention == "none"]
    copy_task = chapter[["sequence_length", "copy_accuracy"]]
    comparison = results.assign(model=results.attention.map({"none": "fixed vector (chapter)",
                                                             "general": "with attention"}))

    # the page checks its own training at T = 8 against the sweep (s48_shown_is_library); here the sweep is all
    # there is, so that check has nothing to compare and is left out
    shown = chapter.set_index("sequence_length").loc[8].to_dict() | {"sequence_length": 8}
    verdicts = [c for c in copy_claims(runs, shown, ctx.seed(SEED)) if c.name != "s48_shown_is_library"]
    figs = []
    if ctx.figures:
        with ctx.step("drawing the copy-task figure"):
            figs = ctx.save("copy_task", *figure(spread))
    return ({"copy_task": copy_task, "copy_comparison": comparison, "copy_seeds": seed_table(runs),
             "copy_seed_spread": spread}, figs, [provenance("transformer_tasks_seeds", heavy="trained now"), *verdicts])
