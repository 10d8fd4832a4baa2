"""Warnings raised while a statsforecast model fits, each traced to its model and series.

statsforecast fits series after series inside one call, so a bare numpy warning ("divide by
zero encountered in scalar divide") says neither which model nor which series raised it, and
on a cluster it is printed raw by the worker. Each model is wrapped in a witness that catches
the warnings of its ``forecast`` calls and keeps them with a fingerprint of the series' values.
In this process the witness keeps them itself; a pool process on this machine (statsforecast's
``n_jobs``) files them in a folder named for the fit; a Dask worker sends them to the client as
Dask events. The caller then names the series, and one :class:`ModelWarning` per model and
message reaches the user.

This module imports nothing of seqlab's, so that a cluster can receive it by value: the
workers of a remote scheduler need statsforecast, not seqlab.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import socket
import sys
import tempfile
import uuid
import warnings

import numpy as np

__all__ = ["ModelWarning", "Witness"]

_CHATTER = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


class ModelWarning(UserWarning):
    """A warning one model raised while fitting some series: ``model``, ``message`` (the
    original text), ``category`` (its class name) and ``series`` (the ids, first seen first)."""

    def __init__(self, model: str, message: str, category: str, series: list):
        self.model, self.message, self.category, self.series = model, message, category, list(series)
        super().__init__(f"{model}: {message}, on series {listing(self.series)}")


def listing(ids, shown: int = 3) -> str:
    """``'a', 'b', 'c' and 4 more``: the first few ids in full, then a count."""
    names = [repr(i) if isinstance(i, str) else str(i) for i in ids]
    if len(names) <= shown + 1:
        return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def fingerprint(y) -> str:
    """A digest of a series' values as float64: the key a witness files a warning under."""
    return hashlib.blake2b(np.ascontiguousarray(y, dtype=np.float64).tobytes(), digest_size=12).hexdigest()


def _folder(topic: str) -> str:
    return os.path.join(tempfile.gettempdir(), topic)


class _Witnessed:
    """A statsforecast model whose ``forecast`` keeps its warnings (with the series' fingerprint) instead of
    printing them. Everything else is the model's own."""

    def __init__(self, model, topic: str, home: tuple):
        self.__dict__.update(model=model, topic=topic, home=home, records=[])

    def __getattr__(self, name):
        if name.startswith("__") or name in ("model", "topic", "home", "records"):
            raise AttributeError(name)
        return getattr(self.model, name)

    def __repr__(self):
        return repr(self.model)

    def new(self):  # statsforecast's copy for a fit: its warnings go to the same list
        twin = type(self)(self.model.new(), self.topic, self.home)
        twin.__dict__["records"] = self.records
        return twin

    def _watch(self, y, call):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = call()
        kept = [w for w in caught if not issubclass(w.category, _CHATTER)]
        if kept:
            key = fingerprint(y)
            self._keep([(repr(self.model), w.category.__name__, " ".join(str(w.message).split()), key)
                        for w in kept])
        return out

    def _keep(self, records):
        host, pid = self.home
        if os.getpid() == pid:
            self.records.extend(records)
            return
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):
            worker = None
        if worker is not None:
            worker.log_event(self.topic, [list(r) for r in records])
            return
        if socket.gethostname() == host:
            folder = _folder(self.topic)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a") as f:
                f.writelines(json.dumps(r) + "\n" for r in records)
            return
        for _, _, message, _ in dict.fromkeys(records):  # another machine's worker: no way home but its stderr
            print(f"seqlab: warning: {self.model!r}: {message}, on a series fitted in a worker process",
                  file=sys.stderr)


class _WitnessedPoint(_Witnessed):
    def forecast(self, y, h, X=None, X_future=None, fitted=False):
        return self._watch(y, lambda: self.model.forecast(y=y, h=h, X=X, X_future=X_future, fitted=fitted))


class _WitnessedLevel(_Witnessed):
    # statsforecast asks for intervals only from a model whose forecast takes ``level``
    def forecast(self, y, h, X=None, X_future=None, level=None, fitted=False):
        return self._watch(y, lambda: self.model.forecast(y=y, h=h, X=X, X_future=X_future, level=level,
                                                          fitted=fitted))


class Witness:
    """Wraps statsforecast models (:meth:`wrap`), then turns what they caught into :class:`ModelWarning` s
    naming the series (:meth:`report`)."""

    def __init__(self):
        self.topic = f"seqlab-warnings-{uuid.uuid4().hex}"
        self._wrapped: list[_Witnessed] = []

    def wrap(self, model):
        has_level = "level" in inspect.signature(model.forecast).parameters
        w = (_WitnessedLevel if has_level else _WitnessedPoint)(model, self.topic,
                                                                (socket.gethostname(), os.getpid()))
        self._wrapped.append(w)
        return w

    def __enter__(self):
        return self

    def __exit__(self, *exc):  # a fit that failed may have left its pool processes' files
        shutil.rmtree(_folder(self.topic), ignore_errors=True)

    def report(self, series, client=None) -> None:
        """Warn once per model and message. ``series()`` gives ``(id, values)`` for each series as fitted;
        ``client`` is the Dask client the fits ran on, if any."""
        found = [tuple(r) for w in self._wrapped for r in w.records]
        folder = _folder(self.topic)
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                with open(os.path.join(folder, name)) as f:
                    found += [tuple(json.loads(line)) for line in f if line.strip()]
            shutil.rmtree(folder, ignore_errors=True)
        if client is not None:
            for _, batch in client.get_events(self.topic):
                found += [tuple(r) for r in batch]
        if not found:
            return
        owner = {}
        for uid, y in series():
            owner.setdefault(fingerprint(y), []).append(uid)
        first = {key: k for k, key in enumerate(owner)}  # each distinct series' place in the panel
        # records arrive in whatever order the workers finished: take them in the panel's own order
        found.sort(key=lambda r: (first.get(r[3], len(first)), str(r[0]), str(r[1]), str(r[2])))
        grouped: dict = {}
        for model, category, message, key in found:
            series = grouped.setdefault((model, category, message), {})
            series.update(dict.fromkeys(owner.get(key, ["(unknown)"])))
        for (model, category, message), series in grouped.items():
            warnings.warn(ModelWarning(model, message, category, list(series)), stacklevel=3)
