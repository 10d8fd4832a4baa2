"""The ``erratum`` directive: where a measurement contradicts the chapter, the page says so in a box.

In the page's Markdown::

    :::{erratum} At rho = 0.7 the gradient is below 1e-8 by lag 40.
    {glue:text}`g07_lag40` at lag 40 (table above); it first falls below 1e-8 at lag
    {glue:text}`g07_below`.

    The decay is geometric as the chapter says; only the lag at which it crosses is later.
    :::

The argument is what the chapter says, quoted; the first paragraph is what was measured (its
numbers glued or quoted from a claim's evidence, like any sentence of the page); the paragraphs
after it say why the two differ. The box reads "The printed chapter says: … Measured here: …", as the
summary's list of errata (``seqlab.chapter.s14_64.errata_index``) finds it in the page source.

Where the measurement may or may not contradict the chapter, depending on the build's numbers, the
``:unless:`` option names the claim that says the chapter's reading holds::

    :::{erratum} Top-p trades diversity for plausibility the same way as temperature.
    :unless: s59_topp_like_temperature
    {claim}`s59_topp_like_temperature: ... the chapter's reading stands. || ... it does not.`
    :::

The box is drawn only when that claim is false; when it holds, the paragraphs stand in the page
as plain text, so the sentence that says so is still read.
"""
from __future__ import annotations

import re

__all__ = ["ERRATUM", "UNLESS", "setup"]

#: an erratum in a page's Markdown: what the chapter says (the argument) and the body
ERRATUM = re.compile(r"^:::\{erratum\}[ \t]*([^\n]*)\n(.*?)^:::[ \t]*$", re.M | re.S)
#: the first line of an erratum's body that makes it conditional: the claim whose failure draws the box
UNLESS = re.compile(r"^[ \t]*:unless:[ \t]*([A-Za-z_]\w*)[ \t]*$", re.M)


def _directive():
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class Erratum(Directive):
        """``:::{erratum} what the chapter says`` with the measurement (first paragraph) and the reason."""

        required_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = {"unless": directives.unchanged_required}

        def run(self):
            if "unless" in self.options:
                holds = self._holds(self.options["unless"].strip())
                if holds is None:
                    return [self.state.document.reporter.warning(
                        f"erratum :unless: {self.options['unless']}: no such claim on this page", line=self.lineno)]
                if holds:  # the chapter's reading stands: its sentence is prose, not an erratum
                    body = nodes.container()
                    self.state.nested_parse(self.content, self.content_offset, body)
                    return list(body.children)
            box = nodes.admonition(classes=["warning", "seqlab-erratum"])
            box += nodes.title(text="Erratum")
            said = nodes.paragraph()
            said += nodes.strong(text="The printed chapter says: ")
            said += nodes.Text(self.arguments[0])
            box += said
            body = nodes.container()
            self.state.nested_parse(self.content, self.content_offset, body)
            paragraphs = [n for n in body.children if isinstance(n, nodes.paragraph)]
            if not paragraphs:
                return [self.state.document.reporter.warning(
                    "an erratum needs what was measured as its first paragraph", line=self.lineno)]
            paragraphs[0].insert(0, nodes.strong(text="Measured here: "))
            box += body.children
            return [box]

        def _holds(self, name: str):
            """The verdict of the page's claim ``name``, or None where the page recorded none."""
            from myst_nb.core.variables import RetrievalError
            from myst_nb.ext.glue.utils import retrieve_glue_data

            from ..claims import CLAIM_PREFIX
            from .sentences import record_of

            try:
                plain = retrieve_glue_data(self.state.document, CLAIM_PREFIX + name).data.get("text/plain", "")
            except RetrievalError:
                return None
            return bool(record_of("".join(plain) if isinstance(plain, list) else plain)["holds"])

    return Erratum


def setup(app):
    """Sphinx: register the ``erratum`` directive."""
    app.add_directive("erratum", _directive())
    return {"parallel_read_safe": True, "parallel_write_safe": True}
