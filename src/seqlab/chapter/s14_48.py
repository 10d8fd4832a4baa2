"""§14.48 Encoder-decoder and the bottleneck: the copy task with and without attention."""
from __future__ import annotations

import pandas as pd

from ..claims import claim_source, require, verdict
from ..experiments.seq2seq import copy_experiment
from ..parallel import run_calls
from ..results import once, share
from .base import section

#: the chapter's settings: source lengths and seed
LENGTHS = (4, 8, 16, 32)
SEED = 41
#: the copy model and its training (the defaults of ``copy_experiment``): vocabulary, widths, data, steps
VOCAB, D_EMBED, D_HIDDEN, N_TRAIN, N_TEST, EPOCHS, LR = 8, 16, 24, 400, 400, 250, 5e-3
#: the length trained again with more seeds, both models (the longest that fits the book's time), and those seeds
REPEAT_T = 16
REPEAT_SEEDS = (42, 43)
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


def copy_runs(seed: int = SEED, lengths=LENGTHS, repeat_T: int = REPEAT_T, repeat_seeds=REPEAT_SEEDS) -> pd.DataFrame:
    """:func:`copy_sweep` together with both models trained again at length ``repeat_T`` with each of
    ``repeat_seeds``, all in one set of worker processes; every row carries its ``seed``."""
    settings = (D_HIDDEN, N_TRAIN, EPOCHS, LR, VOCAB, N_TEST)
    calls = [(copy_experiment, (T, att, seed, *settings)) for att in (None, "general") for T in lengths]
    calls += [(copy_experiment, (repeat_T, att, s, *settings)) for att in (None, "general") for s in repeat_seeds]
    rows = run_calls(calls, cost=lambda fn, args: args[0] * (1.2 if args[1] else 1.0))
    return pd.DataFrame([r | {"seed": c[1][2]} for r, c in zip(rows, calls)])


def sweep_of(runs: pd.DataFrame, seed: int = SEED) -> pd.DataFrame:
    """The rows of :func:`copy_runs` that :func:`copy_sweep` returns, in its form (no seed column)."""
    return runs[runs.seed == seed].drop(columns="seed").reset_index(drop=True)


def seed_table(runs: pd.DataFrame, T: int = REPEAT_T) -> pd.DataFrame:
    """The runs of :func:`copy_runs` at length ``T``: one row per model and seed."""
    return runs[runs.sequence_length == T].sort_values(["attention", "seed"], ignore_index=True)


def _order(a, b) -> int:
    """1 where every value of ``a`` is above every value of ``b``, -1 the other way round, 0 where they overlap."""
    return 1 if min(a) > max(b) else -1 if min(b) > max(a) else 0


@claim_source
def copy_claims(results: pd.DataFrame, shown: dict, seeds: pd.DataFrame) -> list:
    """The chapter's measure falls with T; held-out free running is harsher; what attention fixes, over seeds at one
    length (``seeds``, :func:`seed_table`), and what not.

    ``shown`` is the page's own training at one length (keys sequence_length, final_loss,
    copy_accuracy, heldout_teacher_forced, heldout_free_running); it must reproduce the
    library's row of ``results`` for that length without attention.
    """
    fixed = results[results.attention == "none"].set_index("sequence_length").sort_index()
    att = results[results.attention == "general"].set_index("sequence_length").sort_index()
    T_lo, T_hi = int(fixed.index.min()), int(fixed.index.max())
    chance = 1 / VOCAB
    row = fixed.loc[shown["sequence_length"]]
    gaps = {k: abs(float(row[k]) - float(shown[k]))
            for k in ("copy_accuracy", "heldout_teacher_forced", "heldout_free_running")}
    loss_gap = abs(float(row.final_loss) - float(shown["final_loss"])) / float(row.final_loss)
    tf, free = fixed.copy_accuracy, fixed.heldout_free_running
    a_tf, a_free = float(att.heldout_teacher_forced[T_hi]), float(att.heldout_free_running[T_hi])
    f_tf = float(fixed.heldout_teacher_forced[T_hi])
    by = {m: seeds[seeds.attention == m] for m in ("none", "general")}
    tf_seeds = {m: by[m].heldout_teacher_forced.tolist() for m in by}
    order = _order(tf_seeds["general"], tf_seeds["none"])
    short_free = {m: float(results[(results.attention == m)
                                   & (results.sequence_length == T_lo)].heldout_free_running.iloc[0]) for m in by}
    return [
        require("s48_shown_is_library", max(gaps.values()) <= REPRODUCE_TOL and loss_gap <= REPRODUCE_TOL,
                T=shown["sequence_length"], tolerance=REPRODUCE_TOL, loss_rel_gap=loss_gap, **gaps),
        verdict("s48_falls", bool((tf.diff().dropna() < 0).all()), T_lo=T_lo, T_hi=T_hi, at_T_lo=float(tf[T_lo]),
                at_T_hi=float(tf[T_hi]), hidden_size=D_HIDDEN, training_teacher_forced=tf.to_dict()),
        verdict("s48_harsher", bool((free < tf).all()), T_lo=T_lo, T_hi=T_hi, free_at_T_lo=float(free[T_lo]),
                free_at_T_hi=float(free[T_hi]), vocab=VOCAB, heldout_free_running=free.to_dict(),
                training_teacher_forced=tf.to_dict(), chance=chance),
        verdict("s48_attention_tf", order == 1, T=int(seeds.sequence_length.iloc[0]), seeds=int(seeds.seed.nunique()),
                attention_worst=min(tf_seeds["general"]), attention_best=max(tf_seeds["general"]),
                fixed_worst=min(tf_seeds["none"]), fixed_best=max(tf_seeds["none"]), fixed_ahead=order == -1,
                T_hi=T_hi, attention_T_hi=a_tf, fixed_T_hi=f_tf),
        verdict("s48_attention_free", a_free < a_tf - 0.2, T_hi=T_hi, attention_free=a_free,
                attention_teacher_forced=a_tf),
        verdict("s48_short", short_free["none"] >= short_free["general"], T_lo=T_lo, fixed_free=short_free["none"],
                attention_free=short_free["general"]),
    ]


def figure(results: pd.DataFrame):
    """One run per length and model; the three measures on one 0-1 scale, with chance (1/vocabulary) dashed."""
    import warnings

    from plotnine import scale_y_continuous

    from ..plotting import line_pair

    comparison = results.assign(model=results.attention.map({"none": "fixed vector (chapter)",
                                                             "general": "with attention"}))
    long = comparison.melt(id_vars=["sequence_length", "model"],
                           value_vars=["copy_accuracy", "heldout_teacher_forced", "heldout_free_running"],
                           var_name="measure", value_name="accuracy")
    names = {"copy_accuracy": "training, teacher-forced", "heldout_teacher_forced": "held-out, teacher-forced",
             "heldout_free_running": "held-out, free-running"}
    long["measure"] = pd.Categorical(long.measure.map(names), categories=list(names.values()), ordered=True)
    gg, fig = line_pair(long, "sequence_length", "accuracy", "model", facet="measure", points=True, log_x=True,
                        title="Copying through a fixed-size vector, and with attention",
                        subtitle="Hidden size 24, one training run per length and model; the first panel is the "
                                 f"chapter's measure. Dashed: chance, 1/{VOCAB}",
                        xlab="Sequence length (log scale)", ylab="Token-level copy accuracy",
                        colors={"fixed vector (chapter)": "steelblue", "with attention": "#D8433B"},
                        hline=1 / VOCAB)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one scale for every panel, so that the panels compare
        gg += scale_y_continuous(limits=(0, 1), breaks=[0, 0.25, 0.5, 0.75, 1])
    fig.update_yaxes(range=[0, 1.04], tickvals=[0, 0.25, 0.5, 0.75, 1])
    return gg, fig


@section("14.48", "Encoder-decoder and the bottleneck")
def run(ctx):
    n = 2 * (len(LENGTHS) + len(REPEAT_SEEDS))
    with ctx.step(f"training the copy models ({n} runs in worker processes)"):
        runs = once(copy_runs, seed=ctx.seed(SEED), repeat_seeds=tuple(ctx.seed(s) for s in REPEAT_SEEDS))
    results = share(copy_sweep, sweep_of(runs, ctx.seed(SEED)), seed=ctx.seed(SEED))
    seeds = seed_table(runs)
    chapter = results[results.attention == "none"]
    copy_task = chapter[["sequence_length", "copy_accuracy"]]
    comparison = results.assign(model=results.attention.map({"none": "fixed vector (chapter)",
                                                             "general": "with attention"}))

    # the page checks its own training at T = 8 against the sweep (s48_shown_is_library); here the sweep is all
    # there is, so that check has nothing to compare and is left out
    shown = chapter.set_index("sequence_length").loc[8].to_dict() | {"sequence_length": 8}
    verdicts = [c for c in copy_claims(results, shown, seeds) if c.name != "s48_shown_is_library"]
    figs = []
    if ctx.figures:
        with ctx.step("drawing the copy-task figure"):
            figs = ctx.save("copy_task", *figure(results))
    return {"copy_task": copy_task, "copy_comparison": comparison, "copy_seeds": seeds}, figs, verdicts
