"""The one registry contract: a :class:`Registry` per kind of plugin, and the one way to register, :func:`register`.

Each registrable base class declares its registry (``registry: ClassVar[Registry]``):
:class:`~sklearn_shapq.algorithms.ShapleyAlgorithm` (``SHAPLEY_ALGORITHMS``),
:class:`~sklearn_shapq.algorithms.TopKAlgorithm` (``TOPK_ALGORITHMS``) and
:class:`~sklearn_shapq.samplers.OrderingSource` (``ORDERING_SOURCES``). A subclass sets its class
attribute ``name`` and is decorated with :func:`register`; one class serves one name (variants are
thin subclasses). Public classes validate their parameters against the live registries, so a
plugin registered after import is accepted everywhere its kind is.

A registry may *derive* the entries of another: ``SHAPLEY_ALGORITHMS`` holds, besides its own
classes, the permutation walk over every registered ordering source, under the source's name
(:meth:`Registry.derive`). The derived class is made on first lookup and cached per source
class, so unregistering the source removes it too and nothing has to be kept in sync.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

__all__ = ["Registry", "RegistryKeyError", "register"]

T = TypeVar("T")


class RegistryKeyError(KeyError):
    """A name no registry entry has (a :class:`KeyError` whose message reads as a sentence)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Registry(Mapping[str, type[T]], Generic[T]):
    """Name → class, for one kind of plugin (a read-only mapping; :func:`register` adds to it).

    Parameters
    ----------
    kind : str
        What an entry is, in words ("Shapley algorithm"): error messages name it.
    reserved : iterable of str, default=()
        Names no class may take (e.g. "auto", which public classes resolve themselves).

    Examples
    --------
    >>> from typing import ClassVar
    >>> class Plugin:
    ...     registry: ClassVar[Registry] = Registry("demo plugin")
    >>> @register
    ... class Hello(Plugin):
    ...     name = "hello"
    >>> Plugin.registry["hello"] is Hello, list(Plugin.registry)
    (True, ['hello'])
    >>> Plugin.registry["bye"]
    Traceback (most recent call last):
    ...
    sklearn_shapq._registry.RegistryKeyError: No demo plugin is registered as 'bye'; the registered names are 'hello'.
    """

    def __init__(self, kind: str, *, reserved: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.reserved = frozenset(reserved)
        self._entries: dict[str, type[T]] = {}
        self._derived_from: Registry[Any] | None = None
        self._make: Callable[[Any], type[T]] = _not_derived
        self._derived: dict[str, tuple[type, type[T]]] = {}  # name -> (origin class, derived class)
        self._derivers: list[Registry[Any]] = []  # registries that derive entries from this one
        self._lock = threading.Lock()

    def derive(self, origin: Registry[Any], make: Callable[[Any], type[T]]) -> None:
        """Also hold ``make(cls)`` under the name of every class ``cls`` of ``origin``, now and later.

        ``origin`` stays the one place such names are registered: a derived entry appears and
        disappears with its origin, and a name taken in either registry is refused in the other.
        """
        if self._derived_from is not None:
            raise ValueError(f"the {self.kind} registry already derives from the {self._derived_from.kind} registry.")
        clash = sorted(set(self._entries) & set(origin))
        if clash:
            raise ValueError(f"names registered both as {self.kind} and as {origin.kind}: {clash}.")
        self._derived_from, self._make = origin, make
        origin._derivers.append(self)

    # ------------------------------------------------------------------ the mapping

    def __getitem__(self, name: str) -> type[T]:
        entry = self._entries.get(name)
        if entry is not None:
            return entry
        origin = self._derived_from
        if origin is not None and name in origin._entries:
            return self._derived_entry(name, origin._entries[name])
        raise RegistryKeyError(self._unknown(name))

    def __iter__(self) -> Iterator[str]:
        yield from list(self._entries)
        if self._derived_from is not None:
            yield from [name for name in list(self._derived_from) if name not in self._entries]

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        if name in self._entries:
            return True
        return self._derived_from is not None and name in self._derived_from

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(map(repr, self))})"

    # ------------------------------------------------------------------ adding and removing

    def add(self, cls: type[T]) -> type[T]:
        """Register ``cls`` under its own class attribute ``name`` (what :func:`register` calls)."""
        name = vars(cls).get("name")
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"{cls.__qualname__} must set its own class attribute `name` (a non-empty str) to be registered "
                f"as a {self.kind}: one class serves one name, so a variant is a subclass with its own name."
            )
        if inspect.isabstract(cls):
            missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
            raise TypeError(
                f"{cls.__qualname__} is abstract (it does not define {missing}): it cannot be a {self.kind}."
            )
        claims = [*self._claims(name, derived=True)]
        for deriver in self._derivers:  # its own names: the walks it derives from us are ours
            claims += deriver._claims(name, derived=False)
        refusals = [claim for holder, claim in claims if holder is not cls]
        if refusals:
            raise ValueError(f"{refusals[0]}: unregister it first, or give {cls.__qualname__} another name.")
        self._entries[name] = cls
        return cls

    def unregister(self, name: str) -> type[T]:
        """Remove the class registered as ``name`` and return it (its derived entries go with it)."""
        if name not in self._entries:
            origin = self._derived_from
            if origin is not None and name in origin:
                raise ValueError(
                    f"{name!r} is derived from the {origin.kind} of that name: unregister it from the "
                    f"{origin.kind} registry."
                )
            raise RegistryKeyError(self._unknown(name))
        return self._entries.pop(name)

    def _claims(self, name: str, derived: bool) -> list[tuple[type | None, str]]:
        """Who holds ``name`` here, as (class or None, a description): reserved, an entry, a derived entry."""
        if name in self.reserved:
            return [(None, f"{name!r} is reserved: public classes resolve it to a {self.kind} themselves")]
        if name in self._entries:
            holder = self._entries[name]
            return [(holder, f"{name!r} is already the {self.kind} {holder.__module__}.{holder.__qualname__}")]
        origin = self._derived_from
        if derived and origin is not None and name in origin._entries:
            return [(origin._entries[name], f"{name!r} is already the {self.kind} derived from {origin.kind} {name!r}")]
        return []

    def _derived_entry(self, name: str, origin: type) -> type[T]:
        """Return the class derived from ``origin``, made once per origin class."""
        with self._lock:
            cached = self._derived.get(name)
            if cached is None or cached[0] is not origin:
                cached = (origin, self._make(origin))
                self._derived[name] = cached
            return cached[1]

    def _unknown(self, name: object) -> str:
        names = ", ".join(map(repr, self)) or "none"
        return f"No {self.kind} is registered as {name!r}; the registered names are {names}."


def _not_derived(origin: type) -> Any:
    raise AssertionError("this registry derives no entries")


def register(cls: type[T]) -> type[T]:
    """Class decorator: register ``cls`` under its class attribute ``name`` in the registry of its kind.

    The registry is the one its base class declares (``registry``): a subclass of
    :class:`~sklearn_shapq.algorithms.ShapleyAlgorithm` becomes a Shapley algorithm
    (``PermutationShapExplainer(algorithm=name)``), of
    :class:`~sklearn_shapq.algorithms.TopKAlgorithm` a top-k algorithm
    (``TopKShapley(algorithm=name)``), of :class:`~sklearn_shapq.samplers.OrderingSource` an
    ordering source, whose permutation walk is then also a Shapley algorithm of the same name.

    Raises
    ------
    TypeError
        ``cls`` has no registry, does not set its own ``name``, or is abstract.
    ValueError
        The name is taken (in this registry, or as a Shapley algorithm for an ordering source and
        vice versa), or reserved ("auto").

    Examples
    --------
    >>> import sklearn_shapq
    >>> from sklearn_shapq.samplers import ORDERING_SOURCES
    >>> from sklearn_shapq.samplers._sources import MonteCarloSource
    >>> @sklearn_shapq.register
    ... class MyMonteCarlo(MonteCarloSource):
    ...     name = "my_mc"
    >>> from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS
    >>> SHAPLEY_ALGORITHMS["my_mc"].ordering_source is MyMonteCarlo
    True
    >>> _ = ORDERING_SOURCES.unregister("my_mc")
    >>> "my_mc" in SHAPLEY_ALGORITHMS
    False
    """
    registry = getattr(cls, "registry", None)
    if not isinstance(registry, Registry):
        raise TypeError(
            f"{getattr(cls, '__qualname__', cls)!r} has no registry: register takes a subclass of ShapleyAlgorithm, "
            "TopKAlgorithm or OrderingSource."
        )
    return registry.add(cls)
