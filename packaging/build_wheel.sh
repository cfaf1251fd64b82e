#!/usr/bin/env bash
# Build the wheel and sdist into dist/ (or $1): python -m build, from the sdist.
#   packaging/build_wheel.sh [OUTDIR]
# Uses .venv/bin/python when present; installs 'build' into it if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=${1:-dist}
"$PY" -c 'import build' 2>/dev/null || "$PY" -m pip install -q build
"$PY" -m build --outdir "$OUT" .
ls -l "$OUT"
