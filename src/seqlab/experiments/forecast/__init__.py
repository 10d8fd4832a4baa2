"""§14.63's comparison: classical baselines against global neural forecasters on competition data.

``HEAVY_EVAL=1`` recomputes it (7,183 s, about two hours, alone on two cores when last run in full) and
rewrites ``seqlab/artifacts/forecast``; otherwise the committed, manifest-verified CSVs load.
:func:`retrain_global_models` retrains the GRU and Transformer alone (their windows, their forecasts) and
rescores, keeping the N-BEATS search's files.

The run has four steps, and the N-BEATS ensemble's settings are chosen in the second:

1. the classical models are cross-validated by statsforecast on every window;
2. the global models are trained on every window's training part, each training an
   independent job in worker processes. N-BEATS members are trained on the
   *validation windows* only (the windows before each set's last), with their forecasts
   recorded at every step count of a grid; the ablation variants run beside them;
3. per data set the step count and the ensemble size with the lowest validation MASE
   are chosen (:func:`choose_on_validation`); nothing of the last window is looked at;
4. the chosen members are retrained up to the last origin (for the competition sets,
   the official hold-out) and everything is scored.
"""
from .settings import (
    NAME, ABLATIONS, ABLATION_SETS, CLASSICAL_ENTRIES, CLASSICAL_MODELS, COMBINATIONS, DATASETS, LEVELS,
    NBEATS_CONFIG, NBEATS_PLAN, NBeatsPlan, NEURAL, NEURAL_CONFIG, ROUND3, ROUND_NAMES, Round3Protocol,
    SCOPES, experiment_config, min_train_length, nbeats_plan, recipe_plan, round3_recipe,
)
from .sets import LENGTH_GROUPS, length_groups, official_holdout, validation_units, window_index
from .training import choose_on_validation
from .scoring import add_combinations, native_interval_models
from .results import (
    TRAINING_FILES, chosen_nbeats, forecast_results, interval_group_results, interval_results, nbeats_results,
    retrain_global_models, run_forecast_experiment, score_forecast_artifacts,
)

__all__ = [
    'NAME', 'DATASETS', 'SCOPES', 'CLASSICAL_MODELS', 'COMBINATIONS', 'CLASSICAL_ENTRIES', 'ROUND_NAMES', 'ROUND3',
    'Round3Protocol', 'round3_recipe', 'recipe_plan', 'add_combinations', 'score_forecast_artifacts',
    'TRAINING_FILES', 'NEURAL', 'NEURAL_CONFIG', 'NBEATS_CONFIG', 'NBeatsPlan', 'NBEATS_PLAN', 'ABLATIONS',
    'ABLATION_SETS', 'nbeats_plan', 'min_train_length', 'official_holdout', 'window_index',
    'validation_units', 'choose_on_validation', 'chosen_nbeats', 'experiment_config',
    'run_forecast_experiment', 'retrain_global_models', 'forecast_results', 'nbeats_results', 'interval_results',
    'interval_group_results', 'length_groups', 'LENGTH_GROUPS', 'native_interval_models', 'LEVELS',
]
