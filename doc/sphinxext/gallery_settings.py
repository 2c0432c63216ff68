"""Settings of the example gallery that sphinx-gallery takes by dotted name (functions are not cacheable).

- ``example_arguments``: the command line of each example (``reset_argv``). The slow example
  takes ``--quick``, a smaller setting that keeps every plot, so the docs build (run in CI) stays
  within minutes; run standalone, every example uses its full setting.
- ``tight_matplotlib_scraper``: the figures of each cell, saved with their labels.
"""

QUICK_EXAMPLES = ("topk_feature_selection.py",)


def example_arguments(gallery_conf: dict, script_vars: dict) -> list[str]:
    """Return ``["--quick"]`` for the slow example, no arguments for the others."""
    return ["--quick"] if script_vars["src_file"].endswith(QUICK_EXAMPLES) else []


def tight_matplotlib_scraper(block, block_vars: dict, gallery_conf: dict, **kwargs) -> str:
    """Save each open figure with ``bbox_inches="tight"``: shap's plots put labels outside the axes."""
    from sphinx_gallery.scrapers import matplotlib_scraper

    return matplotlib_scraper(block, block_vars, gallery_conf, bbox_inches="tight", **kwargs)
