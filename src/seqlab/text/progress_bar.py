"""The training loop's progress bar: a tqdm bar on stderr when it is a terminal, nothing otherwise."""
from __future__ import annotations

import sys

__all__ = ["ProgressBar"]


class ProgressBar:
    """A tqdm bar on stderr: iterations, elapsed, time left, loss and tokens/s; log lines print above it."""

    def __init__(self, enabled: bool, start: int, total: int | None):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=start, file=sys.stderr, unit="it", dynamic_ncols=True, leave=True,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}] {postfix}")

    def update(self, n: int, loss: float, tps: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"loss {loss:.4f}, {tps:,.0f} tok/s", refresh=False)
            self.bar.update(n)

    def write(self, fn) -> None:
        if self.bar is None:
            fn()
        else:
            with self.bar.external_write_mode():
                fn()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
