"""Timing references: measurements a page interprets, taken once on a quiet machine and stored.

A timing depends on the machine and on whatever else it is doing, so a sentence that
interprets a timing measured during the build can be true on one build and false on the
next. The pages interpret a *reference*: an artifact set ``timing_NAME`` holding the tables
that ``measure()`` returned (CSV, 17 significant digits), the settings, and a description of
the machine (CPU model, cores, torch version and threads) it was measured on.

``HEAVY_EVAL=1`` measures again and rewrites the set; run it on a quiet machine (nothing
else running), because the stored numbers are what every later build reads. Otherwise the
set is verified against its manifest and loaded. A page may also take a quick measurement on
the reader's machine and show it beside the reference.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from ..machine import describe
from ..store import heavy_eval, read_artifact_csv, read_artifact_json, verify_artifacts, write_artifacts

__all__ = ["TimingReference", "reference", "PREFIX"]

PREFIX = "timing_"


@dataclass(frozen=True)
class TimingReference:
    """Stored timing tables with the machine they were measured on."""

    tables: dict[str, pd.DataFrame]
    machine: dict
    measured_at: str  # ISO 8601, UTC
    seconds: float    # how long the measurement took

    def __getitem__(self, table: str) -> pd.DataFrame:
        return self.tables[table]

    def machine_line(self) -> str:
        """CPU, cores, torch version and date; how many threads a measurement used is the measurement's to say."""
        m = self.machine
        return f"{m['cpu']}, {m['cores']} cores, torch {m['torch']}, measured {self.measured_at[:10]}"


def reference(name: str, measure: Callable[[], dict[str, pd.DataFrame]], config: dict,
              root=None) -> TimingReference:
    """The reference ``timing_NAME``: measured now under HEAVY_EVAL=1 (and stored), else verified and loaded.

    ``config`` is every setting the measurement depends on; a stored set made with other
    settings is stale and raises :class:`~seqlab.store.ArtifactError`.
    """
    set_name = PREFIX + name
    if heavy_eval():
        t0 = time.perf_counter()
        tables = measure()
        seconds = time.perf_counter() - t0
        meta = {"machine": describe(), "measured_at": pd.Timestamp.now(tz="UTC").isoformat(), "seconds": seconds,
                "tables": sorted(tables)}
        import json

        files = {f"{t}.csv": df.to_csv(index=False, float_format="%.17g").encode() for t, df in tables.items()}
        files["machine.json"] = json.dumps(meta, indent=1, sort_keys=True).encode()
        write_artifacts(set_name, files, config, root)
    verify_artifacts(set_name, config, root)
    meta = read_artifact_json(set_name, "machine.json", root)
    tables = {t: read_artifact_csv(set_name, f"{t}.csv", root) for t in meta["tables"]}
    return TimingReference(tables, meta["machine"], meta["measured_at"], float(meta["seconds"]))
