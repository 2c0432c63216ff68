"""Sphinx configuration of the sklearn_shapq documentation site.

Build (offline, warnings are errors): ``python -m sphinx -b html doc doc/_build/html -W --keep-going``.
``-D plot_gallery=0`` skips running the examples. Intersphinx links to numpy, scikit-learn and
shap only when ``SKLEARN_SHAPQ_DOCS_INTERSPHINX=1``: offline, an unreachable inventory is a
warning that ``-W`` turns into a failure.
"""

import os
import sys
from importlib.metadata import version as package_version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "sphinxext"))

project = "sklearn_shapq"
author = "sklearn_shapq developers"
copyright = "2026, sklearn_shapq developers"
release = package_version("sklearn_shapq")
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]
if os.environ.get("SKLEARN_SHAPQ_DOCS_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
        "shap": ("https://shap.readthedocs.io/en/latest", None),
    }

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "sphinxext", "**/README.md", "auto_examples/*.ipynb"]

# --- API reference: autosummary + numpydoc ---
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# --- markdown pages (user guide, glossary, architecture) ---
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# --- the example gallery: every example runs in the build as it is (each under a minute), in file-name order ---
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"\.py$",
    "abort_on_example_error": True,
    "doc_module": ("sklearn_shapq",),
    "backreferences_dir": "gen_modules/backreferences",
    "image_scrapers": ("gallery_settings.tight_matplotlib_scraper",),
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "download_all_examples": False,
    "show_memory": False,
    "within_subsection_order": "FileNameSortKey",
}

# --- benchmark plots, drawn at build time from benchmarks/results/*.json ---
plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]

# --- HTML ---
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_shapq {release}"
html_static_path = []
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": [], "benchmarks": [], "glossary": []}


def skip_generated_request_methods(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (their docs link to sklearn's glossary)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    """Connect the member filter."""
    app.connect("autodoc-skip-member", skip_generated_request_methods)
