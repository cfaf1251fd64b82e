#!/usr/bin/env bash
# Smoke-test the standalone build: packaging/smoke_test.sh [dist/continuum/continuum]
# Offscreen, against a fresh temporary data folder: --version, --help, then a real start that
# shows the main window and closes it the normal way (CONTINUUM_SMOKE_QUIT_AFTER_SHOWN=1, handled
# by packaging/continuum_main.py); checks exit status 0, the window line, the icon, the data
# folder's database and a log free of errors.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-dist/continuum/continuum}
[ -x "$BIN" ] || { echo "no build at $BIN; run packaging/build_pyinstaller.sh" >&2; exit 2; }
DATA=$(mktemp -d "${TMPDIR:-/tmp}/continuum-smoke.XXXXXX")
trap 'rm -rf "$DATA"' EXIT
export QT_QPA_PLATFORM=offscreen
fail() { echo "SMOKE FAIL: $*" >&2; exit 1; }

version=$("$BIN" --version)
echo "$version"
[[ "$version" =~ ^Continuum\ [0-9] ]] || fail "--version printed '$version'"
"$BIN" --help | grep -q -- --data-dir || fail "--help does not mention --data-dir"

start=$(date +%s%N)
set +e
out=$(CONTINUUM_SMOKE_QUIT_AFTER_SHOWN=1 timeout 90 "$BIN" --data-dir "$DATA/data" 2>&1)
rc=$?
set -e
end=$(date +%s%N)
echo "$out"
echo "start-to-exit: $(( (end - start) / 1000000 )) ms, exit status $rc"
[ "$rc" = 0 ] || fail "exit status $rc (124 = still running after 90 s)"
grep -q "^smoke: window shown: title='Continuum'" <<<"$out" || fail "the main window was not shown"
grep -q "icon=yes" <<<"$out" || fail "the window has no icon (resources not bundled?)"
grep -q "entry_points=NONE" <<<"$out" && fail "keyring's backend entry points are missing"
grep -q "mcp=yes" <<<"$out" || fail "the MCP client does not import in this build"
[ -f "$DATA/data/continuum.sqlite" ] || fail "no continuum.sqlite in the data folder"
if grep -E "ERROR|Traceback" "$DATA/data/logs/continuum.log" 2>/dev/null; then
  fail "errors in the log"
fi
echo "log: $(wc -l <"$DATA/data/logs/continuum.log" 2>/dev/null || echo 0) lines, no errors"
# With a Secret Service available (gnome-keyring + dbus, as in .ci/run), the bundled keyring must
# pick it: proves its backends and their dependencies (secretstorage, jeepney) were bundled.
if command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  export BIN DATA
  kr=$(timeout 120 dbus-run-session -- bash -c '
    echo -n smoke | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
    CONTINUUM_SMOKE_QUIT_AFTER_SHOWN=1 timeout 90 "$BIN" --data-dir "$DATA/data-keyring"' \
    2>/dev/null | grep "^smoke:" || true)
  echo "$kr"
  grep -q "keyring=keyring.backends.SecretService" <<<"$kr" \
    || fail "with a Secret Service running, the bundled keyring did not use it"
else
  echo "(no dbus-run-session/gnome-keyring-daemon: keyring backend check skipped)"
fi
echo "SMOKE OK"
