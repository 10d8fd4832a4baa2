"""One measurement, one value: a store of results that several pages and sections show.

``once(fn, *args, **kwargs)`` returns ``fn(*args, **kwargs)``. Where ``SEQLAB_RESULTS`` names a
folder (a chapter build sets it, one folder per execution cache; a test session sets one for all
its processes) the first caller computes it and stores it; every later caller, in any process,
reads the stored value, so the summary quotes the very numbers §14.55 showed instead of
measuring them again. Without it (a reader's notebook, a plain ``seqlab run``) the result is kept
for the life of the process. The folder is not keyed by the code: whoever sets it owns it.

The key is the function's module and qualified name with the ``repr`` of its arguments.
Results are stored as JSON, never pickled: floats are written with ``repr`` (exact), and
pandas frames and series, numpy arrays, tuples and dicts with any keys round-trip.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from .errors import SeqlabError
from .store import atomic_write

__all__ = ["once", "results_dir", "encode", "decode", "ResultStoreError"]

_MEMO: dict[str, Any] = {}


class ResultStoreError(SeqlabError, RuntimeError):
    """A stored result that cannot be read back (a corrupt file) or a value the store cannot hold."""


def results_dir() -> Path | None:
    """The shared result folder (``$SEQLAB_RESULTS``), or ``None`` where results live in the process only."""
    v = os.environ.get("SEQLAB_RESULTS")
    return Path(v) if v else None


def _plain(value) -> bool:
    """Arguments whose ``repr`` is the whole value (a frame's ``repr`` is cut short, so two frames could share a key)."""
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, str))


def _key(fn: Callable, args, kwargs) -> tuple[str, str]:
    name = f"{fn.__module__}.{fn.__qualname__}"
    if not _plain((args, kwargs)):
        raise ResultStoreError(f"once({name}, ...) takes settings (numbers, strings and tuples of them) as "
                               f"arguments, not data: compute the data inside the function")
    spec = repr((args, sorted(kwargs.items())))
    return name, hashlib.sha256(f"{name}{spec}".encode()).hexdigest()[:16]


def encode(value):
    """``value`` as plain JSON: frames, series, arrays, tuples and non-string keys tagged so they come back."""
    import numpy as np
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return {"__frame__": {"columns": [encode(c) for c in value.columns], "index": encode(list(value.index)),
                              "index_name": value.index.name,
                              "dtypes": [str(t) for t in value.dtypes],
                              "data": [encode(list(r)) for r in value.itertuples(index=False, name=None)]}}
    if isinstance(value, pd.Series):
        return {"__series__": {"name": encode(value.name), "index": encode(list(value.index)),
                               "index_name": value.index.name,
                               "dtype": str(value.dtype), "data": encode(list(value))}}
    if isinstance(value, np.ndarray):
        return {"__array__": {"dtype": str(value.dtype), "shape": list(value.shape),
                              "data": encode(value.ravel().tolist())}}
    if isinstance(value, (np.generic,)):
        return encode(value.item())
    if isinstance(value, pd.Timestamp):
        return {"__timestamp__": value.isoformat()}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"__dict__": {k: encode(v) for k, v in value.items()}}
        return {"__pairs__": [[encode(k), encode(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ResultStoreError(f"the result store holds numbers, strings, frames, arrays and containers of them, "
                           f"not {type(value).__name__}")


def decode(value):
    """The inverse of :func:`encode`."""
    import numpy as np
    import pandas as pd

    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "__frame__":
        df = pd.DataFrame([decode(r) for r in body["data"]], columns=[decode(c) for c in body["columns"]],
                          index=decode(body["index"]))
        df.index.name = body["index_name"]
        for col, dtype in zip(df.columns, body["dtypes"]):
            if dtype != "object" and str(df[col].dtype) != dtype:
                df[col] = df[col].astype(dtype)
        return df
    if tag == "__series__":
        series = pd.Series(decode(body["data"]), index=decode(body["index"]), name=decode(body["name"]),
                           dtype=None if body["dtype"] == "object" else body["dtype"])
        series.index.name = body.get("index_name")
        return series
    if tag == "__array__":
        return np.asarray(decode(body["data"]), dtype=body["dtype"]).reshape(body["shape"])
    if tag == "__timestamp__":
        return pd.Timestamp(body)
    if tag == "__tuple__":
        return tuple(decode(v) for v in body)
    if tag == "__dict__":
        return {k: decode(v) for k, v in body.items()}
    if tag == "__pairs__":
        return {_hashable(decode(k)): decode(v) for k, v in body}
    raise ResultStoreError(f"unknown tag {tag!r} in a stored result")


def _hashable(v):
    return tuple(_hashable(x) for x in v) if isinstance(v, list) else v


def once(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)``, computed once per build or test session (or per process outside one) and shared."""
    name, digest = _key(fn, args, kwargs)
    folder = results_dir()
    if folder is None:
        if digest not in _MEMO:
            _MEMO[digest] = fn(*args, **kwargs)
        # a copy, as the store gives: one caller's edit must not change what the next one reads
        return copy.deepcopy(_MEMO[digest])
    from filelock import FileLock

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{digest}.json"
    with FileLock(str(path) + ".lock"):
        if path.is_file():
            try:
                return decode(json.loads(path.read_text(encoding="utf-8"))["value"])
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise ResultStoreError(f"stored result {path} cannot be read ({e}); delete it to recompute") from None
        stored = encode(fn(*args, **kwargs))
        atomic_write(path, json.dumps({"function": name, "arguments": repr((args, sorted(kwargs.items()))),
                                       "value": stored}))
        # the first page gets the decoded copy too, so every page sees the very same object
        return decode(json.loads(json.dumps(stored)))
