"""Layer seams: no module of one subpackage imports a private module of another.

A subpackage (``sklearn_shapq/<sub>/``) shares what other layers use through the names its
``__init__.py`` exports; its private modules (``_name``) are its own. Root-level private modules
(``sklearn_shapq/_validation.py`` and the like) are shared by every layer and may be imported from
anywhere. Tests and benchmarks are not the package and may import private modules.
"""

import ast
import textwrap
from pathlib import Path

import pytest

import sklearn_shapq

PACKAGE = Path(sklearn_shapq.__file__).parent
ROOT = PACKAGE.name  # "sklearn_shapq"


def _module_parts(path):
    """Dotted name of the module at ``path`` (relative to the package's parent), as parts."""
    parts = list(path.with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _own_subpackage(path):
    """The subpackage a module belongs to (``None`` for the root-level modules)."""
    return path.parts[1] if len(path.parts) > 2 else None


def _imported_modules(node, path):
    """Dotted names an import statement may import: its module, and each name imported from it."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level == 0:
        base = node.module.split(".")
    else:
        package = _module_parts(path) if path.name == "__init__.py" else _module_parts(path)[:-1]
        anchor = package[: len(package) - (node.level - 1)]
        base = anchor + (node.module.split(".") if node.module else [])
    module = ".".join(base)
    # ``from pkg import name`` imports the submodule ``pkg.name`` when there is one
    return [module] + [f"{module}.{alias.name}" for alias in node.names if alias.name != "*"]


def _crosses_seam(module, own):
    parts = module.split(".")
    if parts[0] != ROOT or len(parts) < 3 or parts[1] == own:
        return False
    return any(part.startswith("_") for part in parts[2:])


def seam_violations(source, path):
    """``file:line: import`` of every import in ``source`` (the module at ``path``) of another
    subpackage's private module; ``path`` is relative to the package's parent directory."""
    path = Path(path)
    own = _own_subpackage(path)
    found = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        crossing = [module for module in _imported_modules(node, path) if _crosses_seam(module, own)]
        if crossing:
            found.append(f"{path.as_posix()}:{node.lineno}: {ast.unparse(node)}  (private: {min(crossing, key=len)})")
    return found


def test_no_module_imports_another_subpackages_private_module():
    violations = []
    for file in sorted(PACKAGE.rglob("*.py")):
        violations += seam_violations(file.read_text(encoding="utf-8"), file.relative_to(PACKAGE.parent))
    assert not violations, (
        "Import another subpackage's names from its __init__ (export them there), not from its private modules:\n"
        + "\n".join(violations)
    )


@pytest.mark.parametrize(
    "source",
    [
        "from sklearn_shapq.backends._feistel import mix64",
        "import sklearn_shapq.games._models",
        "import sklearn_shapq.games._models as models",
        "from sklearn_shapq.games import _table_codec",
        "from ..backends._product_kernel import FACTOR_KINDS",
        "from ..games import _enumeration",
        "from .. import games\nfrom ..samplers._keyed import draw_seed",
        "def lazy():\n    from sklearn_shapq.algorithms._moments import satterthwaite_dof",
    ],
)
def test_a_crossing_import_is_found(source):
    violations = seam_violations(source, Path(ROOT, "explainers", "_module.py"))
    assert len(violations) == 1
    assert violations[0].startswith(f"{ROOT}/explainers/_module.py:{source.count(chr(10)) + 1}: ")


@pytest.mark.parametrize(
    "source",
    [
        "from sklearn_shapq.backends import FACTOR_KINDS, mix64",
        "import sklearn_shapq.games",
        "from sklearn_shapq._validation import check_table",
        "from sklearn_shapq import _validation",
        "from .. import _progress",
        "from .._random import make_generator",
        "from sklearn_shapq.explainers._base import ModelExplainerMixin",
        "from ._base import ModelExplainerMixin",
        "from . import _base",
        "import numpy._core",
    ],
)
def test_allowed_imports_pass(source):
    assert seam_violations(source, Path(ROOT, "explainers", "_module.py")) == []


def test_root_modules_and_init_files_are_checked():
    snippet = textwrap.dedent(
        """
        from sklearn_shapq.games import TableCodec
        from sklearn_shapq.games._table_codec import keyed_content
        """
    )
    assert len(seam_violations(snippet, Path(ROOT, "dask.py"))) == 1
    # in an __init__.py, "." is the subpackage itself
    assert seam_violations("from ._keyed import row_keys", Path(ROOT, "samplers", "__init__.py")) == []
    assert (
        len(seam_violations("from .._x import y\nfrom ..games._x import y", Path(ROOT, "samplers", "__init__.py"))) == 1
    )
