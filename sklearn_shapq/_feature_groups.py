"""Feature groups: columns that enter a game as one player, ordered by their first column."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np


@dataclass(frozen=True)
class FeatureGroups:
    """The players of a game over grouped columns.

    Attributes
    ----------
    names : list of str
        Player names: a group's name, or the column's name for an ungrouped column.
    player_of_column : int ndarray of shape (d,)
        The player each column belongs to.
    """

    names: list[str]
    player_of_column: np.ndarray

    @property
    def n_players(self) -> int:
        """Number of players (groups and ungrouped columns)."""
        return len(self.names)

    @property
    def members(self) -> list[np.ndarray]:
        """Column indices of each player, in column order."""
        return [np.flatnonzero(self.player_of_column == p) for p in range(self.n_players)]

    def column_masks(self, masks: Any) -> Any:
        """Expand player coalitions (m, n_players) to column coalitions (m, d) (any array module)."""
        return masks[:, self.player_of_column]

    def player_data(self, X: np.ndarray) -> np.ndarray:
        """Return rows ``X`` (n, d) with one column per player: a lone column's values, NaN for a group."""
        single = np.bincount(self.player_of_column)[self.player_of_column] == 1
        data = np.full((X.shape[0], self.n_players), np.nan)
        data[:, self.player_of_column[single]] = X[:, single]
        return data


def resolve_feature_groups(feature_groups: Mapping[str, Sequence[Any]] | None, columns: list[str]) -> FeatureGroups:
    """Check ``feature_groups`` against the column names and return the players.

    ``feature_groups`` is {name: [columns by name or index]} or None; ``columns`` the data's names.

    Raises
    ------
    ValueError
        An empty group, an unknown column, a column named twice, or a group named like another column.
    TypeError
        A group that is not a list of names or indices.

    Examples
    --------
    >>> groups = resolve_feature_groups({"ab": ["a", "b"]}, ["c", "a", "d", "b"])
    >>> groups.names, groups.player_of_column.tolist()
    (['c', 'ab', 'd'], [0, 1, 2, 1])
    """
    d = len(columns)
    if feature_groups is None:
        return FeatureGroups(list(columns), np.arange(d))
    position = {name: j for j, name in enumerate(columns)}
    group_of = np.full(d, -1)
    for g, (group, members) in enumerate(feature_groups.items()):
        if isinstance(members, str) or not isinstance(members, Sequence | np.ndarray):
            raise TypeError(f"feature_groups[{group!r}] must be a list of column names or indices, got {members!r}.")
        if len(members) == 0:
            raise ValueError(f"feature_groups[{group!r}] is empty; a group needs at least one column.")
        for member in members:
            j = _column_index(member, position, d, group)
            if group_of[j] >= 0:
                other = list(feature_groups)[group_of[j]]
                where = "twice in that group" if other == group else f"in groups {other!r} and {group!r}"
                raise ValueError(f"Column {columns[j]!r} appears {where}; each column may be in one group only.")
            group_of[j] = g
    names: list[str] = []
    player_of_column = np.empty(d, dtype=np.intp)
    player_of_group: dict[int, int] = {}
    group_names = [str(name) for name in feature_groups]
    for j in range(d):
        g = group_of[j]
        if g < 0:
            player_of_column[j] = len(names)
            names.append(columns[j])
        elif g in player_of_group:
            player_of_column[j] = player_of_group[g]
        else:
            player_of_group[g] = player_of_column[j] = len(names)
            names.append(group_names[g])
    if len(set(names)) != len(names):
        clash = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"Group names {clash} are also names of columns outside the group; rename the group.")
    return FeatureGroups(names, player_of_column)


def _column_index(member: Any, position: dict[str, int], d: int, group: str) -> int:
    if isinstance(member, Integral) and not isinstance(member, bool):
        if not -d <= member < d:  # type: ignore[operator]  # numbers.Integral defines no comparisons
            raise ValueError(f"feature_groups[{group!r}] names column index {member}, but there are {d} columns.")
        return int(member) % d
    if isinstance(member, str) and member in position:
        return position[member]
    raise ValueError(
        f"feature_groups[{group!r}] names {member!r}, which is not a column; columns are {list(position)}."
    )
