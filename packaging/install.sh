#!/bin/sh
# Continuum, portable build: put the `continuum` command, the menu entry and the icons in place.
#
#   ./install.sh                  for you: ~/.local/bin, ~/.local/share (as root: /usr/local)
#   ./install.sh --prefix DIR     under DIR/bin and DIR/share
#   ./install.sh --uninstall      remove exactly what an earlier install put there
#
# The program itself stays in this folder (keep it where it is, or move it and run this again).
# It needs glibc GLIBC_BASELINE or newer and the X11 libraries listed in README.txt.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
app_id=io.continuum.Continuum
if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
action=install
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --uninstall) action=uninstall; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
manifest="$prefix/share/continuum-chat/installed-files"

refresh() {  # an icon cache that exists must list the new icons (the menu entry needs no cache:
  # it has no MimeType); none is created, so --uninstall leaves nothing behind
  cache="$prefix/share/icons/hicolor/icon-theme.cache"
  if [ -f "$cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
    gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" 2>/dev/null || true
  fi
}

if [ "$action" = uninstall ]; then
  [ -f "$manifest" ] || { echo "Nothing to remove: no $manifest (was it installed with another --prefix?)" >&2; exit 1; }
  while IFS= read -r file; do rm -f "$file"; done <"$manifest"
  rm -f "$manifest"
  rmdir "$prefix/share/continuum-chat" 2>/dev/null || true
  refresh
  echo "Removed the continuum command, menu entry and icons from $prefix (this folder stays: delete it yourself)."
  exit 0
fi

[ -x "$here/continuum" ] || { echo "install.sh: $here/continuum is missing; unpack the whole archive first" >&2; exit 1; }
mkdir -p "$prefix/bin" "$prefix/share/applications" "$prefix/share/continuum-chat"
: >"$manifest.new"
put() {  # put SOURCE TARGET: copy one file and remember it
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2"
  chmod 644 "$2"
  echo "$2" >>"$manifest.new"
}

ln -sfn "$here/continuum" "$prefix/bin/continuum"
echo "$prefix/bin/continuum" >>"$manifest.new"
# The menu entry starts this copy by its full path, whatever PATH the desktop session has.
sed -e "s|^Exec=continuum|Exec=$here/continuum|" -e "s|^TryExec=continuum|TryExec=$here/continuum|" \
  "$here/share/applications/$app_id.desktop" >"$prefix/share/applications/$app_id.desktop"
chmod 644 "$prefix/share/applications/$app_id.desktop"
echo "$prefix/share/applications/$app_id.desktop" >>"$manifest.new"
(cd "$here/share" && find icons metainfo -type f) | while IFS= read -r file; do
  put "$here/share/$file" "$prefix/share/$file"
done
mv "$manifest.new" "$manifest"
refresh

echo "Installed: $prefix/bin/continuum -> $here/continuum, the menu entry and icons."
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "Note: $prefix/bin is not on your PATH; the menu entry works anyway." ;; esac
# Name X11 libraries the program will ask for, before the first start does.
if command -v ldconfig >/dev/null 2>&1 || [ -x /sbin/ldconfig ]; then
  libs=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p) | awk '{print $1}')
  missing=""
  while IFS= read -r soname; do
    [ -n "$soname" ] || continue
    printf '%s\n' "$libs" | grep -qx "$soname" || missing="$missing $soname"
  done <"$here/system-libraries.txt"
  [ -z "$missing" ] || echo "Missing system libraries (install them; README.txt names the packages):$missing"
fi
