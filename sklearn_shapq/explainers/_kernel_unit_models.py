"""Read fitted kernel machines as networks of one hidden layer: a unit per anchor, the kernel its activation.

A kernel machine's output is f(x) = Σ_j w_j κ(u_j(x)) + b over its anchors s_j (support vectors, training
rows), where u_j is

- a squared scaled distance Σ_c (q_c − s̃_jc)² of q = x / ℓ to s̃_j = s_j / ℓ (RBF, Matérn with ν in
  {0.5, 1.5, 2.5, ∞}, rational quadratic), a sum of one term per player; or
- a dot product γ x·s_j + c₀ (polynomial, sigmoid and linear kernels, a Gaussian process's ``DotProduct``
  and its powers), affine in the players.

Either way u_j of a hybrid row is a sum of each player's term, the row's or the background row's, as a
network's first layer: :func:`~sklearn_shapq.backends.network_table` enumerates the coalitions, with the
kernel's profile (:data:`~sklearn_shapq.backends.KERNEL_PROFILES`) as the activation (a distance's terms
summed as they are, non-negative: at an anchor u = 0 exactly, where Matérn ν = 1/2 has an infinite slope). The
caller checks the reading against the model's outputs on every background row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (
    RBF,
    DotProduct,
    Exponentiation,
    Kernel,
    Matern,
    RationalQuadratic,
)
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq.explainers._kernel_models import dual_coefficients, kernel_terms
from sklearn_shapq.explainers._network_models import FIRST_UNIT_WORK, Network
from sklearn_shapq.explainers._output_links import OutputLink, preprocessed

KERNEL_MACHINES = (SVR, NuSVR, SVC, NuSVC, OneClassSVM, KernelRidge, GaussianProcessRegressor)
"""The kernel machines read here (a multiclass SVC's one-vs-one decision values, with that shape)."""
_MATERN_PROFILES = {0.5: "matern_0.5", 1.5: "matern_1.5", 2.5: "matern_2.5", np.inf: "gaussian"}


@dataclass(frozen=True)
class UnitKernel:
    """A kernel as a profile of one affine statistic u of the pair of rows.

    Attributes
    ----------
    profile : str
        κ (:data:`~sklearn_shapq.backends.ACTIVATIONS`): a distance's profile, "power" or "tanh" of a dot
        product, or "identity" (a linear kernel).
    parameter : float
        The profile's (a rational quadratic's α, a power's exponent).
    scale : ndarray of shape (d,)
        A distance's 1/ℓ per column (then u = Σ_c (scale_c (x_c − s_c))²); a dot product's γ (u = γ x·s + shift),
        repeated.
    shift : float
        A dot product's constant c₀.
    distance : bool
        Whether u is a squared distance.
    amplitude : float
        The kernel's factor (a ConstantKernel times it).
    constant : float
        A constant added to the kernel (a ConstantKernel summed with it).
    """

    profile: str
    parameter: float
    scale: np.ndarray
    shift: float = 0.0
    distance: bool = True
    amplitude: float = 1.0
    constant: float = 0.0


@dataclass(frozen=True)
class KernelUnits:
    """A kernel machine as a network: its unit inputs' map and the network on them.

    Attributes
    ----------
    network : Network
        First layer (the unit inputs' columns, anchors): the scaled anchors of a distance, or a dot product's
        weights; its activation the kernel's profile; last layer the dual weights and intercept.
    scale : ndarray of shape (d,)
        A distance's unit inputs are the rows times it (1/ℓ, as scikit-learn's kernels scale them); a dot
        product's are the rows (its weights are scaled).
    """

    network: Network
    scale: np.ndarray

    @property
    def work_per_anchor(self) -> int:
        """A coalition's work per anchor, in :class:`Network`'s units: its unit's sum and activation, its weights.

        The model's own output costs the same per anchor, so the network path bounds 2^p times this alone.
        """
        network = self.network
        return FIRST_UNIT_WORK + network.activation_work + network.weights[-1].shape[1]

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        """Return the unit inputs (n, d) of rows (n, d) in the model's input units."""
        return np.asarray(rows, dtype=np.float64) * self.scale


class UnitInputs:
    """A Pipeline's column-wise steps (or None), then a kernel machine's unit inputs (:meth:`KernelUnits.inputs`).

    Parameters
    ----------
    steps : fitted transformer or None
    units : KernelUnits
    """

    def __init__(self, steps: Any, units: KernelUnits) -> None:
        self.steps, self.units = steps, units

    @property
    def feature_names_in_(self) -> Any:
        """The steps' input names where they were fitted on a DataFrame (:func:`preprocessed` passes a DataFrame)."""
        return getattr(self.steps, "feature_names_in_", None)

    def transform(self, rows: Any) -> np.ndarray:
        """Return the unit inputs of ``rows``."""
        return self.units.inputs(preprocessed(self.steps, rows))


def extract_kernel_units(model: Any, n_outputs: int, output: str) -> KernelUnits:
    """Read a kernel machine as a network of one hidden layer.

    Parameters
    ----------
    model : fitted estimator
        One of :data:`KERNEL_MACHINES`: its kernel RBF, polynomial, sigmoid or linear (libsvm's and kernel
        ridge's names), or a Gaussian-process kernel (a Gaussian process's, or kernel ridge's kernel object):
        one of RBF, Matérn (ν 0.5, 1.5, 2.5 or ∞), RationalQuadratic, DotProduct or a power of it, times and
        plus ConstantKernels, plus WhiteKernels (zero off the training rows).
    n_outputs : int
        Columns of the explained output.
    output : str
        "predict" of a regressor, "margin" (``decision_function``) of a support vector classifier or a
        one-class SVM.

    Returns
    -------
    KernelUnits

    Raises
    ------
    TypeError
        ``model`` is not a kernel machine read here, or its kernel is not.
    ValueError
        Another output (a probability, a label), or another number of outputs.

    Examples
    --------
    >>> from sklearn.gaussian_process import GaussianProcessRegressor
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> X = np.random.default_rng(0).normal(size=(30, 3))
    >>> model = GaussianProcessRegressor(Matern(nu=1.5), optimizer=None).fit(X, X[:, 0])
    >>> units = extract_kernel_units(model, 1, "predict")
    >>> units.network.activation, [w.shape for w in units.network.weights], units.network.distance
    ('matern_1.5', [(3, 30), (30, 1)], True)
    """
    if type(model) not in KERNEL_MACHINES:
        raise TypeError(f"{type(model).__name__} is not a kernel machine read here.")
    check_is_fitted(model, "alpha_" if isinstance(model, GaussianProcessRegressor) else None)
    expected = "predict" if isinstance(model, (SVR, NuSVR, KernelRidge, GaussianProcessRegressor)) else "margin"
    if output != expected:
        raise ValueError(
            f"{type(model).__name__}'s output {output!r} is not read from its kernel's units: its {expected!r} is."
        )
    anchors, weights, intercept, _ = dual_coefficients(model)
    if weights.shape[1] != n_outputs:
        raise ValueError(f"the kernel machine gives {weights.shape[1]} outputs; the explained output has {n_outputs}.")
    kernel = _unit_kernel(model, anchors.shape[1])
    intercept = intercept + kernel.constant * weights.sum(axis=0)
    weights = kernel.amplitude * weights
    if kernel.distance:  # u = Σ_c (x_c / ℓ_c − s_c / ℓ_c)²
        first, first_bias, scale = (anchors * kernel.scale).T, np.zeros(anchors.shape[0]), kernel.scale
    else:  # u = γ x·s + c₀, on the rows themselves
        first, first_bias, scale = kernel.scale[:, None] * anchors.T, np.full(anchors.shape[0], kernel.shift), None
    network = Network(
        (np.ascontiguousarray(first), weights),
        (first_bias, intercept),
        kernel.profile,
        OutputLink(output, "identity"),
        kernel.parameter,
        kernel.distance,
    )
    return KernelUnits(network, np.ones(anchors.shape[1]) if scale is None else scale)


def _unit_kernel(model: Any, d: int) -> UnitKernel:
    """Return the model's kernel as a profile of u (:class:`UnitKernel`).

    Raises
    ------
    TypeError
        A kernel not read here.
    """
    name = type(model).__name__
    kernel = model.kernel_ if isinstance(model, GaussianProcessRegressor) else model.kernel
    if isinstance(kernel, Kernel):
        return _gp_unit_kernel(kernel, d)
    if isinstance(model, KernelRidge):
        gamma = 1.0 / d if model.gamma is None else float(model.gamma)
        degree, coef0 = float(model.degree), float(model.coef0)
        kernel = {"polynomial": "poly"}.get(kernel, kernel)
    else:
        gamma, degree, coef0 = float(model._gamma), float(model.degree), float(model.coef0)
    if not isinstance(kernel, str) or kernel not in ("rbf", "poly", "sigmoid", "linear"):
        raise TypeError(f"{name} with kernel={kernel!r} is not read here: rbf, poly, sigmoid and linear are.")
    if kernel == "rbf":  # exp(−γ‖x − s‖²) = exp(−u/2) with u = 2γ‖x − s‖²
        return UnitKernel("gaussian", 0.0, np.full(d, np.sqrt(2.0 * gamma)))
    if kernel == "linear":
        return UnitKernel("identity", 0.0, np.ones(d), distance=False)
    profile = "power" if kernel == "poly" else "tanh"
    return UnitKernel(profile, degree, np.full(d, gamma), coef0, distance=False)


def _gp_unit_kernel(kernel: Kernel, d: int) -> UnitKernel:
    """Read a Gaussian-process kernel: one kernel of a profile, times and plus constants (WhiteKernels drop out)."""
    terms = kernel_terms(kernel)
    constant = sum(amplitude for amplitude, factors in terms if not factors)
    bases = [(amplitude, factors) for amplitude, factors in terms if factors]
    if len(bases) != 1 or len(bases[0][1]) != 1:
        several = "multiplies two kernels" if any(len(factors) > 1 for _, factors in bases) else "sums several kernels"
        raise TypeError(
            f"The kernel {kernel} {several if bases else 'is constant'}: one kernel (times and plus constants) is "
            "read as units."
        )
    amplitude, (base,) = bases[0]
    if not (type(base) in (RBF, Matern, RationalQuadratic, DotProduct) or _power_of_dot_product(base)):
        raise TypeError(
            f"The kernel {kernel} is not read as units: RBF, Matern, RationalQuadratic, DotProduct and its powers, "
            "times and plus ConstantKernels and WhiteKernels are."
        )
    if type(base) is DotProduct or _power_of_dot_product(base):
        power = float(base.exponent) if isinstance(base, Exponentiation) else 1.0
        dot = base.kernel if isinstance(base, Exponentiation) else base
        return UnitKernel("power", power, np.ones(d), float(dot.sigma_0) ** 2, False, amplitude, constant)
    length_scale = np.asarray(base.length_scale, dtype=np.float64).reshape(-1)
    if length_scale.size not in (1, d):
        raise ValueError(f"{type(base).__name__}'s length_scale has {length_scale.size} entries for {d} features.")
    scale = np.broadcast_to(1.0 / length_scale, (d,)).copy()
    if isinstance(base, RationalQuadratic):
        return UnitKernel("rational_quadratic", float(base.alpha), scale, amplitude=amplitude, constant=constant)
    if isinstance(base, Matern) and float(base.nu) not in _MATERN_PROFILES:
        raise TypeError(f"Matern with nu={base.nu} is not read here: nu 0.5, 1.5, 2.5 and inf are.")
    profile = _MATERN_PROFILES[float(base.nu)] if isinstance(base, Matern) else "gaussian"
    return UnitKernel(profile, 0.0, scale, amplitude=amplitude, constant=constant)


def _power_of_dot_product(kernel: Kernel) -> bool:
    """Whether ``kernel`` is a DotProduct raised to a power (``DotProduct() ** p``)."""
    return type(kernel) is Exponentiation and type(kernel.kernel) is DotProduct
