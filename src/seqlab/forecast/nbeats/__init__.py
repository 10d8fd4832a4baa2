"""N-BEATS (Oreshkin et al., 2020): a global forecaster built from fully connected blocks.

One small class per equation, as in the Annotated Transformer:

================  ============================================================  ==================
class             equation                                                      label on the page
================  ============================================================  ==================
FullyConnected    h_l = ReLU(W_l h_{l-1} + b_l)                                 eq-nbeats-block
GenericBasis      (xb, yf) = (theta[:L], theta[L:]), theta = W h                eq-nbeats-block
TrendBasis        yf_j = sum_p theta_p tau_j^p                                  (interpretable)
SeasonalityBasis  yf_j = sum_k a_k cos(2 pi k tau_j) + b_k sin(2 pi k tau_j)    (interpretable)
Block             theta = W_theta FC(x); (xb, yf) = basis(theta)                eq-nbeats-block
NBeats            x_{k+1} = (x_k - xb_k) m;  yhat = y_last + sum_k yf_k         eq-nbeats-residual
MASELoss          mean_j |y_j - yhat_j| / q_t, q_t the MASE scale at the cut    (the loss)
================  ============================================================  ==================

The data side is as small: :class:`~seqlab.forecast.panel.Panel` (the one panel structure of
:mod:`seqlab.forecast`) gives the collection as one left-padded array with a mask of observed
points (short series are masked, never padded with made-up values), and :class:`UniformSeriesSampler` draws a series uniformly and
then a cut point uniformly within it. Training windows reach the forecast origin:
the last cut of a series is ``n - h``, so its target is the series' last horizon.
Nothing is held back for early stopping; the step count is a setting chosen on
validation windows that end before the hold-out.

:class:`NBeatsForecaster` is an ensemble: one member per (input length, loss, seed),
each an independent job with a fixed seed (run in worker processes by
:func:`seqlab.parallel.run_calls`), combined by the median. ``device`` (as in
``seqlab lm train``: "auto", "cpu", "cuda", "mps") says where the members train and
forecast; the weights are initialised and the windows drawn on the CPU, so only the
arithmetic moves, and forecasts come back as CPU arrays.
"""
from .model import (
    Block, FullyConnected, GenericBasis, NBeats, SeasonalityBasis, TrendBasis,
)
from .training import (
    FAST_MEMBER, GENERIC_MEMBER, INTERPRETABLE_MEMBER, LOSSES, MASELoss, MemberForecasts, NBeatsConfig, PRESET_MEMBERS,
    SMAPELoss, ScaledMAELoss, UniformSeriesSampler, UniformWindowSampler, ensemble_median, member_forecasts,
    timed_member_forecasts, train_member,
)
from .forecaster import (
    MAX_MEMBERS, NBeatsForecaster,
)
from ..panel import Panel

__all__ = [
    'FullyConnected', 'GenericBasis', 'TrendBasis', 'SeasonalityBasis', 'Block', 'NBeats', 'Panel',
    'UniformSeriesSampler', 'UniformWindowSampler', 'MASELoss', 'SMAPELoss', 'ScaledMAELoss', 'LOSSES',
    'NBeatsConfig', 'FAST_MEMBER', 'GENERIC_MEMBER', 'INTERPRETABLE_MEMBER', 'train_member', 'member_forecasts',
    'timed_member_forecasts', 'MemberForecasts', 'ensemble_median', 'NBeatsForecaster', 'PRESET_MEMBERS',
    'MAX_MEMBERS',
]
