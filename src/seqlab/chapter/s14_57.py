"""§14.57 A character-level language model (heavy: trained under HEAVY_EVAL, else loaded)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analysis.params import count_parameters
from ..experiments.lm import CHAPTER_TRAIN, SWEEP_ITERS, chapter_gpt_config, chapter_lstm_config
from ..nn import GPT, LSTMLanguageModel
from ._lm import followups, lm
from .base import section

#: steps of the chapter's own run (the ``lm`` set) and the budgets of the sweep (the chapter's among them)
CHAPTER_ITERS = CHAPTER_TRAIN.max_iters
BUDGETS = tuple(sorted(SWEEP_ITERS))
COLORS = {"GPT": "#7FB069", "LSTM": "#3B7DD8"}


def chapter_results():
    """The chapter's run (artifact set ``lm``, verified; retrained first under HEAVY_EVAL=1):
    ``(gpt, tokenizer, curves, samples, tradeoff, manifest, mode)``."""
    return lm()


def sweep_results():
    """The compute sweep (artifact set ``lm_sweep``, verified): ``(curves, manifest)``."""
    return followups()["sweep"]


def parameter_counts(vocab_size: int) -> dict[str, int]:
    """Parameters of the chapter's two models for a vocabulary (the GPT ties its output head to the embedding)."""
    return {"GPT": count_parameters(GPT(chapter_gpt_config(vocab_size))),
            "LSTM": count_parameters(LSTMLanguageModel(chapter_lstm_config(vocab_size)))}


def summary_frame(curves: pd.DataFrame, vocab_size: int) -> pd.DataFrame:
    """One row per model: the last evaluation of the chapter's run (the JSON contract's ``lm_summary``)."""
    last = curves.sort_values("iter").groupby("model").tail(1).set_index("model")
    params = parameter_counts(vocab_size)
    return pd.DataFrame([
        dict(model=m, parameters=params[m], iterations=int(r["iter"]), seconds=r.seconds, tokens_per_s=r.tokens_per_s,
             val_loss_nats=r.val_loss, val_bits_per_char=r.val_bpc, uniform_baseline_nats=math.log(vocab_size))
        for m, r in last.iterrows()])


def seconds_per_step(runs: pd.DataFrame) -> float:
    """The time of one step in the fastest evaluation interval (25 to 100 steps) of any of ``runs``.

    A step's cost is a property of the model and the batch, not of the budget, so all
    of a model's runs measure the same thing. On a shared machine each run is slowed
    for a while whenever other work competes for its core; as in §14.55's timings, the
    fastest repeat is the least noisy estimate of what the step costs.
    """
    rates = []
    for _, run in runs.groupby("budget_iters") if "budget_iters" in runs else [(None, runs)]:
        run = run.sort_values("iter")
        d_iter = run["iter"].diff().fillna(run["iter"].iloc[0]).to_numpy()
        d_sec = run.seconds.diff().fillna(run.seconds.iloc[0]).to_numpy()
        rates.append(np.min(d_sec / d_iter))
    return float(min(rates))


def sweep_frame(sweep_curves: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, steps): the final evaluation of every run of the sweep (``lm_sweep``).

    ``wall_seconds`` is the run's measured training time, which other work on the
    machine inflates; ``seconds`` is steps times the model's :func:`seconds_per_step`,
    the training time on an otherwise idle core, and is the time axis of the comparison.
    """
    rows = []
    for model, runs in sweep_curves.groupby("model"):
        per_step = seconds_per_step(runs)
        for steps, run in runs.groupby("budget_iters"):
            last = run.sort_values("iter").iloc[-1]
            rows.append(dict(model=model, steps=int(steps), seconds=steps * per_step, wall_seconds=last.seconds,
                             seconds_per_step=per_step,
                             tokens_per_s=CHAPTER_TRAIN.batch_size * CHAPTER_TRAIN.block_size / per_step,
                             val_loss_nats=last.val_loss, val_bits_per_char=last.val_bpc,
                             tokens_seen=int(steps) * CHAPTER_TRAIN.batch_size * CHAPTER_TRAIN.block_size))
    return pd.DataFrame(rows).sort_values(["model", "steps"]).reset_index(drop=True)


def loss_at(sweep: pd.DataFrame, model: str, at, by: str = "seconds") -> np.ndarray:
    """A model's final loss interpolated at given training times (or steps), linearly in their logarithm.

    Outside the range of the model's runs the result is NaN: nothing is extrapolated.
    """
    s = sweep[sweep.model == model].sort_values(by)
    x = np.log(np.asarray(at, dtype=float))
    return np.interp(x, np.log(s[by].to_numpy(dtype=float)), s.val_loss_nats.to_numpy(), left=np.nan,
                     right=np.nan)


def equal_time(sweep: pd.DataFrame) -> pd.DataFrame:
    """At each GPT run's training time: the GPT's loss and the LSTM's interpolated loss at that same time."""
    g = sweep[sweep.model == "GPT"].sort_values("seconds")
    lstm = loss_at(sweep, "LSTM", g.seconds)
    return pd.DataFrame(dict(seconds=g.seconds.to_numpy(), gpt_steps=g.steps.to_numpy(),
                             gpt_loss_nats=g.val_loss_nats.to_numpy(), lstm_loss_nats=lstm,
                             lstm_minus_gpt=lstm - g.val_loss_nats.to_numpy()))


def crossover(sweep: pd.DataFrame, by: str = "seconds") -> dict:
    """Where the two loss curves cross, against training seconds (or steps), within the range both cover.

    Returns the crossing point (NaN when they do not cross), the range compared, which
    model is ahead at its start and end, and the gaps there (nats).
    """
    lo = max(sweep.groupby("model")[by].min())
    hi = min(sweep.groupby("model")[by].max())
    grid = np.exp(np.linspace(np.log(lo), np.log(hi), 400))
    diff = loss_at(sweep, "LSTM", grid, by) - loss_at(sweep, "GPT", grid, by)  # > 0: GPT ahead
    ahead = lambda d: "GPT" if d > 0 else "LSTM"
    sign = np.sign(diff)
    change = np.nonzero(sign[1:] != sign[:-1])[0]
    at = float("nan")
    if len(change):
        i = change[0]
        t = diff[i] / (diff[i] - diff[i + 1])  # linear between the two grid points
        at = float(np.exp(np.log(grid[i]) + t * (np.log(grid[i + 1]) - np.log(grid[i]))))
    return dict(by=by, at=at, start=float(lo), end=float(hi), ahead_at_start=ahead(diff[0]),
                ahead_at_end=ahead(diff[-1]), gap_at_start_nats=float(abs(diff[0])),
                gap_at_end_nats=float(abs(diff[-1])))


def curves_figure(curves: pd.DataFrame):
    from ..plotting import line_pair

    return line_pair(curves, "seconds", "val_loss", "model", points=True,
                     title="Validation loss against training time",
                     subtitle="Character-level tinyshakespeare; the same loop, data order and steps for both models",
                     xlab="Seconds of training (2 CPU cores)", ylab="Validation loss (nats/char)", colors=COLORS)


def sweep_figure(sweep: pd.DataFrame):
    from ..plotting import line_pair

    return line_pair(sweep, "seconds", "val_loss_nats", "model", points=True,
                     title="Final loss against training time, four budgets",
                     subtitle="Each point one run of the chapter's recipe for "
                              + ", ".join(map(str, BUDGETS)) + " steps, one thread",
                     xlab="Seconds of training (steps x the fastest interval's time per step)",
                     ylab="Validation loss at the end (nats/char)",
                     colors=COLORS)


@section("14.57", "A character-level language model")
def run(ctx):
    gpt, tok, curves, samples, _, manifest, mode = lm()
    summary = summary_frame(curves, tok.vocab_size)
    sweep_curves, _ = followups()["sweep"]
    sweep = sweep_frame(sweep_curves)
    cross = pd.DataFrame([crossover(sweep, "seconds"), crossover(sweep, "steps")])
    s = summary.set_index("model")
    g, l_ = s.loc["GPT"], s.loc["LSTM"]
    notes = [
        f"Results {mode} (artifact sets 'lm' and 'lm_sweep', seqlab {manifest['seqlab_version']}, every file's sha256 "
        "checked).",
        f"90/10 split of tinyshakespeare, {tok.vocab_size - 1} characters + <unk>. Same loop, data order and steps: "
        f"the Transformer ({int(g.parameters):,} parameters) reaches {g.val_loss_nats:.3f} nats ({g.val_bits_per_char:.3f} "
        f"bits/char) in {g.seconds:.1f} s, the LSTM ({int(l_.parameters):,}) {l_.val_loss_nats:.3f} "
        f"({l_.val_bits_per_char:.3f}) in {l_.seconds:.1f} s; uniform guessing is {math.log(tok.vocab_size):.3f} nats.",
        f"Both ran {int(g.iterations)} steps. The LSTM processed {l_.tokens_per_s:,.0f} tokens/s against the GPT's "
        f"{g.tokens_per_s:,.0f}, so it finished {g.seconds - l_.seconds:.1f} s earlier; the budget did not buy it extra "
        "steps. Its lower loss is learned per step, not bought with throughput.",
        f"Training recipe: Muon (lr {CHAPTER_TRAIN.muon_lr}, momentum {CHAPTER_TRAIN.muon_momentum}) for hidden "
        f"matrices and AdamW (lr {CHAPTER_TRAIN.learning_rate}, decay on embedding and output matrices) for the rest, "
        f"{CHAPTER_TRAIN.warmup_iters} warm-up steps and cosine decay over {CHAPTER_TRAIN.max_iters} steps, batch "
        f"{CHAPTER_TRAIN.batch_size} x {CHAPTER_TRAIN.block_size}, clipping at {CHAPTER_TRAIN.grad_clip}. Seconds "
        "count training steps only, not evaluations.",
        "Compute sweep (table `compute_sweep`, one thread per run): the same recipe for "
        + ", ".join(map(str, BUDGETS)) + " steps. " + " ".join(
            (f"Against training {r.by} the curves cross at {r.at:.4g}: {r.ahead_at_start} is ahead before, "
             f"{r.ahead_at_end} after." if not math.isnan(r.at) else
             f"Against training {r.by} ({r.start:.4g} to {r.end:.4g}) they do not cross: the {r.ahead_at_end} is "
             f"ahead (gap {r.gap_at_start_nats:.3f} -> {r.gap_at_end_nats:.3f} nats).") for r in cross.itertuples()),
        "Sample (temperature 1.0): " + samples["temperature 1.0"][:160].replace("\n", " / "),
    ]
    figs = []
    if ctx.figures:
        figs = ctx.save("lm_loss_curves", *curves_figure(curves))
        figs += ctx.save("lm_compute_sweep", *sweep_figure(sweep))
    tables = {"lm_summary": summary, "loss_curves": curves, "compute_sweep": sweep, "equal_time": equal_time(sweep),
              "crossover": cross}
    return tables, figs, notes
