"""Settings of the example gallery that sphinx-gallery takes by dotted name (functions are not cacheable).

Every example runs as it is, without arguments, in under a minute on 2 cores: the gallery shows what
``python examples/<name>.py`` prints and draws. The examples are ordered by their file names
(``01_`` to ``06_``), from the simplest use to the specialised ones.

- ``tight_matplotlib_scraper``: the figures of each cell, saved with their labels.
"""


def tight_matplotlib_scraper(block, block_vars: dict, gallery_conf: dict, **kwargs) -> str:
    """Save each open figure with ``bbox_inches="tight"``: shap's plots put labels outside the axes."""
    from sphinx_gallery.scrapers import matplotlib_scraper

    return matplotlib_scraper(block, block_vars, gallery_conf, bbox_inches="tight", **kwargs)
