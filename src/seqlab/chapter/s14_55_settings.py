"""§14.55's settings and the three layers it times: the grids and repeats of the timing reference, the quick
measurement here, the memory measurement, and the thresholds the claims judge by.

Every part of the section reads them from here (the crossover, attention's parts, threads,
memory, the measurement here); ``s14_55`` re-exports every one of them for the page.
"""
from __future__ import annotations

import torch.nn as nn

from ..analysis.complexity import attention_flops, recurrent_flops
from ..nn.multihead import MultiHeadAttention

SEED = 97
#: sequence lengths and widths of the forward-pass grid
T_GRID = (16, 32, 64, 128, 256, 512, 1024, 2048)
D_GRID = (32, 64, 128, 256)
#: the training grid (forward + backward) stops one length earlier
TRAIN_T_GRID = (16, 32, 64, 128, 256, 512, 1024)
BATCH = 4
HEADS = 4
#: timed calls per point of the reference (after one untimed warm-up call); the reference keeps their median
REPEATS = 7
#: the forward and training grids are measured this many times over, each round with freshly drawn layers; the
#: tables keep each point's median over rounds and its range (lowest, highest), and a crossover is placed only
#: where every round puts it on the same side
ROUNDS = 9
#: where the attention layer is taken apart and the recurrent kernels compared
PARTS_T = 256
#: (d, T) points timed with one and with two torch threads (one and two threads alternate, medians kept)
THREAD_POINTS = ((64, 256), (128, 512), (256, 1024))
THREAD_REPEATS = 7
#: the quick measurement on the reader's machine: one width, a few lengths around 2d, medians of a few calls
HERE_D = 64
HERE_T = (32, 64, 128, 256, 512)
HERE_REPEATS = 5
#: lengths and widths of the peak-memory measurement (each point runs the profiler once per layer)
MEM_T = (512, 2048)
MEM_D = (64,)
#: the reference timing set (``seqlab/artifacts/timing_cost``)
REFERENCE = "cost"
#: a measured crossover within this fraction of 2d, or a time ratio within it of one, counts as level
LEVEL = 0.05

#: the layers' names in the tables (the thread table's ``layer`` column)
LAYER_NAMES = {"attention": "self-attention", "rnn": "RNN", "lstm": "LSTM"}
GAUGE = "linear map (gauge)"

#: single-threaded timings use the process's CPU time (equal to wall-clock time on a quiet machine, and blind to
#: other programs holding the core); the thread measurement needs the wall clock
CLOCK = "cpu"

#: a thread timing is kept only if other programs used at most this share of the machine's CPUs meanwhile
QUIET_SHARE = 0.05
#: tries per thread timing before the quietest one is kept
QUIET_TRIES = 6
#: each one- or two-thread timing lasts at least this long (more calls for small products), so the check sees it
THREAD_MIN_S = 0.4


def layers(d: int) -> dict[str, nn.Module]:
    """One layer of each kind at width ``d``: multi-head self-attention (fused kernel), a tanh RNN, an LSTM."""
    return {"attention": MultiHeadAttention(d, HEADS, fused=True), "rnn": nn.RNN(d, d, batch_first=True),
            "lstm": nn.LSTM(d, d, batch_first=True)}


def layer_flops(T: int, d: int) -> dict[str, int]:
    """FLOPs of one forward pass of each layer of :func:`layers` at length ``T``, width ``d``."""
    return {"attention": attention_flops(T, d), "rnn": recurrent_flops(T, d, "rnn"),
            "lstm": recurrent_flops(T, d, "lstm")}
