#!/usr/bin/env bash
# From a clean clone, everything a release ships, into dist/:
#   packaging/build_all.sh
#     dist/continuum_chat-<v>-py3-none-any.whl, dist/continuum_chat-<v>.tar.gz   (wheel, sdist)
#     dist/continuum/                                   (PyInstaller bundle; glibc + libraries checked)
#     dist/continuum-chat_<v>_<arch>.deb                (Debian/Ubuntu)
#     dist/continuum-chat-<v>-linux-<arch>.tar.gz       (portable, with install.sh)
# Makes .venv (pip install -e '.[dev]') when there is none. Needs Debian/Ubuntu with binutils and
# dpkg (apt-get install binutils) and, for the bundle, the X libraries of README "Linux (X11)".
# Prints each step's time and the sizes; stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
if [ ! -x "$PY" ]; then
  python3 -m venv .venv
  "$PY" -m pip install -q -e '.[dev]'
fi
"$PY" -c 'import PyInstaller, build' 2>/dev/null || "$PY" -m pip install -q -e '.[dev]'
rm -rf dist build/pyinstaller build/deb build/tarball
timings=()
step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name"
  "$@"
  timings+=("$name: $((SECONDS - start)) s")
}
step wheel+sdist "$PY" -m build --outdir dist . >/dev/null
step bundle env PYTHON="$PY" packaging/build_pyinstaller.sh
step check "$PY" packaging/bundle_check.py dist/continuum --depends
step smoke packaging/smoke_test.sh dist/continuum/continuum
step deb "$PY" packaging/build_deb.py
step tarball "$PY" packaging/build_tarball.py
echo "== done"
printf '  %s\n' "${timings[@]}"
ls -l dist | grep -v '^total'
echo "bundle: $(du -sh dist/continuum | cut -f1)"
