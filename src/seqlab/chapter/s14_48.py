"""§14.48 Encoder-decoder and the bottleneck: the copy task with and without attention."""
from __future__ import annotations

import pandas as pd

from ..claims import claim_source, require, verdict
from ..experiments.seq2seq import copy_experiment
from ..parallel import run_calls
from ..results import once
from .base import section

#: the chapter's settings: source lengths and seed
LENGTHS = (4, 8, 16, 32)
SEED = 41
#: the copy model and its training (the defaults of ``copy_experiment``): vocabulary, widths, data, steps
VOCAB, D_EMBED, D_HIDDEN, N_TRAIN, N_TEST, EPOCHS, LR = 8, 16, 24, 400, 400, 250, 5e-3
#: how closely the page's own training must reproduce the library's at the same length (accuracies, loss)
REPRODUCE_TOL = 0.005


def copy_sweep(seed: int = SEED, lengths=LENGTHS) -> pd.DataFrame:
    """``copy_experiment`` at every length, without and with attention, in worker processes (longest first).

    §14.64 quotes the same sweep: both call it through :func:`seqlab.results.once`.
    """
    settings = (D_HIDDEN, N_TRAIN, EPOCHS, LR, VOCAB, N_TEST)
    calls = [(copy_experiment, (T, att, seed, *settings)) for att in (None, "general") for T in lengths]
    return pd.DataFrame(run_calls(calls, cost=lambda fn, args: args[0] * (1.2 if args[1] else 1.0)))


@claim_source
def copy_claims(results: pd.DataFrame, shown: dict) -> list:
    """The chapter's measure falls with T; held-out free running is harsher; what attention fixes and what not.

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
    return [
        require("s48_shown_is_library", max(gaps.values()) <= REPRODUCE_TOL and loss_gap <= REPRODUCE_TOL,
                T=shown["sequence_length"], tolerance=REPRODUCE_TOL, loss_rel_gap=loss_gap, **gaps),
        verdict("s48_falls", bool((tf.diff().dropna() < 0).all()), T_lo=T_lo, T_hi=T_hi, at_T_lo=float(tf[T_lo]),
                at_T_hi=float(tf[T_hi]), hidden_size=D_HIDDEN, training_teacher_forced=tf.to_dict()),
        verdict("s48_harsher", bool((free < tf).all()), T_lo=T_lo, T_hi=T_hi, free_at_T_lo=float(free[T_lo]),
                free_at_T_hi=float(free[T_hi]), vocab=VOCAB, heldout_free_running=free.to_dict(),
                training_teacher_forced=tf.to_dict(), chance=chance),
        verdict("s48_attention_tf", a_tf > f_tf + 0.3, T_hi=T_hi, attention=a_tf, fixed=f_tf, margin=0.3),
        verdict("s48_attention_free", a_free < a_tf - 0.2, attention_free=a_free, attention_teacher_forced=a_tf),
    ]


def figure(results: pd.DataFrame):
    from ..plotting import line_pair

    comparison = results.assign(model=results.attention.map({"none": "fixed vector (chapter)",
                                                             "general": "with attention"}))
    long = comparison.melt(id_vars=["sequence_length", "model"],
                           value_vars=["copy_accuracy", "heldout_teacher_forced", "heldout_free_running"],
                           var_name="measure", value_name="accuracy")
    long["measure"] = long.measure.map({"copy_accuracy": "training, teacher-forced (chapter)",
                                        "heldout_teacher_forced": "held-out, teacher-forced",
                                        "heldout_free_running": "held-out, free-running"})
    return line_pair(long, "sequence_length", "accuracy", "model", facet="measure", points=True, log_x=True,
                     title="Copying through a fixed-size vector, and with attention",
                     subtitle="Hidden size 24. The fixed vector loses the source as it grows; attention keeps it "
                              "while the true prefix is given, not when decoding freely at T = 32",
                     xlab="Sequence length (log scale)", ylab="Token-level copy accuracy",
                     colors={"fixed vector (chapter)": "steelblue", "with attention": "#D8433B"})


@section("14.48", "Encoder-decoder and the bottleneck")
def run(ctx):
    with ctx.step(f"training the copy models ({2 * len(LENGTHS)} runs in worker processes)"):
        results = once(copy_sweep, seed=ctx.seed(SEED))
    chapter = results[results.attention == "none"]
    copy_task = chapter[["sequence_length", "copy_accuracy"]]
    comparison = results.assign(model=results.attention.map({"none": "fixed vector (chapter)",
                                                             "general": "with attention"}))

    # the page checks its own training at T = 8 against the sweep (s48_shown_is_library); here the sweep is all
    # there is, so that check has nothing to compare and is left out
    shown = chapter.set_index("sequence_length").loc[8].to_dict() | {"sequence_length": 8}
    verdicts = [c for c in copy_claims(results, shown) if c.name != "s48_shown_is_library"]
    figs = []
    if ctx.figures:
        with ctx.step("drawing the copy-task figure"):
            figs = ctx.save("copy_task", *figure(results))
    return {"copy_task": copy_task, "copy_comparison": comparison}, figs, verdicts
