"""§14.49 Attention derived from alignment: additive and dot-product scores, the reversal task."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..analysis.params import count_parameters
from ..claims import claim_source, require, verdict
from ..experiments.seq2seq import reversal_experiment_cached
from ..nn.attention import AdditiveAttention, dot_attention
from ._util import shape_str
from .base import section

#: the chapter's seeds and its printed reversal accuracy (teacher-forced, on the training sequences)
SEED = 51
REVERSAL_SEED = 53
CHAPTER_REVERSAL_ACCURACY = 0.9908
#: the final training loss the chapter prints for the same run
CHAPTER_REVERSAL_LOSS = 0.06029
#: the reversal run (the defaults of ``reversal_experiment``): length, vocabulary, sequences, widths, steps, rate
REVERSAL_T, REVERSAL_VOCAB, REVERSAL_N, REVERSAL_EMBED, REVERSAL_HIDDEN = 12, 10, 500, 24, 32
REVERSAL_EPOCHS, REVERSAL_LR = 400, 3e-3


def alignment_summary(A: np.ndarray) -> pd.DataFrame:
    """Where the learned weights of a T x T reversal alignment ``A`` (output x input) put their mass."""
    n = A.shape[0]
    rows_ = np.arange(n)
    anti = float(np.mean(A[rows_, n - 1 - rows_]))
    argmax = A.argmax(axis=1)
    on_anti = float(np.mean(argmax == n - 1 - rows_))
    later = rows_[1:]  # output t attends input T - t + 2 (0-based: n - i), defined from the second output on
    one_later = float(np.mean(argmax[later] == n - later))
    near = float(np.mean([A[i, max(0, n - 2 - i): min(n, n + 1 - i)].sum() for i in rows_]))
    return pd.DataFrame([dict(mean_weight_on_antidiagonal=anti, argmax_on_antidiagonal=on_anti,
                              argmax_one_step_later=one_later, weight_within_one_of_antidiagonal=near,
                              argmax_input_position=" ".join(str(int(j) + 1) for j in argmax))])


def near_antidiagonal(A: np.ndarray) -> np.ndarray:
    """Per sequence: the share of the weight within one step of the anti-diagonal, averaged over output steps.

    ``A`` is (n, T, T) (sequence, output step, input step); the result has length n.
    """
    T = A.shape[-1]
    band = np.abs(np.add.outer(np.arange(T), np.arange(T)) - (T - 1)) <= 1  # |i + j - (T - 1)| <= 1
    return (A * band).sum(axis=2).mean(axis=1)


def alignment_controls(alphas: dict[str, np.ndarray | None]) -> pd.DataFrame:
    """Held-out alignment of each set of weights, averaged over sequences and output steps.

    ``alphas`` maps a label to (n, T, T) weights, or to ``None`` for uniform weights 1/T
    (whose arg-max is undefined: those columns are NaN). Columns: the share of the weight
    within one step of the anti-diagonal and exactly on it, the share of output steps whose
    largest weight sits on the anti-diagonal, and one step later (from the second output on).
    """
    shape = next(a.shape for a in alphas.values() if a is not None)
    rows = []
    for label, A in alphas.items():
        uniform = A is None
        A = np.full(shape, 1.0 / shape[-1]) if uniform else np.asarray(A, dtype=float)
        n, T, _ = A.shape
        i = np.arange(T)
        argmax = A.argmax(axis=2)
        rows.append(dict(weights=label, sequences=n,
                         weight_within_one_of_antidiagonal=float(near_antidiagonal(A).mean()),
                         weight_on_antidiagonal=float(A[:, i, T - 1 - i].mean()),
                         argmax_on_antidiagonal=np.nan if uniform else float((argmax == T - 1 - i).mean()),
                         argmax_one_step_later=np.nan if uniform else float((argmax[:, 1:] == T - i[1:]).mean())))
    return pd.DataFrame(rows)


def reversal_alignment(seed: int = REVERSAL_SEED) -> pd.DataFrame:
    """:func:`alignment_controls` of the reversal run (``reversal_experiment_cached(seed)``): trained, untrained
    and uniform weights on the held-out sequences, for the pages that quote §14.49's alignment."""
    r = reversal_experiment_cached(seed=seed)
    return alignment_controls({"trained": r["heldout_alpha"], "untrained": r["heldout_alpha_untrained"],
                               "uniform": None})


def sequences_above(A: np.ndarray, B: np.ndarray) -> float:
    """Share of sequences whose weight within one step of the anti-diagonal is larger under ``A`` than ``B``."""
    return float(np.mean(near_antidiagonal(np.asarray(A, float)) > near_antidiagonal(np.asarray(B, float))))


@claim_source
def reversal_claims(rev: dict, controls: pd.DataFrame, above: float, probe: pd.DataFrame,
                    chapter_accuracy: float = CHAPTER_REVERSAL_ACCURACY) -> list:
    """The reversal run against the chapter's number, and its alignment against the untrained and uniform controls.

    ``rev``: final_loss, token_accuracy (teacher-forced, training set), heldout_teacher_forced,
    heldout_free_running. ``controls``: :func:`alignment_controls` with rows trained,
    untrained, uniform. ``above``: share of held-out sequences where the trained weights put
    more weight within one step of the anti-diagonal than the untrained ones. ``probe``: the trained encoder's
    :func:`~seqlab.analysis.probe.lagged_token_probe` at lags 0 and 1 (does the state one step later still tell
    the token, as a one-step-late alignment needs?).
    """
    c = controls.set_index("weights")
    near = c.weight_within_one_of_antidiagonal
    tr, un, uni = float(near["trained"]), float(near["untrained"]), float(near["uniform"])
    on, later = float(c.argmax_on_antidiagonal["trained"]), float(c.argmax_one_step_later["trained"])
    exact = c.weight_on_antidiagonal
    n = int(c.sequences["trained"])
    P = probe.set_index("lag")
    acc, free, tf = rev["token_accuracy"], rev["heldout_free_running"], rev["heldout_teacher_forced"]
    chance = 1 / REVERSAL_VOCAB
    learned = tr > max(un, uni) + 0.1 and above > 0.9
    return [
        verdict("s49_close", abs(acc - chapter_accuracy) <= 0.01, final_loss=rev["final_loss"], accuracy=acc,
                chapter=chapter_accuracy),
        verdict("s49_learned", learned, trained=tr, untrained=un, uniform=uni, sequences_above=above, margin=0.1,
                sequences=n),
        verdict("s49_one_later", later > on, on_antidiagonal=on, one_step_later=later),
        verdict("s49_state_carries", float(P.accuracy[1]) > 0.5, same=float(P.accuracy[0]),
                next=float(P.accuracy[1]), chance=float(P.chance[1])),
        verdict("s49_exact", float(exact["trained"]) < float(exact["untrained"]), trained=float(exact["trained"]),
                untrained=float(exact["untrained"]), uniform=float(exact["uniform"])),
        # the outputs carry over less well than the alignment: held out, teacher-forced, well below training
        verdict("s49_heldout_gap", tf < acc - 0.1, heldout_teacher_forced=tf, training=acc, margin=0.1),
        verdict("s49_free_near_chance", free < 2 * chance, free_running=free, chance=chance, vocab=REVERSAL_VOCAB),
        require("s49_erratum_heldout", free < 0.9, free_running=free, chapter=chapter_accuracy),
    ]


def alignment_frame(A: np.ndarray) -> pd.DataFrame:
    n = A.shape[0]
    return pd.DataFrame([dict(output_step=i + 1, input_step=j + 1, w=float(A[i, j])) for i in range(n)
                         for j in range(n)])


def figure(A: np.ndarray):
    from ..plotting import heatmap_pair

    n = A.shape[0]
    gg, fig = heatmap_pair(alignment_frame(A), "input_step", "output_step", "w", antidiagonal=n,
                           title="Attention weights after training on sequence reversal",
                           subtitle="The first training sequence. Dashed: the mirrored position each output "
                                    "should read",
                           xlab="Input position", ylab="Output position", fill_title="weight α")
    from plotnine import theme

    return gg + theme(figure_size=(6.0, 4.0)), fig  # a 12 x 12 matrix needs less than the default square


@section("14.49", "Attention, derived from alignment")
def run(ctx):
    torch.manual_seed(ctx.seed(SEED))
    B, T, d = 2, 10, 16
    H = torch.randn(B, T, d)
    s = torch.randn(B, d)
    context, weights = dot_attention(s, H)
    check = pd.DataFrame([dict(weights_shape=shape_str(weights), context_shape=shape_str(context),
                               weights_sum_to_one=weights[0].sum().item(), parameters_in_dot_attention=0)])
    additive = AdditiveAttention(d, d, d)
    with torch.no_grad():
        ctx_add, w_add = additive(s, H)
    additive_check = pd.DataFrame([dict(weights_shape=shape_str(w_add), context_shape=shape_str(ctx_add),
                                        weights_sum_to_one=w_add[0].sum().item(),
                                        parameters_in_additive_attention=count_parameters(additive))])

    with ctx.step("training the reversal model (400 steps, one thread)"):
        r = reversal_experiment_cached(seed=ctx.seed(REVERSAL_SEED))
    reversal = pd.DataFrame([dict(final_loss=r["final_loss"], token_accuracy=r["token_accuracy"],
                                  heldout_free_running=r["heldout_free_running"],
                                  heldout_teacher_forced=r["heldout_teacher_forced"])])
    A = r["alpha"]  # (T_out, T_in), the first training sequence
    alignment = alignment_frame(A)
    summary = alignment_summary(A)
    controls = reversal_alignment(ctx.seed(REVERSAL_SEED))
    above = sequences_above(r["heldout_alpha"], r["heldout_alpha_untrained"])
    verdicts = reversal_claims(r, controls, above, r["token_probe"])
    figs = []
    if ctx.figures:
        with ctx.step("drawing the reversal-attention figure"):
            figs = ctx.save("reversal_attention", *figure(A))
    tables = {"dot_attention_check": check, "additive_attention_check": additive_check, "reversal": reversal,
              "reversal_alignment": summary, "alignment_controls": controls, "reversal_attention": alignment,
              "token_probe": r["token_probe"]}
    return tables, figs, verdicts
