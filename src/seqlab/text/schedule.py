"""The schedules of a run, and what a resume may change of them.

The learning rate warms up linearly over steps, then falls along a cosine over
steps (``lr_decay_iters``) or over seconds of training (``schedule_seconds``);
Muon's momentum may warm up too. A resume keeps every setting of
:data:`TRAJECTORY_SETTINGS`; a larger ``max_iters`` or ``schedule_seconds`` extends
the run, with the cosine planned again over the longer run from where it stands.
"""
from __future__ import annotations

import math
from dataclasses import asdict
from ..errors import InvalidParameterError

__all__ = ["lr_at", "muon_momentum_at", "MUON_MOMENTUM_START", "TRAJECTORY_SETTINGS", "resume_changes"]


def lr_at(it: int, c, seconds: float | None = None) -> float:
    """Linear warm-up to learning_rate, then a cosine down to min_lr at lr_decay_iters, flat after.

    With ``c.schedule_seconds`` the cosine runs over time instead: at ``seconds`` of training it is
    ``min_lr + (learning_rate - min_lr) (1 + cos(pi s / schedule_seconds)) / 2``, and the rate is the
    smaller of that and the step-counted warm-up (at the warm-up's end the cosine has barely moved).
    """
    warm = c.learning_rate * (it + 1) / (c.warmup_iters + 1) if it < c.warmup_iters else c.learning_rate
    if c.schedule_seconds is not None:
        if seconds is None or not math.isfinite(seconds) or seconds < 0:
            raise InvalidParameterError(f"a schedule over schedule_seconds needs the training seconds so far, "
                                        f"got {seconds!r}")
        frac = min(1.0, seconds / c.schedule_seconds)
        return min(warm, c.min_lr + 0.5 * (1 + math.cos(math.pi * frac)) * (c.learning_rate - c.min_lr))
    if it < c.warmup_iters:
        return warm
    if it >= c.lr_decay_iters:
        return c.min_lr
    frac = (it - c.warmup_iters) / max(1, c.lr_decay_iters - c.warmup_iters)
    return c.min_lr + 0.5 * (1 + math.cos(math.pi * frac)) * (c.learning_rate - c.min_lr)


#: Muon's momentum at the first step when ``muon_momentum_warmup`` is set (modded-nanoGPT's speedruns)
MUON_MOMENTUM_START = 0.85


def muon_momentum_at(it: int, c) -> float:
    """Muon's momentum at iteration ``it``: from 0.85 linearly to ``muon_momentum`` over ``muon_momentum_warmup`` steps.

    Unset, it is ``muon_momentum`` throughout.
    """
    if c.muon_momentum_warmup is None:
        return c.muon_momentum
    frac = min(1.0, it / c.muon_momentum_warmup)
    return MUON_MOMENTUM_START + frac * (c.muon_momentum - MUON_MOMENTUM_START)


#: settings that change the training trajectory: a resume must use the checkpoint's values
TRAJECTORY_SETTINGS = ("batch_size", "block_size", "learning_rate", "min_lr", "warmup_iters", "weight_decay", "beta1",
                       "beta2", "grad_clip", "seed", "optimizer", "muon_lr", "muon_momentum", "embedding_lr", "head_lr",
                       "muon_momentum_warmup")


def resume_changes(saved: dict, c) -> tuple[list[str], list[str]]:
    """``(refused, notes)`` for resuming a run saved with ``saved`` (a TrainConfig as dict) under ``c``.

    Settings of :data:`TRAJECTORY_SETTINGS` that differ are refused (named, with both
    values); a changed ``max_iters`` extends or shortens the run and is reported.
    """
    now = asdict(c)
    refused = [f"{k} {saved[k]!r} (checkpoint) vs {now[k]!r} (now)" for k in TRAJECTORY_SETTINGS
               if k in saved and saved[k] != now[k]]
    notes = []
    old_max = saved.get("max_iters")
    if old_max is not None and old_max != c.max_iters:
        if saved.get("lr_decay_iters") == old_max and c.lr_decay_iters == c.max_iters:
            notes.append(f"extending from {old_max} to {c.max_iters} iterations (the cosine now ends at "
                         f"{c.max_iters})" if c.max_iters > old_max else
                         f"shortening from {old_max} to {c.max_iters} iterations")
        elif saved.get("lr_decay_iters") != c.lr_decay_iters:
            refused.append(f"lr_decay_iters {saved.get('lr_decay_iters')!r} (checkpoint) vs {c.lr_decay_iters!r} (now)")
    old_s, new_s = saved.get("schedule_seconds"), c.schedule_seconds
    if (old_s is None) != (new_s is None):  # steps and seconds are schedules of different kinds
        refused.append(f"schedule_seconds {old_s!r} (checkpoint) vs {new_s!r} (now)")
    elif old_s != new_s:
        notes.append(f"extending the schedule from {old_s:g} s to {new_s:g} s (the cosine now ends at {new_s:g} s)"
                     if new_s > old_s else f"shortening the schedule from {old_s:g} s to {new_s:g} s")
    for k in ("eval_interval", "eval_iters", "checkpoint_interval"):
        if k in saved and saved[k] != now[k]:
            notes.append(f"{k} changed from {saved[k]} to {now[k]}")
    return refused, notes
