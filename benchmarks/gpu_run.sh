#!/usr/bin/env bash
# One call on a lent GPU machine (see doc/benchmarks.md, "On a GPU"): install the wheels its image lacks
# (carried in .whl/), run the gpu-marked tests, the GPU benchmark and the whole suite, each under its own
# time limit, and write what they gave to $OUT (gpu_*.json, logs). From the repository root:
#
#     OUT=/tmp/gpu bash benchmarks/gpu_run.sh [deadline seconds, default 480]
#
# Prepare .whl/ beforehand on a machine with pip (python 3.12, manylinux x86-64): xgboost, shap and slicer
# (dask and distributed too, for the dask tests). Test names are logged as they finish (-v), so a run cut
# by its time limit still names its failures; the limits send SIGINT first, so pytest still writes its summary and XML.
set -u
OUT="${OUT:-/tmp/gpu_out}"
deadline="${1:-480}"
mkdir -p "$OUT"
start=$(date +%s)
left() { echo $((start + deadline - $(date +%s))); }
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD"
else
  export PYTHONPATH="$PWD"
fi
nvidia-smi > "$OUT/nvidia_smi.txt" 2>&1
python3 -c "import cupy, numba, sklearn, shap, xgboost, sklearn_shapq; print('imports ok', cupy.__version__, numba.__version__, sklearn.__version__, shap.__version__, xgboost.__version__)"
# the gpu-marked tests: each compares the CUDA backend with the CPU (dask is not on the image)
timeout -s INT -k 15 150 python3 -m pytest tests -m gpu -v --timeout 120 -p no:cacheprovider --ignore=tests/test_dask.py \
  --junitxml="$OUT/gpu_tests.xml" > "$OUT/gpu_tests.log" 2>&1
echo "gpu tests: rc $? after $(( $(date +%s) - start )) s"; grep -E "(FAILED|ERROR)" "$OUT/gpu_tests.log" | tail -20
timeout -s INT -k 15 220 python3 benchmarks/bench_gpu.py --out-dir "$OUT" > "$OUT/gpu_bench.log" 2>&1
echo "bench: rc $? after $(( $(date +%s) - start )) s"; tail -25 "$OUT/gpu_bench.log"
# the whole suite with cupy and a GPU present, in parallel workers, in the time left; one OpenMP/BLAS thread a
# worker (14 workers of 16 threads each starved scikit-learn's histogram boosting fits past their time limit)
if [ "$(left)" -gt 30 ]; then
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=2 timeout -s INT -k 15 "$(left)" python3 -m pytest -v -n 14 --timeout 120 -rfE -p no:cacheprovider --ignore=tests/test_dask.py \
    --junitxml="$OUT/gpu_suite.xml" > "$OUT/gpu_suite.log" 2>&1
  echo "suite: rc $? after $(( $(date +%s) - start )) s"; grep -E "(FAILED|ERROR)" "$OUT/gpu_suite.log" | tail -30
fi
