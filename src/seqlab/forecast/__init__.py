"""Forecasting: long-format data, MASE/sMAPE/OWA, rolling-origin validation, classical and neural models."""
import warnings

try:  # statsforecast imports tqdm.autonotebook, which warns in notebooks without ipywidgets; not ours to fix
    from tqdm import TqdmExperimentalWarning, TqdmWarning

    warnings.filterwarnings("ignore", category=TqdmExperimentalWarning)
    warnings.filterwarnings("ignore", message="IProgress not found", category=TqdmWarning)
except ImportError:  # pragma: no cover
    pass
from .core import MODEL_NAMES, Forecaster, rolling_origin_splits
from .data import ForecastDataError, air_passengers, competition, infer_freq, read_series_csv, validate_long
from .evaluation import bootstrap_difference, evaluate, per_horizon, summarize, unit_mase
from .metrics import mase, owa, smape
from .neural import NeuralConfig, NeuralForecaster

__all__ = ["MODEL_NAMES", "Forecaster", "rolling_origin_splits", "ForecastDataError", "air_passengers", "competition", "infer_freq",
           "read_series_csv", "validate_long", "bootstrap_difference", "evaluate", "per_horizon", "summarize", "unit_mase", "mase",
           "owa", "smape", "NeuralConfig", "NeuralForecaster"]
