"""Forecasting: long-format data, MASE/sMAPE/OWA, rolling-origin validation, prediction intervals, classical and
neural models behind one model protocol, and statsforecast's models on a Dask/Ray/Spark cluster."""
import warnings

try:  # statsforecast imports tqdm.autonotebook, which warns in notebooks without ipywidgets; not ours to fix
    from tqdm import TqdmExperimentalWarning, TqdmWarning

    warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)
    warnings.filterwarnings("ignore", message="IProgress not found", category=TqdmWarning)
except ImportError:  # pragma: no cover
    pass
from .classical import M4Comb, Naive2, StatsForecastModel
from .bounds import TooLargeError
from .combination import Combination
from .comparison import holm_tests, mcb
from .core import MODEL_NAMES, Forecaster, ForecastModel
from .checks import UnboundedIntervalError
from .dates import FutureDateError, season_of
from .gaps import FILL_RULES, fill_gaps, first_break
from .specs import ForecasterFileError, UnsavableModelError
from .data import ForecastDataError, SeriesTooShortError, air_passengers, competition, infer_freq, validate_long
from .reading import read_series_csv
from .engines import Engine
from .evaluation import bootstrap_difference, evaluate, per_horizon, summarize, unit_mase
from .intervals import check_levels, conformal_quantile
from .lengths import min_fit_length
from .metrics import (
    coverage,
    mase,
    owa,
    pinball_loss,
    scaled_crps,
    scaled_pinball_loss,
    smape,
    winkler_score,
)
from .neural import NeuralConfig, NeuralForecaster
from .origins import rolling_origin_splits

__all__ = ["MODEL_NAMES", "Forecaster", "ForecastModel", "StatsForecastModel", "Naive2", "M4Comb", "Combination", "Engine",
           "rolling_origin_splits", "ForecastDataError", "SeriesTooShortError", "air_passengers", "competition", "infer_freq",
           "read_series_csv", "validate_long", "bootstrap_difference", "evaluate", "per_horizon", "summarize",
           "unit_mase", "mase", "owa", "smape", "coverage", "winkler_score", "pinball_loss", "scaled_pinball_loss",
           "scaled_crps", "check_levels", "conformal_quantile", "NeuralConfig", "NeuralForecaster", "min_fit_length",
           "holm_tests", "mcb", "TooLargeError", "FutureDateError", "UnboundedIntervalError", "season_of", "fill_gaps",
           "first_break", "FILL_RULES", "ForecasterFileError", "UnsavableModelError"]
