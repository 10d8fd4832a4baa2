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
