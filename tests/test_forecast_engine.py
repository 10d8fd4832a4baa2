"""The statsforecast models on a 2-worker Dask LocalCluster give the single-process numbers; bad engines fail
cleanly."""
import numpy as np
import pandas as pd
import pytest
from conftest import require

from seqlab.cli import main
from seqlab.errors import InvalidParameterError
from seqlab.forecast import Engine, Forecaster
from seqlab.forecast.engines import ENGINES, _missing

MODELS = ["Naive", "SeasonalNaive", "Naive2", "AutoETS", "AutoTheta"]


def panel(ids=("zz", "aa", 7, "mm"), n=60):
    """Monthly series of unequal length whose ids mix types and are not sorted."""
    rng = np.random.default_rng(5)
    t = np.arange(n)
    parts = []
    for i, u in enumerate(ids):
        m = n - 6 * i
        y = 100 + 30 * i + t[:m] + 8 * np.sin(2 * np.pi * t[:m] / 12 + i) + rng.normal(0, 2, m)
        parts.append(pd.DataFrame({"unique_id": u, "ds": pd.date_range("2001-01-31", periods=m, freq="ME"), "y": y}))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def cluster():
    distributed = require("distributed")
    require("fugue_dask")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def test_dask_cluster_gives_the_single_process_numbers(cluster):
    df = panel()
    kw = dict(n_windows=2, min_train_length=30, level=[80, 95])
    with Forecaster(MODELS, freq="ME", season_length=12, engine="dask", address=cluster.scheduler_address) as fc:
        assert len(cluster.workers) == 2
        for intervals in ("native", "conformal"):
            local = Forecaster(MODELS, freq="ME", season_length=12).cross_validation(6, df, intervals=intervals, **kw)
            remote = fc.cross_validation(6, df, intervals=intervals, **kw)
            # float64 throughout; AutoTheta's optimiser may differ in the last bit (sums over arrays aligned
            # differently in memory)
            pd.testing.assert_frame_equal(remote, local, rtol=1e-10, atol=0)
        future = fc.forecast(6, df, level=[80])
    pd.testing.assert_frame_equal(future, Forecaster(MODELS, freq="ME", season_length=12).forecast(6, df, level=[80]),
                                  rtol=1e-10, atol=0)


def test_cli_on_a_cluster_prints_the_same_table(capsys, tmp_path, cluster):
    f = tmp_path / "s.csv"
    panel().to_csv(f, index=False)
    argv = ["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--season", "12", "--windows", "2",
            "--min-train-length", "30", "--models", "Naive,SeasonalNaive,AutoETS", "--level", "80"]  # 95%: unbounded
    tables = []
    for extra in ([], ["--engine", "dask", "--address", cluster.scheduler_address]):
        code = main(argv + extra)
        out = capsys.readouterr()
        assert code == 0, out.err
        tables.append(out.out)
    assert tables[0] == tables[1]
    assert tables[0].splitlines()[0].split()[:2] == ["model", "mase"] and "coverage_80" in tables[0]


def test_nbeats_members_on_a_cluster_equal_the_local_processes(cluster):
    """The ensemble's members are independent seeded jobs: on the Dask workers, in two local processes or in this
    one, the forecasts are bit for bit the same."""
    from seqlab.forecast.nbeats import NBeatsConfig, NBeatsForecaster

    df = panel()
    c = NBeatsConfig(width=16, layers=1, blocks=2, batch_size=32, max_steps=30, history=None)

    def ensemble(**kw):
        return NBeatsForecaster(c, input_multiples=(1.0, 2.0), seeds=(1, 2), season_length=12, **kw)

    here = ensemble(workers=1).fit(df, 6).predict(df, 6)
    local = ensemble(workers=2).fit(df, 6).predict(df, 6)
    with Forecaster([ensemble(), "Naive"], freq="ME", season_length=12, engine="dask",
                    address=cluster.scheduler_address) as fc:
        remote = fc.forecast(6, df)
        on_cluster = ensemble(engine=fc.engine).fit(df, 6).predict(df, 6)
    assert set(here) == set(local) == set(on_cluster) == set(df.unique_id)
    for uid in here:
        np.testing.assert_array_equal(local[uid], here[uid])
        np.testing.assert_array_equal(on_cluster[uid], here[uid])
    got = remote.set_index("unique_id")["N-BEATS"]
    for uid in here:
        np.testing.assert_array_equal(got.loc[[uid]].to_numpy(), here[uid])


@pytest.mark.parametrize("kind", ["ray", "spark"])
def test_ray_and_spark_give_the_single_process_numbers(kind):
    """Run where their packages are installed (pip install "seqlab[ray]" / "seqlab[spark]"); skipped elsewhere."""
    if _missing(ENGINES[kind][0]) or _missing(f"fugue_{kind}"):
        pytest.skip(f"{ENGINES[kind][0]} is not installed (the ray and spark extras are not part of CI)")
    df = panel(ids=("b", "a"))
    kw = dict(n_windows=1, level=[80], intervals="native")
    with Forecaster(["Naive", "SeasonalNaive"], freq="ME", season_length=12, engine=kind) as fc:
        remote = fc.cross_validation(6, df, **kw)
    local = Forecaster(["Naive", "SeasonalNaive"], freq="ME", season_length=12).cross_validation(6, df, **kw)
    pd.testing.assert_frame_equal(remote, local, rtol=1e-10, atol=0)
    from seqlab.forecast.nbeats import NBeatsConfig, NBeatsForecaster

    c = NBeatsConfig(width=16, layers=1, blocks=2, batch_size=32, max_steps=30, history=None)
    here = NBeatsForecaster(c, seeds=(1, 2), season_length=12, workers=1).fit(df, 6).predict(df, 6)
    with Engine(kind) as engine:
        there = NBeatsForecaster(c, seeds=(1, 2), season_length=12, engine=engine).fit(df, 6).predict(df, 6)
    for uid in here:
        np.testing.assert_array_equal(there[uid], here[uid])


def test_engine_arguments_are_checked():
    with pytest.raises(InvalidParameterError, match="unknown engine 'mpi'"):
        Forecaster(["Naive"], engine="mpi")
    with pytest.raises(InvalidParameterError, match="address needs an engine"):
        Forecaster(["Naive"], address="127.0.0.1:8786")
    for bad in ("", "host:port", "127.0.0.1:99999", "ray://127.0.0.1:10001", 8786):
        with pytest.raises(InvalidParameterError, match="address"):
            Forecaster(["Naive"], engine="dask", address=bad)
    assert Engine("dask", "10.0.0.5").address == "tcp://10.0.0.5:8786"  # nothing is contacted before first use


@pytest.mark.parametrize("kind", ["ray", "spark"])
def test_missing_cluster_packages_are_named(capsys, tmp_path, kind):
    module = ENGINES[kind][0]
    if not _missing(module):
        pytest.skip(f"{module} is installed here")
    with pytest.raises(InvalidParameterError, match=f"needs the package '{module}'"):
        Forecaster(["Naive"], engine=kind)
    f = tmp_path / "s.csv"
    panel(ids=("a",)).to_csv(f, index=False)
    code = main(["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--models", "Naive", "--engine", kind])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and module in err[0], err


def test_unreachable_scheduler_is_one_line(capsys, tmp_path):
    require("distributed")
    f = tmp_path / "s.csv"
    panel(ids=("a",)).to_csv(f, index=False)
    fc = Forecaster(["Naive"], freq="ME", engine=Engine("dask", "127.0.0.1:9", timeout=2))
    with pytest.raises(InvalidParameterError, match="cannot reach the dask scheduler at tcp://127.0.0.1:9"):
        fc.forecast(3, panel(ids=("a",)))
    code = main(["forecast", "evaluate", "--csv", str(f), "--horizon", "6", "--models", "Naive", "--engine", "dask",
                 "--address", "bad address"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "HOST:PORT" in err[0], err
