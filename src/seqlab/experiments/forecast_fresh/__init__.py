"""§14.63's fresh, pre-registered test (docs/forecast-fresh-sets.md) and the seed spread of M3 monthly's N-BEATS.

``python -m seqlab.experiments.forecast_fresh [SET ...]`` trains and stores the named sets (default: every
set not stored yet, M3 monthly's seed sets first); the verdicts are computed from the stored forecasts.
"""
from .run import (DONORS, FRESH_SETS, SEED_SETS, SEEDS_SET, artifact_name, fresh_plan, round3_plan,
                  run_fresh_set, run_m3_seed_sets, seed_label)
from .verdicts import (ALPHA, COMPARISONS, entry_errors, fresh_mcb, fresh_tests, fresh_verdicts, seed_spread,
                       stored_sets)

__all__ = ["DONORS", "FRESH_SETS", "SEED_SETS", "SEEDS_SET", "artifact_name", "fresh_plan", "round3_plan",
           "run_fresh_set", "run_m3_seed_sets", "seed_label", "ALPHA", "COMPARISONS", "entry_errors", "fresh_mcb",
           "fresh_tests", "fresh_verdicts", "seed_spread", "stored_sets"]
