"""A Sphinx extension: an admonition whose class names ``dropdown`` is folded, as an HTML ``<details>`` box.

The page's evidence boxes (``:class: dropdown evidence``, titled "How we know") and the summary's
answers are written as MyST admonitions. Folded on the server, they need no JavaScript: the title
becomes the box's ``<summary>``, which a reader clicks (or tabs to and presses Enter) to open it.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["folded", "summary", "FoldDropdowns", "setup"]


class folded(nodes.General, nodes.Element):  # docutils names its nodes in lower case
    """A folded admonition: ``<details class="admonition …">``."""


class summary(nodes.TextElement):
    """The title of a folded admonition: ``<summary class="admonition-title">``."""


class FoldDropdowns(SphinxPostTransform):
    """Every admonition of class ``dropdown`` becomes a :class:`folded` box, its title the :class:`summary`."""

    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(nodes.Admonition)):
            if "dropdown" not in node["classes"]:
                continue
            box = folded(classes=["admonition", *node["classes"]])
            for child in node.children:
                box += summary("", "", *child.children) if isinstance(child, nodes.title) else child
            node.replace_self(box)


def _visit_folded(self, node) -> None:
    self.body.append(f'<details class="{" ".join(node["classes"])}">\n')


def _depart_folded(self, node) -> None:
    self.body.append("</details>\n")


def _visit_summary(self, node) -> None:
    self.body.append('<summary class="admonition-title">')


def _depart_summary(self, node) -> None:
    self.body.append("</summary>\n")


def setup(app):
    app.add_node(folded, html=(_visit_folded, _depart_folded))
    app.add_node(summary, html=(_visit_summary, _depart_summary))
    app.add_post_transform(FoldDropdowns)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
