"""A strict numpy twin of the CUDA backend: device arrays that refuse to mix with host arrays.

The CUDA backend's array code runs in CI with ``ArrayBackend(numpy)``, but numpy arrays mix
freely with host arrays, lists and scipy, so a forgotten transfer still runs there and fails only
on a GPU. cupy refuses a host array (or a list) as an operand or an index, and conversion to the
host except by ``.get()``. :class:`StrictArray` wraps a numpy array and refuses the same, and
:class:`StrictBackend` counts what does come to the host: arrays (``to_numpy``) and scalars
(``int``, ``float``, ``bool``, ``item``). Code that runs on it runs on cupy's rules, with numpy's
arithmetic, so its results equal those of numpy bit for bit.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from sklearn_shapq.backends import ArrayBackend

_CREATION = {"asarray", "array", "zeros", "ones", "full", "empty", "arange", "eye", "linspace"}
"""Namespace functions that take host data (explicit copies to the device, as in cupy)."""


class HostTransferError(TypeError):
    """A host array met a device array, or a device array was converted to the host implicitly."""


class Transfers:
    """What came to the host: the shapes of arrays copied by ``to_numpy``, and a count of scalars."""

    def __init__(self) -> None:
        self.arrays: list[tuple[int, ...]] = []
        self.scalars = 0


def _device(value: Any, transfers: Transfers) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return StrictArray(np.asarray(value), transfers)
    if isinstance(value, tuple):
        return tuple(_device(v, transfers) for v in value)
    return value


def _strict(value: Any) -> Any:
    """The numpy array behind a device operand; host arrays and lists of numbers are refused."""
    if isinstance(value, StrictArray):
        return value.array
    if isinstance(value, np.ndarray):
        raise HostTransferError(f"a host array of shape {value.shape} met a device array")
    if isinstance(value, list):
        if not any(isinstance(v, StrictArray) for v in value):
            raise HostTransferError(f"a list {value!r} met a device array")
        return [_strict(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_strict(v) for v in value)
    if isinstance(value, dict):
        return {key: _strict(v) for key, v in value.items()}
    return value  # Python and numpy scalars, slices, None, Ellipsis, dtypes


def _unwrap(value: Any) -> Any:
    """The numpy data of ``value`` for a creation function (host data allowed)."""
    if isinstance(value, StrictArray):
        return value.array
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


class StrictArray:
    """A device array of the strict twin: a numpy array that only meets device arrays and scalars."""

    __slots__ = ("array", "transfers")
    __hash__ = None

    def __init__(self, array: np.ndarray, transfers: Transfers) -> None:
        self.array = array
        self.transfers = transfers

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise HostTransferError("implicit conversion of a device array to a host array; use .get()")

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if "out" in kwargs:
            kwargs["out"] = tuple(_strict(o) for o in kwargs["out"])
        result = getattr(ufunc, method)(*_strict(inputs), **_strict(kwargs))
        return _device(result, self.transfers)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _device(func(*_strict(args), **_strict(kwargs)), self.transfers)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("tolist", "tobytes", "data", "ctypes"):
            raise AttributeError(f"a device array gives no {name}: copy it to the host with .get()")
        attribute = getattr(self.array, name)
        if not callable(attribute):
            return _device(attribute, self.transfers) if isinstance(attribute, np.ndarray) else attribute

        def method(*args: Any, **kwargs: Any) -> Any:
            return _device(attribute(*_strict(args), **_strict(kwargs)), self.transfers)

        return method

    def __repr__(self) -> str:
        return f"StrictArray({self.array!r})"

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, key: Any) -> Any:
        return _device(self.array[_strict(key)], self.transfers)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.array[_strict(key)] = _strict(value)

    def get(self) -> np.ndarray:
        """Copy to the host (cupy's explicit transfer)."""
        return self.array.copy()

    def item(self) -> Any:
        self.transfers.scalars += 1
        return self.array.item()

    def _scalar(self, convert: Any) -> Any:
        if self.array.size != 1:
            raise HostTransferError(f"only size-1 device arrays become scalars, got shape {self.array.shape}")
        self.transfers.scalars += 1
        return convert(self.array)

    def __bool__(self) -> bool:
        return self._scalar(bool)

    def __int__(self) -> int:
        return self._scalar(int)

    def __float__(self) -> float:
        return self._scalar(float)

    def __index__(self) -> int:
        return self._scalar(operator.index)


def _operator(ufunc: np.ufunc, reflected: bool = False) -> Any:
    if reflected:
        return lambda self, other: self.__array_ufunc__(ufunc, "__call__", other, self)
    return lambda self, other: self.__array_ufunc__(ufunc, "__call__", self, other)


def _in_place(ufunc: np.ufunc) -> Any:
    def operate(self: StrictArray, other: Any) -> StrictArray:
        ufunc(self.array, _strict(other), out=self.array)
        return self

    return operate


for _name, _ufunc in {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "matmul": np.matmul,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
}.items():
    setattr(StrictArray, f"__{_name}__", _operator(_ufunc))
    setattr(StrictArray, f"__r{_name}__", _operator(_ufunc, reflected=True))
    setattr(StrictArray, f"__i{_name}__", _in_place(_ufunc))
for _name, _ufunc in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal}.items():
    setattr(StrictArray, f"__{_name}__", _operator(_ufunc))
for _name, _ufunc in {"gt": np.greater, "ge": np.greater_equal}.items():
    setattr(StrictArray, f"__{_name}__", _operator(_ufunc))
for _name, _ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}.items():
    setattr(StrictArray, f"__{_name}__", lambda self, _u=_ufunc: self.__array_ufunc__(_u, "__call__", self))


class _Ufunc:
    """A numpy ufunc of the strict namespace (its methods, e.g. ``add.reduceat``, included)."""

    def __init__(self, ufunc: np.ufunc, transfers: Transfers) -> None:
        self.ufunc, self.transfers = ufunc, transfers

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _device(self.ufunc(*_strict(args), **_strict(kwargs)), self.transfers)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.ufunc, name)
        return lambda *args, **kwargs: _device(method(*_strict(args), **_strict(kwargs)), self.transfers)


class StrictNamespace:
    """numpy's functions on :class:`StrictArray`: creation functions take host data, the others refuse it."""

    __name__ = "strict_numpy"

    def __init__(self, transfers: Transfers) -> None:
        self.transfers = transfers

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(np, name)
        if isinstance(attribute, np.ufunc):
            return _Ufunc(attribute, self.transfers)
        if isinstance(attribute, type) or not callable(attribute):
            return attribute  # dtypes, constants
        if name in _CREATION:
            return lambda *args, **kwargs: _device(attribute(*_unwrap(args), **_unwrap(kwargs)), self.transfers)
        return lambda *args, **kwargs: _device(attribute(*_strict(args), **_strict(kwargs)), self.transfers)


class StrictBackend(ArrayBackend):
    """The CUDA backend's array code on :class:`StrictArray`; ``transfers`` records what came to the host."""

    def __init__(self) -> None:
        self.transfers = Transfers()
        super().__init__(StrictNamespace(self.transfers), "strict-twin")

    def __reduce__(self) -> tuple:
        return (StrictBackend, ())

    @property
    def is_gpu(self) -> bool:
        return True

    def to_numpy(self, a: Any) -> np.ndarray:
        if isinstance(a, StrictArray):
            self.transfers.arrays.append(a.array.shape)
            return a.get()
        return np.asarray(a)
