"""Models as data: each model a Forecaster holds, written as a JSON spec (and its trained weights as tensors) and
built again from it, with no pickle anywhere.

A classical model is stored as what makes it: statsforecast's class and the constructor arguments its object
holds (checked at save time: the model built from them must hold exactly the same settings), or Naive2 and M4
Comb with their season. A neural model is stored as its architecture, settings and trained weights: the N-BEATS
ensemble's members (:class:`~seqlab.forecast.nbeats.NBeatsForecaster`), or a recurrent or attention network
(:class:`~seqlab.forecast.neural.NeuralForecaster`). A combination is stored as its members; a model that two
entries share (N-BEATS alone and inside the hybrid) is stored once and shared again at load.
"""
from __future__ import annotations

import inspect
import json
from dataclasses import asdict

from ..errors import SeqlabError
from .classical import M4Comb, Naive2, StatsForecastModel
from .combination import Combination
from .nbeats import NBeatsConfig, NBeatsForecaster
from .nbeats.training import build_model
from .neural import NeuralConfig, NeuralForecaster

__all__ = ["ForecasterFileError", "UnsavableModelError", "model_spec", "build_models", "neural_state",
           "restore_neural", "Frozen", "frozen", "neural_models"]


class ForecasterFileError(SeqlabError, ValueError):
    """A stored forecaster that is incomplete, changed since it was written, or not one seqlab wrote.

    Example:
        >>> import tempfile
        >>> from seqlab.forecast import Forecaster
        >>> try:
        ...     Forecaster.load(tempfile.mkdtemp())  # an empty folder
        ... except ForecasterFileError as e:
        ...     print(type(e).__name__)
        ForecasterFileError
    """


class UnsavableModelError(SeqlabError, ValueError):
    """A model whose settings cannot be written as data (a model object of one's own, or an unusual argument).

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> import pandas as pd
        >>> from seqlab.forecast import Forecaster
        >>> class Mean:
        ...     name = "Mean"
        ...     def fit(self, df, h):
        ...         return self
        ...     def predict(self, df, h):
        ...         return {u: np.full(h, g["y"].mean()) for u, g in df.groupby("unique_id")}
        >>> df = pd.DataFrame({"unique_id": "a", "ds": range(1, 7), "y": [1.0, 2, 3, 4, 5, 6]})
        >>> f = Forecaster([Mean()]).fit(h=2, df=df)
        >>> try:
        ...     f.save(tempfile.mkdtemp())
        ... except UnsavableModelError as e:
        ...     print(type(e).__name__)
        UnsavableModelError
    """


def _plain(value) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def _statsforecast_spec(m: StatsForecastModel) -> dict:
    import statsforecast.models as sm

    obj, cls = m.spec, type(m.spec)
    if getattr(sm, cls.__name__, None) is not cls:
        raise UnsavableModelError(f"model {m.name!r} ({cls.__module__}.{cls.__name__}) is not one of "
                                  "statsforecast.models, so it cannot be stored as a class name")
    names = [p.name for p in inspect.signature(cls.__init__).parameters.values()
             if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    params = {p: vars(obj)[p] for p in names if p in vars(obj)}
    bad = [p for p, v in params.items() if not _plain(v)]
    if bad:
        raise UnsavableModelError(f"model {m.name!r}: its argument {bad[0]}={params[bad[0]]!r} cannot be written as "
                                  "JSON, so the model cannot be stored")
    again = cls(**params)
    if {k: v for k, v in vars(again).items() if _plain(v)} != {k: v for k, v in vars(obj).items() if _plain(v)}:
        raise UnsavableModelError(f"model {m.name!r}: its settings cannot be rebuilt from its constructor's "
                                  "arguments, so the model cannot be stored exactly")
    return {"kind": "statsforecast", "class": cls.__name__, "params": params}


def model_spec(m, shared: dict) -> dict:
    """A model as JSON; ``shared`` maps each neural model already met (by identity) to its index."""
    if isinstance(m, StatsForecastModel):
        return _statsforecast_spec(m)
    if isinstance(m, (Naive2, M4Comb)):
        return {"kind": type(m).__name__, "name": m.name, "season_length": int(m.season_length)}
    if isinstance(m, Combination):
        return {"kind": "Combination", "name": m.name, "members": [model_spec(p, shared) for p in m.members]}
    if isinstance(m, Frozen):
        m = m.model
    if isinstance(m, NeuralForecaster):  # N-BEATS too
        return {"kind": "neural", "index": shared.setdefault(id(m), len(shared))}
    raise UnsavableModelError(f"model {getattr(m, 'name', m)!r} is a model of one's own ({type(m).__name__}): "
                              "seqlab stores statsforecast's models, Naive2, M4 Comb, combinations and its neural "
                              "forecasters only")


def neural_models(models) -> list:
    """Every distinct neural model among ``models``, combinations' members included, in order of first appearance."""
    seen: dict = {}

    def walk(m):
        if isinstance(m, Combination):
            for p in m.members:
                walk(p)
        elif isinstance(m, NeuralForecaster):
            seen.setdefault(id(m), m)

    for m in models:
        walk(m)
    return list(seen.values())


def build_models(specs: list, neural: list) -> list:
    """The models of :func:`model_spec`'s specs; ``neural[k]`` is the (restored) neural model of index k."""
    import statsforecast.models as sm

    def build(s):
        kind = s.get("kind")
        if kind == "statsforecast":
            cls = getattr(sm, str(s.get("class")), None)
            if not isinstance(cls, type):
                raise ForecasterFileError(f"unknown statsforecast model class {s.get('class')!r}")
            return StatsForecastModel(cls(**s["params"]))
        if kind in ("Naive2", "M4Comb"):
            return (Naive2 if kind == "Naive2" else M4Comb)(int(s["season_length"]), name=s["name"])
        if kind == "Combination":
            return Combination([build(p) for p in s["members"]], name=s["name"])
        if kind == "neural":
            return neural[int(s["index"])]
        raise ForecasterFileError(f"unknown model kind {kind!r}")

    try:
        return [build(s) for s in specs]
    except (KeyError, TypeError, ValueError, IndexError) as e:
        if isinstance(e, SeqlabError):
            raise
        raise ForecasterFileError(f"a model spec cannot be built ({type(e).__name__}: {e})") from None


def neural_state(m) -> tuple[dict, dict]:
    """A trained neural model as ``(spec, tensors)``: its settings as JSON, its weights as CPU copies."""
    def weights(net, prefix=""):
        return {f"{prefix}{k}": v.detach().cpu().clone().contiguous() for k, v in net.state_dict().items()}

    if isinstance(m, NBeatsForecaster):
        if not m.members:
            raise UnsavableModelError(f"{m.name} is not trained")
        spec = {"arch": "nbeats", "name": m.name, "season_length": int(m.season_length), "h": int(m.h),
                "device": m.device, "configs": [asdict(c) for c in m.configs],
                "input_multiples": list(m.input_multiples), "losses": list(m.losses), "seeds": list(m.seeds),
                "size": m.size, "members": [asdict(c) for c, _ in m.members]}
        tensors = {}
        for k, (_, net) in enumerate(m.members):
            tensors |= weights(net, f"member{k}.")
        return spec, tensors
    if m.model is None:
        raise UnsavableModelError(f"{m.name} is not trained")
    spec = {"arch": m.arch, "name": m.name, "season_length": int(m.season_length), "h": int(m.h), "L": int(m.L),
            "device": m.device, "config": asdict(m.config), "exog": list(m.exog)}
    return spec, weights(m.model)


def restore_neural(spec: dict, tensors: dict, device: str):
    """The trained model of :func:`neural_state`, on ``device``: no training, the stored weights."""
    from ..devices import resolve_device

    dev = resolve_device(device)
    h, season = int(spec["h"]), int(spec["season_length"])

    def load(net, prefix=""):
        want = set(net.state_dict())
        got = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
        if set(got) != want:
            missing = sorted(want - set(got)) or sorted(set(got) - want)
            raise ForecasterFileError(f"the weights of {spec['name']} do not match its architecture (tensor "
                                      f"{prefix}{missing[0]})")
        net.load_state_dict(got)
        return net.to(dev).eval()

    if spec["arch"] == "nbeats":
        m = NBeatsForecaster(tuple(NBeatsConfig(**c) for c in spec["configs"]),
                             input_multiples=tuple(spec["input_multiples"]), losses=tuple(spec["losses"]),
                             seeds=tuple(spec["seeds"]), season_length=season, name=spec["name"], size=spec["size"],
                             device=device)
        m.members = []
        for k, c in enumerate(spec["members"]):
            config = NBeatsConfig(**c)
            m.members.append((config, load(build_model(config, h, season), f"member{k}.")))
        m.model, m.h = m.members[0][1], h
        return m
    m = NeuralForecaster(spec["arch"], name=spec["name"], config=NeuralConfig(**spec["config"]),
                         season_length=season, device=device)
    m.exog = list(spec.get("exog", []))
    m.model, m.h, m.L = load(m._build(h, int(spec["L"]))), h, int(spec["L"])
    return m


class Frozen:
    """A trained neural model that only forecasts: ``fit`` keeps the stored weights (no training), ``predict``
    reads each series' last input window, as a global model does for any history."""

    local = False

    def __init__(self, model):
        self.model, self.name = model, model.name
        self.accepts_exog = bool(getattr(model, "exog", None)) and getattr(model, "accepts_exog", False)

    def fit(self, df, h: int, **kw):
        return self

    def predict(self, df, h: int, X=None) -> dict:
        return self.model.predict(df, h) if X is None else self.model.predict(df, h, X=X)


def frozen(models, swap: dict | None = None) -> list:
    """``models`` with every neural model (inside combinations too) :class:`Frozen`, one wrapper per shared model;
    ``swap`` maps a model's ``id`` to the trained model that stands in for it (its weights as a fit kept them)."""
    swap = swap or {}
    wrapped: dict = {}

    def wrap(m):
        if isinstance(m, Combination):
            return Combination([wrap(p) for p in m.members], name=m.name)
        if isinstance(m, NeuralForecaster):
            return wrapped.setdefault(id(m), Frozen(swap.get(id(m), m)))
        return m

    return [wrap(m) for m in models]
