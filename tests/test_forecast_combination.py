"""Combinations as models: the chapter's "Combination" and "N-BEATS + Combination" by name in the Forecaster and the
CLI, each the pointwise mean of its members' forecasts."""
import numpy as np
import pandas as pd
import pytest

from seqlab.cli import main
from seqlab.errors import InvalidParameterError
from seqlab.forecast import MODEL_NAMES, Combination, Forecaster, StatsForecastModel, min_fit_length
from seqlab.forecast.combination import combine_columns
from seqlab.forecast.nbeats import NBeatsConfig, NBeatsForecaster

CLASSICAL3 = ["AutoETS", "AutoTheta", "Theta"]


def panel(n=48, ids=("b", "a", "c")):
    rng = np.random.default_rng(2)
    t = np.arange(n)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": pd.date_range("2010-01-01", periods=n - 4 * i, freq="MS"),
                                    "y": 50 + 10 * i + 0.5 * t[:n - 4 * i]
                                    + 6 * np.sin(2 * np.pi * t[:n - 4 * i] / 12) + rng.normal(0, 1, n - 4 * i)})
                      for i, u in enumerate(ids)], ignore_index=True)


def test_combination_is_the_mean_of_its_members_at_every_origin():
    fc = Forecaster([*CLASSICAL3, "Combination"], freq="MS", season_length=12)
    cv = fc.cross_validation(6, panel(), n_windows=3, step_size=2)
    np.testing.assert_allclose(cv["Combination"], cv[CLASSICAL3].mean(axis=1), rtol=1e-12)
    future = fc.forecast(6, panel(), level=[80])
    np.testing.assert_allclose(future["Combination"], future[CLASSICAL3].mean(axis=1), rtol=1e-12)
    lo, hi = future["Combination-lo-80"], future["Combination-hi-80"]
    assert ((lo < future["Combination"]) & (future["Combination"] < hi)).all()  # conformal, from its own errors
    # the frame path the chapter's experiment takes gives the fitted Combination's forecasts
    again = combine_columns(cv.drop(columns="Combination"), {"Combination": tuple(CLASSICAL3)})
    np.testing.assert_allclose(again["Combination"], cv["Combination"], rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="needs the column 'Theta'"):
        combine_columns(cv.drop(columns="Theta"))


def test_the_hybrid_gives_n_beats_half_the_weight():
    tiny = NBeatsConfig(width=16, layers=1, blocks=2, batch_size=32, max_steps=20, history=None)

    def nbeats():
        return NBeatsForecaster(tiny, season_length=12, workers=1, device="cpu")

    classical = Combination([StatsForecastModel(m, 12) for m in CLASSICAL3], name="Combination")
    hybrid = Combination([nbeats(), classical], name="N-BEATS + Combination")
    assert not hybrid.local and hybrid.accepts_engine
    fc = Forecaster([nbeats(), *CLASSICAL3, hybrid], freq="MS", season_length=12)
    cv = fc.cross_validation(6, panel(), n_windows=2)
    want = 0.5 * cv["N-BEATS"] + cv[CLASSICAL3].sum(axis=1) / 6  # seeded: the member trains to the same weights
    np.testing.assert_allclose(cv["N-BEATS + Combination"], want, rtol=1e-6)


def test_the_named_combinations_are_models():
    assert {"Combination", "N-BEATS + Combination"} <= set(MODEL_NAMES)
    fc = Forecaster(["Combination", "N-BEATS + Combination"], season_length=12)
    comb, hybrid = fc.models
    assert [m.name for m in comb.members] == CLASSICAL3 and comb.local
    assert [m.name for m in hybrid.members] == ["N-BEATS", "Combination"]
    # as long as its most demanding member needs (AutoETS with a season of 12)
    assert comb.min_train_length == max(min_fit_length(StatsForecastModel(m, 12)) for m in CLASSICAL3)
    assert hybrid.min_train_length == max(min_fit_length(m) for m in hybrid.members)


@pytest.mark.parametrize("members, match", [([], "at least two"), ("AutoETS", "at least two"),
                                            ([StatsForecastModel("Naive")], "at least two"),
                                            ([StatsForecastModel("Naive"), StatsForecastModel("Naive")], "distinct"),
                                            ([StatsForecastModel("Naive"), 3], "not a model")])
def test_bad_combinations_are_refused(members, match):
    with pytest.raises(InvalidParameterError, match=match):
        Combination(members)


def test_the_cli_evaluates_and_predicts_a_combination(tmp_path, capsys):
    f = tmp_path / "s.csv"
    panel().to_csv(f, index=False)
    assert main(["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12", "--windows", "2",
                 "--models", "AutoETS,Combination"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("Combination") for line in out.splitlines())
    assert main(["forecast", "predict", "--csv", str(f), "--horizon", "3", "--season", "12", "--models",
                 "Combination,Theta"]) == 0
    rows = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert set(rows["model"]) == {"Combination", "Theta"} and len(rows) == 2 * 3 * 3


def test_n_beats_options_reach_the_hybrids_n_beats(tmp_path, capsys):
    from seqlab.cli.forecast import _models

    class Args:
        season, max_steps, members = 12, 7, 1

    (hybrid,) = _models(Args, ["N-BEATS + Combination"], "cpu")
    nb = hybrid.members[0]
    assert isinstance(nb, NBeatsForecaster) and hybrid.members[1].name == "Combination"
    assert all(c.max_steps == 7 for c in nb.configs) and len(nb.member_configs()) == 1
