"""One training loop for every language model: AdamW or Muon, warm-up + cosine, clipping, evaluation, checkpoints."""
from __future__ import annotations

import contextlib
import hashlib
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..errors import InvalidParameterError, SeqlabError
from ..nn.transformer import OPTIONAL_FEATURES, config_record
from .checkpoint import (
    CHECKPOINT_FILE,
    CheckpointMismatchError,
    load_checkpoint,
    model_kind,
    read_checkpoint_state,
    save_checkpoint,
)
from ..devices import autocast, muon_ns_dtype, resolve_device
from .distributed import Rank, all_mean, any_true, from_environment, lost_contact
from .progress_bar import ProgressBar
from .optim import MuonWithAdamW, embedding_and_head_ids, split_muon_params
from .schedule import lr_at, muon_momentum_at, resume_changes
# the run's settings and result live beside the loop; importers of seqlab.text.training keep finding them here
from .train_config import (LN2, PLACEMENT_SETTINGS, STOP_REASONS, TrainConfig, TrainingDiverged, TrainResult,
                           per_char, recipe)

__all__ = ["TrainConfig", "TrainingDiverged", "TrainResult", "make_optimizer", "get_batch", "estimate_loss",
           "train_lm", "check_resumable", "recipe", "text_record", "PLACEMENT_SETTINGS", "STOP_REASONS"]


def make_optimizer(model: torch.nn.Module, c: TrainConfig) -> torch.optim.Optimizer:
    """AdamW with weight decay on matrices and embeddings only (biases and norm gains are not decayed).

    With ``c.optimizer == "muon"`` the hidden-layer matrices are updated by Muon
    (without weight decay) and everything else by AdamW as above. ``c.embedding_lr``
    and ``c.head_lr``, when set, give the embeddings and an untied output head AdamW
    groups of their own at those rates. Every group carries ``base_lr``, its peak
    learning rate, which the schedule scales.
    """
    params = list({id(p): p for p in model.parameters() if p.requires_grad}.values())
    hidden = []
    if c.optimizer == "muon":
        hidden, params = split_muon_params(model)
    parts = [(params, c.learning_rate)]
    if c.embedding_lr is not None or c.head_lr is not None:
        embedding, head = embedding_and_head_ids(model)
        outside = embedding | head
        parts = [([p for p in params if id(p) in embedding], c.embedding_lr or c.learning_rate),
                 ([p for p in params if id(p) in head], c.head_lr or c.learning_rate),
                 ([p for p in params if id(p) not in outside], c.learning_rate)]
    groups = _matrices_then_vectors(parts, c.weight_decay)
    if hidden:
        muon = {"params": hidden, "lr": c.muon_lr, "base_lr": c.muon_lr, "momentum": c.muon_momentum,
                "weight_decay": 0.0}
        adam = [dict(g, betas=(c.beta1, c.beta2)) for g in groups if g["params"]]
        device = next(iter(hidden)).device
        return MuonWithAdamW([muon], adam, ns_dtype=muon_ns_dtype(c.muon_ns_dtype, device, c.dtype)[0])
    if len(parts) > 1:
        groups = [g for g in groups if g["params"]]
    return torch.optim.AdamW(groups, lr=c.learning_rate, betas=(c.beta1, c.beta2))


def _matrices_then_vectors(parts: list[tuple[list, float]], weight_decay: float) -> list[dict]:
    """For each ``(params, peak rate)``: a group of its matrices (decayed) and a group of its vectors (not)."""
    groups = []
    for params, lr in parts:
        groups.append({"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay, "base_lr": lr,
                       "lr": lr})
        groups.append({"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0, "base_lr": lr, "lr": lr})
    return groups


def get_batch(ids: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator, *,
              part: int = 0, parts: int = 1):
    """Random windows: inputs (B, T) and the same windows shifted by one as targets.

    The ``batch_size`` starts are always drawn in full, so the generator moves the same way
    for any ``parts``; ``part`` of ``parts`` takes its contiguous share (one rank's slice).
    """
    if len(ids) <= block_size:
        raise InvalidParameterError(f"the text has {len(ids)} tokens, fewer than the context of {block_size} + 1")
    start = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    start = start.view(parts, batch_size // parts)[part]  # (B / parts,)
    offsets = torch.arange(block_size)
    x = ids[start[:, None] + offsets]  # (B / parts, T)
    y = ids[start[:, None] + offsets + 1]
    return x, y


@torch.no_grad()
def estimate_loss(model, ids: torch.Tensor, c: TrainConfig, seed: int = 0) -> float:
    """Mean cross-entropy (nats) over ``eval_iters`` fixed random batches (the same batches every call)."""
    was = model.training
    model.eval()
    g = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    losses = []
    for _ in range(c.eval_iters):
        x, y = get_batch(ids, c.batch_size, c.block_size, g)
        losses.append(model(x.to(device), y.to(device))[1].item())
    model.train(was)
    return sum(losses) / len(losses)

def check_resumable(model, state: dict, where) -> None:
    """Raise :class:`CheckpointMismatchError` naming each setting in which ``model`` differs from the checkpoint's."""
    kind = model_kind(model)
    if state["model_kind"] != kind:
        raise CheckpointMismatchError(f"{where} holds a {state['model_kind']} model; this run builds a {kind} model")
    now, then = config_record(model.config), state["model_config"]
    shown = lambda record, k: record.get(k, OPTIONAL_FEATURES.get(k))  # an absent feature is off
    diffs = [f"{k} {shown(then, k)!r} (checkpoint) vs {shown(now, k)!r} (now)" for k in sorted(set(now) | set(then))
             if now.get(k) != then.get(k)]
    if diffs:
        raise CheckpointMismatchError(f"{where} was trained with other model settings: " + "; ".join(diffs))


def _check_lengths(train_ids, val_ids, c: TrainConfig) -> None:
    for name, ids in (("training", train_ids), ("validation", val_ids)):
        if len(ids) <= c.block_size:
            raise InvalidParameterError(f"the {name} text has {len(ids)} tokens, fewer than the context of "
                                        f"{c.block_size} + 1")


def text_record(text: str, name: str) -> dict:
    """What a checkpoint records of the text it trains on: a name for people, a sha256 and a length to compare."""
    data = text.encode("utf-8", "surrogatepass")
    return {"name": name, "sha256": hashlib.sha256(data).hexdigest(), "characters": len(text)}


def _check_same_text(stored: dict, now: dict, ckpt: Path) -> None:
    """A resumed run must train on the text it started on (a checkpoint that recorded none is trusted)."""
    was, is_ = stored.get("text"), now.get("text")
    if was and is_ and was.get("sha256") != is_.get("sha256"):
        raise CheckpointMismatchError(
            f"{ckpt} was trained on {was.get('name')} ({was.get('characters', 0):,} characters, sha256 "
            f"{str(was.get('sha256'))[:12]}), not on {is_.get('name')} ({is_.get('characters', 0):,} characters, "
            f"sha256 {str(is_.get('sha256'))[:12]}): resuming would train one model on two texts")


def _resume(model, optimizer, ckpt: Path, c: TrainConfig, g: torch.Generator, provenance: dict | None = None):
    """Load the checkpoint in ``ckpt`` into ``model``, ``optimizer`` and the RNGs; returns (iteration, history, notes)."""
    header = read_checkpoint_state(ckpt)
    check_resumable(model, header, ckpt)
    _check_same_text(header["extra"].get("provenance") or {}, provenance or {}, ckpt)
    refused, notes = resume_changes(header["train_config"], c)
    if refused:
        raise CheckpointMismatchError(f"{ckpt} was trained with other training settings: " + "; ".join(refused))
    loaded, _, state = load_checkpoint(ckpt, optimizer_factory=lambda m: make_optimizer(m, c))
    model.load_state_dict(loaded.state_dict())
    optimizer.load_state_dict(state["optimizer"].state_dict())
    if "batch" in state["rng"]:
        g.set_state(state["rng"]["batch"])
    if "torch" in state["rng"]:
        torch.set_rng_state(state["rng"]["torch"])
    if state["iteration"] >= c.max_iters:
        notes.append(f"already complete at iteration {state['iteration']} of {c.max_iters}; nothing to train")
    # a run that ended because its seconds were spent trains no further unless given more of them
    saved = header["train_config"].get("schedule_seconds")
    finished = state["extra"].get("stop") == "schedule" and c.schedule_seconds is not None and \
        c.schedule_seconds <= saved
    return state["iteration"], state["history"], notes, finished


#: a run with ``schedule_seconds`` ends once this many average steps would no longer fit in them
STOP_AHEAD = 1.5


def _train_step(model, optimizer, it: int, c: TrainConfig, x, y, ckpt, run: "_Run", seconds: float | None = None
                ) -> float:
    """One optimizer step at iteration ``it`` (``seconds`` of training so far) on this rank's share (x, y); returns
    the global batch's mean loss."""
    scale = lr_at(it, c, seconds) / c.learning_rate
    for group in optimizer.param_groups:
        group["lr"] = group["base_lr"] * scale
        if group.get("muon"):
            group["momentum"] = muon_momentum_at(it, c)
    optimizer.zero_grad(set_to_none=True)
    total = torch.zeros((), device=run.device)
    chunks = list(zip(x.chunk(c.grad_accum_steps), y.chunk(c.grad_accum_steps)))
    for k, (xb, yb) in enumerate(chunks):
        last = k == len(chunks) - 1
        sync = contextlib.nullcontext() if last or run.ddp is None else run.ddp.no_sync()
        with sync:
            with autocast(run.device, c.dtype):
                _, loss = run.forward(xb.to(run.device), yb.to(run.device))
            (loss / len(chunks)).backward()
        total += loss.detach().float()
    loss = all_mean(total / len(chunks), run.where)
    if not torch.isfinite(loss):
        where = f"; {ckpt} keeps its last good checkpoint" if ckpt is not None else ""
        raise TrainingDiverged(f"loss became {loss.item()} at iteration {it}; training stopped{where}")
    if c.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), c.grad_clip)
    optimizer.step()
    return loss.item()


@dataclass
class _Run:
    """Where the steps run: the device, this process's rank, and the module the forward pass goes through."""

    device: torch.device
    where: Rank
    forward: torch.nn.Module
    ddp: torch.nn.Module | None = None


def _prepare(model, c: TrainConfig) -> _Run:
    device = resolve_device(c.device)
    where = from_environment(device)
    if where.distributed and c.batch_size % (where.world_size * c.grad_accum_steps):
        raise InvalidParameterError(f"batch_size {c.batch_size} must divide evenly over {where.world_size} processes "
                                    f"x {c.grad_accum_steps} micro-batches")
    if device.type == "cuda" and where.distributed:
        device = torch.device("cuda", where.local_rank)
    model.to(device)
    forward, ddp = model, None
    if where.distributed:
        from torch.nn.parallel import DistributedDataParallel

        forward = ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    if c.compile:
        forward = torch.compile(forward)
    return _Run(device, where, forward, ddp)


def train_lm(model, train_ids: torch.Tensor, val_ids: torch.Tensor, config: TrainConfig, *, checkpoint_dir=None,
             tokenizer=None, resume: bool = True, progress: bool = False, time_budget_s: float | None = None,
             log=None, should_stop=None, keep_best: bool = True, val_chars: int | None = None,
             provenance: dict | None = None) -> TrainResult:
    """Train ``model`` (GPT or LSTM language model) on token ids; return the model and its loss history.

    Random windows of ``train_ids`` are the batches (the order seeded by ``config.seed``); the learning
    rate warms up, then follows a cosine to ``min_lr``; ``estimate_loss`` on ``val_ids`` every
    ``eval_interval`` steps gives the history. With ``checkpoint_dir`` a checkpoint is written atomically
    every ``checkpoint_interval`` iterations and at the end, and (``keep_best``) the weights of the lowest
    validation loss so far go to ``checkpoint_dir/best``. With ``resume`` an existing checkpoint there is
    loaded (weights, optimizer, data-order RNG, history) and training continues from its iteration, giving
    the same losses as an uninterrupted run; a changed ``max_iters`` extends the run (see
    ``TrainResult.notes``). The ``seconds`` in the history count training steps only, as nanoGPT's timings
    do, so curves from runs with different evaluation settings compare fairly. Under ``torchrun`` (or
    ``seqlab lm train --nproc``) each process trains on its share of every batch.

    Args:
        model: a :class:`~seqlab.nn.GPT` or :class:`~seqlab.nn.LSTMLanguageModel`, its initial weights seeded
            by the caller.
        train_ids: 1-D tensor of training token ids, longer than ``config.block_size``.
        val_ids: 1-D tensor of validation token ids, longer than ``config.block_size``.
        config: the run's settings (:class:`TrainConfig`).
        checkpoint_dir: the folder of the checkpoints (default: none written).
        tokenizer: saved in every checkpoint, so the checkpoint samples on its own.
        resume: continue from a checkpoint in ``checkpoint_dir``.
        progress: a progress bar on stderr.
        time_budget_s: stop early (after an evaluation) once this much training time is used, counted across
            resumes; ``config.schedule_seconds`` instead fits the schedule itself to a time budget.
        log: ``log(row)`` is called with each history row as it is made.
        should_stop: asked after every step; when it returns true, a checkpoint of that iteration is written
            and the run returns with ``stopped``.
        keep_best: keep the best evaluation's weights in ``checkpoint_dir/best``.
        val_chars: the characters ``val_ids`` spell; the history then also has ``val_nats_per_char`` and
            ``val_bits_per_char``, which compare across tokenizers.
        provenance: JSON-able, ``{"text": text_record(...), "init_from": ...}``, stored in every checkpoint.

    Returns:
        A :class:`TrainResult`.

    Raises:
        CheckpointMismatchError: a checkpoint to resume of another model shape, trained with other settings of
            ``TRAJECTORY_SETTINGS``, or (by ``provenance``) on another text.
        TrainingDiverged: a NaN or infinite loss.
        InvalidParameterError: token ids too short for the context.

    Example:
        >>> import torch
        >>> from seqlab.nn import GPT, GPTConfig
        >>> from seqlab.text import CharTokenizer, TrainConfig, split_train_val
        >>> text = "to be or not to be, that is the question. " * 20
        >>> tok = CharTokenizer().train(text)
        >>> train_ids, val_ids = split_train_val(torch.tensor(tok.encode(text)))
        >>> _ = torch.manual_seed(0)
        >>> model = GPT(GPTConfig(tok.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=32))
        >>> config = TrainConfig(max_iters=10, batch_size=4, block_size=16, learning_rate=1e-2, warmup_iters=2,
        ...                      eval_interval=5, eval_iters=1, device="cpu")
        >>> result = train_lm(model, train_ids, val_ids, config)
        >>> [row["iter"] for row in result.history], result.history[-1]["val_loss"] < result.history[0]["val_loss"]
        ([5, 10], True)
    """
    c = config
    if val_chars is not None and (isinstance(val_chars, bool) or not isinstance(val_chars, int) or val_chars < 1):
        raise InvalidParameterError(f"val_chars must be a whole number >= 1, got {val_chars!r}")
    if time_budget_s is not None and not (math.isfinite(time_budget_s) and time_budget_s > 0):
        raise InvalidParameterError(f"time_budget_s must be a positive number of seconds, got {time_budget_s}")
    train_ids, val_ids = torch.as_tensor(train_ids, dtype=torch.long), torch.as_tensor(val_ids, dtype=torch.long)
    _check_lengths(train_ids, val_ids, c)
    run = _prepare(model, c)
    main = run.where.is_main
    torch.manual_seed(c.seed)
    g = torch.Generator().manual_seed(c.seed)
    optimizer = make_optimizer(model, c)
    history: list[dict] = []
    start_it, resumed, notes, finished = 0, None, [], False
    ckpt = Path(checkpoint_dir) if checkpoint_dir else None
    if ckpt is not None and resume and (ckpt / CHECKPOINT_FILE).is_file():
        start_it, history, notes, finished = _resume(model, optimizer, ckpt, c, g, provenance)
        resumed = start_it
    best_val = min((r["val_loss"] for r in history), default=math.inf)

    def checkpoint(it, directory=ckpt, stop=None):
        if ckpt is not None and main:  # one writer: the others hold the same state
            save_checkpoint(directory, model, optimizer, tokenizer=tokenizer, iteration=it, train_config=asdict(c),
                            history=history, rng={"batch": g.get_state(), "torch": torch.get_rng_state()},
                            extra={**({"stop": stop} if stop else {}),
                                   **({"provenance": provenance} if provenance else {})})

    model.train()
    timed, step_s = c.schedule_seconds is not None, None  # step_s: a running average of one step's seconds
    bar = ProgressBar(progress and main, min(start_it, c.max_iters), c.max_iters if not timed else None)
    t0 = time.perf_counter()
    elapsed0 = history[-1]["seconds"] if history else 0.0
    running, n_running, tokens, stopped, done = 0.0, 0, 0, False, start_it
    part, parts = run.where.rank, run.where.world_size
    end, reason = c.max_iters, "iterations"
    if timed and (elapsed0 >= c.schedule_seconds or finished):
        notes.append(f"already used its {c.schedule_seconds:g} s of training ({elapsed0:.1f} s); nothing to train; "
                     "a larger schedule_seconds (--schedule-seconds) extends it, the cosine planned again over the "
                     "longer time")
        end = start_it
    if time_budget_s is not None and elapsed0 >= time_budget_s:
        notes.append(f"already used its time budget of {time_budget_s:g} s ({elapsed0:.1f} s of training, counted "
                     "across resumes); nothing to train")
        end = start_it
    if end == start_it < c.max_iters:
        reason = "nothing to train"
    try:
        for it in range(start_it, end):
            x, y = get_batch(train_ids, c.batch_size, c.block_size, g, part=part, parts=parts)
            clock = elapsed0 + time.perf_counter() - t0  # t0 moves past each evaluation below
            if timed and run.where.distributed:  # one clock, so every rank steps at the same rate
                clock = all_mean(torch.tensor(clock, dtype=torch.float64, device=run.device), run.where).item()
            running += _train_step(model, optimizer, it, c, x, y, ckpt, run, seconds=clock)
            n_running += 1
            tokens += c.batch_size * c.block_size
            done = it + 1
            elapsed = elapsed0 + time.perf_counter() - t0
            step_s = elapsed - clock if step_s is None else 0.8 * step_s + 0.2 * (elapsed - clock)
            bar.update(1, running / n_running, tokens / max(1e-9, elapsed - elapsed0))
            asked = should_stop is not None and bool(should_stop()) and done < c.max_iters
            spent = time_budget_s is not None and elapsed >= time_budget_s
            # a scheduled run stops while one more step (with room for a slow one) would still fit
            ends = timed and done < c.max_iters and elapsed + STOP_AHEAD * step_s >= c.schedule_seconds
            # every rank stops together, and for the same reason (a rank's own clock may not have said so yet)
            asked, spent, ends = any_true([asked, spent, ends], run.where, run.device)
            out_of_time = spent or ends
            if out_of_time:
                reason = "time budget" if spent else "schedule"
            if done % c.eval_interval == 0 or done == c.max_iters or out_of_time:
                t_eval = time.perf_counter()
                val = estimate_loss(model, val_ids, c, seed=c.seed + 1)
                row = dict(iter=done, lr=lr_at(it, c, clock), train_loss=running / n_running, val_loss=val,
                           val_bits_per_token=val / LN2, **per_char(val, len(val_ids), val_chars), seconds=elapsed,
                           tokens_per_s=tokens / max(1e-9, elapsed - elapsed0))
                history.append(row)
                running, n_running = 0.0, 0
                if log is not None and main:
                    bar.write(lambda: log(row))
                if done % c.checkpoint_interval == 0 or done == c.max_iters or out_of_time:
                    checkpoint(done, stop=reason if out_of_time or done == c.max_iters else None)
                if keep_best and val < best_val:
                    checkpoint(done, ckpt / "best" if ckpt is not None else None)
                best_val = min(best_val, val)
                if out_of_time:
                    break
                t0 += time.perf_counter() - t_eval
            if asked:
                stopped, reason = True, "interrupted"
                if not history or history[-1]["iter"] != done or done % c.checkpoint_interval:
                    checkpoint(done, stop=reason)
                break
    except RuntimeError as e:
        if run.where.distributed and not isinstance(e, SeqlabError):
            raise lost_contact(run.where, e) from None
        raise
    finally:
        bar.close()
    return TrainResult(model, history, iterations=done, resumed_from=resumed, notes=notes, stopped=stopped,
                       reason=reason)
