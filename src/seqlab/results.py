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
from .files import atomic_write

__all__ = ["once", "share", "results_dir", "encode", "decode", "ResultStoreError"]

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


#: how far a measurement handed to :func:`share` may sit from the one already stored: reruns of a training in
#: another process may round the last bits differently; anything larger is a second value for one quantity
SHARE_RTOL = 1e-6


def _close(a, b) -> bool:
    """Two encoded results agree: the same structure and text, numbers within :data:`SHARE_RTOL`."""
    import math

    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=SHARE_RTOL, abs_tol=1e-12)


def share(fn: Callable, value, *args, **kwargs):
    """Hand ``value``, which the caller computed with the very steps of ``fn(*args, **kwargs)``, to every later
    :func:`once` of that call, and return it.

    A page that trains a model in its own visible cells shows that measurement; the summary quotes it through
    ``once(fn, ...)`` instead of training again. Where the store already holds the result (a page that ran
    earlier computed it), the two must agree, numbers within :data:`SHARE_RTOL`; if not, one quantity would have
    two values and :class:`ResultStoreError` says so. The stored value stays the one every page reads.
    """
    name, digest = _key(fn, args, kwargs)
    mine = json.loads(json.dumps(encode(value)))
    folder = results_dir()
    if folder is None:
        if digest in _MEMO:
            _check_agrees(name, json.loads(json.dumps(encode(_MEMO[digest]))), mine)
        else:
            _MEMO[digest] = copy.deepcopy(value)
        return value
    from filelock import FileLock

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{digest}.json"
    with FileLock(str(path) + ".lock"):
        if path.is_file():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))["value"]
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise ResultStoreError(f"stored result {path} cannot be read ({e}); delete it to recompute") from None
            _check_agrees(name, stored, mine)
        else:
            atomic_write(path, json.dumps({"function": name, "arguments": repr((args, sorted(kwargs.items()))),
                                           "value": mine}))
    return value


def _check_agrees(name: str, stored, mine) -> None:
    if not _close(stored, mine):
        raise ResultStoreError(f"{name}: the value handed to share() differs from the stored one by more than "
                               f"rel. {SHARE_RTOL:g}: one quantity would have two values")
