"""§14.57 A character-level language model (heavy: trained under HEAVY_EVAL, else loaded)."""
from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import torch

from ..analysis.params import count_parameters
from ..claims import claim_source, require, verdict
from ..experiments.lm import CHAPTER_TRAIN, chapter_gpt_config, chapter_lstm_config
from ..experiments.lm_followups import SWEEP_ITERS
from ..nn import GPT, LSTMLanguageModel
from ..text.training import make_optimizer
from ..threads import single_threaded
from ._lm import followups, lm
from ._util import machine_table, provenance
from .base import section
from .s14_57_ten_minutes import five_minute_facts, five_minute_results, long_facts, long_results, marks_frame

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


#: the small character GPT the page trains in view: steps, batch of windows, width and depth (runs in seconds)
SMALL_STEPS, SMALL_BATCH, SMALL_WIDTH, SMALL_LAYERS = 300, 16, 64, 2

#: the stored reference of one training step's cost, and the quick measurement a build takes beside it
STEP_REPEATS, STEP_WARMUP, HERE_STEP_REPEATS = 9, 2, 3


def _chapter_models(vocab_size: int = 66, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    return {"GPT": GPT(chapter_gpt_config(vocab_size)), "LSTM": LSTMLanguageModel(chapter_lstm_config(vocab_size))}


def training_step_seconds(repeats: int = STEP_REPEATS, warmup: int = STEP_WARMUP, vocab_size: int = 66,
                          seed: int = 0) -> pd.DataFrame:
    """Seconds of one training step of each chapter model on the chapter's batch, one row per repeat.

    A step is the chapter's: forward and loss, backward, gradient clipping and one
    Muon + AdamW update, on a batch of ``batch_size`` windows of ``block_size``
    characters. The two models take turns, so a stretch of competing work lands on both.
    """
    c = CHAPTER_TRAIN
    models = _chapter_models(vocab_size, seed)
    opts = {name: make_optimizer(m, c) for name, m in models.items()}
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, vocab_size, (c.batch_size, c.block_size), generator=g)
    y = torch.randint(0, vocab_size, (c.batch_size, c.block_size), generator=g)

    def step(name):
        m, opt = models[name], opts[name]
        opt.zero_grad(set_to_none=True)
        _, loss = m(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), c.grad_clip)
        opt.step()

    rows = []
    for k in range(warmup + repeats):
        for name in models:
            t0 = time.perf_counter()
            step(name)
            if k >= warmup:
                rows.append(dict(model=name, repeat=k - warmup, seconds=time.perf_counter() - t0))
    return pd.DataFrame(rows)


def step_summary(steps: pd.DataFrame) -> pd.DataFrame:
    """Median (and fastest) seconds per step of each model, with the tokens per second the median gives."""
    g = steps.groupby("model").seconds
    out = pd.DataFrame({"median_seconds": g.median(), "fastest_seconds": g.min(), "repeats": g.size()})
    out["tokens_per_s"] = CHAPTER_TRAIN.batch_size * CHAPTER_TRAIN.block_size / out.median_seconds
    return out.reset_index()


def step_ratio(steps: pd.DataFrame) -> dict:
    """A GPT step's cost over an LSTM step's: the ratio of the medians, and the lowest and highest ratio of the
    repeats taken in turn (repeat k of each model), so the range shows what a single pair of timings could say."""
    pairs = steps.pivot(index="repeat", columns="model", values="seconds")
    each = pairs["GPT"] / pairs["LSTM"]
    return dict(ratio=float(pairs["GPT"].median() / pairs["LSTM"].median()), ratio_lo=float(each.min()),
                ratio_hi=float(each.max()), pairs=int(each.notna().sum()))


def step_reference_config(vocab_size: int = 66) -> dict:
    c = CHAPTER_TRAIN
    return dict(batch_size=c.batch_size, block_size=c.block_size, optimizer=c.optimizer, grad_clip=c.grad_clip,
                gpt=repr(chapter_gpt_config(vocab_size)), lstm=repr(chapter_lstm_config(vocab_size)),
                repeats=STEP_REPEATS, warmup=STEP_WARMUP, threads=1, statistic="median")


def _measure_steps() -> dict:
    with single_threaded():
        return {"steps": training_step_seconds(STEP_REPEATS, STEP_WARMUP)}


def step_reference(root=None):
    """The stored cost of one training step of each model (artifact set ``timing_lm_steps``, one thread).

    Measured on a quiet machine with repeats; ``HEAVY_EVAL=1`` measures it again.
    """
    from ..experiments.timing import reference

    return reference("lm_steps", _measure_steps, step_reference_config(), root)


def quick_step_seconds(repeats: int = HERE_STEP_REPEATS) -> pd.DataFrame:
    """A short measurement of the same steps on the machine running it (one thread), beside the reference."""
    with single_threaded():
        return training_step_seconds(repeats, warmup=1)


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
             val_loss_nats=r.val_loss, val_bits_per_char=r.val_bits_per_token, uniform_baseline_nats=math.log(vocab_size))
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


def sweep_frame(sweep_curves: pd.DataFrame, step_seconds: dict | None = None) -> pd.DataFrame:
    """One row per (model, steps): the final evaluation of every run of the sweep (``lm_sweep``).

    ``wall_seconds`` is the run's measured training time, which other work on the machine
    inflates; ``seconds``, the time axis of the comparison, is steps times the cost of one
    step: ``step_seconds[model]`` (the chapter passes the timing reference's median, measured
    on a quiet core), or where that is not given the fastest stretch of the sweep's own logs
    (:func:`seconds_per_step`).
    """
    rows = []
    for model, runs in sweep_curves.groupby("model"):
        per_step = seconds_per_step(runs) if step_seconds is None else float(step_seconds[model])
        for steps, run in runs.groupby("budget_iters"):
            last = run.sort_values("iter").iloc[-1]
            rows.append(dict(model=model, steps=int(steps), seconds=steps * per_step, wall_seconds=last.seconds,
                             seconds_per_step=per_step,
                             tokens_per_s=CHAPTER_TRAIN.batch_size * CHAPTER_TRAIN.block_size / per_step,
                             val_loss_nats=last.val_loss, val_bits_per_char=last.val_bits_per_token,
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

    # against steps, the budget both models share: the stored run's clock times were taken on a machine its
    # artifact does not describe, and the cost of a step is the timing reference's to state
    return line_pair(curves, "iter", "val_loss", "model", points=True,
                     title="Validation loss against training steps",
                     subtitle="Character-level tinyshakespeare; the same loop, data order and steps for both models",
                     xlab="Training step", ylab="Validation loss (nats/char)", colors=COLORS)


def sweep_figure(sweep: pd.DataFrame):
    from ..plotting import line_pair

    return line_pair(sweep, "seconds", "val_loss_nats", "model", points=True,
                     title="Final loss against training time, four budgets",
                     subtitle="One run of the chapter's recipe per point: "
                              + ", ".join(map(str, BUDGETS)) + " steps",
                     xlab="Seconds of training (steps x the reference's time per step)",
                     ylab="Final validation loss (nats/char)",
                     colors=COLORS)


@section("14.57", "A character-level language model")
def run(ctx):
    gpt, tok, curves, samples, _, manifest, mode = lm()
    summary = summary_frame(curves, tok.vocab_size)
    step_ref, cpu, five = step_reference(), long_results(), five_minute_results()
    steps, ratio = step_summary(step_ref["steps"]), step_ratio(step_ref["steps"])
    ref = steps.set_index("model").median_seconds
    sweep_curves, _ = followups()["sweep"]
    sweep = sweep_frame(sweep_curves, ref.to_dict())
    by_time, by_steps = crossover(sweep, "seconds"), crossover(sweep, "steps")
    cross = pd.DataFrame([by_time, by_steps])
    s = summary.set_index("model")
    runs = cpu["runs"]
    c = CHAPTER_TRAIN
    recipe = pd.DataFrame([dict(vocab_size=tok.vocab_size, optimizer=c.optimizer, muon_lr=c.muon_lr,
                                muon_momentum=c.muon_momentum, adamw_lr=c.learning_rate, warmup_iters=c.warmup_iters,
                                max_iters=c.max_iters, batch_size=c.batch_size, block_size=c.block_size,
                                grad_clip=c.grad_clip, trained_with_seqlab=manifest["seqlab_version"])])
    notes = [
        provenance(["lm", "lm_sweep", "timing_lm_steps", "timing_lm_long", "timing_lm_five"], mode),
        *budget_claims(summary, steps, ratio),
        *sweep_claims(sweep, by_steps, by_time, s.val_loss_nats["GPT"], ratio),
        *long_facts(runs),
        *five_minute_facts(five["runs"]),
    ]
    figs = []
    if ctx.figures:
        figs = ctx.save("lm_loss_curves", *curves_figure(curves))
        figs += ctx.save("lm_compute_sweep", *sweep_figure(sweep))
    tables = {"lm_summary": summary, "loss_curves": curves, "compute_sweep": sweep, "equal_time": equal_time(sweep),
              "crossover": cross, "step_cost_reference": steps, "training_recipe": recipe,
              "samples": pd.DataFrame(dict(strategy=list(samples), text=list(samples.values()))),
              "cpu_ten_minutes": marks_frame(runs), "cpu_five_minutes": five["runs"],
              "timing_machines": machine_table({"step cost": step_ref, "ten minutes on a CPU": cpu,
                                                "five minutes on a CPU": five})}
    return tables, figs, notes


# --- claims: the sentences of §14.57 that interpret its numbers ---------------------------------------------------

#: two step costs count as clearly different when their ratio is further than this from one
CLEARLY = 0.10


@claim_source
def budget_claims(summary: pd.DataFrame, steps: pd.DataFrame, ratio: dict):
    """The chapter's run: who wins at this budget, by how much, and what the cost of a step (the timing
    reference's ``step_summary`` and :func:`step_ratio`) has to do with it: ``lm_cheaper`` holds where the GPT's
    step is the cheaper one in every pair of repeats."""
    s, t = summary.set_index("model"), steps.set_index("model").median_seconds
    g, r = s.loc["GPT"], s.loc["LSTM"]
    lstm_wins = r.val_loss_nats < g.val_loss_nats
    # the gap between the losses as printed (four decimals), so a reader's subtraction gives the same digits
    gap = abs(round(float(g.val_loss_nats), 4) - round(float(r.val_loss_nats), 4))
    winner = "LSTM" if lstm_wins else "GPT"
    return [
        require("lm_same_steps", g.iterations == r.iterations, gpt=g.iterations, lstm=r.iterations),
        verdict("lm_winner", lstm_wins, gap=gap, gpt=g.val_loss_nats, lstm=r.val_loss_nats),
        verdict("lm_larger", r.parameters > g.parameters, gpt=g.parameters, lstm=r.parameters,
                lstm_extra=r.parameters / g.parameters - 1, gpt_extra=g.parameters / r.parameters - 1),
        # the chapter credits the LSTM's lead to cheaper steps: holds where the GPT's step is the cheaper one in
        # every pair of repeats, so the lead cannot have come from cheaper steps
        verdict("lm_cheaper", ratio["ratio_hi"] < 1, lstm=t["LSTM"], gpt=t["GPT"], lstm_ms=1e3 * t["LSTM"],
                gpt_ms=1e3 * t["GPT"], **ratio, winner=winner, lstm_clearly=ratio["ratio_lo"] > 1 + CLEARLY),
    ]


@claim_source
def here_claims(reference: pd.DataFrame, here: pd.DataFrame):
    """The quick measurement on the machine building the page, set against the reference (``step_summary``)."""
    ref, now = (f.set_index("model").median_seconds for f in (reference, here))
    r_ref, r_now = ref["GPT"] / ref["LSTM"], now["GPT"] / now["LSTM"]
    return [verdict("lm_here", (r_now < 1) == (r_ref < 1), here=r_now, reference=r_ref,
                    cheaper_here="GPT" if r_now < 1 else "LSTM", cheaper_reference="GPT" if r_ref < 1 else "LSTM")]


#: two losses closer than this (nats) read as level: below the three decimals the tables print
LEVEL_NATS = 1e-3


@claim_source
def sweep_claims(sweep: pd.DataFrame, by_steps: dict, by_time: dict, chapter_gpt_loss: float, ratio: dict):
    """The compute sweep: the rerun, the crossing against steps and against time, and whether more compute
    still helps. ``ratio``: the timing reference's :func:`step_ratio`, whose step costs make the time axis; a
    model's steps move its curve only where every pair of repeats puts them on one side of the other's."""
    w = sweep.set_index(["model", "steps"])
    low, top = int(sweep.steps.min()), int(sweep.steps.max())
    rerun_gap = abs(w.val_loss_nats["GPT", CHAPTER_ITERS] - chapter_gpt_loss)
    gains = all(g.sort_values("steps").val_loss_nats.is_monotonic_decreasing for _, g in sweep.groupby("model"))
    s, t = by_steps, by_time
    return [
        verdict("sw_rerun", rerun_gap < 0.02, gap=rerun_gap),
        verdict("sw_steps", not math.isnan(s["at"]), **s, low=low, top=top, gpt_top=w.val_loss_nats["GPT", top],
                lstm_top=w.val_loss_nats["LSTM", top]),
        # between a model's budgets its loss is read linearly in log-time (loss_at): the page tells the reader so
        verdict("sw_time", not math.isnan(t["at"]), **t, gpt_dearer=ratio["ratio_lo"] > 1,
                gpt_cheaper=ratio["ratio_hi"] < 1, step_ratio=ratio["ratio"], step_ratio_lo=ratio["ratio_lo"],
                step_ratio_hi=ratio["ratio_hi"],
                level_at_start=abs(t["gap_at_start_nats"]) < LEVEL_NATS),
        # where the curves cross is one seed's interpolation between budgets: the seeds' range is seed_claims'
        verdict("sw_story", s["ahead_at_start"] == "GPT" and s["ahead_at_end"] == "LSTM",
                ahead_at_start=s["ahead_at_start"], ahead_at_end=s["ahead_at_end"], low=low, top=top),
        verdict("sw_gains", gains,
                losses={m: g.sort_values("steps").val_loss_nats.tolist() for m, g in sweep.groupby("model")}),
    ]
