"""A fitted forecaster on disk: one folder, written as one complete set, read back as carefully as a checkpoint.

The folder holds ``forecaster.json`` (the settings, the model specs of :mod:`~seqlab.forecast.specs`, the
intervals' kinds and quantiles, the series' ids and calendar), ``series.safetensors`` (the training history:
values, lengths, dates as integers, regressors, all exact) and, with neural models, ``neural.safetensors``
(their trained weights). No pickle. It is written through :class:`~seqlab.files.OutputSet`, so its
``seqlab-manifest.json`` records each file's size and sha256; :func:`load` refuses, with one
:class:`~seqlab.forecast.specs.ForecasterFileError` line naming the file, a folder marked incomplete, a file
missing or not regular, one changed since it was written, a damaged tensor file, and a non-finite weight or
value.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import SeqlabError
from ..files import INCOMPLETE, MANIFEST, NotRegularFileError, OutputSet, read_regular_file
from .fitted import FitState
from .specs import ForecasterFileError, UnsavableModelError, build_models, model_spec, neural_models, restore_neural

__all__ = ["save", "load", "FORMAT", "FILES"]

FORMAT = "seqlab-forecaster-1"
FILES = ("forecaster.json", "series.safetensors", "neural.safetensors")


def _ids(ids) -> list:
    out = []
    for v in ids:
        if isinstance(v, (np.integer, int)) and not isinstance(v, bool):
            out.append(int(v))
        elif isinstance(v, str):
            out.append(v)
        elif isinstance(v, (float, np.floating)) and math.isfinite(v):
            out.append(float(v))
        else:
            raise UnsavableModelError(f"series id {v!r} is neither text nor a finite number, so it cannot be stored")
    return out


def _series_tensors(history: pd.DataFrame, exog, future=None) -> tuple[dict, dict]:
    from .panel import Panel

    panel = Panel.from_frame(history)
    ds = panel.frame["ds"]
    info = {"ids": _ids(panel.ids), "exog": list(exog)}
    if pd.api.types.is_datetime64_any_dtype(ds):
        tz = getattr(ds.dt, "tz", None)
        info |= {"ds": "datetime", "unit": np.datetime_data(ds.dt.tz_localize(None).dtype if tz else ds.dtype)[0],
                 "tz": str(tz) if tz is not None else None}
        ticks = (ds.dt.tz_convert(None) if tz is not None else ds).dt.as_unit("ns").astype("int64").to_numpy()
    else:
        info["ds"] = "integer"
        ticks = ds.to_numpy(np.int64)
    order = history.iloc[np.argsort(pd.factorize(history["unique_id"], sort=False)[0], kind="stable")]
    tensors = {"y": panel.y.astype(np.float64), "lengths": panel.lengths.astype(np.int64), "ds": ticks}
    for c in exog:
        tensors[f"x.{c}"] = order[c].to_numpy(np.float64)
    if future is not None:
        tensors["future"] = np.ascontiguousarray(future, np.float64)
    return info, tensors


def _history(info: dict, t: dict) -> pd.DataFrame:
    lengths, ids = t["lengths"], info["ids"]
    if len(lengths) != len(ids) or int(lengths.sum()) != len(t["y"]) or len(t["ds"]) != len(t["y"]):
        raise ForecasterFileError("series.safetensors does not match the series forecaster.json lists")
    if info["ds"] == "datetime":
        ds = pd.to_datetime(t["ds"], unit="ns")
        if info.get("tz"):
            ds = ds.tz_localize("UTC").tz_convert(info["tz"])
        ds = pd.Series(ds).dt.as_unit(info["unit"])
    else:
        ds = pd.Series(t["ds"])
    frame = pd.DataFrame({"unique_id": np.repeat(np.array(ids, dtype=object), lengths), "ds": ds, "y": t["y"]})
    for c in info.get("exog", []):
        frame[c] = t[f"x.{c}"]
    return frame


def _q(values) -> list:
    return [("inf" if v > 0 else "-inf") if math.isinf(v) else float(v) for v in values]


def _unq(values) -> np.ndarray:
    return np.array([float(v) for v in values], float)


def save(fc, state: FitState, path, command: str = "seqlab.forecast.Forecaster.save") -> list[Path]:
    """Write ``fc`` fitted as ``state`` into the folder ``path``; returns the files written."""
    from safetensors.numpy import save as save_numpy
    from safetensors.torch import save as save_torch

    shared: dict = {}
    specs = [model_spec(m, shared) for m in fc.models]
    info, series = _series_tensors(state.history, state.exog, state.future)
    doc = {"format": FORMAT, "freq": fc.freq, "season_length": fc.season_length, "n_jobs": fc.n_jobs,
           "device": fc.device, "h": state.h, "levels": state.levels, "intervals": state.intervals,
           "kinds": state.kinds, "calibration": state.calibration, "models": specs, "series": info,
           "neural": [spec for spec, _ in state.neural],
           "quantiles": [{"model": n, "level": lv, "q": _q(q)} for (n, lv), q in state.quantiles.items()]}
    weights = {f"model{k}.{name}": t for k, (_, tensors) in enumerate(state.neural) for name, t in tensors.items()}
    Path(path).mkdir(parents=True, exist_ok=True)
    with OutputSet(path, command) as out:
        out.path("forecaster.json").write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        out.path("series.safetensors").write_bytes(save_numpy(series))
        if weights:
            out.path("neural.safetensors").write_bytes(save_torch(weights))
        return out.commit()


def _read(path: Path) -> bytes:
    """The bytes of a regular file (:func:`seqlab.files.read_regular_file`: a FIFO cannot hang the load)."""
    try:
        return read_regular_file(path)
    except FileNotFoundError:
        raise ForecasterFileError(f"{path}: missing; the stored forecaster is incomplete (fit it again)") from None
    except NotRegularFileError:
        raise ForecasterFileError(f"{path}: not a regular file; a stored forecaster holds regular files only") \
            from None
    except OSError as e:
        raise ForecasterFileError(f"{path}: cannot be read ({e.strerror or e})") from None


def _checked(d: Path) -> dict:
    """Every file of the folder, checked against the manifest: ``{name: bytes}``."""
    if not d.is_dir():
        raise ForecasterFileError(f"{d}: not a folder (a stored forecaster is the folder forecast fit writes)")
    if os.path.lexists(d / INCOMPLETE):
        raise ForecasterFileError(f"{d}: the fit that wrote this folder stopped before it finished ({INCOMPLETE}); "
                                  "fit again")
    try:
        records = json.loads(_read(d / MANIFEST).decode("utf-8"))["files"]
        if not isinstance(records, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise ForecasterFileError(f"{d / MANIFEST}: not a manifest seqlab wrote (damaged?); fit again") from None
    files = {}
    for name in FILES:
        if name not in records:
            if name == "neural.safetensors":
                continue
            raise ForecasterFileError(f"{d}: {MANIFEST} lists no {name}; not a stored forecaster")
        data = _read(d / name)
        r = records[name]
        if r.get("bytes") != len(data) or r.get("sha256") != hashlib.sha256(data).hexdigest():
            raise ForecasterFileError(f"{d / name}: does not match the size and sha256 that {MANIFEST} recorded "
                                      "when it was written (changed or damaged since); fit again")
        files[name] = data
    return files


def _tensors(d: Path, name: str, data: bytes, framework: str) -> dict:
    from safetensors import SafetensorError

    try:
        if framework == "numpy":
            from safetensors.numpy import load as load_tensors
        else:
            from safetensors.torch import load as load_tensors
        tensors = load_tensors(data)
    except (SafetensorError, ValueError, RuntimeError, OSError) as e:
        raise ForecasterFileError(f"{d / name}: not a readable safetensors file ({' '.join(str(e).split())[:80]})") \
            from None
    for key, t in tensors.items():
        finite = np.isfinite(t).all() if framework == "numpy" else (not t.is_floating_point()
                                                                    or bool(t.isfinite().all()))
        if not finite:
            raise ForecasterFileError(f"{d / name}: tensor {key} holds NaN or infinite values")
    return tensors


def load(cls, path, device: str | None = None):
    """The forecaster :func:`save` wrote into ``path``, fitted: no model is trained."""
    d = Path(path)
    files = _checked(d)
    try:
        doc = json.loads(files["forecaster.json"].decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ForecasterFileError(f"{d / 'forecaster.json'}: not a stored forecaster of format {FORMAT}")
        series = _tensors(d, "series.safetensors", files["series.safetensors"], "numpy")
        history = _history(doc["series"], series)
        weights = _tensors(d, "neural.safetensors", files["neural.safetensors"], "torch") \
            if "neural.safetensors" in files else {}
        device = device or doc["device"]
        neural = []
        for k, spec in enumerate(doc["neural"]):
            prefix = f"model{k}."
            neural.append((spec, {n[len(prefix):]: t for n, t in weights.items() if n.startswith(prefix)}))
        restored = [restore_neural(spec, t, device) for spec, t in neural]
        models = build_models(doc["models"], restored)
        fc = cls(models, freq=doc["freq"], season_length=doc["season_length"], n_jobs=doc["n_jobs"], device=device)
        levels = [int(v) if float(v).is_integer() else float(v) for v in doc["levels"]]
        quantiles = {(q["model"], int(q["level"]) if float(q["level"]).is_integer() else float(q["level"])):
                     _unq(q["q"]) for q in doc["quantiles"]}
        if len(neural_models(fc.models)) != len(neural):
            raise ForecasterFileError(f"{d / 'forecaster.json'}: its models and its neural weights disagree")
        fc.fitted_ = FitState(int(doc["h"]), levels, doc["intervals"], doc["kinds"], history, quantiles,
                              neural, doc["calibration"], list(doc["series"].get("exog", [])), series.get("future"))
    except (KeyError, TypeError, ValueError, UnicodeDecodeError) as e:
        if isinstance(e, SeqlabError):
            raise
        raise ForecasterFileError(f"{d / 'forecaster.json'}: not a stored forecaster seqlab can read "
                                  f"({type(e).__name__}: {' '.join(str(e).split())[:80]})") from None
    return fc
