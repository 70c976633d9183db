#!/usr/bin/env bash
# Prints the path of a GNU make 4.4 binary on stdout, building it once.
#
# Debian 12 (bookworm) ships only make 4.3, which speaks the pipe jobserver; make 4.4 speaks the
# fifo one (--jobserver-style=fifo, --jobserver-auth=fifo:PATH). No bookworm binary package has
# 4.4, so this builds it from Debian's source package make-dfsg 4.4.1-2 (Debian 13, trixie):
# a deb-src entry for trixie goes into its own file /etc/apt/sources.list.d/throttle-trixie-src.sources
# when `apt-get source` cannot find that version, then `apt-get source make-dfsg=4.4.1-2` unpacks
# it with Debian's patches in a temporary folder. Debian's tarball has no doc/ (it is not DFSG
# free) and its first patch takes doc/ out of configure.ac and Makefile.am, but the shipped
# configure still wants doc/Makefile.in: Debian's own build regenerates it (debhelper 13 runs
# dh_autoreconf), and so does this script, with `autoreconf -fi` from Debian's autoconf, automake
# autopoint and pkgconf, before `./configure --disable-nls --without-guile && make`. The result is kept
# as target/tools/make-4.4/make of this repository, so every later call only prints its path.
#
# Idempotent; progress goes to stderr, only the path to stdout. Needs root for apt (as CI is).
set -euo pipefail

MAKE_SRC_PKG=make-dfsg
MAKE_SRC_VER=4.4.1-2
SRC_SUITE=trixie
SOURCES_FILE=/etc/apt/sources.list.d/throttle-trixie-src.sources

repo="$(cd "$(dirname "$0")/.." && pwd)"
dest="$repo/target/tools/make-4.4"
bin="$dest/make"

say() { printf 'make44.sh: %s\n' "$*" >&2; }

is_44() { [ -x "$1" ] && "$1" --version 2>/dev/null | sed -n 1p | grep -Eq '^GNU Make 4\.4(\.|$)'; }

if is_44 "$bin"; then
  printf '%s\n' "$bin"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=0
apt_update() {
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq >&2
    apt_updated=1
  fi
}
need_pkgs=()
for tool in dpkg-source:dpkg-dev gcc:gcc autoreconf:autoconf automake:automake autopoint:autopoint; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need_pkgs+=("${tool#*:}")
done
dpkg -s libc6-dev >/dev/null 2>&1 || need_pkgs+=(libc6-dev)
# configure.ac calls PKG_PROG_PKG_CONFIG: autoreconf needs pkg.m4, which pkgconf ships.
[ -f /usr/share/aclocal/pkg.m4 ] || need_pkgs+=(pkgconf)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  apt_update
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2
fi

# Can apt find the source package at that version? If not, add the deb-src entry and ask again.
# Should trixie have moved on from 4.4.1-2, any 4.4.x source version it offers is taken instead.
has_src() {
  local versions
  versions="$(apt-cache showsrc "$MAKE_SRC_PKG" 2>/dev/null | sed -n 's/^Version: //p')"
  if printf '%s\n' "$versions" | grep -qx "$MAKE_SRC_VER"; then
    return 0
  fi
  local other
  other="$(printf '%s\n' "$versions" | grep -E '^4\.4(\.|-)' | sort -V | tail -n 1)"
  [ -n "$other" ] || return 1
  say "$MAKE_SRC_PKG $MAKE_SRC_VER is not offered; using $other"
  MAKE_SRC_VER="$other"
}
if ! has_src; then
  apt_update
fi
if ! has_src; then
  say "adding deb-src for $SRC_SUITE in $SOURCES_FILE"
  cat >"$SOURCES_FILE" <<SRC
# Added by throttle's scripts/make44.sh: source packages only, for building make 4.4.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $SRC_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -qq >&2
  apt_updated=1
fi
has_src || { say "apt cannot find $MAKE_SRC_PKG $MAKE_SRC_VER even with $SOURCES_FILE"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/make44.XXXXXX")"
trap 'rm -rf "$work"' EXIT
say "apt-get source $MAKE_SRC_PKG=$MAKE_SRC_VER in $work"
(cd "$work" && apt-get source -qq "$MAKE_SRC_PKG=$MAKE_SRC_VER" >&2)
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "$MAKE_SRC_PKG-*" | sed -n 1p)"
[ -n "$src" ] || { say "no unpacked source folder in $work"; ls -la "$work" >&2; exit 1; }

say "building in $src"
jobs="$(nproc 2>/dev/null || echo 1)"
(
  cd "$src"
  # Debian's patched configure.ac and Makefile.am need a regenerated configure (see above).
  autoreconf -fi >&2
  ./configure --disable-nls --without-guile >&2
  make -j"$jobs" >&2
)
[ -x "$src/make" ] || { say "the build left no $src/make"; exit 1; }
is_44 "$src/make" || { say "the built make is not 4.4: $("$src/make" --version | sed -n 1p)"; exit 1; }

mkdir -p "$dest"
cp "$src/make" "$dest/make.tmp"
mv "$dest/make.tmp" "$bin"
say "$("$bin" --version | sed -n 1p) at $bin"
printf '%s\n' "$bin"
