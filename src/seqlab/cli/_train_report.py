"""What ``lm train`` prints: the run's header, a line per evaluation, and the summary that says why it ended."""
from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["header", "log_rows", "summary", "loss_curve", "write_loss_curve", "STEP_CAP"]

#: the step count a run fitted to seconds gets when no --max-iters is given (the seconds end it first)
STEP_CAP = 10**9


def header(args, model, tok, text: str, train_ids, val_ids, cfg, out: Path) -> None:
    n_params = sum(p.numel() for p in model.parameters())
    if args.model == "gpt":
        shape = (f"{args.num_layers} layers, {args.num_heads} heads, width {args.d_model}, context {args.block_size}, "
                 f"{args.positional} positions")
    else:
        shape = f"2 layers, hidden {2 * args.d_model}, embedding {args.d_model}, context {args.block_size}"
    print(f"model: {args.model}, {n_params:,} parameters ({shape})")
    print(f"text: {args.text_label}, {len(text):,} characters; {tok.kind} tokenizer, {tok.vocab_size:,} tokens; "
          f"split {len(train_ids):,} training / {len(val_ids):,} validation tokens (90/10)")
    if cfg.schedule_seconds is None:
        length = f"{cfg.max_iters:,} iterations"
    else:
        cap = "" if cfg.max_iters == STEP_CAP else f", at most {cfg.max_iters:,} iterations"
        length = f"{cfg.schedule_seconds:g} s of steps (cosine over the time{cap})"
    optimizer = cfg.optimizer
    if optimizer == "muon":
        from ..devices import muon_ns_dtype, resolve_device

        optimizer += f", Newton-Schulz in {muon_ns_dtype(cfg.muon_ns_dtype, resolve_device(cfg.device), cfg.dtype)[1]}"
    print(f"training: {length} x {cfg.batch_size} x {cfg.block_size} = "
          f"{cfg.batch_size * cfg.block_size:,} tokens per step; optimizer {optimizer}; "
          f"{args.threads} thread{'s' if args.threads > 1 else ''}; checkpoints in {out}", flush=True)


def _why(res, cfg, max_time) -> str:
    """The reason the run ended, in the summary's words."""
    if res.reason == "iterations":
        return f"its {cfg.max_iters:,} iterations were reached"
    if res.reason == "schedule":
        return f"its {cfg.schedule_seconds:g} s schedule of training was spent"
    if res.reason == "time budget":
        return (f"its --max-time of {max_time:g} s of training was spent, counted across resumes; rerun with a "
                "larger --max-time to go on")
    return {"interrupted": "interrupted", "nothing to train": "nothing was left to train"}[res.reason]


def summary(res, out: Path, seconds: float, cfg, max_time, per_token: bool) -> None:
    head = f"{'stopped' if res.reason == 'interrupted' else 'done'}: iteration {res.iterations:,} ({_why(res, cfg, max_time)})"
    if not res.history:
        print(f"{head}; no evaluation yet; {seconds:,.1f} s in this run")
        return
    last, best = res.history[-1], res.best
    where = f" (weights in {out / 'best'})" if best["iter"] != last["iter"] else ""
    old = res.iterations - last["iter"]  # an interrupted run stops between evaluations
    age = f" (at iteration {last['iter']:,}, {old:,} step{'s' if old > 1 else ''} before the stop)" if old else ""
    unit = "nats/char" if per_token is False else "nats/token"
    chars = f" = {last['val_nats_per_char']:.4f} nats/char" if per_token and "val_nats_per_char" in last else ""
    print(f"{head}; validation loss {last['val_loss']:.4f} {unit}{chars} last{age}, {best['val_loss']:.4f} best at "
          f"iteration {best['iter']:,}{where}; {seconds:,.1f} s in this run")


def log_rows(per_token: bool):
    """The line each evaluation prints: the validation loss per character, and per token where they differ."""

    def log(r) -> None:
        val = f"val {r['val_nats_per_char']:.4f} nats/char ({r['val_bits_per_char']:.3f} bits/char)"
        if per_token:
            val = f"val {r['val_loss']:.4f} nats/token = {val[4:]}"
        print(f"iter {r['iter']:>6}  train {r['train_loss']:.4f}  {val}  {r['tokens_per_s']:,.0f} tok/s", flush=True)

    return log


def write_loss_curve(history: list, out: Path, per_char: bool) -> Path | None:
    """``loss_curve.png`` in ``out``, written atomically: training and validation loss against the step, in nats
    per character (``per_char``: from the history's per-character columns, for tokens that are not characters).
    Drawn with matplotlib directly, so a run's end does not wait for the chapter's figure machinery to load;
    the numbers behind it are in ``trainer_state.json``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..files import atomic_write

    rows = [r for r in history if "val_loss" in r and "train_loss" in r]
    if not rows:
        return None
    steps = [r["iter"] for r in rows]
    scale = [r["val_nats_per_char"] / r["val_loss"] if per_char and r.get("val_loss") else 1.0 for r in rows]
    fig, ax = plt.subplots(figsize=(6.8, 4.0), dpi=110)
    for name, key in (("training (mean of the steps since the last evaluation)", "train_loss"),
                      ("validation (sampled windows of the held-out 10%)", "val_loss")):
        ax.plot(steps, [r[key] * k for r, k in zip(rows, scale)], marker="o" if len(steps) < 30 else None,
                label=name)
    ax.set(title=f"Loss of the run in {out.name}", xlabel="Training step", ylabel="Loss (nats per character)")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False)
    fig.tight_layout()
    try:
        return atomic_write(out / "loss_curve.png", lambda tmp: fig.savefig(tmp, format="png"))
    finally:
        plt.close(fig)


def loss_curve(history: list, out: Path, per_token: bool) -> None:
    """The run's loss curve beside its checkpoint; a figure that cannot be written costs the run nothing."""
    try:
        written = write_loss_curve(history, out, per_token)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"seqlab: warning: the loss curve was not written ({' '.join(str(e).split())[:120]})", file=sys.stderr)
        return
    if written is not None:
        print(f"loss curve: {written}")
