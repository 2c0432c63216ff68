"""The README's examples run as a user pastes them: every ```python block alone, in a fresh namespace.

doc/index.md (the documentation site's home page) mirrors the README's first example; its blocks run
too (a block found on both pages runs once). A block fails here if it needs a name that only an
earlier block defines, or if it makes sklearn_shapq warn (a renamed parameter, a budget too small).
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import pytest

import sklearn_shapq

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "doc/index.md")
PUBLIC_CLASSES = (
    "PermutationShapExplainer",
    "ProductKernelShapExplainer",
    "HSICAttribution",
    "MMDAttribution",
    "TopKShapley",
)
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
PACKAGE = str(Path(sklearn_shapq.__file__).resolve().parent)  # warnings issued from here fail a snippet
OPTIONAL = ("xgboost", "matplotlib", "dask")  # extras a snippet may need: skipped where absent


def page_snippets() -> dict[str, list[str]]:
    """Return each distinct ```python block of the pages, with where it is ("README.md:52", ...)."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        path = ROOT / page
        if not path.exists():  # an installed copy without the docs
            continue
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start(1)) + 1
            found.setdefault(match.group(1), []).append(f"{page}:{line}")
    return found


SNIPPETS = page_snippets()


def needed_extras(code: str) -> list[str]:
    """Return the optional packages a snippet imports (shap's plots need matplotlib)."""
    needed = [name for name in OPTIONAL if re.search(rf"^\s*(import|from)\s+{name}\b", code, re.MULTILINE)]
    if "shap.plots." in code and "matplotlib" not in needed:
        needed.append("matplotlib")
    return needed


@pytest.fixture(autouse=True)
def agg_backend():
    """Draw shap's plots on matplotlib's Agg backend (no window), and close them after each snippet."""
    if importlib.util.find_spec("matplotlib") is None:
        yield
        return
    import matplotlib

    previous = matplotlib.get_backend()
    matplotlib.use("Agg")
    try:
        yield
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
        matplotlib.use(previous)


def test_readme_has_an_example_per_public_class():
    """The README holds a block that imports each public class (and the extraction finds them)."""
    readme = [code for code, places in SNIPPETS.items() if any(p.startswith("README.md") for p in places)]
    assert len(readme) >= len(PUBLIC_CLASSES)
    for name in PUBLIC_CLASSES:
        assert any(re.search(rf"^from sklearn_shapq import .*\b{name}\b", code, re.MULTILINE) for code in readme), name


@pytest.mark.parametrize("code", list(SNIPPETS), ids=[" ".join(places) for places in SNIPPETS.values()] or None)
def test_snippet_runs_alone(code):
    """Run one block in a fresh namespace; it must not rely on another block nor make sklearn_shapq warn."""
    for name in needed_extras(code):
        pytest.importorskip(name)
    where = SNIPPETS[code][0]
    filename = f"<{where}>"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(code, filename, "exec"), {"__name__": "__readme__"})
    ours = [w for w in caught if w.filename == filename or str(Path(w.filename).resolve()).startswith(PACKAGE)]
    assert not ours, [f"{w.category.__name__}: {w.message}" for w in ours]
