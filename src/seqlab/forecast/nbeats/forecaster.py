"""The N-BEATS ensemble as a forecaster: one independent, seeded job per member (in worker processes), progress
from every member, and the median of the members' forecasts."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import asdict, replace

import numpy as np

from ...errors import InvalidParameterError
from ...devices import native_bfloat16, resolve_device
from ..engines import make_engine
from ..panel import Panel
from ..neural import NeuralForecaster
from .training import (
    FAST_MEMBER, LOSSES, MemberForecasts, NBeatsConfig, PRESET_MEMBERS, _forecast, build_model, ensemble_median,
    timed_member_forecasts, train_member,
)


# ----------------------------------------------------------------------------------------------------------------
# The forecaster: fit/predict like the other global models
# ----------------------------------------------------------------------------------------------------------------
#: the most members a preset (:meth:`NBeatsForecaster.default`, :meth:`~NBeatsForecaster.ig_ensemble`) trains
MAX_MEMBERS = 60


#: the members of :meth:`NBeatsForecaster.default`
DEFAULT_MEMBERS = 4


def _whole(value, default, name: str, most: int | None = None) -> int:
    """``value`` as a whole number >= 1 (at most ``most``), or ``default`` for None."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (most is not None and value > most):
        bound = f"from 1 to {most}" if most is not None else ">= 1"
        raise InvalidParameterError(f"{name} must be a whole number {bound}, got {value!r}")
    return value


def _dtype(dtype: str, device) -> str:
    """``"auto"``: bfloat16 where ``device`` multiplies it natively, else float32; any other value as given
    (:class:`NBeatsConfig` checks it)."""
    if dtype == "auto":
        return "bfloat16" if native_bfloat16(resolve_device(device).type)[0] else "float32"
    return dtype


#: member seeds are reduced modulo this, so that a base seed up to the CLI's 2**62 still gives valid torch seeds
_SEED_MODULUS = 2 ** 63


def _fit_member(series, h, season, config, report=None, device="cpu"):
    model, _ = train_member(series, h, season, config, progress=report, device=device)
    return config, {k: v.cpu() for k, v in model.state_dict().items()}  # CPU tensors travel between processes


def _fit_key(series, h: int, season: int, configs, device: str) -> str:
    """What a fit depends on, hashed: every value of every series in order, the horizon, season, members, device."""
    d = hashlib.sha256(repr((h, season, device, [asdict(c) for c in configs])).encode())
    for y in series:
        d.update(np.int64(len(y)).tobytes())
        d.update(np.ascontiguousarray(y, np.float64).tobytes())
    return d.hexdigest()


def _member_report(progress, k: int, n: int, steps: int):
    return lambda step: progress(member=k + 1, members=n, step=step, steps=steps)


class _QueueReport:
    """A member's ``progress(step)`` in a worker process: ``(member, step)`` onto the parent's queue."""

    def __init__(self, queue, member: int):
        self.queue, self.member = queue, member

    def __call__(self, step: int) -> None:
        self.queue.put((self.member, step))


def _drain(queue, progress, members: int, steps: list[int], stop) -> None:
    while not stop.is_set():
        try:
            k, step = queue.get(timeout=0.2)
        except Exception:  # empty, or the manager is gone at the end
            continue
        progress(member=k + 1, members=members, step=step, steps=steps[k])


class NBeatsForecaster(NeuralForecaster):
    """An N-BEATS ensemble: one member per (architecture, seed, loss, input multiple), combined by the median.

    ``config`` is one member config, or several (architectures, e.g. the generic and the
    interpretable stack: the paper's I+G ensemble). Members are ordered architecture
    first, then seed, so the first ``len(losses) * len(input_multiples)`` members hold one
    of each kind for the first architecture; member ``k`` of the round of seed ``s`` of
    architecture ``a`` is trained with seed ``(1000 s + 100 a + k) mod 2**63`` (torch takes 64-bit seeds).
    ``size`` keeps the
    first ``size`` members (an ensemble size chosen on validation windows). ``fit(df, h)`` trains the members as
    independent jobs in ``workers`` processes (each seeded and single-threaded, so the result does
    not depend on the number of workers), or on a cluster when an ``engine`` is given (an
    :class:`~seqlab.forecast.Engine` or "dask", "ray", "spark"; a
    :class:`~seqlab.forecast.Forecaster` with an engine hands it over): the same members,
    the same numbers. ``predict(df, h)`` returns the median forecast. ``device``: "auto" (the default, as for
    ``seqlab lm train``: CUDA when present, then MPS, else the CPU), "cpu", "cuda" or "mps"; every member trains and
    forecasts there, and an unavailable device is an :class:`~seqlab.errors.InvalidParameterError` at once. On the
    CPU the numbers do not depend on the option (the same arithmetic runs); a GPU's differ from them by rounding.
    """

    #: :class:`~seqlab.forecast.Forecaster` passes its engine to ``fit``
    accepts_engine = True
    #: it forecasts from ``y`` alone: regressors are not handed to it
    accepts_exog = False
    #: and a ``progress`` callback, which follows the members' training steps
    accepts_progress = True

    @classmethod
    def default(cls, season_length: int = 1, max_steps: int | None = None, members: int | None = None,
                dtype: str = "auto", seed: int = 1, **kw) -> "NBeatsForecaster":
        """The preset ``Forecaster(["N-BEATS"])`` and ``seqlab forecast evaluate --models N-BEATS`` use.

        Four interpretable members (:data:`FAST_MEMBER`: input 2h, short histories masked), one seed each,
        2,000 steps, combined by the median. ``dtype="auto"`` trains in bfloat16 where the device multiplies it
        natively (:func:`seqlab.devices.native_bfloat16`), else float32; ``"float32"`` or ``"bfloat16"`` choose.
        ``max_steps`` replaces the 2,000 steps, ``members`` the four (each one more seed); ``seed`` picks the
        ensemble: seed ``s`` trains the members of seeds ``(s - 1) * members + 1 ...``, so no two share one;
        ``kw`` goes to the constructor (``workers``, ``engine``, ``device``, ``name``). :meth:`ig_ensemble` is
        §14.63's larger generic-and-interpretable ensemble.
        """
        steps = _whole(max_steps, FAST_MEMBER.max_steps, "max_steps")
        size = _whole(members, DEFAULT_MEMBERS, "members", MAX_MEMBERS)
        first = (_whole(seed, 1, "seed", 2 ** 40) - 1) * size + 1
        config = replace(FAST_MEMBER, max_steps=steps, dtype=_dtype(dtype, kw.get("device", "auto")))
        return cls(config, input_multiples=(2.0,), seeds=tuple(range(first, first + size)),
                   season_length=season_length, **kw)

    @classmethod
    def ig_ensemble(cls, season_length: int = 1, max_steps: int | None = None, members: int | None = None,
                    **kw) -> "NBeatsForecaster":
        """The paper's I+G ensemble as §14.63's round 3 trains it (float32).

        Generic and interpretable members (:data:`PRESET_MEMBERS`: windows drawn uniformly, short histories
        padded) with inputs of 2h, 3h and 4h, one seed: six members, 2,500 steps each, combined by the median.
        ``max_steps`` replaces the 2,500 steps; ``members`` keeps the first that many members in the ensemble's
        order (generic 2h, 3h, 4h, then interpretable; past 6, more seeds, whose generic members all come before
        the interpretable ones); ``kw`` goes to the constructor.
        """
        steps = _whole(max_steps, 2500, "max_steps")
        _whole(members, None, "members", MAX_MEMBERS)
        configs = tuple(replace(c, max_steps=steps) for c in PRESET_MEMBERS)
        inputs = (2.0, 3.0, 4.0)
        if members is not None:  # members run architecture first, then seed: every seed's generic ones come first
            kw |= dict(seeds=tuple(range(1, -(-members // (len(configs) * len(inputs))) + 1)), size=members)
        return cls(configs, input_multiples=inputs, season_length=season_length, **kw)

    def __init__(self, config: NBeatsConfig | tuple | list | None = None, input_multiples=(2.0,), losses=("mase",),
                 seeds=(1,), season_length: int = 1, name: str = "N-BEATS", size: int | None = None,
                 workers: int | None = None, engine=None, device: str = "auto"):
        configs = (config or NBeatsConfig(),) if config is None or isinstance(config, NBeatsConfig) else tuple(config)
        if not configs or not all(isinstance(c, NBeatsConfig) for c in configs):
            raise InvalidParameterError("config must be an NBeatsConfig or a non-empty sequence of them")
        if len(configs) > 10:
            raise InvalidParameterError(f"at most 10 architectures (their seeds are 100 apart), got {len(configs)}")
        self.configs = configs
        self.config = configs[0]
        self.input_multiples, self.losses, self.seeds = tuple(input_multiples), tuple(losses), tuple(seeds)
        if not (self.input_multiples and self.losses and self.seeds):
            raise InvalidParameterError("give at least one input multiple, loss and seed")
        for loss in self.losses:
            if loss not in LOSSES:
                raise InvalidParameterError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}")
        if size is not None and size < 1:
            raise InvalidParameterError(f"size must be >= 1, got {size}")
        self.arch, self.name, self.season_length, self.workers = "nbeats", name, season_length, workers
        self.size = size
        self.engine = make_engine(engine)
        resolve_device(device)  # an unknown or unavailable device is refused here, before any training
        self.device = device
        self.model, self.members, self.history = None, [], []
        self._fitted_on = None

    def member_configs(self) -> list[NBeatsConfig]:
        """Every member's config, in the fixed order: architecture, seed, loss, input multiple."""
        if len(self.losses) * len(self.input_multiples) > 100:
            raise InvalidParameterError("at most 100 (loss, input multiple) pairs per seed")
        out = []
        for a, config in enumerate(self.configs):
            for s in self.seeds:
                for k, (loss, m) in enumerate(itertools.product(self.losses, self.input_multiples)):
                    seed = (1000 * int(s) + 100 * a + k) % _SEED_MODULUS
                    out.append(replace(config, input_multiple=float(m), loss=loss, seed=seed))
        return out[: self.size]

    def describe(self) -> dict:
        extra = {"architectures": [asdict(c) for c in self.configs[1:]]} if len(self.configs) > 1 else {}
        return asdict(self.config) | {"input_multiples": list(self.input_multiples), "losses": list(self.losses),
                                      "seeds": list(self.seeds), "size": self.size} | extra

    @staticmethod
    def _series(df):
        """The series in the order of their ``unique_id``, each in time order: the model does not depend on the
        frame's row order."""
        ids, series = [], []
        for uid, g in df.sort_values("ds", kind="stable").groupby("unique_id", sort=True):
            ids.append(uid)
            series.append(g["y"].to_numpy(float))
        return ids, series

    def fit(self, df, h: int, engine=None, progress=None):
        """Train every member on all series up to their ends; ``engine`` (else the one given at construction).

        ``progress(member=i, members=N, step=s, steps=S)``, when given, follows the members' training (in this
        process or in local workers; on a cluster only each member's end). It changes no number.
        """
        _, series = self._series(df)
        configs = self.member_configs()
        device = resolve_device(self.device)
        key = _fit_key(series, h, self.season_length, configs, device.type)
        if self.members and key == self._fitted_on:  # the same training part again (shared by the hybrid)
            return self
        engine = self.engine if engine is None else make_engine(engine)
        if engine is not None:
            fitted = engine.run_calls([(_fit_member, (series, h, self.season_length, c, None, device.type))
                                       for c in configs])
            for k, c in enumerate(configs):
                if progress is not None:
                    progress(member=k + 1, members=len(configs), step=c.max_steps, steps=c.max_steps)
        else:
            fitted = self._fit_here(series, h, configs, progress, device.type)
        self.members = []
        for c, state in fitted:
            net = build_model(c, h, self.season_length)
            net.load_state_dict(state)
            self.members.append((c, net.to(device).eval()))
        self.model, self.h, self._fitted_on = self.members[0][1], h, key
        return self

    def _fit_here(self, series, h, configs, progress, device: str):
        """The members in this process or in local worker processes, with their progress when asked for."""
        import threading

        from ...parallel import default_workers, run_calls

        args = (series, h, self.season_length)
        workers = default_workers() if self.workers is None else self.workers
        if progress is None:
            return run_calls([(_fit_member, (*args, c, None, device)) for c in configs], workers=workers)
        steps, n = [c.max_steps for c in configs], len(configs)
        if workers <= 1 or n <= 1:  # in this process: a plain callback
            return run_calls([(_fit_member, (*args, c, _member_report(progress, k, n, steps[k]), device))
                              for k, c in enumerate(configs)], workers=1)
        from multiprocessing import get_context

        manager = get_context("spawn").Manager()  # its queue's proxies travel to the spawned workers
        stop = threading.Event()
        try:
            queue = manager.Queue()
            drain = threading.Thread(target=_drain, args=(queue, progress, n, steps, stop), daemon=True)
            drain.start()
            return run_calls([(_fit_member, (*args, c, _QueueReport(queue, k), device))
                              for k, c in enumerate(configs)], workers=workers)
        finally:
            stop.set()
            manager.shutdown()

    def member_jobs(self, df, h: int, steps=(), members=None) -> list[tuple]:
        """The independent training jobs behind :meth:`forecast_members`, as ``(fn, args)`` pairs.

        Each job trains one member on every series of ``df`` up to its end for ``max(steps)`` steps (its own
        ``max_steps`` when ``steps`` is empty) and returns ``(forecasts, seconds)``: its (N, h) forecasts from the
        series' ends after each of ``steps``, and the seconds it took. ``members``: the indices of the members to
        train (all by default). Jobs of several forecasters and data sets can go to one
        :func:`seqlab.parallel.run_calls` (or an engine's ``run_calls``), which keeps every worker busy.
        """
        _, series = self._series(df)
        steps = tuple(sorted({int(s) for s in steps}))
        if any(s < 1 for s in steps):
            raise InvalidParameterError(f"steps must be whole numbers >= 1, got {steps!r}")
        configs = self.member_configs()
        chosen = range(len(configs)) if members is None else list(members)
        if any(not 0 <= k < len(configs) for k in chosen):
            raise InvalidParameterError(f"members must be indices below {len(configs)}, got {members!r}")
        device = resolve_device(self.device).type
        return [(timed_member_forecasts, (series, h, self.season_length,
                                          replace(configs[k], max_steps=steps[-1]) if steps else configs[k],
                                          steps, device)) for k in chosen]

    def forecast_members(self, df, h: int, steps=(), members=None) -> MemberForecasts:
        """Train the members on ``df`` and keep each one's forecasts after each of ``steps`` training steps.

        The evidence that a step count and an ensemble size are chosen from on validation windows: one run
        gives every member at every step count (the learning rate is constant, so the member after ``s`` steps
        of a longer run is the member a run of ``s`` steps ends with), and ``result.median(s, k)`` is the
        ensemble of the first ``k`` members after ``s`` steps. The members run as :meth:`fit`'s do (in
        ``workers`` processes or on the engine), with the same numbers; the trained networks are not kept.
        """
        jobs = self.member_jobs(df, h, steps, members)
        if self.engine is not None:
            done = self.engine.run_calls(jobs)
        else:
            from ...parallel import run_calls

            done = run_calls(jobs, workers=self.workers)
        ids, _ = self._series(df)
        return MemberForecasts(ids, [f for f, _ in done], [sec for _, sec in done])

    def predict(self, df, h: int):
        if not self.members or h != self.h:
            raise RuntimeError("fit the forecaster with this horizon first")
        from ...threads import single_threaded

        ids, series = self._series(df)
        preds = []
        with single_threaded():  # the same arithmetic as a worker's, so fit-then-predict matches the experiment's jobs
            for c, net in self.members:
                L = c.input_size(h)
                X, Mk = Panel(series, L, self.season_length, c.short).last(L)
                preds.append(_forecast(net, X, Mk))
        return dict(zip(ids, ensemble_median(preds)))
