#!/usr/bin/env bash
# One command for every GPU figure the docs give: learner updates/s (state, 2 cameras
# with the small encoder, a frozen ResNet-10 cached and per batch; plain, prefetch, bf16,
# compile), the ResNet-10's images/s, env steps/s with MuJoCo rendering, and PegInsert's
# sample efficiency from pixels. One JSON file; its JSON is the last line printed.
#
#   MUJOCO_GL=egl bash bench/gpu_suite.sh --out results/gpu.json   # on a GPU machine: < 8 min
#   bash bench/gpu_suite.sh --tiny --device cpu                     # CI-sized, on a CPU
#
# Options are bench/gpu_suite.py's (--help). PYTHON picks the interpreter (default: the
# checkout's .venv, else python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then PYTHON="$root/.venv/bin/python"; else PYTHON=python3; fi
fi
export MUJOCO_GL="${MUJOCO_GL:-egl}"
exec "$PYTHON" "$root/bench/gpu_suite.py" "$@"
