"""Figures are written atomically: a failed write leaves no partial file and is one seqlab error."""
import errno

import pandas as pd
import pytest

from seqlab.plotting import line_pair, write_pair
from seqlab.plotting.writing import FigureWriteError


def pair():
    df = pd.DataFrame({"x": [1, 2, 3], "y": [1.0, 4.0, 9.0], "series": ["a"] * 3})
    return line_pair(df, "x", "y", "series", title="t", xlab="x", ylab="y")


def test_write_pair_writes_both_files(tmp_path):
    gg, fig = pair()
    png, html = write_pair(gg, fig, tmp_path / "figs" / "curve")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "plotly.min.js" in html.read_text()
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["curve.html", "curve.png", "plotly.min.js"]


def test_a_failed_png_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    gg, fig = pair()
    png, _ = write_pair(gg, fig, tmp_path / "curve")
    before = png.read_bytes()
    gg2, fig2 = pair()

    def full(self, fname, *a, **k):
        with open(fname, "wb") as f:
            f.write(b"\x89PNG half")
        raise OSError(errno.ENOSPC, "No space left on device")

    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "savefig", full)
    with pytest.raises(FigureWriteError, match="No space left on device"):
        write_pair(gg2, fig2, tmp_path / "curve")
    assert png.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.html", "curve.png", "plotly.min.js"]


@pytest.mark.parametrize("n", [1, 2, 4, 9])
def test_default_colors_are_distinct_and_dark_enough_for_a_white_page(n):
    from matplotlib.colors import to_rgb

    from seqlab.plotting.figures import default_colors

    levels = pd.Series(pd.Categorical([f"level {i}" for i in range(n)][::-1],
                                      categories=[f"level {i}" for i in range(n)]))
    colors = default_colors(levels)
    assert list(colors) == [f"level {i}" for i in range(n)]  # the categorical's order, not the rows'
    assert len(set(colors.values())) == n
    linear = lambda u: u / 12.92 if u <= 0.04045 else ((u + 0.055) / 1.055) ** 2.4  # sRGB to linear light
    for hex_ in colors.values():
        r, g, b = map(linear, to_rgb(hex_))
        luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
        assert 1.05 / (luminance + 0.05) >= 3.0, hex_  # WCAG contrast against white: plasma's yellow end is left out
