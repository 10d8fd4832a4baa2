"""``forecast predict/evaluate --plot DIR`` (issue 56, C): one PNG and HTML pair per series, history and each
model's forecast with the widest band, written as one complete set; a large panel is capped with a note."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from seqlab.cli import main
from seqlab.files import MANIFEST


def monthly(n=36, ids=("a", "b/c", "d")):
    t = np.arange(n)
    return pd.concat([pd.DataFrame({"unique_id": u, "ds": pd.date_range("2019-01-01", periods=n, freq="MS"),
                                    "y": 50 + 10 * k + 5 * np.sin(2 * np.pi * t / 12) + 0.1 * t})
                      for k, u in enumerate(ids)], ignore_index=True)


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "s.csv"
    monthly().to_csv(path, index=False)
    return str(path)


def test_predict_draws_one_pair_per_series_as_one_set(capsys, csv, tmp_path):
    from PIL import Image

    plots = tmp_path / "plots"
    code = main(["forecast", "predict", "--csv", csv, "--horizon", "6", "--models", "Naive,SeasonalNaive",
                 "--level", "80", "--plot", str(plots), "--plot-max", "2"])
    err = capsys.readouterr().err
    assert code == 0, err
    names = sorted(p.name for p in plots.iterdir())
    assert names == ["a.html", "a.png", "b_c.html", "b_c.png", "plotly.min.js", MANIFEST]
    assert set(json.loads((plots / MANIFEST).read_text())["files"]) == set(names) - {MANIFEST}
    assert "seqlab: note: --plot drew the first 2 of 3 series; --plot-max N draws more" in err
    with Image.open(plots / "a.png") as png:
        assert png.size[0] > 400
    html = (plots / "b_c.html").read_text()
    assert "SeasonalNaive" in html and "history" in html and "Series b\\u002fc" in html  # "/" as JSON writes it


def test_evaluate_draws_the_last_window(capsys, csv, tmp_path):
    plots = tmp_path / "plots"
    code = main(["forecast", "evaluate", "--csv", csv, "--horizon", "6", "--windows", "2", "--models", "Naive",
                 "--plot", str(plots)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert {p.name for p in plots.glob("*.png")} == {"a.png", "b_c.png", "d.png"}
    assert "drew 3 figure(s)" in err and "--plot-max" not in err


def test_an_unwritable_plot_folder_is_refused_before_any_fit(capsys, csv, tmp_path):
    (tmp_path / "file").write_text("x")
    code = main(["forecast", "predict", "--csv", csv, "--horizon", "2", "--models", "Naive", "--plot",
                 str(tmp_path / "file")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--plot" in err[0] and "not a directory" in err[0]
