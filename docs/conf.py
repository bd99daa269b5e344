"""Sphinx configuration of the dynid documentation (``make docs``).

Pages are MyST Markdown (README sections included as they are) and reST; the API reference is
generated from the subpackages' ``__all__`` (``_ext/dynid_docs.py``); the worked examples in
``examples/`` run at build time (sphinx-gallery) and their figures are their output.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

os.environ.setdefault("MPLBACKEND", "Agg")  # examples draw without a display

import dynid_docs  # noqa: E402

import dynid  # noqa: E402

project = "dynid"
author = "the dynid authors"
copyright = "the dynid authors, Apache-2.0"
release = version = dynid.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "dynid_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples", "**/README.txt"]

# -- MyST: the README's Markdown, math in the method pages -------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3  # README headings get anchors, so "#robot-files"-style links resolve
myst_dmath_double_inline = True

# -- API reference ------------------------------------------------------------------------------
autosummary_generate = False  # summary tables only: each package's page documents its objects
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True  # keyword defaults as written (0.15 * pi, not 0.4712...)
autodoc_class_signature = "mixed"
add_module_names = False
python_use_unqualified_type_names = True
# Keep numpy's aliases as written (else ArrayLike is spelled out as its whole union).
autodoc_type_aliases = {"ArrayLike": "ArrayLike", "NDArray": "NDArray"}
# Every cross-reference must resolve (a broken link in a page is an error), except the types of
# other libraries that annotations name: the build runs offline, without intersphinx.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|pathlib|collections\.abc|concurrent\.futures|typing|matplotlib"
               r"|pinocchio|pin|scipy|sympy|cvxpy)\..*"),
    (r"py:class", r"ArrayLike|NDArray|Path|Figure|Executor|Callable|Sequence|Mapping|Literal"),
]

# -- The worked examples, executed at build time ------------------------------------------------
# The real-log example runs only where the log is (../shared/reference beside the repository, as
# in CI; it is GPL-3.0 and not carried); elsewhere its page shows the code, unrun, under a note
# saying what is missing and where to put it.
_REAL_LOG = dynid_docs.real_panda_log(HERE / "examples")
dynid_missing_data_note = "" if _REAL_LOG else dynid_docs.missing_data_note(HERE.parent)
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_" if _REAL_LOG else rf"/(?!{dynid_docs.REAL_LOG_EXAMPLE})plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "min_reported_time": 0,
    "show_memory": False,
    "capture_repr": (),
}

# -- HTML ---------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"dynid {release}"
html_static_path = ["_static"]
html_css_files = ["dynid.css"]  # long code in table cells wraps (the walkthrough's table)
html_show_sourcelink = False
html_theme_options = {"navigation_with_keys": True}
