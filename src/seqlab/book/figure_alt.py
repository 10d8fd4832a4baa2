"""A myst-nb mime renderer that gives the chapter's figures their alt text.

myst-nb takes an image's ``alt`` only from cell metadata, so a figure drawn by
:func:`seqlab.book.page.figure` would otherwise be described by its hashed file name.
``figure`` stores the text in the output's own metadata (``IPython.display.Image(alt=...)``);
this plugin, registered under the ``myst_nb.mime_renderers`` entry point, copies it onto the image.
"""
from __future__ import annotations


class FigureAlt:
    """Render ``image/png`` outputs that carry ``alt`` in their metadata, with that alt text."""

    mime_priority_overrides = ()

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if inline or data.mime_type != "image/png":
            return None
        alt = (data.output_metadata.get("image/png") or {}).get("alt")
        if not alt:
            return None
        nodes = renderer.render_image(data)
        for node in nodes:
            node["alt"] = str(alt)
        return nodes


def alt_text(gg, name: str) -> str:
    """What a figure shows, for a reader who cannot see it: its title, else its axes, else its name."""
    labels = getattr(gg, "labels", None)
    title = getattr(labels, "title", None) if labels is not None else None
    if title:
        return str(title)
    x, y = (getattr(labels, k, None) if labels is not None else None for k in ("x", "y"))
    if x and y:
        return f"{y} against {x}"
    return name.replace("_", " ")
