"""CI: a plain install of the wheel (no extras: no xgboost, no matplotlib) explains a scikit-learn model.

Run from outside the repository, in a fresh venv holding the built wheel: the package imported must be
the installed one (in the venv's site-packages, with its typing marker), at the version of the source
tree (``__version__`` in sklearn_shapq/__init__.py, the one place it is written).
"""

import re
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

import sklearn_shapq
from sklearn_shapq import PermutationShapExplainer

source = (Path(__file__).resolve().parents[1] / "sklearn_shapq" / "__init__.py").read_text(encoding="utf-8")
expected = re.search(r'^__version__ = "([^"]+)"$', source, re.MULTILINE).group(1)
site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
package = Path(sklearn_shapq.__file__).resolve().parent
assert sys.prefix != sys.base_prefix, f"not in a virtual environment: {sys.prefix}"
assert package.parent == site_packages, f"sklearn_shapq imported from {package}, not from {site_packages}"
assert (package / "py.typed").is_file(), "the wheel lacks sklearn_shapq/py.typed"
assert sklearn_shapq.__version__ == version("sklearn_shapq") == expected, (
    sklearn_shapq.__version__,
    version("sklearn_shapq"),
    expected,
)
assert expected == "1.0.0", expected  # the 1.0.0 release (drop this line after it)
print(f"sklearn_shapq {sklearn_shapq.__version__} imported from {package}")

X, y = load_diabetes(return_X_y=True)
explanation = PermutationShapExplainer(Ridge().fit(X, y), random_state=0, progress=False).fit(X[:50]).explain(X[:3])
assert np.allclose(explanation.values.sum(1) + explanation.base_values, Ridge().fit(X, y).predict(X[:3]))
print("a plain install explains a scikit-learn model:", explanation.values.shape)
