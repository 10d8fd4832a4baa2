"""§14.54 Encoder, decoder, and the three attention patterns: self, causal self, cross; trained on copy and reversal."""
from __future__ import annotations

import pandas as pd
import torch

from ..analysis.params import (
    count_parameters,
    decoder_layer_parameters,
    encoder_layer_parameters,
)
from ..experiments.transformer_tasks import (
    ATTENTION_T,
    MODELS,
    PROTOCOL,
    task_experiment,
    transformer_task_results,
)
from ..nn.attention import causal_mask, padding_mask
from ..nn.seq2seq_transformer import Seq2SeqTransformer, shift_right
from ..nn.transformer import DecoderLayer, EncoderLayer
from ..tasks.seq2seq import random_tokens
from ..threads import single_threaded
from . import s14_49
from ._util import provenance, shape_str
from ..claims import claim_source, require, verdict
from .base import section

SEED = 95
#: the layers whose attention patterns are drawn (untrained)
D, H, D_FF = 32, 4, 128
T_SRC, T_TGT = 7, 5
#: the padded demonstration batch: three source sequences of these lengths, padded with token 0
DEMO_LENGTHS = (5, 3, 4)
DEMO_VOCAB = 8
#: the demonstration model: the chapter's small Transformer (see experiments.transformer_tasks.TRANSFORMER)
DEMO_MODEL = dict(d_model=16, num_heads=2, d_ff=32)

MODEL_COLORS = {"GRU": "steelblue", "GRU + attention": "#D8433B", "Transformer": "#7FB069"}


def layer_pair(seed: int = SEED) -> tuple[EncoderLayer, DecoderLayer, torch.Tensor, torch.Tensor]:
    """An untrained encoder layer and decoder layer with a random source (1, T_SRC, D) and target (1, T_TGT, D)."""
    torch.manual_seed(seed)
    enc = EncoderLayer(D, H, D_FF).eval()
    dec = DecoderLayer(D, H, D_FF).eval()
    return enc, dec, torch.randn(1, T_SRC, D), torch.randn(1, T_TGT, D)


@torch.no_grad()
def attention_weights(enc: EncoderLayer, dec: DecoderLayer, src: torch.Tensor, tgt: torch.Tensor) -> dict:
    """The weights of the three patterns, each (1, H, T_q, T_k), and the encoder memory."""
    memory = enc(src)
    _, w_self = enc.self_attn(enc.norm1(src), need_weights=True)
    _, w_causal = dec.self_attn(dec.norm1(tgt), is_causal=True, need_weights=True)
    _, w_cross = dec.cross_attn(dec.norm2(tgt), memory, memory, need_weights=True)
    return {"self": w_self, "causal self": w_causal, "cross": w_cross, "memory": memory}


def pattern_table(w: dict, out_shape: str) -> pd.DataFrame:
    return pd.DataFrame([
        dict(pattern="self (encoder)", queries_from="source", keys_values_from="source", mask="none (or padding)",
             weights_shape=shape_str(w["self"][0]), output_shape=shape_str(w["memory"])),
        dict(pattern="causal self (decoder)", queries_from="target", keys_values_from="target so far",
             mask="j ≤ i", weights_shape=shape_str(w["causal self"][0]), output_shape=out_shape),
        dict(pattern="cross (decoder → encoder)", queries_from="target", keys_values_from="encoder memory",
             mask="none (or source padding)", weights_shape=shape_str(w["cross"][0]), output_shape=out_shape),
    ])


def layer_parameters(enc: EncoderLayer, dec: DecoderLayer) -> pd.DataFrame:
    return pd.DataFrame([
        dict(layer="encoder layer", parameters=count_parameters(enc), formula="4d² + 2d·d_ff + 9d + d_ff",
             formula_value=encoder_layer_parameters(D, D_FF)),
        dict(layer="decoder layer", parameters=count_parameters(dec), formula="8d² + 2d·d_ff + 15d + d_ff",
             formula_value=decoder_layer_parameters(D, D_FF)),
    ])


@torch.no_grad()
def causality_check(dec: DecoderLayer, memory: torch.Tensor, tgt: torch.Tensor, w_causal: torch.Tensor):
    """Change the last target position: how far do earlier decoder outputs move? And the weights above the diagonal."""
    out = dec(tgt, memory)
    tgt2 = tgt.clone()
    tgt2[:, -1] += 5.0
    leak = (dec(tgt2, memory)[:, :-1] - out[:, :-1]).abs().max().item()
    above = w_causal[0, :, ~causal_mask(tgt.size(1))].abs().max().item()
    return pd.DataFrame([dict(future_leak_max_abs=leak, causal_weights_above_diagonal=above)]), shape_str(out)


def pattern_weights(w: dict) -> pd.DataFrame:
    """Head 1 of each pattern in long form (pattern, query, key, w)."""
    rows = []
    for name in ("self", "causal self", "cross"):
        W = w[name][0, 0]
        rows += [dict(pattern=name, query=i + 1, key=j + 1, w=float(W[i, j]))
                 for i in range(W.size(0)) for j in range(W.size(1))]
    return pd.DataFrame(rows)


def padded_batch(seed: int = SEED, lengths=DEMO_LENGTHS, vocab: int = DEMO_VOCAB):
    """Random source sequences of the given lengths, padded on the right with token 0: ``(src, lengths)``."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor(lengths)
    src = random_tokens(len(lengths), int(lengths.max()), vocab, g)
    src[~padding_mask(lengths, src.size(1))[:, 0, 0]] = 0
    return src, lengths


def mask_view(mask: torch.Tensor, src: torch.Tensor) -> pd.DataFrame:
    """A (B, 1, 1, T) key mask as a frame: one row per sequence, token and 1/0 for each position."""
    keep = mask[:, 0, 0].int()
    return pd.DataFrame([dict(sequence=b + 1, tokens=" ".join(map(str, src[b].tolist())),
                              **{f"p{t + 1}": int(keep[b, t]) for t in range(keep.size(1))})
                         for b in range(keep.size(0))])


def shifted_view(tgt: torch.Tensor, start_token: int) -> pd.DataFrame:
    """Teacher forcing for one target row: what the decoder reads at each position and what it must predict."""
    dec_in = shift_right(tgt, start_token)[0]
    return pd.DataFrame([dict(position=i + 1, decoder_input=int(dec_in[i]), target=int(tgt[0, i]),
                              sees_targets=("start token only" if i == 0 else "y_1" if i == 1 else f"y_1..y_{i}"))
                         for i in range(tgt.size(1))])


def demo_model(seed: int = SEED, vocab: int = DEMO_VOCAB) -> Seq2SeqTransformer:
    """An untrained encoder-decoder Transformer of the chapter's size, for content tokens 1..vocab."""
    torch.manual_seed(seed)
    return Seq2SeqTransformer(vocab + 2, **DEMO_MODEL).eval()


#: the rows of :func:`mask_checks`: what is changed and what must (not) move, and the change it should make
MASK_CHECKS = (("padded source tokens replaced (padding mask on)", "0"),
               ("the same, padding mask off (control)", "> 0"),
               ("target token y_{k} replaced: logits at positions 1..{k}", "0"),
               ("the same: logits at positions {after}.. (control)", "> 0"))


@torch.no_grad()
def mask_checks(model: Seq2SeqTransformer, src: torch.Tensor, lengths: torch.Tensor, seed: int = SEED) -> pd.DataFrame:
    """Largest change of the logits when something the model must not see is changed, and two controls."""
    g = torch.Generator().manual_seed(seed + 1)
    tgt = random_tokens(src.size(0), 6, DEMO_VOCAB, g)
    base = model(src, tgt, lengths)[0]
    # 1) new tokens in the padded source positions, lengths unchanged
    noisy = src.clone()
    pad = ~padding_mask(lengths, src.size(1))[:, 0, 0]
    noisy[pad] = random_tokens(1, int(pad.sum()) + 1, DEMO_VOCAB, g)[0, : int(pad.sum())]
    padded = (model(noisy, tgt, lengths)[0] - base).abs().max().item()
    # control: the same change when the model is told every position is real
    full = torch.full_like(lengths, src.size(1))
    unmasked = (model(noisy, tgt, full)[0] - model(src, tgt, full)[0]).abs().max().item()
    # 2) a different target token y_k: positions 1..k (which read y_1..y_{k-1}) must not move
    k = 3
    tgt2 = tgt.clone()
    tgt2[:, k - 1] = tgt2[:, k - 1] % DEMO_VOCAB + 1
    changed = model(src, tgt2, lengths)[0]
    past = (changed[:, :k] - base[:, :k]).abs().max().item()
    later = (changed[:, k:] - base[:, k:]).abs().max().item()
    changes = (padded, unmasked, past, later)
    return pd.DataFrame([dict(check=label.format(k=k, after=k + 1), max_abs_logit_change=change, should_be=should)
                         for (label, should), change in zip(MASK_CHECKS, changes)])


def task_comparison() -> pd.DataFrame:
    """GRU, GRU + attention and Transformer on copy and reversal (HEAVY_EVAL=1 trains them, else the artifacts)."""
    df = transformer_task_results()["comparison"].copy()
    df["model"] = pd.Categorical(df.model, categories=list(MODELS), ordered=True)
    return df.sort_values(["task", "model", "sequence_length"]).reset_index(drop=True)


def seed_grid() -> pd.DataFrame:
    """:func:`task_comparison` under the chapter's seed and under each of ``GRID_SEEDS`` (HEAVY_EVAL=1 trains
    the latter again, else the verified artifacts): one row per model, task, length and seed."""
    from ..experiments.transformer_task_seeds import grid_seed_results

    chapter = task_comparison()
    more = grid_seed_results()[list(chapter.columns)]
    df = pd.concat([chapter.assign(model=chapter.model.astype(str)), more], ignore_index=True)
    df["model"] = pd.Categorical(df.model, categories=list(MODELS), ordered=True)
    return df.sort_values(["task", "model", "sequence_length", "seed"]).reset_index(drop=True)


def seed_spread(grid: pd.DataFrame, value: str = "heldout_free_running") -> pd.DataFrame:
    """Per task, model and length: the seeds, and ``value``'s mean, lowest and highest over them."""
    g = grid.groupby(["task", "model", "sequence_length"], observed=True)[value]
    return g.agg(seeds="count", mean="mean", lowest="min", highest="max").reset_index()


def spread_table(spread: pd.DataFrame) -> pd.DataFrame:
    """One row per task and length, one column per model: "mean (lowest-highest)" over the seeds, 3 decimals."""
    s = spread.assign(cell=[f"{m:.3f} ({lo:.3f}\u2013{hi:.3f})" for m, lo, hi in
                            zip(spread["mean"], spread.lowest, spread.highest)])
    wide = s.pivot(index=["task", "sequence_length"], columns="model", values="cell")
    return wide.reset_index().rename_axis(columns=None)


def rerun_one(model: str = "Transformer", task: str = "reverse", T: int = 8) -> pd.DataFrame:
    """Train one cell of the comparison again, now, single-threaded as in the workers, beside its stored row."""
    with single_threaded():
        live = task_experiment(model, task, T)
    stored = task_comparison().set_index(["model", "task", "sequence_length"]).loc[(model, task, T)]
    cols = ["final_loss", "heldout_free_running", "heldout_exact_sequences"]
    return pd.DataFrame([dict(run="chapter's run", **{c: float(stored[c]) for c in cols}),
                         dict(run="trained now", **{c: float(live[c]) for c in cols})])


def agreeing_figures(a: float, b: float) -> int:
    """How many leading significant figures ``a`` and ``b`` share (16 when they are equal as doubles)."""
    import math

    if a == b:
        return 16
    scale = max(abs(a), abs(b))
    return max(0, min(16, math.floor(-math.log10(abs(a - b) / scale)))) if scale > 0 else 16


@claim_source
def rerun_claims(rerun: pd.DataFrame) -> list:
    """How closely the loss of the cell retrained now matches the stored one."""
    a, b = (float(v) for v in rerun.final_loss)
    figures = agreeing_figures(a, b)
    return [verdict("s54_rerun_agreement", figures == 16, stored=a, now=b, figures=figures)]


def accuracy_table(comparison: pd.DataFrame, value: str = "heldout_free_running") -> pd.DataFrame:
    """One row per task and length, one column per model: ``value`` (default held-out free-running accuracy)."""
    wide = comparison.pivot_table(index=["task", "sequence_length"], columns="model", values=value, observed=True)
    return wide.reset_index().rename_axis(columns=None)


def cross_attention_maps() -> pd.DataFrame:
    """The trained Transformers' first-layer cross-attention on one held-out sequence at T = ATTENTION_T, head mean."""
    att = transformer_task_results()["cross_attention"]
    return (att.groupby(["task", "output_position", "input_position"], as_index=False).weight.mean())


def comparison_figure(spread: pd.DataFrame):
    """The mean over the seeds of :func:`seed_spread`, shaded from the lowest seed to the highest."""
    from ..plotting import line_pair

    c = spread.assign(model=spread.model.astype(str),
                      task=spread.task.map({"copy": "copy", "reverse": "reversal"}))
    n = int(spread.seeds.min())
    return line_pair(c, "sequence_length", "mean", "model", facet="task", points=True, log_x=True,
                     band=("lowest", "highest"), title="Held-out accuracy, free-running decoding",
                     subtitle=f"Mean of {n} seeds, shaded from the lowest to the highest; {PROTOCOL['n_train']} "
                              f"training sequences, {PROTOCOL['epochs']} full-batch Adam steps for every model; "
                              f"chance = 1/{PROTOCOL['vocab']}",
                     xlab="Sequence length T (log scale)", ylab="Held-out token accuracy",
                     colors=MODEL_COLORS, hline=1 / PROTOCOL["vocab"])


def cross_attention_figure(maps: pd.DataFrame):
    from ..plotting import heatmap_pair

    m = maps.assign(task=maps.task.map({"copy": "copy", "reverse": "reversal"}))
    return heatmap_pair(m, "input_position", "output_position", "weight", facet="task",
                        title="What the trained Transformer's decoder reads",
                        subtitle=f"Cross-attention (layer 1, mean of heads) on a held-out sequence of length "
                                 f"{ATTENTION_T}", xlab="Source position", ylab="Output position",
                        fill_title="weight")


def patterns_figure(weights: pd.DataFrame):
    from ..plotting import heatmap_pair

    order = ["self", "causal self", "cross"]
    weights = weights.assign(pattern=pd.Categorical(weights.pattern, categories=order, ordered=True))
    return heatmap_pair(weights, "key", "query", "w", facet="pattern",
                        title="The three attention patterns (head 1, untrained)",
                        subtitle="Self: every source pair. Causal self: only the past. Cross: target queries, "
                                 "source keys", xlab="Key position", ylab="Query position", fill_title="weight")


@claim_source
def mask_claims(causal: pd.DataFrame, checks: pd.DataFrame) -> list:
    """The masks hold exactly: blocked weights are zero, blocked inputs move no logit, and the controls do move."""
    c = causal.iloc[0]
    change = checks.max_abs_logit_change.tolist()  # padded, padded control, future, future control
    return [
        require("s54_causal_exact", c.causal_weights_above_diagonal == 0 and c.future_leak_max_abs == 0,
                above_diagonal=c.causal_weights_above_diagonal, leak=c.future_leak_max_abs),
        require("s54_masks_exact", change[0] == 0 and change[2] == 0, padded=change[0], future=change[2]),
        require("s54_controls_move", change[1] > 0 and change[3] > 0, padded_control=change[1],
                future_control=change[3]),
    ]


@claim_source
def task_claims(grid: pd.DataFrame, chance: float) -> list:
    """What the trained comparison shows over its seeds (``grid``, :func:`seed_grid`): the Transformer's accuracy,
    the plain GRU's, and the GRU with attention; each reading holds in every seed or is not made."""
    T = int(grid.sequence_length.max())
    at = grid[grid.sequence_length == T].set_index(["task", "model", "seed"]).sort_index()
    acc = at.heldout_free_running
    tf_min = float(grid[grid.model == "Transformer"].heldout_free_running.min())
    gru = (float(acc.xs(("copy", "GRU")).max()), float(acc.xs(("reverse", "GRU")).max()))
    att = at.xs(("copy", "GRU + attention"))
    gap = att.heldout_teacher_forced - att.heldout_free_running
    others = grid[grid.model != "Transformer"].groupby("sequence_length").heldout_free_running.max()
    tf_low = grid[grid.model == "Transformer"].groupby("sequence_length").heldout_free_running.min()
    return [
        verdict("s54_tf_all_correct", tf_min == 1.0, lowest=tf_min, seeds=int(grid.seed.nunique())),
        verdict("s54_tf_ahead", bool((tf_low > others).all()), lengths=[int(t) for t in tf_low.index],
                behind=[int(t) for t in tf_low.index if tf_low[t] <= others[t]]),
        verdict("s54_gru_near_chance", max(gru) <= 2 * chance, copy=gru[0], reverse=gru[1], chance=chance, T=T),
        verdict("s54_free_running_gap", bool((att.train_teacher_forced >= 0.95).all() and (gap > 0.1).all()), T=T,
                seeds=len(att), fit_lowest=float(att.train_teacher_forced.min()),
                heldout_teacher_forced_lowest=float(att.heldout_teacher_forced.min()),
                free_running_highest=float(att.heldout_free_running.max()), gap_lowest=float(gap.min())),
    ]


def alignment_share(maps: pd.DataFrame) -> pd.DataFrame:
    """Per task: the mean cross-attention weight on the aligned source position (i for copy, T + 1 - i for
    reversal), beside the 1/T a uniform spread would put there."""
    rows = []
    for task, m in maps.groupby("task"):
        T = int(m.input_position.max())
        target = m.output_position if task == "copy" else T + 1 - m.output_position
        on = m[m.input_position == target].weight.sum() / m.output_position.nunique()
        rows.append(dict(task=task, aligned_weight=float(on), uniform=1.0 / T))
    return pd.DataFrame(rows)


@claim_source
def alignment_claims(share: pd.DataFrame) -> list:
    """Does the trained cross-attention put most of its weight on the aligned position, for both tasks?"""
    s = share.set_index("task")
    copy, rev = s.aligned_weight["copy"], s.aligned_weight["reverse"]
    return [verdict("s54_alignment", min(copy, rev) > 0.5, copy=copy, reverse=rev, uniform=s.uniform.iloc[0],
                    positions=int(round(1 / s.uniform.iloc[0])))]


@claim_source
def reversal_recap_claims(controls: pd.DataFrame) -> list:
    """§14.49's reversal alignment as §14.54 recalls it: ``controls`` is ``s14_49.reversal_alignment()`` (rows
    trained, untrained, uniform). Holds when training gathered the weight within one step of the mirrored
    position but put less than before exactly on it, its largest weight mostly one step late."""
    c = controls.set_index("weights")
    near, exact = c.weight_within_one_of_antidiagonal, c.weight_on_antidiagonal
    within, within_untrained = float(near["trained"]), float(near["untrained"])
    on, untrained_on = float(exact["trained"]), float(exact["untrained"])
    late, mirrored = float(c.argmax_one_step_later["trained"]), float(c.argmax_on_antidiagonal["trained"])
    holds = within > within_untrained and on < untrained_on and late > mirrored
    return [verdict("s54_recap_49", holds, within=within, within_untrained=within_untrained, exact=on,
                    exact_untrained=untrained_on, later=late, mirrored=mirrored)]


def claims_for(checks: pd.DataFrame, grid: pd.DataFrame, masks: pd.DataFrame, maps: pd.DataFrame,
               rerun: pd.DataFrame) -> list:
    """Every claim §14.54 makes, from the mask checks, the trained comparison over its seeds (``grid``), its
    cross-attention and the cell retrained now (a false required claim raises here)."""
    return [*mask_claims(checks, masks), *task_claims(grid, 1 / PROTOCOL["vocab"]),
            *alignment_claims(alignment_share(maps)), *rerun_claims(rerun)]


@section("14.54", "Encoder, decoder, and the three attention patterns")
def run(ctx):
    seed = ctx.seed(SEED)
    enc, dec, src, tgt = layer_pair(seed)
    w = attention_weights(enc, dec, src, tgt)
    checks, out_shape = causality_check(dec, w["memory"], tgt, w["causal self"])
    weights = pattern_weights(w)
    batch, lengths = padded_batch(seed)
    model = demo_model(seed)
    masks = mask_checks(model, batch, lengths, seed)
    comparison = task_comparison()
    grid = seed_grid()
    spread = seed_spread(grid)
    rerun = rerun_one()
    maps = cross_attention_maps()
    recap = s14_49.reversal_alignment(ctx.seed(s14_49.REVERSAL_SEED))  # §14.49's run, as this section recalls it
    figs = []
    if ctx.figures:
        figs = ctx.save("attention_patterns", *patterns_figure(weights))
        figs += ctx.save("task_comparison", *comparison_figure(spread))
        figs += ctx.save("cross_attention", *cross_attention_figure(maps))
    tables = {"attention_patterns": pattern_table(w, out_shape), "layer_parameters": layer_parameters(enc, dec),
              "causality_check": checks, "pattern_weights": weights,
              "padding_mask": mask_view(padding_mask(lengths, batch.size(1)), batch),
              "shifted_targets": shifted_view(batch[:1], model.start_token), "mask_checks": masks,
              "task_comparison": comparison.assign(model=comparison.model.astype(str)),
              "heldout_accuracy": accuracy_table(comparison), "seed_grid": grid.assign(model=grid.model.astype(str)),
              "seed_spread": spread.assign(model=spread.model.astype(str)), "cross_attention": maps,
              "rerun_check": rerun}
    notes = [provenance(["transformer_tasks", "transformer_tasks_seeds"], heavy="trained now"),
             *claims_for(checks, grid, masks, maps, rerun), *reversal_recap_claims(recap)]
    return tables, figs, notes
