"""What a forecasting command says while it fits: the work ahead of a neural model, and where the fits are."""
from __future__ import annotations

import sys
import time

__all__ = ["Progress", "work_notes", "interval_note"]

#: what N-BEATS's default (``short="pad"``) puts before a history shorter than its input window
PADDED = "padded with each series' first value"


def work_notes(models, history: list[int], h: int, windows: int, levels, season: int) -> list[str]:
    """What the neural models will train, said before they start: steps per window, and the input windows that
    reach past the shortest history at the first origin (padded or masked, as the model does)."""
    from ..forecast.core import NEURAL_ARCHITECTURES
    from ..forecast.nbeats import NBeatsForecaster
    from ..forecast.neural import NeuralForecaster

    # history: observations before the first origin, per series, in Python's integers (a count may be huge)
    again = " and again at each calibration origin's window" if levels else ""
    notes = []
    for m in models:
        if isinstance(m, NBeatsForecaster):
            configs = m.member_configs()
            steps, widest = sum(c.max_steps for c in configs), max(c.input_size(h) for c in configs)
            what = f"{len(configs)} member(s), {steps:,} steps in all,"
            padded = sum(c.short == "pad" for c in configs)
            how = (PADDED if padded == len(configs) else "masked (left out of the network's input)" if not padded
                   else f"{PADDED} in {padded} member(s) and masked (left out of the input) in the others")
        elif m in NEURAL_ARCHITECTURES:
            net = NeuralForecaster(NEURAL_ARCHITECTURES[m], season_length=season, device="cpu")
            steps, widest = net.config.max_steps, net._input_size(h)
            how = "zeros the network reads as missing (a second input channel marks each observed point)"
            what = f"for up to {steps:,} steps (fewer if its validation loss stops improving)"
        else:
            continue
        notes.append(f"{m if isinstance(m, str) else m.name} trains {what} at each of {windows} window(s){again}: "
                     f"{steps * windows:,} steps before the first forecast")
        short = sum(n < widest for n in history)
        if short:
            notes.append(f"{m if isinstance(m, str) else m.name}'s input windows reach {widest} points; at the "
                         f"first origin {short} of {len(history)} series have fewer (the shortest {min(history)}): "
                         f"the missing points are {how}")
    return notes


class Progress:
    """What a forecasting command is fitting, on stderr: a line per fit, and a bar with an ETA over an N-BEATS
    ensemble's training steps. Silent unless shown; it always remembers where the run is, for an interrupt.

    ``ahead`` (the work notes) is said once, at the first fit: after every check of the request has passed,
    so a refused request stays one error line, and before any long fit starts.
    """

    def __init__(self, show: bool, ahead: list[str] = ()):
        self.show, self.bar, self.where, self.t0 = show, None, "before the first fit", time.monotonic()
        self.done, self.ahead = {}, list(ahead)

    def _place(self, info) -> str:
        window = f"window {info['window']}/{info['windows']}" if info.get("window") else \
            f"all {info['windows']} window(s) at once"
        return f"{info['phase']} origins, {window}"

    def __call__(self, event, **info):
        for note in self.ahead:
            print(f"seqlab: note: {note}", file=sys.stderr, flush=True)
        self.ahead = []
        if event == "fit":
            self.close()
            self.where = f"{', '.join(info['models'])} at {self._place(info)}"
            if self.show:
                from tqdm import tqdm

                tqdm.write(f"seqlab: fitting {self.where} ({info['origins']} origin(s))", file=sys.stderr)
        elif event == "member":
            key = (info["model"], info["phase"], info["window"])
            if self.bar is None or self.bar.key != key:
                self.close()
                self.bar = self._new_bar(info, key)
            finished = info["step"] == info["steps"] and self.done.get(info["member"]) != info["steps"]
            self.done[info["member"]] = info["step"]
            self.bar.update(sum(self.done.values()) - self.bar.n)
            if finished and self.show:  # a line that stays, also where the bar cannot redraw (a log file)
                self.bar.write(f"seqlab: {info['model']} member {info['member']}/{info['members']} trained "
                               f"({info['steps']} steps) at {self._place(info)}", file=sys.stderr)
            running = [k for k, v in sorted(self.done.items()) if v < info["steps"]] or [info["member"]]
            self.bar.set_postfix_str(f"member {running[0]}/{info['members']} step {self.done[running[0]]}/"
                                     f"{info['steps']}", refresh=False)
            self.where = f"{info['model']} member {info['member']}/{info['members']} at {self._place(info)}"

    def _new_bar(self, info, key):
        from tqdm import tqdm

        self.done = {}
        bar = tqdm(total=info["members"] * info["steps"], unit="step", file=sys.stderr, leave=False,
                   disable=not self.show, desc=f"{info['model']} {self._place(info)}", dynamic_ncols=True)
        bar.key = key
        return bar

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def interval_note(levels, kinds: dict, names) -> str:
    """Which kind of interval each model got, in the order of --models: ``native for AutoETS; conformal for ...``."""
    by_kind: dict = {}
    for n in names:
        by_kind.setdefault(kinds.get(n, "conformal"), []).append(n)
    said = "; ".join(f"{kind} for {', '.join(ms)}" for kind, ms in by_kind.items())
    return f"intervals at {', '.join(f'{lv:g}%' for lv in sorted(levels))}: {said}"
