"""What a language-model training run is told and what it reports: :class:`TrainConfig` (nanoGPT's CPU recipe by
default), the recipe that identifies it in a manifest, and :class:`TrainResult`."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

import torch

from ..errors import InvalidParameterError, SeqlabError
from ..devices import DEVICES, DTYPES, MUON_NS_DTYPES

__all__ = ["TrainConfig", "TrainingDiverged", "TrainResult", "recipe", "per_char", "OPTIONAL_SETTINGS",
           "PLACEMENT_SETTINGS", "STOP_REASONS"]

LN2 = math.log(2.0)


class TrainingDiverged(SeqlabError, RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is left as it was.

    Example:
        >>> issubclass(TrainingDiverged, RuntimeError)  # a run that failed, not a bad argument
        True
    """


@dataclass
class TrainConfig:
    """Settings of :func:`train_lm`; the defaults are nanoGPT's CPU recipe (the chapter's are in ``CHAPTER_TRAIN``).

    Learning rates are peaks: warm-up for ``warmup_iters`` steps, then a cosine down to
    ``min_lr`` (Muon's rate is scaled by the same factor). Weight decay applies to AdamW's
    matrices and embeddings only. ``lr_decay_iters`` is filled from ``max_iters`` when the
    config is made, so ``dataclasses.replace(config, max_iters=n)`` keeps the old decay
    horizon (and trains past it at ``min_lr``); :meth:`with_max_iters` moves both.

    ``schedule_seconds`` fits the schedule to a time budget instead (Li et al., 2020, "Budgeted
    training"): the warm-up still counts steps, the cosine runs over that many seconds of training
    time, and the run ends before a step that would pass them (``max_iters`` still caps the steps).
    However fast the machine, the run uses its time and ends at ``min_lr``; the steps it takes, and so
    its numbers, depend on the machine's speed, so such a run is reproducible only to within that.

    ``seqlab lm train`` builds one from its options (its defaults are the chapter's recipe: 750 steps, batch
    24, context 64, Muon at 0.02 and AdamW at 5e-3 falling to 5e-4, 50 warm-up steps).

    Raises:
        InvalidParameterError: a setting out of its range (each is checked when the config is made).

    Example:
        >>> c = TrainConfig(max_iters=100, optimizer="muon")
        >>> c.lr_decay_iters, c.checkpoint_interval, c.with_max_iters(300).lr_decay_iters
        (100, 250, 300)
    """

    max_iters: int = 2000  #: optimizer steps in all
    batch_size: int = 12  #: sequences per step, over every process together
    block_size: int = 64  #: tokens per training sequence (the context)
    learning_rate: float = 1e-3  #: AdamW's peak learning rate
    min_lr: float = 1e-4  #: the learning rate the cosine ends at
    warmup_iters: int = 100  #: steps of linear warm-up
    lr_decay_iters: int | None = None  #: steps of the cosine (default: ``max_iters``)
    weight_decay: float = 0.1  #: AdamW's decoupled weight decay of matrices and embeddings
    beta1: float = 0.9  #: AdamW's first-moment decay
    beta2: float = 0.99  #: AdamW's second-moment decay
    grad_clip: float = 1.0  #: clip the gradient's norm to this (0 disables clipping)
    eval_interval: int = 250  #: steps between validation evaluations
    eval_iters: int = 20  #: batches per evaluation
    checkpoint_interval: int | None = None  #: steps between checkpoints (default: ``eval_interval``)
    seed: int = 1337  #: seeds the batches' order (the caller seeds the initial weights)
    optimizer: str = "adamw"  #: "adamw" | "muon" (Muon for hidden matrices, AdamW for the rest)
    muon_lr: float = 0.02  #: peak Muon learning rate; follows the same warm-up and cosine as learning_rate
    muon_momentum: float = 0.95  #: Muon's momentum
    muon_momentum_warmup: int | None = None  #: steps over which Muon's momentum rises from 0.85 to muon_momentum
    embedding_lr: float | None = None  #: peak AdamW rate of the token embedding (and a head tied to it); None: learning_rate
    head_lr: float | None = None  #: peak AdamW rate of an untied output head; None: learning_rate
    grad_accum_steps: int = 1  #: micro-batches per step and rank; the global batch stays batch_size
    device: str = "auto"  #: "auto" (CUDA, then MPS, else CPU) | "cpu" | "cuda" | "mps"
    dtype: str = "float32"  #: "bfloat16": autocast the forward pass, and Muon's Newton-Schulz in bfloat16
    compile: bool = False  #: torch.compile the model for the training steps
    schedule_seconds: float | None = None  #: the cosine over this many seconds of training, not lr_decay_iters steps
    muon_ns_dtype: str = "auto"  #: Muon's Newton-Schulz: "auto" (a bfloat16 run: bfloat16 where native) | "float32" | "bfloat16"

    def __post_init__(self):
        for name in ("max_iters", "batch_size", "block_size", "eval_interval", "eval_iters"):
            if getattr(self, name) < 1:
                raise InvalidParameterError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("learning_rate", "min_lr", "muon_lr", "weight_decay", "grad_clip"):
            if not math.isfinite(getattr(self, name)):
                raise InvalidParameterError(f"{name} must be a finite number, got {getattr(self, name)}")
        if self.learning_rate <= 0 or self.min_lr < 0 or self.min_lr > self.learning_rate:
            raise InvalidParameterError("need learning_rate > 0 and 0 <= min_lr <= learning_rate")
        if self.warmup_iters < 0 or self.weight_decay < 0 or self.grad_clip < 0:
            raise InvalidParameterError("warmup_iters, weight_decay and grad_clip must be >= 0")
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise InvalidParameterError("beta1 and beta2 must lie in [0, 1)")
        if self.optimizer not in ("adamw", "muon"):
            raise InvalidParameterError(f"optimizer must be 'adamw' or 'muon', got {self.optimizer!r}")
        for name in (*OPTIONAL_RATES, "schedule_seconds"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                          and math.isfinite(value) and value > 0):
                raise InvalidParameterError(f"{name} must be None or a finite number > 0, got {value!r}")
        if self.muon_lr <= 0 or not 0 <= self.muon_momentum < 1:
            raise InvalidParameterError("need muon_lr > 0 and muon_momentum in [0, 1)")
        warm = self.muon_momentum_warmup
        if warm is not None and not (isinstance(warm, int) and not isinstance(warm, bool) and warm >= 1):
            raise InvalidParameterError(f"muon_momentum_warmup must be None or a whole number >= 1, got {warm!r}")
        if self.grad_accum_steps < 1 or self.batch_size % self.grad_accum_steps:
            raise InvalidParameterError(f"grad_accum_steps ({self.grad_accum_steps}) must be >= 1 and divide "
                                        f"batch_size ({self.batch_size})")
        if self.device not in DEVICES:
            raise InvalidParameterError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.dtype not in DTYPES:
            raise InvalidParameterError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.muon_ns_dtype not in MUON_NS_DTYPES:
            raise InvalidParameterError(f"muon_ns_dtype must be one of {', '.join(MUON_NS_DTYPES)}, got "
                                        f"{self.muon_ns_dtype!r}")
        if self.lr_decay_iters is None:
            self.lr_decay_iters = self.max_iters
        if self.checkpoint_interval is None:
            self.checkpoint_interval = self.eval_interval

    def with_max_iters(self, max_iters: int, **changes) -> "TrainConfig":
        """A copy that trains for ``max_iters`` steps; a decay horizon that ended with the run still does."""
        decay = max_iters if self.lr_decay_iters == self.max_iters else self.lr_decay_iters
        return replace(self, max_iters=max_iters, lr_decay_iters=changes.pop("lr_decay_iters", decay), **changes)


#: learning rates of their own for parts of the model; a recipe that leaves one unset records it as absent
OPTIONAL_RATES = ("embedding_lr", "head_lr")


#: settings that came after recipes were recorded: one left unset (None) is absent from the record
OPTIONAL_SETTINGS = (*OPTIONAL_RATES, "muon_momentum_warmup", "schedule_seconds")


#: settings of where and how a run executes, not of what it learns (float32, one micro-batch: the same numbers)
PLACEMENT_SETTINGS = ("grad_accum_steps", "device", "dtype", "compile", "muon_ns_dtype")


def recipe(c: TrainConfig) -> dict:
    """``c`` as a dict without :data:`PLACEMENT_SETTINGS`: what identifies a recipe in an artifact manifest.

    An unset setting of :data:`OPTIONAL_SETTINGS` is left out, so recipes recorded before it existed still match.
    """
    return {k: v for k, v in asdict(c).items()
            if k not in PLACEMENT_SETTINGS and not (k in OPTIONAL_SETTINGS and v is None)}


def per_char(nats_per_token: float, tokens: int, chars: int | None) -> dict:
    """``val_nats_per_char`` and ``val_bits_per_char`` of a loss per token over ``tokens`` that spell ``chars``."""
    if chars is None:
        return {}
    nats = nats_per_token * tokens / chars
    return {"val_nats_per_char": nats, "val_bits_per_char": nats / LN2}


#: why a run ends: its iterations reached, its schedule_seconds spent, its time budget spent (training seconds
#: counted across resumes), asked to stop (Ctrl-C), or nothing left to train when it started
STOP_REASONS = ("iterations", "schedule", "time budget", "interrupted", "nothing to train")


@dataclass
class TrainResult:
    """What :func:`~seqlab.text.train_lm` returns: the trained model, its loss history and why it stopped.

    Example:
        >>> r = TrainResult(model=None, history=[{"iter": 50, "val_loss": 2.1}, {"iter": 100, "val_loss": 1.9}])
        >>> r.final_val_loss, r.best["iter"]
        (1.9, 100)
    """

    #: the model, trained (the weights of its last step, not of the best evaluation)
    model: torch.nn.Module
    #: one row per evaluation: ``iter``, ``lr``, ``train_loss``, ``val_loss`` (nats per token),
    #: ``val_bits_per_token``, with ``val_chars`` the losses per character, ``seconds`` and ``tokens_per_s``
    history: list[dict] = field(default_factory=list)
    #: the iteration the run ended at
    iterations: int = 0
    #: the iteration of the checkpoint it resumed from, or None
    resumed_from: int | None = None
    #: what a resume changed or found ("extending from 400 to 800 iterations", "already complete")
    notes: list[str] = field(default_factory=list)
    #: True when ``should_stop`` ended the run early (a checkpoint of that iteration was written)
    stopped: bool = False
    #: why the loop ended: one of ``STOP_REASONS``
    reason: str = "iterations"

    @property
    def final_val_loss(self) -> float:
        """The validation loss of the last evaluation (nats per token)."""
        return self.history[-1]["val_loss"]

    @property
    def best(self) -> dict | None:
        """The history row with the lowest validation loss (the ``best/`` checkpoint holds its weights)."""
        return min(self.history, key=lambda r: r["val_loss"]) if self.history else None
