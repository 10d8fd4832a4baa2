"""The chapter's figure style: a static ggplot-grammar figure (plotnine) and its plotly twin."""
from .explorers import slider_figure
from .figures import heatmap_pair, line_pair, surface_figure
from .writing import write_pair, write_plotly
from .theme import PALETTE, theme_seqlab

__all__ = ["heatmap_pair", "line_pair", "slider_figure", "surface_figure", "write_pair", "write_plotly", "PALETTE",
           "theme_seqlab"]
