"""Progress bars: one delayed tqdm bar for every long loop of the public classes."""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

PROGRESS_DELAY_S = 3.0
"""A bar appears only once its work has run this long (shap's delayed bar), so quick calls stay quiet."""


def progress_bar(enabled: bool, total: int, desc: str, unit: str) -> Any:
    """Return a tqdm bar shown after :data:`PROGRESS_DELAY_S` seconds, or a silent one.

    Examples
    --------
    >>> with progress_bar(False, 10, "explaining", "row") as bar:
    ...     _ = bar.update(10)
    """
    return tqdm(
        total=total, desc=desc, unit=unit, unit_scale=True, disable=not enabled, delay=PROGRESS_DELAY_S, leave=False
    )
