"""Entry point of ``sklearn-shapq`` and ``python -m sklearn_shapq``: the command line lives in ``_cli``."""

from __future__ import annotations

import sys

from sklearn_shapq._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
