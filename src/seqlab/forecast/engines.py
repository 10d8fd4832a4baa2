"""Running on a cluster: the statsforecast models through statsforecast's fugue backend (Dask, Ray or Spark), and
independent seeded jobs (the members of an N-BEATS ensemble) through :meth:`Engine.run_calls`.

``Engine("dask")`` starts a local Dask cluster (one worker process per core) the first
time it is used; ``Engine("dask", address="HOST:PORT")`` connects to a running scheduler
instead. Ray and Spark work the same way (``ray://HOST:PORT``, ``spark://HOST:PORT``) when
their packages are installed. The fitted numbers are those of the single-process run:
statsforecast fits each series on its own, and the backend's output schema is widened
from float32 to float64 here so that nothing is rounded on the way back (a few values of
AutoTheta, whose optimiser sums arrays that sit differently in memory, can differ in the
last bit, about 1e-16 relative).

A local Dask cluster starts worker *processes*: a script that uses it must keep its
top-level code under ``if __name__ == "__main__":``.
"""
from __future__ import annotations

import importlib.util
import logging
import math
import re
import socket
import struct

import numpy as np
import pandas as pd

from ..errors import InvalidParameterError

__all__ = ["ENGINES", "Engine", "make_engine", "statsforecast_on_engine"]

#: engine -> (module it needs, what to install)
ENGINES = {"dask": ("distributed", 'pip install "seqlab[cluster]"'),
           "ray": ("ray", 'pip install "fugue[ray]"'),
           "spark": ("pyspark", 'pip install "fugue[spark]"')}
_DEFAULT_PORT = {"dask": 8786, "ray": 10001, "spark": 7077}
_SCHEME = {"dask": "tcp", "ray": "ray", "spark": "spark"}


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def _check_address(kind: str, address) -> str:
    if not isinstance(address, str) or not address.strip():
        raise InvalidParameterError(f"address must be HOST:PORT, got {address!r}")
    text = address.strip()
    scheme = re.match(r"^([a-z][a-z0-9+.-]*)://", text)
    if scheme and scheme.group(1) not in (_SCHEME[kind], "tls", "local", "yarn", "k8s"):
        raise InvalidParameterError(f"address {text!r} is not one for {kind} (expected HOST:PORT or "
                                    f"{_SCHEME[kind]}://HOST:PORT)")
    rest = text[scheme.end():] if scheme else text
    if kind == "spark" and scheme and scheme.group(1) in ("local", "yarn", "k8s"):
        return text
    hit = re.fullmatch(r"(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?", rest)
    if not hit or (hit.group(2) is not None and not 0 < int(hit.group(2)) < 65536):
        raise InvalidParameterError(f"address must be HOST:PORT (such as 10.0.0.5:{_DEFAULT_PORT[kind]}), "
                                    f"got {address!r}")
    port = hit.group(2) or str(_DEFAULT_PORT[kind])
    return f"{_SCHEME[kind]}://{hit.group(1)}:{port}"


class Engine:
    """A cluster for the statsforecast models; connected (or started) on first use, released by :meth:`close`.

    ``kind``: "dask", "ray" or "spark". ``address``: a running cluster's scheduler
    (HOST:PORT); None starts a local one. ``timeout``: seconds to wait for the scheduler.
    A missing package or an unknown kind raises :class:`InvalidParameterError` at once; an
    address nobody answers at raises it on first use.

    Example:
        >>> try:
        ...     Engine("hadoop")
        ... except InvalidParameterError as e:
        ...     print(type(e).__name__)
        InvalidParameterError
    """

    def __init__(self, kind: str, address: str | None = None, timeout: float = 10.0):
        if not isinstance(kind, str) or kind not in ENGINES:
            raise InvalidParameterError(f"unknown engine {kind!r}; choose from {', '.join(ENGINES)} (or None for "
                                        "one process)")
        module, install = ENGINES[kind]
        needs = {"dask": [module, "dask.dataframe", "fugue_dask"], "ray": [module, "ray.data", "fugue_ray"],
                 "spark": [module, "fugue_spark"]}[kind]
        gone = next((m for m in needs if _missing(m)), None)
        if gone is not None:
            package = {"dask.dataframe": "dask[dataframe]", "ray.data": "ray[data]"}.get(gone, gone)
            raise InvalidParameterError(f"engine {kind!r} needs the package {package!r}, which is not installed "
                                        f"({install})")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
                or timeout <= 0:
            raise InvalidParameterError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        self.kind, self.timeout = kind, float(timeout)
        self.address = None if address is None else _check_address(kind, address)
        self._handle, self._owned = None, []

    def __repr__(self):
        return f"Engine({self.kind!r}, address={self.address!r})"

    @property
    def fugue_engine(self):
        """What fugue runs on: a dask ``Client``, the string "ray" after ``ray.init``, or a ``SparkSession``."""
        if self._handle is None:
            self._handle = getattr(self, f"_start_{self.kind}")()
        return self._handle

    def _start_dask(self):
        from distributed import Client, LocalCluster

        for name in ("distributed", "distributed.shuffle"):
            logging.getLogger(name).setLevel(logging.ERROR)
        if self.address is None:
            cluster = LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None,
                                   silence_logs=logging.ERROR)
            self._owned.append(cluster.close)
            client = Client(cluster)
        else:
            client = self._connect_dask(Client)
        self._owned.insert(0, client.close)

        def quiet():  # defined here so that it travels by value: the workers need not have seqlab
            import warnings

            for category in (FutureWarning, DeprecationWarning):
                warnings.filterwarnings("ignore", category=category)

        try:
            client.run(quiet)  # dask and pandas deprecation chatter from the workers is not the user's business
        except Exception:  # best effort
            pass
        return client

    def _connect_dask(self, Client):
        """A client of the scheduler at ``address``, or one clear error within about ``timeout`` seconds.

        distributed's own timeout covers the connection, not the handshake after it: a server that accepts and
        never answers would hang the call, and one that answers in another protocol (HTTP) has its reply read as a
        frame length (a multi-exabyte allocation). So a plain socket first checks that a scheduler's handshake
        arrives: a scheduler sends it unprompted, a message whose first 8 bytes give its length.
        """
        if self.address.startswith("tcp://"):
            self._probe_dask()
        try:
            return Client(self.address, timeout=f"{self.timeout}s")
        except (OSError, TimeoutError) as e:
            raise InvalidParameterError(f"cannot reach the dask scheduler at {self.address} within "
                                        f"{self.timeout:g} s ({' '.join(str(e).split())[:120]})") from None
        except Exception as e:  # whatever a foreign reply makes distributed raise
            raise InvalidParameterError(self._not_dask(e)) from None

    def _not_dask(self, why) -> str:
        return (f"the server at {self.address} answered, but not as a dask scheduler ({why}); is it a web server or "
                f"the dashboard? a scheduler listens on port {_DEFAULT_PORT['dask']} by default")

    def _probe_dask(self) -> None:
        host, port = self.address[len("tcp://"):].rsplit(":", 1)
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=self.timeout) as sock:
                head = b""
                while len(head) < 8:
                    chunk = sock.recv(8 - len(head))
                    if not chunk:
                        raise InvalidParameterError(self._not_dask("it closed the connection"))
                    head += chunk
        except socket.timeout:
            raise InvalidParameterError(f"the server at {self.address} accepted the connection but sent no dask "
                                        f"handshake within {self.timeout:g} s; is a dask scheduler listening "
                                        "there? (a web server, such as the dashboard, waits for a request "
                                        "instead)") from None
        except OSError as e:
            raise InvalidParameterError(f"cannot reach the dask scheduler at {self.address} within "
                                        f"{self.timeout:g} s ({' '.join(str(e).split())[:120]})") from None
        size = struct.unpack("<Q", head)[0]
        if not 0 < size < 2 ** 26:  # a handshake is a few hundred bytes
            raise InvalidParameterError(self._not_dask(f"its first bytes were {head!r}"))

    def _start_ray(self):
        import ray

        if not ray.is_initialized():
            try:
                ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False,
                         include_dashboard=False)
            except (ConnectionError, OSError, TimeoutError) as e:
                raise InvalidParameterError(f"cannot reach the ray cluster at {self.address} "
                                            f"({' '.join(str(e).split())[:120]})") from None
            self._owned.append(ray.shutdown)
        return "ray"

    def _start_spark(self):
        from pyspark.sql import SparkSession

        master = self.address or "local[*]"
        existing = SparkSession.getActiveSession()
        try:
            spark = SparkSession.builder.master(master).appName("seqlab").getOrCreate()
        except Exception as e:  # py4j raises many kinds
            raise InvalidParameterError(f"cannot start spark at {master} ({' '.join(str(e).split())[:120]})") from None
        spark.sparkContext.setLogLevel("ERROR")
        if existing is None:  # a session the caller had stays theirs to stop
            self._owned.append(spark.stop)
        return spark

    def run_calls(self, calls: list[tuple]) -> list:
        """Results of ``fn(*args)`` for each ``(fn, args)`` in ``calls``, computed on the cluster, in the order given.

        Each call runs with one torch thread, as :func:`seqlab.parallel.run_calls` runs it in
        local worker processes, so a seeded job (an N-BEATS member) gives the same numbers
        on either. The functions travel by reference: the workers need seqlab installed.
        """
        from ..parallel import call_single_threaded

        handle = self.fugue_engine
        if self.kind == "dask":
            futures = [handle.submit(call_single_threaded, fn, args, pure=False) for fn, args in calls]
            return handle.gather(futures)
        if self.kind == "ray":
            import ray

            remote = ray.remote(call_single_threaded)
            return ray.get([remote.remote(fn, args) for fn, args in calls])
        rdd = handle.sparkContext.parallelize(list(enumerate(calls)), max(1, len(calls)))
        done = rdd.map(lambda item: (item[0], call_single_threaded(*item[1]))).collect()
        return [r for _, r in sorted(done, key=lambda pair: pair[0])]

    def close(self) -> None:
        """Disconnect, and shut down a cluster this engine started."""
        for close in self._owned:
            try:
                close()
            except Exception:  # closing is best effort
                pass
        self._owned, self._handle = [], None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def make_engine(engine, address=None, timeout: float = 10.0):
    """``None`` (one process), an :class:`Engine`, or an engine name; ``address`` only goes with a name."""
    if engine is None:
        if address is not None:
            raise InvalidParameterError("address needs an engine (engine='dask', 'ray' or 'spark')")
        return None
    if isinstance(engine, Engine):
        if address is not None:
            raise InvalidParameterError("give the address to Engine(...) or to the Forecaster, not both")
        return engine
    return Engine(engine, address, timeout)


def _float64_backend():
    import pyarrow as pa
    from statsforecast.distributed.fugue import FugueBackend
    from triad import Schema

    class Float64Backend(FugueBackend):
        """statsforecast's fugue backend with float64 output columns (it declares float32)."""

        def _get_output_schema(self, **kwargs):
            schema = super()._get_output_schema(**kwargs)
            return Schema([pa.field(f.name, pa.float64()) if pa.types.is_floating(f.type) else f
                           for f in schema.fields])

    return Float64Backend


def statsforecast_on_engine(models, df: pd.DataFrame, h: int, freq, level, engine: Engine) -> pd.DataFrame:
    """statsforecast's ``forecast`` through the fugue backend on ``engine``, back as a pandas frame.

    ``df`` must have integer ``unique_id`` and ``ds`` (the caller codes them); the result
    has the same columns as a single-process ``StatsForecast.forecast``, in float64.
    """
    import warnings

    import sys

    import fugue.api as fa

    from .fit_warnings import Witness

    try:  # the warning witnesses travel by value, so that a remote cluster's workers need statsforecast, not seqlab
        import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[Witness.__module__])
    except ImportError:  # pragma: no cover - dask and ray bring it
        pass
    backend = _float64_backend()(engine.fugue_engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        res = backend.forecast(models=models, fallback_model=None, freq=freq, df=df, X_df=None, h=h,
                               level=level or None, fitted=False, prediction_intervals=None, id_col="unique_id",
                               time_col="ds", target_col="y")
        out = fa.as_pandas(res)
    out = out.astype({"unique_id": np.int64, "ds": np.int64})
    floats = [c for c in out.columns if c not in ("unique_id", "ds")]
    return out.astype({c: np.float64 for c in floats})
