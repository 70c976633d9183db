#!/usr/bin/env bash
# ndarray's parallel tests against throttle's rayon facades (issue 15): a crate that builds
# parallel iterators on rayon's plumbing (`ndarray::parallel`: `Producer`s, `UnindexedProducer`s,
# `bridge`, ...) compiled and run on throttle, unchanged.
#
# Fetches ndarray 0.16.1 from crates.io into cargo's registry (a scratch crate that depends on
# it, `cargo fetch`), copies the unpacked package to target/ndarray-tests/ndarray, adds a
# [patch.crates-io] that points rayon and rayon-core at compat/, checks that the patch took
# (the resolved rayon is the facade), and runs ndarray's own tests par_rayon, par_azip and
# par_zip with its `rayon` and `approx` features. Prints one row per test file, as
# rayon-tests.sh does. Nothing it copies is committed (it all lives under target/).
#
# Exit status: 1 if a file fails to compile, has a failing test or times out, or if the facade
# was not used; 0 otherwise.
#
# Usage: scripts/ndarray-tests.sh [--release] [--timeout SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

NDARRAY_VERSION=0.16.1
TESTS=(par_rayon par_azip par_zip)

profile_flag=()
per_file_timeout=600
while [ $# -gt 0 ]; do
  case "$1" in
    --release) profile_flag=(--release); shift ;;
    --timeout)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "ndarray-tests.sh: invalid value '${2:-}' for '--timeout': expected whole seconds > 0" >&2
        exit 2
      fi
      per_file_timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ndarray-tests.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

WORK=$ROOT/target/ndarray-tests
export CARGO_TARGET_DIR=$WORK/target
export CARGO_TERM_COLOR=never
mkdir -p "$WORK"

# --- 1. The exact release, fetched into cargo's registry by a scratch crate -----------------
mkdir -p "$WORK/fetch/src"
cat > "$WORK/fetch/Cargo.toml" <<EOF
[package]
name = "ndarray-tests-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
ndarray = { version = "=$NDARRAY_VERSION", features = ["rayon", "approx"] }
EOF
: > "$WORK/fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$WORK/fetch/Cargo.toml"
SRC=$(cargo metadata --quiet --format-version 1 --manifest-path "$WORK/fetch/Cargo.toml" |
  grep -o "\"manifest_path\":\"[^\"]*/ndarray-$NDARRAY_VERSION/Cargo.toml\"" | sed -n 1p |
  sed -e 's/^"manifest_path":"//' -e 's#/Cargo.toml"$##')
if [ -z "$SRC" ] || [ ! -d "$SRC/tests" ]; then
  echo "ndarray-tests.sh: could not find ndarray $NDARRAY_VERSION's sources in cargo's registry" >&2
  exit 1
fi

# --- 2. The package itself, patched onto the facades ------------------------------------------
CRATE=$WORK/ndarray
rm -rf "$CRATE"
cp -R "$SRC" "$CRATE"
chmod -R u+w "$CRATE"
# The shipped lock file pins the real rayon; the patch re-resolves it.
rm -f "$CRATE/Cargo.lock"
cat >> "$CRATE/Cargo.toml" <<EOF

[workspace]

[patch.crates-io]
rayon = { path = "$ROOT/compat/rayon" }
rayon-core = { path = "$ROOT/compat/rayon-core" }
EOF
features=(--features rayon,approx)
rayon_manifest=$(cargo metadata --quiet --format-version 1 "${features[@]}" \
  --manifest-path "$CRATE/Cargo.toml" |
  grep -o '"name":"rayon","version":"[^"]*","id":"[^"]*"' | sed -n 1p)
case "$rayon_manifest" in
  *compat/rayon*|*path+file*) ;;
  *)
    echo "ndarray-tests.sh: rayon did not resolve to the facade: $rayon_manifest" >&2
    exit 1 ;;
esac

# --- 3. Build and run each test file ----------------------------------------------------------
LOGS=$WORK/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
rows=()
bad=0
for name in "${TESTS[@]}"; do
  log="$LOGS/$name.log"
  compiles=no passed=- failed=-
  printf 'ndarray-tests.sh: %s ... ' "$name" >&2
  if cargo test "${profile_flag[@]}" "${features[@]}" --manifest-path "$CRATE/Cargo.toml" \
    --test "$name" --no-run > "$log.build" 2>&1; then
    compiles=yes
    status=0
    timeout "$per_file_timeout" cargo test "${profile_flag[@]}" "${features[@]}" \
      --manifest-path "$CRATE/Cargo.toml" --test "$name" > "$log" 2>&1 || status=$?
    passed=$({ grep -Eo '[0-9]+ passed' "$log" || true; } | awk '{s += $1} END {print s + 0}')
    failed=$({ grep -Eo '[0-9]+ failed' "$log" || true; } | awk '{s += $1} END {print s + 0}')
    if [ "$status" -eq 124 ]; then
      verdict="timeout (${per_file_timeout}s)"
    elif [ "$status" -ne 0 ]; then
      verdict="FAIL (exit $status)"
      [ "$failed" = 0 ] && failed="?"
    else
      verdict=ok
    fi
  else
    verdict="compile errors: $(grep '^error' "$log.build" | grep -vc 'could not compile' || true)"
  fi
  [ "$verdict" = ok ] || bad=1
  printf '%s\n' "$verdict" >&2
  rows+=("$(printf '| %-10s | %-8s | %6s | %6s | %-20s |' \
    "$name" "$compiles" "$passed" "$failed" "$verdict")")
done

echo
echo "ndarray $NDARRAY_VERSION's parallel tests against compat/ (logs: target/ndarray-tests/logs/)"
printf '| %-10s | %-8s | %6s | %6s | %-20s |\n' file compiles passed failed result
printf '|%s|%s|%s|%s|%s|\n' ------------ ---------- -------- -------- ----------------------
for r in "${rows[@]}"; do echo "$r"; done
exit "$bad"
