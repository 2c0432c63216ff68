"""Command line: ``python -m sklearn_shapq demo [--out DIR]``."""

from __future__ import annotations

import argparse
import importlib.util
import sys


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface."""
    parser = argparse.ArgumentParser(prog="python -m sklearn_shapq", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="explain an xgboost model and compare with exact TreeSHAP")
    demo.add_argument("--out", default="demo_output", help="folder for the PNG plots (default: demo_output)")
    demo.add_argument("--rows", type=int, default=100, help="rows to explain (default: 100)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    args = parser.parse_args(argv)
    missing = [name for name in ("xgboost", "matplotlib") if importlib.util.find_spec(name) is None]
    if missing:
        parser.exit(
            2,
            f"The demo needs {' and '.join(missing)}, which a plain install leaves out: "
            'pip install "sklearn_shapq[demo]" (or -e ".[demo]" in a clone).\n',
        )
    from sklearn_shapq._demo import run_demo

    run_demo(out=args.out, n_rows=args.rows, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
