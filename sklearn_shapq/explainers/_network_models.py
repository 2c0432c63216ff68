"""Read fitted multilayer perceptrons: their layers' weights, the hidden activation and the output's link.

Models: scikit-learn's ``MLPRegressor`` (its prediction: the last layer, or its exp with a Poisson loss)
and ``MLPClassifier`` (a binary or multiclass probability, or its log-odds). The network's last affine
layer gives the model's raw score; the output follows from it through the identity, the exp, the sigmoid
(two classes) or the softmax (more), as :class:`~sklearn_shapq.explainers._output_links.OutputLink`
says. The weights are public attributes (``coefs_``, ``intercepts_``); the caller checks the forward
pass against the model's outputs on every background row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sklearn_shapq.backends import HIDDEN_ACTIVATIONS
from sklearn_shapq.explainers._output_links import OutputLink, margin_links

_OUTPUT_LINKS = {"identity": "identity", "exp": "exp", "logistic": "sigmoid", "softmax": "softmax"}
"""scikit-learn's output activations as links (:data:`~sklearn_shapq.backends.LINKS`); "exp": a Poisson loss."""


COALITION_WORK = 320
"""Multiply-adds of a later layer (run as matrix products) that take the time of one coalition's link and sums."""
OUTPUT_WORK = 560
"""Multiply-adds of a later layer that take the time of the link of each output past the first (a softmax's exp,
division and log-odds: about 14 ns per class, measured by a review on a 60-class network)."""
FIRST_UNIT_WORK = 24
"""Multiply-adds of a later layer that take the time of one first-layer unit of one coalition (added, and activated
by a ReLU). Both measured on 2 cores (``benchmarks/bench_linked_paths.py``'s networks): about 8 ns per
coalition, 0.6 ns per first-layer unit and 0.025 ns per later multiply-add."""
ACTIVATION_WORK = {
    "identity": 0,
    "relu": 0,
    "logistic": 140,
    "tanh": 210,
    "gaussian": 150,
    "matern_0.5": 150,
    "matern_1.5": 150,
    "matern_2.5": 150,
    "rational_quadratic": 300,
    "power": 350,
}
"""Multiply-adds of a later layer that take the time of one hidden unit's activation beyond a ReLU's, per coalition
(an exp about 4 ns on 2 cores here, a power 9 ns); an integer power (a polynomial kernel's degree) by products,
:data:`INTEGER_POWER_WORK`."""
INTEGER_POWER_WORK = 20


@dataclass(frozen=True)
class Network:
    """A fitted multilayer perceptron as the network tables read it.

    Attributes
    ----------
    weights : tuple of ndarray
        Each layer's (inputs, units) matrix, float64; the last gives the raw score.
    biases : tuple of ndarray
        Each layer's (units,) intercepts.
    activation : str
        The hidden layers' (:data:`~sklearn_shapq.backends.ACTIVATIONS`: a kernel machine's units take its
        kernel's profile, :mod:`~sklearn_shapq.explainers._kernel_unit_models`).
    link : OutputLink
        From the raw score to the explained output.
    parameter : float
        The activation's (a kernel profile's).
    distance : bool
        Whether the first layer's input is the squared distance of the row to each unit's weights, plus its bias
        (a kernel machine's distance units), not the affine map.
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    activation: str
    link: OutputLink
    parameter: float = 0.0
    distance: bool = False

    @property
    def work_per_coalition(self) -> int:
        """Time of one coalition of one pair of rows, in a later layer's multiply-adds.

        :data:`COALITION_WORK`, plus :data:`OUTPUT_WORK` per output past the first, plus :data:`FIRST_UNIT_WORK` per
        first-layer unit, plus :data:`ACTIVATION_WORK` per hidden unit, plus the later layers' weights.
        """
        later = sum(w.shape[0] * w.shape[1] for w in self.weights[1:])
        outputs = OUTPUT_WORK * (self.weights[-1].shape[1] - 1)
        hidden = sum(w.shape[1] for w in self.weights[:-1])
        first = FIRST_UNIT_WORK * self.weights[0].shape[1]
        return int(COALITION_WORK + outputs + first + self.activation_work * hidden + later)

    @property
    def activation_work(self) -> int:
        """:data:`ACTIVATION_WORK` of the activation, or :data:`INTEGER_POWER_WORK` for an integer power."""
        integer_power = self.activation == "power" and self.parameter == int(self.parameter) <= 16
        return INTEGER_POWER_WORK if integer_power else ACTIVATION_WORK[self.activation]


def extract_network(model: Any, n_outputs: int, output: str) -> Network:
    """Read a multilayer perceptron's layers.

    Parameters
    ----------
    model : fitted MLPRegressor or MLPClassifier
    n_outputs : int
        Columns of the explained output.
    output : str
        "predict" of a regressor; "probability" or "log_odds" of a classifier.

    Returns
    -------
    Network

    Raises
    ------
    TypeError
        ``model`` is not a multilayer perceptron read here.
    ValueError
        Another output (a label), a multilabel classifier, an activation not read here, or another number of
        outputs.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.neural_network import MLPRegressor
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> with warnings.catch_warnings():  # a short fit does not converge
    ...     warnings.simplefilter("ignore")
    ...     model = MLPRegressor(hidden_layer_sizes=(5,), max_iter=20, random_state=0).fit(X, X[:, 0])
    >>> network = extract_network(model, 1, "predict")
    >>> [w.shape for w in network.weights], network.activation, network.link.link, network.work_per_coalition
    ([(3, 5), (5, 1)], 'relu', 'identity', 445)
    """
    from sklearn.neural_network import MLPClassifier, MLPRegressor

    if type(model) not in (MLPRegressor, MLPClassifier):
        raise TypeError(f"{type(model).__name__} is not a multilayer perceptron read here.")
    classifier = type(model) is MLPClassifier
    if classifier and model._label_binarizer.y_type_ == "multilabel-indicator":
        raise ValueError("a multilabel MLPClassifier is not read here.")
    outputs = ("probability", "log_odds") if classifier else ("predict",)
    if output not in outputs:
        raise ValueError(
            f"{type(model).__name__}'s output {output!r} is not read from its layers: a regressor's prediction, a "
            "classifier's probability and log-odds are."
        )
    if model.activation not in HIDDEN_ACTIVATIONS:
        raise ValueError(f"the hidden activation {model.activation!r} is not read here.")
    if hasattr(model.coefs_[0], "toarray"):
        raise TypeError("a network with sparse weights is not read here.")
    weights = tuple(np.asarray(w, dtype=np.float64) for w in model.coefs_)
    biases = tuple(np.asarray(b, dtype=np.float64) for b in model.intercepts_)
    if weights[-1].shape[1] != n_outputs:
        raise ValueError(f"the network gives {weights[-1].shape[1]} outputs; the explained output has {n_outputs}.")
    out_activation = _OUTPUT_LINKS.get(model.out_activation_)
    if out_activation is None:
        raise ValueError(f"the output activation {model.out_activation_!r} is not read here.")
    link = margin_links(n_outputs)[output] if classifier else OutputLink("predict", out_activation)
    if link.link != out_activation:
        raise ValueError(f"the output activation {model.out_activation_!r} is not the {link.link} of its classes.")
    return Network(weights, biases, str(model.activation), link)
