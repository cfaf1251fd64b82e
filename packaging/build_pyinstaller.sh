#!/usr/bin/env bash
# Build the standalone onedir app with PyInstaller: dist/continuum/continuum
#   packaging/build_pyinstaller.sh            (uses .venv; installs pyinstaller into it if missing)
# Prints the build time and the bundle size. Then run packaging/smoke_test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
"$PY" -c 'import PyInstaller' 2>/dev/null || "$PY" -m pip install -q 'pyinstaller>=6.10'
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/continuum.spec
end=$(date +%s)
echo "build time: $((end - start)) s"
echo "bundle size: $(du -sh dist/continuum | cut -f1) ($(find dist/continuum -type f | wc -l) files)"
