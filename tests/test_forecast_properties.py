"""The library boundary of seqlab.forecast: random small frames and options given to Forecaster, evaluate and
summarize end in a result or a SeqlabError, never another exception; valid ones succeed."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab.errors import InvalidParameterError, InvalidTypeError, MissingColumnError, SeqlabError
from seqlab.forecast import Forecaster, evaluate, summarize

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
MODELS = ["Naive", "SeasonalNaive", "Naive2", "RandomWalkWithDrift"]


def walk(lengths, seed=0):
    rng = np.random.default_rng(seed)
    return pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": np.arange(1, n + 1),
                                    "y": 50 + np.cumsum(rng.normal(size=n))}) for i, n in enumerate(lengths)],
                     ignore_index=True)


@pytest.fixture(scope="module")
def scored():
    df = walk([30, 30])
    cv = Forecaster(["Naive", "Naive2"], season_length=4).cross_validation(4, df, n_windows=2, step_size=4)
    return df, cv, evaluate(cv, df, 4, ["Naive", "Naive2"])


# ------------------------------------------------------------------ the precise errors
@pytest.mark.parametrize("drop", ["Naive", "y", "cutoff", "unique_id"])
def test_evaluate_names_a_missing_column(scored, drop):
    df, cv, _ = scored
    with pytest.raises(MissingColumnError, match=f"no column '{drop}'") as e:
        evaluate(cv.drop(columns=drop), df, 4, ["Naive", "Naive2"])
    assert isinstance(e.value, KeyError) and str(e.value).startswith("the cross-validation frame")


def test_evaluate_checks_history_models_and_season(scored):
    df, cv, _ = scored
    with pytest.raises(MissingColumnError, match="the history has no column 'ds'"):
        evaluate(cv, df.drop(columns="ds"), 4, ["Naive"])
    with pytest.raises(InvalidTypeError, match="list of model"):
        evaluate(cv, df, 4, "Naive")
    with pytest.raises(InvalidParameterError, match="season_length"):
        evaluate(cv, df, 0, ["Naive"])
    with pytest.raises(SeqlabError, match="not in the history"):
        evaluate(cv, df[df.unique_id == "s0"], 4, ["Naive"])


def test_summarize_of_a_non_frame_is_a_type_error(scored):
    _, _, errors = scored
    for bad in (None, [1, 2], errors.to_dict()):
        with pytest.raises(InvalidTypeError, match="DataFrame") as e:
            summarize(bad)
        assert isinstance(e.value, TypeError)
    with pytest.raises(MissingColumnError, match="'scaled_error'"):
        summarize(errors.drop(columns="scaled_error"))
    assert list(summarize(errors).model) == sorted(set(errors.model), key=list(summarize(errors).model).index)


@pytest.mark.parametrize("season", [0, -3, 2.5, "12", True, None])
def test_forecaster_refuses_a_bad_season_length_at_once(season):
    with pytest.raises(InvalidParameterError, match="season_length"):
        Forecaster(["Naive"], season_length=season)


# ------------------------------------------------------------------ properties
def frames():
    lengths = st.lists(st.integers(1, 24), min_size=1, max_size=3)
    values = st.sampled_from(["walk", "nan", "inf", "const", "huge"])
    return st.tuples(lengths, values, st.integers(0, 3))


def build(spec):
    lengths, kind, seed = spec
    df = walk(lengths, seed)
    if kind == "nan":
        df.loc[len(df) // 2, "y"] = np.nan
    elif kind == "inf":
        df.loc[0, "y"] = np.inf
    elif kind == "const":
        df["y"] = 3.0
    elif kind == "huge":
        df.loc[0, "y"] = 1e200
    return df


def mostly(valid, bad):
    """Three draws in four from ``valid``: every option bad at once would rarely reach the models."""
    return st.tuples(st.sampled_from([True, True, True, False]), valid, bad).map(lambda t: t[1] if t[0] else t[2])


options = st.fixed_dictionaries({
    "models": st.lists(st.sampled_from(MODELS), min_size=1, max_size=3, unique=True),
    "season": mostly(st.integers(1, 6), st.sampled_from([0, -1, 1.5, "4", None, True])),
    "h": mostly(st.integers(1, 7), st.sampled_from([0, -1, 2.0, "3", None])),
    "windows": mostly(st.integers(1, 4), st.sampled_from([0, -2, 1.0])),
    "step": st.one_of(st.none(), mostly(st.integers(1, 5), st.sampled_from([0, 2.5]))),
    "min_train": st.one_of(st.none(), mostly(st.integers(2, 12), st.sampled_from([0, 1, "5"]))),
    "level": st.one_of(st.none(), st.sampled_from([[80], [50, 95], [0], [100], "x", []])),
    "cal_windows": st.one_of(st.none(), mostly(st.integers(1, 6), st.sampled_from([0, 10 ** 12]))),
})


def attempt(df, o):
    fc = Forecaster(o["models"], season_length=o["season"])
    step = {} if o["step"] is None else {"step_size": o["step"]}  # statsforecast's default: 1
    cv = fc.cross_validation(o["h"], df, n_windows=o["windows"], **step,
                             min_train_length=o["min_train"], level=o["level"],
                             calibration_windows=o["cal_windows"])
    errors = evaluate(cv, df, o["season"], fc.names)
    return cv, summarize(errors, naive2="Naive2")


@settings(SETTINGS, max_examples=80)
@given(frames(), options)
def test_random_input_ends_in_a_result_or_a_seqlab_error(spec, o):
    try:
        cv, table = attempt(build(spec), o)
    except SeqlabError:
        return
    assert set(table.model) == set(o["models"]) and len(cv) > 0


@SETTINGS
@given(st.lists(st.integers(0, 8), min_size=1, max_size=3), st.integers(1, 4), st.integers(1, 3),
       st.sampled_from([1, 2, 4]), st.lists(st.sampled_from(MODELS), min_size=1, max_size=3, unique=True),
       st.sampled_from([None, [80], [80, 95]]), st.integers(0, 3))
def test_valid_input_succeeds(extra, h, windows, season, models, level, seed):
    lengths = [h * windows + season + 1 + e for e in extra]  # every training part longer than a season
    df = walk(lengths, seed)
    o = dict(models=models, season=season, h=h, windows=windows, step=None, min_train=None, level=level,
             cal_windows=None)
    cv, table = attempt(df, o)
    assert len(cv) == len(lengths) * windows * h
    assert set(table.model) == set(models)
    assert (table.units == len(lengths) * windows).all()
    assert np.isfinite(cv[models].to_numpy()).all()


@settings(SETTINGS, max_examples=60)
@given(st.lists(st.sampled_from(["unique_id", "ds", "cutoff", "y", "Naive", "Naive2"]), max_size=2, unique=True),
       st.sampled_from(["frame", "records", "none"]), st.one_of(st.integers(-1, 5), st.sampled_from([2.5, "4"])),
       st.one_of(st.lists(st.sampled_from(["Naive", "Naive2", "GRU"]), max_size=2), st.sampled_from(["Naive", 3])),
       st.sampled_from([None, [], [80], "x"]), st.booleans())
def test_random_frames_given_to_evaluate_and_summarize(scored, drop, kind, season, models, level, empty):
    df, cv, _ = scored
    frame = cv.drop(columns=drop)
    frame = frame.iloc[:0] if empty else frame
    given_cv = {"frame": frame, "records": frame.to_dict("records"), "none": None}[kind]
    try:
        errors = evaluate(given_cv, df, season, models, level=level)
        table = summarize(errors)
    except SeqlabError:
        return
    assert set(table.model) == set(models) and (table.units > 0).all()
