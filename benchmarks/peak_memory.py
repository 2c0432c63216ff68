"""Peak memory of one explain call: 100 rows, d=16, max_evals=500, 100 background rows, batch_size="auto".

Run: ``python benchmarks/peak_memory.py``. 4.8 M model rows (614 MB if built at once) go through
31 MiB batches, so the peak RSS rises by about the batch size plus the model's own buffers.
"""

import resource
import time

import numpy as np
import xgboost

from sklearn_shapq import PermutationShapExplainer

rng = np.random.default_rng(0)
d = 16
X = rng.normal(size=(3000, d))
y = X[:, 0] * X[:, 1] + X[:, 2]
m = xgboost.XGBRegressor(n_estimators=200, max_depth=6, n_jobs=1).fit(X, y)
explainer = PermutationShapExplainer(m, algorithm="antithetic", max_evals=500, random_state=0, progress=False).fit(X)
explainer.explain(X[:2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
explanation = explainer.explain(X[:100])
t = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
diagnostics = explanation.diagnostics
print(
    f"explain 100 rows d=16 max_evals=500: {t:.1f}s, model rows {diagnostics['n_model_rows']} "
    f"in {diagnostics['n_model_calls']} calls"
)
print(f"peak RSS {peak:.0f} MiB (before explain {base:.0f} MiB)")
