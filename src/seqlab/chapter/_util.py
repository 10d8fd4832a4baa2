"""Small helpers shared by the section modules."""
from __future__ import annotations

import pandas as pd
import torch


def shape_str(t: torch.Tensor | torch.Size | tuple) -> str:
    """The chapter's shape notation: ``"8 x 25 x 16"``."""
    dims = t.shape if isinstance(t, torch.Tensor) else t
    return " x ".join(str(int(d)) for d in dims)


def wide_by_lag(df: pd.DataFrame, key: str, lags: list[int], value: str = "g") -> pd.DataFrame:
    """Pivot a long (key, lag, value) frame to one column ``lag_<n>`` per lag."""
    sub = df[df["lag"].isin(lags)]
    wide = sub.pivot(index=key, columns="lag", values=value)
    wide = wide[[lag for lag in lags if lag in wide.columns]]
    wide.columns = [f"lag_{c}" for c in wide.columns]
    return wide.reset_index()


def provenance(sets, mode: str | None = None, heavy: str = "recomputed now") -> str:
    """The one note a section's result may carry beside its verdicts: where its numbers come from.

    ``sets`` names the artifact set (or sets) the section read; ``mode`` says how they were obtained (a loader's
    own wording); by default ``heavy`` (``"recomputed now"``, ``"trained now"``) under ``HEAVY_EVAL=1``, else
    loaded. Every set is verified against its manifest either way.
    """
    from ..claims import join_and
    from ..store import heavy_eval

    sets = [sets] if isinstance(sets, str) else list(sets)
    if mode is None:
        mode = f"{heavy} (HEAVY_EVAL=1)" if heavy_eval() else "loaded from verified artifacts"
    names = join_and([f"'{s}'" for s in sets])
    plural = "s" if len(sets) > 1 else ""
    return f"Results {mode} (artifact set{plural} {names}, every file's sha256 checked)."


def machine_table(refs, here: bool = False) -> pd.DataFrame:
    """Where a section's timings were taken: the machine of each stored timing reference (a
    :class:`~seqlab.experiments.timing.TimingReference`, or a dict of them by what they measured), and with
    ``here`` the machine running this section."""
    refs = refs if isinstance(refs, dict) else {"stored reference": refs}
    rows = [dict(measurement=label, cpu=r.machine["cpu"], cores=r.machine["cores"], torch=r.machine["torch"],
                 measured=r.measured_at[:10]) for label, r in refs.items()]
    if here:
        from ..machine import describe

        h = describe()
        rows.append(dict(measurement="this run", cpu=h["cpu"], cores=h["cores"], torch=h["torch"],
                         measured=pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%d")))
    return pd.DataFrame(rows)
