"""Read the trees of fitted tree models into :class:`~sklearn_shapq.backends.TreeArrays`.

Models: scikit-learn's decision trees, random forests, extra trees and baggings of decision trees
(regressors' predictions, classifiers' probabilities), gradient boosting and histogram gradient boosting (raw scores:
``predict`` of a regressor with the identity loss, a classifier's ``decision_function``), xgboost's
gbtree and dart models (the margin) and LightGBM's (an identity-link prediction, a classifier's raw score).
The reading gives the sum over trees; the caller finds the offset (an initial score, a base score)
and checks the sum against the model's own outputs, so a model read wrongly is never explained from
its trees.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from sklearn.base import is_classifier

from sklearn_shapq.backends import TreeArrays, node_depths
from sklearn_shapq.explainers._output_links import OutputLink, margin_links
from sklearn_shapq.games import is_xgboost

_NODE_FIELDS = ("feature", "threshold", "left", "right", "missing_left", "value")
ADDITIVE_OUTPUTS = {
    ("forest", False): ("predict",),  # a regressor's mean prediction
    ("forest", True): ("probability",),  # a classifier's mean class fractions (not its label)
    ("boosted", False): ("predict",),  # the raw score of an identity link
    ("boosted", True): ("margin",),
    ("xgboost", False): ("predict", "margin"),  # the raw score (objectives with an identity link)
    ("xgboost", True): ("margin",),
    ("lightgbm", False): ("predict", "margin"),  # the raw score (objectives with an identity link)
    ("lightgbm", True): ("margin",),  # its raw score
    ("adaboost", True): ("margin",),  # its decision function: the trees' weighted votes
}
"""The outputs that are sums over the trees (plus a constant), by kind of model and whether it classifies."""
_IDENTITY_OBJECTIVES = (
    "reg:squarederror",
    "reg:squaredlogerror",
    "reg:absoluteerror",
    "reg:pseudohubererror",
    "reg:quantileerror",
)
"""xgboost regression objectives whose prediction is the raw score."""
_LOG_LINK_OBJECTIVES = ("count:poisson", "reg:gamma", "reg:tweedie")
"""xgboost regression objectives whose prediction is exp(raw score)."""
_LIGHTGBM_IDENTITY_OBJECTIVES = ("regression", "regression_l1", "huber", "fair", "quantile", "mape")
"""LightGBM regression objectives whose prediction is the raw score."""
_LIGHTGBM_LOG_LINK_OBJECTIVES = ("poisson", "gamma", "tweedie")
"""LightGBM regression objectives whose prediction is exp(raw score)."""
CATEGORY_CODES = 256
"""The category codes a histogram gradient boosting model's categorical splits tell apart (its bitsets' bits)."""
_LIGHTGBM_ZERO = 1.0000000180025095e-35
"""LightGBM's kZeroThreshold: it reads |x| ≤ this as 0 in a prediction."""
_LIGHTGBM_CLAMPED = 1e300
"""``dump_model`` writes thresholds beyond ±this as ±this."""
LIGHTGBM_MAX_CATEGORY = 1 << 16
"""LightGBM categorical splits are read where their categories are below this (a table of that width per split)."""


def extract_trees(model: Any, n_outputs: int, output: str, link: OutputLink | None = None) -> TreeArrays:
    """Read ``model``'s trees, giving ``n_outputs`` outputs summed over trees (up to a constant).

    Parameters
    ----------
    model : fitted tree model
    n_outputs : int
        The explained outputs: a binary classifier's one (its positive class) or one per class.
    output : {"predict", "margin", "probability", "log_odds"}
        The explained output, resolved: a sum over the trees (:data:`ADDITIVE_OUTPUTS`) or a link of
        one (:func:`tree_output`).
    link : OutputLink, optional
        :func:`tree_output` of ``model`` and ``output`` where the caller has it (read once).

    Returns
    -------
    TreeArrays

    Raises
    ------
    TypeError
        ``model`` is not a tree model read here.
    ValueError
        ``output`` is not a sum over its trees (a boosted model's probability, a log link), its trees
        are not read here (xgboost's or LightGBM's categorical splits, vector leaves), or they give another
        number of outputs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_shapq.backends import tree_predict
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, X[:, 0])
    >>> bool(np.allclose(tree_predict(extract_trees(model, 1, "predict"), X)[:, 0], model.predict(X)))
    True
    """
    kind = _tree_kind(model)
    if kind is None:
        raise TypeError(f"{type(model).__name__} is not a tree model read here.")
    if link is None:
        tree_output(model, output, n_outputs)  # refuses outputs the trees do not give (else the caller did)
    xgboost = kind == "xgboost"
    if xgboost:
        trees, strict, float32 = _xgboost_trees(model), True, True
    elif kind == "lightgbm":
        trees, strict, float32 = _lightgbm_trees(model), False, False
    elif kind == "histogram":
        trees, strict, float32 = _histogram_boosting_trees(model), False, False
    elif kind == "boosted":
        trees, strict, float32 = _gradient_boosting_trees(model), False, True
    elif kind == "adaboost":
        trees, strict, float32 = _adaboost_trees(model), False, True
    elif kind == "isolation":
        trees, strict, float32 = _isolation_trees(model), False, True
    elif hasattr(model, "estimators_"):  # a forest or a bagging of trees: the mean of its trees
        scale = 1.0 / len(model.estimators_)
        columns = getattr(model, "estimators_features_", [None] * len(model.estimators_))  # bagging: each tree's
        trees = [_sklearn_tree(tree, scale, used) for tree, used in zip(model.estimators_, columns, strict=True)]
        strict, float32 = False, True
    else:
        trees, strict, float32 = [_sklearn_tree(model, 1.0)], False, True
    return _flattened(trees, n_outputs, strict, float32, float32_sums=xgboost)


def own_preprocessing(model: Any) -> Any:
    """Return the fitted step a tree model applies to its inputs before its trees, or None.

    A histogram gradient boosting model with categorical features (by dtype or by ``categorical_features``)
    ordinal-encodes them in a ColumnTransformer of its own, which puts them first; its trees split the codes.
    """
    return getattr(model, "_preprocessor", None) if _tree_kind(model) == "histogram" else None


def tree_output(model: Any, output: str, n_outputs: int) -> OutputLink:
    """Return how ``output`` of a tree model follows from its trees' sum (see :class:`OutputLink`).

    Parameters
    ----------
    model : fitted tree model (as :func:`extract_trees` reads)
    output : {"predict", "margin", "probability", "log_odds"}
        The explained output, resolved.
    n_outputs : int
        The explained outputs: a binary classifier's one, else one per class.

    Raises
    ------
    ValueError
        ``output`` is neither a sum over the trees nor a link of one read here (a class label, a
        regressor's link other than the identity and the log).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> model = HistGradientBoostingClassifier(max_iter=3).fit(X, X[:, 0] > 0)
    >>> tree_output(model, "probability", 1)
    OutputLink(raw_output='margin', link='sigmoid', log_odds=False, after=(1.0, 0.0))
    """
    kind = _tree_kind(model)
    if kind is None:
        raise TypeError(f"{type(model).__name__} is not a tree model read here.")
    if kind == "isolation":
        if output != "margin":
            raise ValueError(
                f"IsolationForest's output {output!r} is not read from its trees: its score (output='margin', its "
                "decision_function) is."
            )
        return OutputLink(None, "exp", after=(-1.0, -float(model.offset_)))  # −2^(−mean depth / c(ψ)) − offset
    kind = "boosted" if kind == "histogram" else kind
    forest, xgboost = kind == "forest", kind == "xgboost"
    objective = _xgboost_objective(model) if xgboost else None  # read once: it parses the booster's config
    classifier = objective.startswith(("binary:", "multi:")) if objective else is_classifier(model)
    link = _boosting_link(model, classifier, objective) if not forest else "identity"
    if output in ADDITIVE_OUTPUTS[kind, classifier] and (link == "identity" or output == "margin"):
        return OutputLink(output, "identity")  # a margin is the raw score whatever the link
    if forest and classifier and output == "log_odds":
        return OutputLink("probability", "identity", log_odds=True)
    if not forest and classifier and output in ("probability", "log_odds"):
        if xgboost and n_outputs == 1 and output == "log_odds":  # its binary log-odds are the margin itself
            return OutputLink("margin", "identity")
        return margin_links(n_outputs)[output]
    if not classifier and output == "predict" and link == "exp":
        return OutputLink(None, "exp")
    raise ValueError(
        f"{type(model).__name__}'s output {output!r} is neither a sum over its trees nor a link of one read "
        "here (a class label, a link other than the identity and the log): choose another output or a sampling "
        "algorithm."
    )


def _xgboost_objective(model: Any) -> str:
    """Return an xgboost model's objective ("reg:squarederror", "binary:logistic", ...)."""
    booster = model if type(model).__name__ == "Booster" else model.get_booster()
    return str(json.loads(booster.save_config())["learner"]["objective"]["name"])


def _boosting_link(model: Any, classifier: bool, xgboost_objective: str | None) -> str:
    """Return "identity" where a boosted model's prediction (or margin) is its raw score, "exp", "other".

    "exp": the prediction is the exponential of the raw score (a log link: Poisson, gamma, Tweedie). A
    classifier's margin is its raw score; a regressor's prediction is where its objective or loss has the
    identity link (``xgboost_objective``: an xgboost model's, else None).
    """
    if classifier:
        return "identity"
    objective: Any
    identity: tuple[str, ...]
    log: tuple[str, ...]
    if xgboost_objective is not None:
        objective = xgboost_objective
        identity, log = _IDENTITY_OBJECTIVES, _LOG_LINK_OBJECTIVES
    elif _is_lightgbm(model):
        objective = model.objective_  # a callable: other
        identity, log = _LIGHTGBM_IDENTITY_OBJECTIVES, _LIGHTGBM_LOG_LINK_OBJECTIVES
    else:
        objective = getattr(model, "loss", None)  # histogram boosting: "poisson" and "gamma" predict exp(raw score)
        return "exp" if objective in ("poisson", "gamma") else "identity"
    return "identity" if objective in identity else "exp" if objective in log else "other"


def sum_scale(model: Any, link: OutputLink) -> float:
    """Return the factor on a tree model's sum before ``link``: 1 but for AdaBoost's multiclass probability.

    AdaBoost (SAMME) takes the softmax of its decision function over K − 1 (Zhu et al. 2009, eq. 15).
    """
    if _tree_kind(model) == "adaboost" and link.link == "softmax":
        return 1.0 / (len(model.classes_) - 1)
    return 1.0


def _tree_kind(model: Any) -> str | None:
    """Return the kind of tree model: "forest", "boosted", "histogram", "adaboost", "isolation", "xgboost", ….

    "forest": a tree, a forest, a bagging of trees; "isolation": an isolation forest; also "lightgbm"; None:
    not read here.
    """
    from sklearn.ensemble import (
        AdaBoostClassifier,
        BaggingClassifier,
        BaggingRegressor,
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        IsolationForest,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import BaseDecisionTree

    forests = (RandomForestRegressor, RandomForestClassifier, ExtraTreesRegressor, ExtraTreesClassifier)
    if is_xgboost(model):
        return "xgboost"
    if _is_lightgbm(model):
        return "lightgbm"
    if isinstance(model, (BaseDecisionTree, *forests)):
        return "forest"
    bagged = getattr(model, "estimators_", None) if isinstance(model, (BaggingRegressor, BaggingClassifier)) else None
    if bagged and all(isinstance(tree, BaseDecisionTree) for tree in bagged):  # the mean of trees on column subsets
        return "forest"
    if isinstance(model, (GradientBoostingRegressor, GradientBoostingClassifier)):
        return "boosted"
    if isinstance(model, (HistGradientBoostingRegressor, HistGradientBoostingClassifier)):
        return "histogram"
    if isinstance(model, IsolationForest):
        return "isolation"
    voters = getattr(model, "estimators_", None) if isinstance(model, AdaBoostClassifier) else None
    if voters and all(isinstance(tree, BaseDecisionTree) for tree in voters):  # weighted votes of trees
        return "adaboost"
    return None


def _is_lightgbm(model: Any) -> bool:
    """Whether ``model`` is a fitted LightGBM scikit-learn model (by its module)."""
    return type(model).__module__.split(".")[0] == "lightgbm" and hasattr(model, "booster_")


def _flattened(
    trees: list[dict[str, np.ndarray]], n_outputs: int, strict: bool, float32: bool, float32_sums: bool
) -> TreeArrays:
    """One :class:`TreeArrays` from per-tree node arrays (children numbered within each tree)."""
    widths = {tree["value"].shape[1] for tree in trees}
    if len(widths) != 1:
        raise ValueError("the trees give different numbers of outputs.")
    width = widths.pop()
    if width == 2 and n_outputs == 1:  # a binary classifier's probabilities: its positive class
        for tree in trees:
            tree["value"] = tree["value"][:, 1:]
    elif width != n_outputs:
        raise ValueError(f"the trees give {width} outputs; the explained output has {n_outputs}.")
    sizes = np.array([tree["feature"].shape[0] for tree in trees], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    arrays = {field: np.concatenate([tree[field] for tree in trees]) for field in _NODE_FIELDS}
    shift = np.repeat(offsets, sizes)
    for side in ("left", "right"):
        arrays[side] = np.where(arrays["feature"] >= 0, arrays[side].astype(np.int64) + shift, -1)
    feature = arrays["feature"].astype(np.int64)
    depth = node_depths(arrays["left"], arrays["right"], feature, offsets)
    categories = _flattened_categories(trees)
    return TreeArrays(
        feature=feature,
        threshold=arrays["threshold"].astype(np.float64),
        left=arrays["left"],
        right=arrays["right"],
        missing_left=arrays["missing_left"].astype(np.bool_),
        value=np.ascontiguousarray(arrays["value"], dtype=np.float64),
        roots=offsets,
        strict=strict,
        float32_inputs=float32,
        float32_sums=float32_sums,
        max_depth=int(depth.max()),
        **categories,
    )


def _flattened_categories(trees: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``category_of_node`` and ``category_left`` of the trees' categorical splits, in one table; none: {}."""
    if not any("category_left" in tree for tree in trees):
        return {}
    rows, of_node = 0, []
    for tree in trees:
        local = tree.get("category_of_node", np.full(tree["feature"].shape[0], -1, dtype=np.int64))
        of_node.append(np.where(local >= 0, local + rows, -1))
        rows += tree["category_left"].shape[0] if "category_left" in tree else 0
    tables = [tree["category_left"] for tree in trees if "category_left" in tree]
    return {"category_of_node": np.concatenate(of_node), "category_left": np.concatenate(tables).astype(np.bool_)}


def _sklearn_tree(tree_model: Any, scale: float, columns: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Read a scikit-learn tree's nodes: a regressor's values, a classifier's class fractions, times ``scale``.

    ``columns``: the model's columns the tree was fitted on, in its order (a bagging's ``estimators_features_``);
    its splits' features are mapped back to them.
    """
    tree = tree_model.tree_
    value = np.asarray(tree.value, dtype=np.float64)  # (nodes, n_outputs, max_classes)
    if hasattr(tree_model, "classes_"):
        if value.shape[1] != 1:
            raise ValueError("a multi-output classifier's trees are not read here.")
        value = value[:, 0, :]
        value = value / value.sum(axis=1, keepdims=True)
    else:
        value = value[:, :, 0]
    feature = np.asarray(tree.feature, dtype=np.int64)
    if columns is not None:
        feature = np.where(feature >= 0, np.asarray(columns, dtype=np.int64)[np.maximum(feature, 0)], -1)
    missing = getattr(tree, "missing_go_to_left", np.zeros(feature.shape[0], dtype=np.uint8))
    return {
        "feature": np.where(feature >= 0, feature, -1),
        "threshold": np.asarray(tree.threshold, dtype=np.float64),
        "left": np.asarray(tree.children_left),
        "right": np.asarray(tree.children_right),
        "missing_left": np.asarray(missing, dtype=np.bool_),
        "value": value * scale,
    }


def _gradient_boosting_trees(model: Any) -> list[dict[str, np.ndarray]]:
    """Read a gradient boosting model's stages: tree k of a stage scores output k, times the learning rate.

    Only a constant initial score is read (``init="zero"`` or the default dummy estimator): another
    ``init`` may be constant on the rows checked and not elsewhere.
    """
    from sklearn.dummy import DummyClassifier, DummyRegressor

    if not (isinstance(model.init_, str) and model.init_ == "zero") and type(model.init_) not in (
        DummyRegressor,
        DummyClassifier,
    ):
        raise ValueError(f"a gradient boosting model with init={type(model.init_).__name__} is not read here.")
    stages = np.asarray(model.estimators_)  # (n_stages, K)
    n_columns = stages.shape[1]
    trees = []
    for stage in stages:
        for column, tree_model in enumerate(stage):
            tree = _sklearn_tree(tree_model, model.learning_rate)
            value = np.zeros((tree["value"].shape[0], n_columns))
            value[:, column] = tree["value"][:, 0]
            trees.append({**tree, "value": value})
    return trees


def _adaboost_trees(model: Any) -> list[dict[str, np.ndarray]]:
    """Read AdaBoost's (SAMME) trees as its decision function sums them: each leaf its class's weighted vote.

    A tree votes w_t / Σ w for the class it predicts (the first of its leaf's largest class weights) and
    −w_t / ((K − 1) Σ w) for the others; with two classes the decision function is the second class's vote
    minus the first's.
    """
    classes = list(model.classes_)
    if len(classes) < 2:
        raise ValueError("an AdaBoost classifier of one class has no votes to read.")
    total = float(np.sum(model.estimator_weights_))
    trees = []
    for tree_model, weight in zip(model.estimators_, model.estimator_weights_, strict=False):
        tree = _sklearn_tree(tree_model, 1.0)
        raw = np.asarray(tree_model.tree_.value)[:, 0, :]  # the tree's own class weights: its argmax, ties first
        voted = np.array([classes.index(label) for label in tree_model.classes_[np.argmax(raw, axis=1)]])
        votes = np.where(np.arange(len(classes)) == voted[:, None], 1.0, -1.0 / (len(classes) - 1)) * weight / total
        if len(classes) == 2:
            votes = votes[:, 1:] - votes[:, :1]
        trees.append({**tree, "value": np.where(tree["feature"][:, None] < 0, votes, 0.0)})
    return trees


def _isolation_trees(model: Any) -> list[dict[str, np.ndarray]]:
    """Read an isolation forest's trees so that their sum is the log of its negated raw score, −log2 · E[h] / c(ψ).

    A leaf's path length h is its depth plus c(n), the average path length of an unbuilt tree on the n training
    rows the leaf holds (Liu et al. 2008); ``score_samples`` is −2^(−Σ_t h_t / (T c(ψ))) for T trees on ψ rows
    each. A tree fitted on a subset of the columns (``max_features`` below 1) splits on them.
    """
    n_trees = len(model.estimators_)
    normaliser = n_trees * _average_path_length(model.max_samples_)
    if normaliser == 0.0:
        raise ValueError("an isolation forest of trees on one row each has a constant score: nothing to explain.")
    scale = -np.log(2.0) / normaliser
    subsets = getattr(model, "_max_features", model.n_features_in_) != model.n_features_in_
    trees = []
    for tree_model, columns in zip(model.estimators_, model.estimators_features_, strict=True):
        tree = _sklearn_tree(tree_model, 1.0, columns if subsets else None)
        nodes = tree_model.tree_
        depth = node_depths(tree["left"], tree["right"], tree["feature"], np.array([0]))
        length = depth + _average_path_length(nodes.n_node_samples)
        trees.append({**tree, "value": np.where(tree["feature"] < 0, scale * length, 0.0)[:, None]})
    return trees


def _average_path_length(n_rows: Any) -> Any:
    """Return c(n), the average path length of a failed search in a binary search tree of n rows.

    0 for n ≤ 1, 1 for n = 2, else 2 H(n − 1) − 2 (n − 1) / n with H(i) ≈ ln i + γ, as scikit-learn's isolation
    forest computes it.

    Examples
    --------
    >>> _average_path_length(np.array([1, 2, 3])).round(6).tolist()
    [0.0, 1.0, 1.207392]
    """
    n = np.asarray(n_rows, dtype=np.float64)
    harmonic = np.log(np.maximum(n - 1.0, 1.0)) + np.euler_gamma
    longer = 2.0 * harmonic - 2.0 * (n - 1.0) / np.maximum(n, 1.0)
    return np.where(n <= 1.0, 0.0, np.where(n <= 2.0, 1.0, longer))


def _histogram_boosting_trees(model: Any) -> list[dict[str, np.ndarray]]:
    """Read a histogram gradient boosting model's predictors (their leaves hold the shrunk values).

    Its trees split the columns of its own preprocessing where it has categorical features
    (:func:`own_preprocessing`): a categorical split sends the codes in its bitset left, the other known
    codes right, and unknown ones the missing way.
    """
    iterations = model._predictors  # not public: read, then checked against the model's outputs
    n_columns = len(iterations[0])
    known = _known_categories(model)
    trees = []
    for predictors in iterations:
        for column, predictor in enumerate(predictors):
            nodes = predictor.nodes
            leaf = nodes["is_leaf"].astype(bool)
            value = np.zeros((nodes.shape[0], n_columns))
            value[:, column] = np.where(leaf, nodes["value"], 0.0)
            tree = {
                "feature": np.where(leaf, -1, nodes["feature_idx"]).astype(np.int64),
                "threshold": nodes["num_threshold"],
                "left": nodes["left"].astype(np.int64),
                "right": nodes["right"].astype(np.int64),
                "missing_left": nodes["missing_go_to_left"].astype(np.bool_),
                "value": value,
            }
            categorical = np.flatnonzero(nodes["is_categorical"].astype(bool) & ~leaf)
            if categorical.size:
                in_left = _bitset_members(predictor.raw_left_cat_bitsets[nodes["bitset_idx"][categorical]])
                is_known = known[nodes["feature_idx"][categorical]]  # type: ignore[index]
                missing_left = tree["missing_left"][categorical, None]
                tree["category_left"] = in_left | (~is_known & missing_left)  # unknown codes go the missing way
                tree["category_of_node"] = np.full(nodes.shape[0], -1, dtype=np.int64)
                tree["category_of_node"][categorical] = np.arange(categorical.size)
                tree["threshold"] = np.where(tree["category_of_node"] >= 0, np.nan, nodes["num_threshold"])
            trees.append(tree)
    return trees


def _known_categories(model: Any) -> np.ndarray | None:
    """Return which codes 0-255 of each column are the model's known categories, bool (d, 256); else None."""
    if getattr(model, "is_categorical_", None) is None:
        return None
    known_bitsets, bitset_of_column = model._bin_mapper.make_known_categories_bitsets()
    return _bitset_members(np.asarray(known_bitsets)[np.asarray(bitset_of_column)])


def _bitset_members(bitsets: np.ndarray) -> np.ndarray:
    """Return the codes 0-255 in each of scikit-learn's bitsets (k, 8) of uint32 words: bool (k, 256)."""
    codes = np.arange(CATEGORY_CODES)
    words = np.asarray(bitsets, dtype=np.uint32)[:, codes >> 5]
    return ((words >> (codes & 31).astype(np.uint32)) & 1).astype(bool)


def _xgboost_trees(model: Any) -> list[dict[str, np.ndarray]]:
    """Read an xgboost gbtree or dart model's trees from its JSON (split conditions and leaves in float32).

    Dart boosting weighs each tree at prediction: its weights (``weight_drop``) sit beside the trees
    from xgboost 3.4 on (a gbtree with dropout parameters) and beside the gbtree before (a ``"dart"``
    booster); each tree's leaves are scaled by its weight.
    """
    booster = model if type(model).__name__ == "Booster" else model.get_booster()
    learner = json.loads(booster.save_raw(raw_format="json"))["learner"]
    boosting = learner["gradient_booster"]
    if boosting["name"] not in ("gbtree", "dart"):
        raise ValueError(f"xgboost's {boosting['name']!r} booster is not read here (gbtree and dart are).")
    missing = getattr(model, "missing", np.nan)
    if not (missing is None or np.isnan(missing)):
        raise ValueError(f"xgboost's missing={missing!r} is not read here (NaN is).")
    forest = boosting["model"] if boosting["name"] == "gbtree" else boosting["gbtree"]["model"]
    weights = forest.get("weight_drop", boosting.get("weight_drop"))
    parameters = learner["learner_model_param"]
    n_columns = max(1, int(parameters.get("num_class", "0")), int(parameters.get("num_target", "1")))
    n_trees = len(forest["trees"])
    best = getattr(model, "best_iteration", None) if type(model).__name__ != "Booster" else None
    if best is not None and "iteration_indptr" in forest:  # early stopping: the wrapper predicts with these
        n_trees = int(forest["iteration_indptr"][best + 1])
    weights = np.ones(n_trees) if weights is None else np.asarray(weights[:n_trees], dtype=np.float32)
    trees = []
    for tree, column, weight in zip(forest["trees"][:n_trees], forest["tree_info"][:n_trees], weights, strict=True):
        if int(tree["tree_param"].get("size_leaf_vector", "1")) > 1 or any(tree["split_type"]):
            raise ValueError("xgboost trees with vector leaves or categorical splits are not read here.")
        left = np.asarray(tree["left_children"], dtype=np.int64)
        single = np.asarray(tree["split_conditions"], dtype=np.float32)
        conditions = single.astype(np.float64)
        leaf = left < 0
        value = np.zeros((left.shape[0], n_columns))
        # a leaf's split condition is its value, times its tree's weight under dart
        value[:, column] = np.where(leaf, single * weight, 0.0)
        trees.append(
            {
                "feature": np.where(leaf, -1, np.asarray(tree["split_indices"], dtype=np.int64)),
                "threshold": conditions,
                "left": left,
                "right": np.asarray(tree["right_children"], dtype=np.int64),
                "missing_left": np.asarray(tree["default_left"], dtype=np.bool_),
                "value": value,
            }
        )
    return trees


def _lightgbm_trees(model: Any) -> list[dict[str, np.ndarray]]:
    """Read a LightGBM model's trees from ``dump_model`` (the best iteration's, as ``predict`` uses).

    LightGBM compares float64 values with ``<=``; a split whose missing type is "None" sends NaN where
    0.0 goes (it reads NaN as 0), "NaN" sends it the default way; it reads |x| ≤ :data:`_LIGHTGBM_ZERO`
    as 0, which only a threshold of −:data:`_LIGHTGBM_ZERO` tells apart (moved one double down here).
    A categorical split (``"=="``) sends the categories it lists left; LightGBM reads a value as its integer
    part (−0.5 as category 0), and sends NaN, values of −1 or less and unlisted categories right.
    Not read: zero-as-missing splits (zeros the default way too), categorical splits on categories of
    :data:`LIGHTGBM_MAX_CATEGORY` or more or sending missing values left, linear trees, random-forest
    averaging, early-stopped predictions (``pred_early_stop``: not a fixed sum), and thresholds beyond
    ±1e300 (``dump_model`` clamps them). A model fitted on pandas category columns maps them to its own
    codes (``pandas_categorical``): not read here, as any model that takes a raw table's columns itself.
    """
    params = {**model.get_params(), **model.booster_.params}
    if params.get("pred_early_stop"):
        raise ValueError("LightGBM's pred_early_stop=True predicts a sum of some of its trees: not read here.")
    dump = model.booster_.dump_model()
    if dump.get("average_output"):
        raise ValueError("LightGBM's random-forest mode (averaged trees) is not read here.")
    n_columns = int(dump["num_tree_per_iteration"])
    trees = []
    for position, tree in enumerate(dump["tree_info"]):
        nodes: list[dict[str, Any]] = []
        pending = [(tree["tree_structure"], -1, "")]
        while pending:  # depth first; children are numbered when they are visited
            node, parent, side = pending.pop()
            index = len(nodes)
            nodes.append(node)
            if parent >= 0:
                nodes[parent][side] = index
            if "leaf_coeff" in node:
                raise ValueError("LightGBM's linear trees are not read here.")
            if "leaf_value" not in node:
                if node["missing_type"] == "Zero" or node["decision_type"] not in ("<=", "=="):
                    raise ValueError("LightGBM's zero-as-missing splits are not read here.")
                pending += [(node["right_child"], index, "_right"), (node["left_child"], index, "_left")]
        leaf = np.array(["leaf_value" in node for node in nodes])
        categorical = np.array([node.get("decision_type") == "==" for node in nodes])
        threshold = np.array(
            [np.nan if is_set else node.get("threshold", 0.0) for node, is_set in zip(nodes, categorical, strict=True)],
            dtype=np.float64,
        )
        if np.any(np.abs(threshold) >= _LIGHTGBM_CLAMPED):
            raise ValueError("LightGBM thresholds beyond ±1e300 are clamped by dump_model: not read here.")
        threshold[threshold == -_LIGHTGBM_ZERO] = np.nextafter(-_LIGHTGBM_ZERO, -np.inf)  # −kZero reads as 0
        missing_left = np.array(  # a categorical split sends NaN and values of −1 or less right
            [
                False
                if is_set
                else node.get("default_left", False)
                if node.get("missing_type") == "NaN"
                else 0.0 <= node.get("threshold", 0.0)
                for node, is_set in zip(nodes, categorical, strict=True)
            ]
        )
        value = np.zeros((len(nodes), n_columns))
        value[leaf, position % n_columns] = [node["leaf_value"] for node in nodes if "leaf_value" in node]
        tree = {
            "feature": np.array([-1 if "leaf_value" in node else node["split_feature"] for node in nodes]),
            "threshold": threshold,
            "left": np.array([node.get("_left", -1) for node in nodes], dtype=np.int64),
            "right": np.array([node.get("_right", -1) for node in nodes], dtype=np.int64),
            "missing_left": missing_left.astype(np.bool_),
            "value": value,
        }
        trees.append(
            {
                **tree,
                **_lightgbm_category_tables(
                    [node for node, is_set in zip(nodes, categorical, strict=True) if is_set], categorical
                ),
            }
        )
    return _same_category_width(trees)


def _lightgbm_category_tables(splits: list[dict[str, Any]], categorical: np.ndarray) -> dict[str, np.ndarray]:
    """Return ``category_of_node`` and ``category_left`` of a LightGBM tree's categorical ``splits``; none: {}.

    A split's threshold lists the categories that go left ("1||3||5").
    """
    if not splits:
        return {}
    listed = [[int(code) for code in str(split["threshold"]).split("||")] for split in splits]
    if any(split.get("default_left", False) for split in splits):
        raise ValueError("LightGBM categorical splits that send missing values left are not read here.")
    width = max(max(codes) for codes in listed) + 1
    if min(min(codes) for codes in listed) < 0 or width > LIGHTGBM_MAX_CATEGORY:
        raise ValueError(
            f"LightGBM categorical splits on categories outside 0-{LIGHTGBM_MAX_CATEGORY - 1} are not read here."
        )
    table = np.zeros((len(splits), width), dtype=np.bool_)
    for row, codes in enumerate(listed):
        table[row, codes] = True
    of_node = np.full(categorical.shape[0], -1, dtype=np.int64)
    of_node[categorical] = np.arange(len(splits))
    return {"category_of_node": of_node, "category_left": table}


def _same_category_width(trees: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """Pad the trees' category tables to one width: the codes past a split's own table go right (not listed)."""
    width = max((tree["category_left"].shape[1] for tree in trees if "category_left" in tree), default=0)
    for tree in trees:
        if "category_left" in tree and tree["category_left"].shape[1] < width:
            table = tree["category_left"]
            tree["category_left"] = np.pad(table, ((0, 0), (0, width - table.shape[1])))
    return trees
