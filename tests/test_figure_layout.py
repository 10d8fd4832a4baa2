"""No figure text is clipped by its frame, covered, or printed over other text; integer axes get whole ticks.

Static figures (plotnine): the drawn matplotlib figure's text extents against the canvas
(``seqlab.plotting.layout``), which ``write_pair`` also checks on every figure it saves. Interactive figures
(plotly): drawn in headless Chromium in a column as wide as the book's, every title, axis, tick, legend,
annotation, colour-bar and slider text's bounding box inside the figure's frame and clear of the toolbar and
of the legend (``seqlab.book.browser``). Both checks are first shown to fail on figures made faulty on purpose,
then run over every figure function of the chapter with the inputs its section passes
(``tests/figure_inputs.py``).
"""
import pandas as pd
import pytest
from conftest import require, require_chromium
from figure_inputs import DATA, figure_functions, load

from seqlab.plotting import line_pair, write_pair
from seqlab.plotting.figures import integer_breaks
from seqlab.plotting.layout import FigureLayoutError, static_problems
from seqlab.plotting.writing import save_png
from seqlab.plotting.theme import theme_seqlab

require("plotnine")


def drawn(gg, tmp_path, name="f"):
    import matplotlib.pyplot as plt

    fig = save_png(gg, tmp_path / f"{name}.png")
    try:
        return static_problems(fig, gg)
    finally:
        plt.close(fig)


def clipped_ggplot(subtitle: str):
    """A figure built without the shared wrapping, so that a long subtitle runs off the canvas."""
    from plotnine import aes, geom_line, ggplot, labs

    df = pd.DataFrame({"x": [0.0, 1.2, 2.5], "y": [1.5, 2.2, 3.1]})
    return ggplot(df, aes("x", "y")) + geom_line() + labs(title="t", subtitle=subtitle) + theme_seqlab()


# --- the static check can fail -----------------------------------------------------------------------------------

def test_static_check_finds_a_subtitle_cut_at_the_right_edge(tmp_path):
    problems = drawn(clipped_ggplot("a subtitle far too long for the canvas " * 4), tmp_path)
    assert any("clipped at the right of the canvas" in p for p in problems), problems
    assert drawn(clipped_ggplot("a short subtitle"), tmp_path, "ok") == []


def test_static_check_finds_overlapping_tick_labels(tmp_path):
    from plotnine import aes, facet_wrap, geom_line, ggplot, scale_x_datetime

    df = pd.DataFrame({"ds": pd.date_range("1949-01-01", periods=144, freq="MS"), "y": [float(i) for i in range(144)]})
    df = pd.concat([df.assign(panel="a"), df.assign(panel="b")])
    gg = (ggplot(df, aes("ds", "y")) + geom_line() + facet_wrap("panel")
          + scale_x_datetime(date_breaks="2 years", date_labels="%Y-%m-%d") + theme_seqlab())
    problems = drawn(gg, tmp_path)
    assert any("overlaps" in p and "-01-01" in p for p in problems), problems
    gg, _ = line_pair(df, "ds", "y", None, facet="panel", title="t", xlab="month", ylab="y")
    assert drawn(gg, tmp_path, "fixed") == []  # line_pair spaces date ticks by the panel's width


def test_static_check_finds_fractional_ticks_on_an_integer_axis(tmp_path):
    from plotnine import aes, geom_point, ggplot

    df = pd.DataFrame({"members": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "mase": [0.9 - 0.01 * i for i in range(12)]})
    problems = drawn(ggplot(df, aes("members", "mase")) + geom_point() + theme_seqlab(), tmp_path)
    assert any("fractional tick '2.5'" in p for p in problems), problems
    gg, _ = line_pair(df.assign(k="a"), "members", "mase", "k", title="t", xlab="k", ylab="MASE")
    assert drawn(gg, tmp_path, "fixed") == []  # line_pair gives an integer column whole ticks


def test_write_pair_raises_after_writing_both_files(tmp_path):
    import plotly.graph_objects as go

    with pytest.raises(FigureLayoutError, match="clipped at the right"):
        write_pair(clipped_ggplot("a subtitle far too long for the canvas " * 4), go.Figure(), tmp_path / "bad")
    assert (tmp_path / "bad.png").is_file() and (tmp_path / "bad.html").is_file()  # there to be looked at


def test_integer_breaks():
    assert integer_breaks(1, 12) == [2, 4, 6, 8, 10, 12]
    assert integer_breaks(0, 3) == [0, 1, 2, 3]
    assert integer_breaks(1, 1) == [1]
    assert all(float(b).is_integer() for b in integer_breaks(3, 997))


# --- every figure function ---------------------------------------------------------------------------------------

FUNCTIONS = figure_functions()


def test_every_figure_function_has_recorded_inputs():
    missing = [name for name in FUNCTIONS if not (DATA / f"{name}.pkl").is_file()]
    assert not missing, f"record them with: python tests/figure_inputs.py SECTION ... ({missing})"
    assert len(FUNCTIONS) >= 30


def _figures():
    """name -> what the figure function returns, for every figure function."""
    out = {}
    for name in FUNCTIONS:
        fn, args, kwargs = load(name)
        out[name] = fn(*args, **kwargs)
    return out


@pytest.fixture(scope="module")
def figures():
    return _figures()


def test_every_static_figure_fits_its_canvas(figures, tmp_path):
    found = {}
    for name, made in figures.items():
        if isinstance(made, tuple):
            problems = drawn(made[0], tmp_path, name)
            if problems:
                found[name] = problems
    assert sum(isinstance(m, tuple) for m in figures.values()) >= 20
    assert not found, found


# --- the browser check -------------------------------------------------------------------------------------------

def test_browser_check_can_fail(tmp_path):
    import plotly.graph_objects as go

    from seqlab.book.browser import figure_layout_problems
    from seqlab.plotting import slider_figure
    from seqlab.plotting.theme import plotly_layout

    require_chromium()
    line = go.Scatter(x=[0.5, 1.2, 2.9], y=[1.5, 4.2, 9.1], name="a series")
    clipped = go.Figure(line).update_layout(title=dict(text="<b>" + "A title far too long for its frame " * 3 + "</b>"))
    under_toolbar = go.Figure(line).update_layout(title=dict(text="<b>Title at the right</b>", x=0.98,
                                                             xanchor="right", y=0.985, yref="container"))
    covered = go.Figure(line).update_layout(legend=dict(orientation="h", y=-0.02), showlegend=True,
                                            xaxis_title="The x axis")
    fractional = go.Figure(go.Scatter(x=[1, 2, 3], y=[0.5, 0.7, 0.6]))
    explorer = slider_figure([(str(i), [go.Scatter(x=[0.5, 2.5], y=[i + 0.5, i + 0.5], name="a line"),
                                        go.Scatter(x=[0.5, 2.5], y=[i, i + 1.5], name="another line")])
                              for i in range(3)],
                             title="Explorer", subtitle="the legend clear of the slider", xlab="x", ylab="y",
                             slider_label="step = ")
    low_legend = go.Figure(explorer).update_layout(legend=dict(orientation="h", y=-0.2, yanchor="top", yref="paper"))
    fine = go.Figure(line).update_layout(**plotly_layout("A short title", "and a subtitle"), xaxis_title="x")
    found = figure_layout_problems({"clipped": clipped, "under_toolbar": under_toolbar, "covered": covered,
                                    "fractional": fractional, "explorer": explorer, "low_legend": low_legend,
                                    "fine": fine}, tmp_path)
    assert any("title" in p and "clipped at the right of the frame" in p for p in found["clipped"]), found
    assert any("lies under the toolbar" in p for p in found["under_toolbar"]), found
    assert any("the legend covers" in p for p in found["covered"]), found
    assert any("xaxis holds integers but has the fractional tick" in p for p in found["fractional"]), found
    assert any("legend" in p and "slider" in p for p in found["low_legend"]), found
    assert found["explorer"] == [] and found["fine"] == [], found


def test_every_interactive_figure_fits_its_frame(figures, tmp_path):
    from seqlab.book.browser import figure_layout_problems

    require_chromium()
    interactive = {name.replace(".", "_"): (made[1] if isinstance(made, tuple) else made)
                   for name, made in figures.items()}
    found = {name: problems for name, problems in figure_layout_problems(interactive, tmp_path).items() if problems}
    assert not found, found


def test_a_band_is_shaded_under_its_line_in_both_figures(tmp_path):
    """``band``: a ribbon layer in the static figure, and error bars reaching each edge in the plotly twin."""
    import numpy as np

    df = pd.DataFrame({"x": [1, 2, 3] * 2, "y": [1.0, 2.0, 3.0, 2.0, 2.5, 2.9], "k": ["a"] * 3 + ["b"] * 3,
                       "lo": [0.8, 1.7, 2.9, None, None, None], "hi": [1.3, 2.4, 3.2, None, None, None]})
    gg, fig = line_pair(df, "x", "y", "k", title="t", xlab="x", ylab="y", band=("lo", "hi"))
    ribbons = [layer for layer in gg.layers if type(layer.geom).__name__ == "geom_ribbon"]
    assert len(ribbons) == 1 and len(ribbons[0]._data) == 3  # only the rows that have a band
    assert drawn(gg, tmp_path) == []
    a = next(t for t in fig.data if t.name == "a")
    np.testing.assert_allclose(a.error_y.array, [0.3, 0.4, 0.2], atol=1e-12)
    np.testing.assert_allclose(a.error_y.arrayminus, [0.2, 0.3, 0.1], atol=1e-12)
    b = next(t for t in fig.data if t.name == "b")
    assert list(b.error_y.array) == [0, 0, 0]
