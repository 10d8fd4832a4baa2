"""Sphinx configuration of the rendered chapter (MyST pages executed by myst-nb)."""
import os

project = "Chapter 14, Part 3: Recurrence and Attention (seqlab)"
author = "seqlab"
extensions = ["myst_nb", "seqlab.book.progress", "seqlab.book.download", "seqlab.book.cache_lock", "seqlab.book.sentences",
              "seqlab.book.folds",
              "seqlab.book.errata", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "seqlab.book.apidoc", "seqlab.book.clidoc"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
only_pages = os.environ.get("SEQLAB_BOOK_PAGES")  # comma-separated docnames: a small build for tests
if only_pages:
    keep = set(only_pages.split(",")) | {"index"}
    exclude_patterns += [f"{p[:-3]}" + ".md" for p in os.listdir(os.path.dirname(__file__) or ".")
                         if p.endswith(".md") and p[:-3] not in keep]
    if "guide" not in keep:  # the guide and the reference: one folder, built or left out as one page
        exclude_patterns.append("guide/**")

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_dmath_double_inline = True
nb_execution_mode = "cache"
nb_execution_cache_path = os.environ.get("SEQLAB_BOOK_CACHE", "_build/.jupyter_cache")
nb_execution_in_temp = True  # the pages' folder is the installed package: never the kernels' working folder
nb_execution_raise_on_error = True
nb_execution_timeout = 900
nb_execution_show_tb = True
nb_merge_streams = True
nb_output_stderr = "warn"  # anything a cell writes to stderr fails the -W build

html_theme = "sphinx_book_theme"
html_title = "Recurrence and Attention"
html_static_path = ["_static"]
if os.environ.get("SEQLAB_BOOK_VENDOR"):  # plotly.js and MathJax, vendored by the build outside the package
    html_static_path.append(os.environ["SEQLAB_BOOK_VENDOR"])
html_css_files = ["seqlab.css"]
html_js_files = ["plotly.min.js", "seqlab.js"]
mathjax_path = "mathjax/tex-chtml.js"  # vendored under _static by the build: no CDN
html_theme_options = {"show_toc_level": 2}
html_permalinks = True
numfig = True
math_numfig = True
math_eqref_format = "({number})"
suppress_warnings = ["mystnb.unknown_mime_type"]

if only_pages:  # a partial build leaves the other toctree entries unresolved on purpose
    # links to pages left out of this build, and the index's toctree entries for them (the guide folder too)
    suppress_warnings += ["toc.not_readable", "toc.excluded", "ref.ref"]

# the guide and the reference (guide/*.md): Google-style docstrings, and every cross-reference must resolve (-W)
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # "Attributes:" as fields of their class, not as objects of their own
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # a module's forward() would show torch's words about nn.Module
autodoc_preserve_defaults = True  # a default as the source writes it (DEFAULT_OUT, not its value on this machine)
html_domain_indices = False  # no py-modindex.html: the site's top level stays the chapter's pages
nitpicky = True
# the types of other libraries: no inventory of theirs is fetched (the build is offline), so their names stay text
nitpick_ignore_regex = [
    (r"py:.*", r"(torch|nn|F|np|numpy|pd|pandas|scipy|statsforecast|transformers|regex|dask|fugue)(\..+)?"),
    (r"py:.*", r"(pathlib|os|collections\.abc|typing|dataclasses|argparse|contextlib|types)\..+"),
    (r"py:class", r"(Path|Callable|Iterator|Iterable|Sequence|Mapping|optional)"),
]
# references in forecast's docstrings to module-level names that are not public (not in the reference); a new one
# fails the build until it is resolved or listed here
nitpick_ignore = [("py:data", "CLASSICAL"), ("py:func", "naive2_forecast"), ("py:func", "seasonal_adjustment"),
                  ("py:func", "check_exog"), ("py:func", "seqlab.parallel.run_calls"), ("py:func", "bootstrap_pvalue"),
                  ("py:class", "Break"), ("py:class", "seqlab.forecast.gaps.Break")]
# public names whose docstrings are still to be written: listed here, not failing the build (none now);
# tests/test_docs.py keeps this list from growing
seqlab_api_pending = {}
