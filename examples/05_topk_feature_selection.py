"""
Tune TopKShapley's k in a Pipeline, against RFECV and SelectFromModel
=====================================================================

StandardScaler → selector → LogisticRegression on scikit-learn's wine data (178 rows, 13
features, 3 classes), 3-fold stratified CV on the same folds for every selector:

- :class:`~sklearn_shapq.TopKShapley` (Greedy CMCS on the "retrain" game: v(S) is the 3-fold CV
  accuracy of the classifier trained on the features in S; 200 evaluations), k tuned by
  GridSearchCV (with ``memory=``, the scores of the game are shared by the fits for different k
  on the same fold);
- ``RFECV`` (recursive elimination by the coefficients' magnitude, its own inner CV chooses k);
- ``SelectFromModel`` (random-forest impurity importances), ``max_features`` tuned by GridSearchCV;
- and, for reference, the classifier on all features.

Prints each one's CV accuracy, chosen k, time and picks, the Shapley value estimates of the
features with standard errors, and draws them and a shap waterfall plot of one row's local top-k
explanation.

Run: ``python examples/05_topk_feature_selection.py`` (about 25 s on 2 quiet cores, more on a loaded machine).
"""

# %%
# Four ways to choose features, on the same folds
# -----------------------------------------------
import shutil
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
import shap
from joblib import Memory
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import RFECV, SelectFromModel
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import TopKShapley

X, y = load_wine(return_X_y=True, as_frame=True)
ks = [1, 3, 6, 9]
budget, warm_up = 150, 5
cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
classifier = LogisticRegression(max_iter=2000)


def pipeline(selector):
    steps = [("scale", StandardScaler()), ("select", selector), ("clf", classifier)]
    return Pipeline(steps).set_output(transform="pandas")


def report(name, accuracy, k, seconds):
    print(f"{name:16s} {accuracy:>11.4f} {k:>3} {seconds:>9.1f}")


print(f"{'selector':16s} {'CV accuracy':>11s} {'k':>3} {'time (s)':>9s}")
start = time.perf_counter()
all_features = cross_val_score(Pipeline([("scale", StandardScaler()), ("clf", classifier)]), X, y, cv=cv).mean()
report("all 13 features", all_features, 13, time.perf_counter() - start)

# `budget` refit games per fit (each a 3-fold CV): `warm_up` CMCS rounds, then Greedy CMCS. memory= caches the
# coalitions' scores, so the fits for the other values of k on the same fold reuse them instead of refitting.
cache = tempfile.mkdtemp(prefix="topk_scores_")
memory = Memory(cache, verbose=0)
topk = TopKShapley(
    LogisticRegression(max_iter=2000),
    n_features_to_select=3,
    cv=3,
    max_evals=budget,
    t_min=warm_up,
    memory=memory,
    random_state=0,
    progress=False,
)
searches = {
    "TopKShapley": (pipeline(topk), {"select__n_features_to_select": ks}),
    "SelectFromModel": (
        pipeline(SelectFromModel(RandomForestClassifier(n_estimators=100, random_state=0), threshold=-np.inf)),
        {"select__max_features": ks},
    ),
}
fitted = {}
for name, (pipe, grid) in searches.items():
    start = time.perf_counter()
    fitted[name] = GridSearchCV(pipe, grid, cv=cv).fit(X, y)
    k = next(iter(fitted[name].best_params_.values()))
    report(name, fitted[name].best_score_, k, time.perf_counter() - start)

start = time.perf_counter()
rfecv = RFECV(LogisticRegression(max_iter=2000), cv=3)
rfe_scores = cross_val_score(pipeline(rfecv), X, y, cv=cv)  # RFECV picks k inside each outer fold
rfe_fit = pipeline(rfecv).fit(X, y)
report("RFECV", rfe_scores.mean(), rfe_fit["select"].n_features_, time.perf_counter() - start)

# %%
# Accuracy per number of kept features, and the picks
# ---------------------------------------------------
print("CV accuracy per k:")
print(f"{'k':>4} {'TopKShapley':>12s} {'SelectFromModel':>16s}")
for k in ks:
    row = [fitted[name].cv_results_["mean_test_score"][ks.index(k)] for name in searches]
    print(f"{k:>4} {row[0]:>12.4f} {row[1]:>16.4f}")

print("picks (refitted on all rows):")
for name, search in fitted.items():
    print(f"  {name + ':':17s} {list(search.best_estimator_['select'].get_feature_names_out())}")
print(f"  {'RFECV:':17s} {list(rfe_fit['select'].get_feature_names_out())}")

# %%
# The selector's Shapley values of CV accuracy
# --------------------------------------------
selector = fitted["TopKShapley"].best_estimator_["select"]
print(
    f"TopKShapley game: v(∅) = {selector.empty_value_:.3f} (prior), v(N) = {selector.full_value_:.3f}, "
    f"{selector.n_evals_} evaluations; confidence bounds separated: {selector.pac_satisfied_}"
)
order = np.argsort(-selector.shapley_values_)
print(f"    {'feature (* kept)':30s} {'value':>7s}   {'SE':>6s}")
for j in order:
    mark = "*" if selector.support_[j] else " "
    print(f"  {mark} {X.columns[j]:30s} {selector.shapley_values_[j]:+.4f} ± {selector.stderr_[j]:.4f}")

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.barh(X.columns[order][::-1], selector.shapley_values_[order][::-1], xerr=2 * selector.stderr_[order][::-1])
ax.set_xlabel("Shapley value of CV accuracy (± 2 SE)")
ax.set_title(f"TopKShapley on wine: top {selector.n_features_to_select_} kept")
plt.show()

# %%
# Locally: what drove one row's prediction
# ----------------------------------------
# Its predicted class's margin, the top k features by magnitude, on the tuned pipeline's classifier.
row = fitted["TopKShapley"].best_estimator_["scale"].transform(X.iloc[[0]])
explanation = selector.explain(row)
target, top_k = explanation.diagnostics["targets"][0], explanation.diagnostics["top_k_names"][0]
print(f"row 0: class {target}, top {selector.n_features_to_select_} {list(top_k)}")
shap.plots.waterfall(explanation[0], show=False)
plt.show()
shutil.rmtree(cache, ignore_errors=True)
