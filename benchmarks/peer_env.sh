#!/usr/bin/env bash
# Build (or update) the Python 3.12 environment in which benchmarks/bench_accuracy.py runs the
# newest peers: shapiq 1.6's RegressionMSR, ProxySHAP, OddSHAP and KernelSHAP, beside shap and us.
#
# shapiq >= 1.5 needs Python >= 3.12 and, at the time of writing, the package registry serves
# only shapiq 1.4.1, so shapiq is installed from a source tree (a checkout or a snapshot of
# https://github.com/mmschlk/shapiq at v1.6.0 or later; its large data CSVs are not needed).
# CI does not use this script: CI runs the benchmark on its own Python with shapiq from the
# registry (the script then runs the peers that shapiq version offers).
#
# Usage (from anywhere; idempotent: rerunning upgrades nothing that is already there):
#
#     benchmarks/peer_env.sh /path/to/shapiq-source          # or: SHAPIQ_SRC=... benchmarks/peer_env.sh
#     /work/venv312/bin/python benchmarks/bench_accuracy.py --quick --output bench_accuracy_peers16.json
#
# Environment variables:
#     SHAPIQ_SRC      the shapiq source tree (the first argument wins)
#     VENV            where the environment goes (default /work/venv312)
#     PYTHON312       the interpreter that builds it (default: pyenv's newest 3.12, else python3.12)
#     SHAPIQ_VERSION  the version the source tree is installed as (default 1.6.0; a snapshot
#                     without git history cannot tell setuptools_scm its version)
#
# From a bare git mirror, a source tree without the data files comes out of
#     mkdir -p /tmp/shapiq16 && git --git-dir=MIRROR archive HEAD -- src pyproject.toml setup.py \
#         README.md LICENSE MANIFEST.in ':(exclude)*.csv' | tar -x -C /tmp/shapiq16
set -euo pipefail

SHAPIQ_SRC="${1:-${SHAPIQ_SRC:-}}"
VENV="${VENV:-/work/venv312}"
SHAPIQ_VERSION="${SHAPIQ_VERSION:-1.6.0}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ -z "${SHAPIQ_SRC}" || ! -f "${SHAPIQ_SRC}/pyproject.toml" ]]; then
    echo "usage: $0 SHAPIQ_SOURCE_DIR   (or SHAPIQ_SRC=...; a shapiq source tree with pyproject.toml)" >&2
    exit 2
fi

if [[ -z "${PYTHON312:-}" ]]; then
    PYTHON312="$(ls -d /root/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V | tail -n 1 || true)"
    PYTHON312="${PYTHON312:-$(command -v python3.12 || true)}"
fi
if [[ -z "${PYTHON312}" ]]; then
    echo "no Python 3.12 found: set PYTHON312" >&2
    exit 2
fi

if [[ ! -x "${VENV}/bin/python" ]]; then
    "${PYTHON312}" -m venv "${VENV}"
fi
PIP=("${VENV}/bin/python" -m pip install --disable-pip-version-check --quiet)

"${PIP[@]}" --upgrade pip
"${PIP[@]}" setuptools setuptools_scm wheel numpy

installed="$("${VENV}/bin/python" -c 'import shapiq; print(shapiq.__version__)' 2>/dev/null || true)"
if [[ "${installed}" != "${SHAPIQ_VERSION}" ]]; then
    SETUPTOOLS_SCM_PRETEND_VERSION="${SHAPIQ_VERSION}" "${PIP[@]}" --no-build-isolation "${SHAPIQ_SRC}"
fi

# The proxies' backends (xgboost for ProxySHAP / RegressionMSR, lightgbm for OddSHAP's surrogate, the
# paper's configuration), the other peer (shap) and the benchmark's own needs; then this package,
# editable, with its bench extra (shapiq>=1.1 is already met by the source install).
"${PIP[@]}" xgboost lightgbm shap scikit-learn matplotlib pandas ruff
"${PIP[@]}" -e "${REPO}[bench]"

"${VENV}/bin/python" - <<'EOF'
import lightgbm, shap, shapiq, sklearn, xgboost
import sklearn_shapq
from shapiq.approximator import KernelSHAP, OddSHAP, ProxySHAP, RegressionMSR  # noqa: F401

print(f"shapiq {shapiq.__version__}, shap {shap.__version__}, xgboost {xgboost.__version__}, "
      f"lightgbm {lightgbm.__version__}, scikit-learn {sklearn.__version__}, sklearn_shapq {sklearn_shapq.__version__}")
EOF
