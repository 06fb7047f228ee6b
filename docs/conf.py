"""Sphinx configuration of the ordstats documentation.

Build with ``sphinx-build -W -b html docs docs/_build/html`` from the repository
root (or ``make -C docs html``).  API pages are generated from the docstrings by
autosummary into ``docs/generated/``, which is never committed.
"""

from __future__ import annotations

import os
import sys

# Document the source tree next to this file, even when ordstats is not installed.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "_ext")))

import ordstats

project = "ordstats"
author = "ordstats developers"
copyright = "ordstats developers"
release = ordstats.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 bundled from PyPI and served from _static: formulas render offline
    "sphinx-mathjax-offline",
    "numpydoc",
    # docs/_ext: runs vignettes/*.py at build time into the gallery
    "vignette_gallery",
]

#: the vignettes of the ordstats being documented (not of this copy of docs/)
vignette_dir = os.path.join(os.path.dirname(os.path.abspath(ordstats.__file__)), "..", "vignettes")

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
suppress_warnings = ["config.cache"]  # vignette_dir is a path computed at import

autosummary_generate = True
autosummary_ignore_module_all = False  # document what each module's __all__ exports
autodoc_typehints = "none"  # the numpydoc Parameters sections already give the types
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_xref_param_type = False

html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_title = f"ordstats {release}"


def _skip_sklearn_metadata_requests(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (its own docs cover them)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    """Connect the autodoc hook that skips scikit-learn's metadata-request methods."""
    app.connect("autodoc-skip-member", _skip_sklearn_metadata_requests)
