#!/usr/bin/env bash
# rayon's own tests, unchanged, against throttle's rayon facades.
#
# Takes the test files that the crates.io packages rayon 1.12.0 and rayon-core 1.13.0 ship
# (tests/*.rs: 16 and 7 files) and rayon's src/iter/test.rs from cargo's registry (after a
# `cargo fetch` of a scratch crate that depends on both), copies them into two scratch crates
# under target/rayon-tests/ whose [patch.crates-io] points rayon and rayon-core at compat/,
# builds and runs each file on its own, and prints one row per file: does it compile, how many
# tests passed and failed. Nothing it copies is committed (it all lives under target/).
#
# src/iter/test.rs is rayon's unit-test module: it is ported by path substitution only
# (`use super::*` -> `use rayon::iter::*` plus the private imports of rayon's `src/iter/mod.rs`
# that `super::*` also sees, such as `plumbing::*`; `crate::` -> `rayon::`). rayon-core's unit tests
# (src/*/test.rs) run too, as unit_* rows (see below).
#
# Exit status: 1 if a file listed in EXPECTED_PASS fails to compile, has a failing test or
# times out; 0 otherwise (files not listed are reported, not judged). Grow the list as the
# facade grows.
#
# Usage: scripts/rayon-tests.sh [--release] [--timeout SECONDS] [FILTER]
#   FILTER: only files whose "suite/name" contains it (e.g. "rayon-core/", "str").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# Files expected to compile and pass, as suite/name.
EXPECTED_PASS=(
  rayon-core/double_init_fail
  rayon-core/init_zero_threads
  rayon-core/scope_join
  rayon-core/scoped_threadpool
  rayon-core/simple_panic
  rayon-core/stack_overflow_crash
  rayon-core/use_current_thread
  rayon-core/unit_broadcast
  rayon-core/unit_join
  rayon-core/unit_spawn
  rayon-core/unit_thread_pool
  rayon-core/unit_lib
  rayon/chars
  rayon/clones
  rayon/collect
  rayon/cross-pool
  rayon/debug
  rayon/drain_vec
  rayon/intersperse
  rayon/iter_panic
  rayon/named-threads
  rayon/octillion
  rayon/issue671
  rayon/issue671-unzip
  rayon/par_bridge_recursion
  rayon/producer_split_at
  rayon/sort-panic-safe
  rayon/str
  rayon/iter_test
)
# Not expected: rayon-core/unit_scope's four mixed_*_order tests check the order in which a
# thread waiting for an inner scope runs an *outer* scope's spawns; throttle's isolated helping
# runs the inner scope's own spawns first (crates/throttle-core/src/sleep/README.md).

profile_flag=()
per_file_timeout=600
filter=""
while [ $# -gt 0 ]; do
  case "$1" in
    --release) profile_flag=(--release); shift ;;
    --timeout)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "rayon-tests.sh: invalid value '${2:-}' for '--timeout': expected whole seconds > 0" >&2
        exit 2
      fi
      per_file_timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "rayon-tests.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) filter=$1; shift ;;
  esac
done

WORK=$ROOT/target/rayon-tests
export CARGO_TARGET_DIR=$WORK/target
export CARGO_TERM_COLOR=never
mkdir -p "$WORK"

# --- 1. The exact releases, fetched into cargo's registry by a scratch crate ---------------
mkdir -p "$WORK/fetch/src"
cat > "$WORK/fetch/Cargo.toml" <<'EOF'
[package]
name = "rayon-tests-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
rayon = "=1.12.0"
rayon-core = "=1.13.0"
EOF
: > "$WORK/fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$WORK/fetch/Cargo.toml"
metadata=$(cargo metadata --quiet --format-version 1 --manifest-path "$WORK/fetch/Cargo.toml")
src_of() { # the unpacked source directory of package $1 at version $2
  printf '%s' "$metadata" | grep -o "\"manifest_path\":\"[^\"]*/$1-$2/Cargo.toml\"" | sed -n 1p |
    sed -e 's/^"manifest_path":"//' -e 's#/Cargo.toml"$##'
}
RAYON_SRC=$(src_of rayon 1.12.0)
CORE_SRC=$(src_of rayon-core 1.13.0)
for d in "$RAYON_SRC" "$CORE_SRC"; do
  if [ -z "$d" ] || [ ! -d "$d/tests" ]; then
    echo "rayon-tests.sh: could not find rayon 1.12.0 / rayon-core 1.13.0 sources in cargo's registry" >&2
    exit 1
  fi
done

# --- 2. Two scratch crates: rayon-core's tests and rayon's, patched onto the facades ---------
# $1 crate dir, $2 package name, $3 dependency lines, $4 patch lines, then the test files.
scratch_crate() {
  local dir=$1 name=$2 deps=$3 patch=$4
  shift 4
  rm -rf "$dir/tests"
  mkdir -p "$dir/src" "$dir/tests"
  : > "$dir/src/lib.rs"
  {
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\npublish = false\nautotests = false\n\n' "$name"
    printf '[workspace]\n\n[dev-dependencies]\n%s\n\n[patch.crates-io]\n%s\n' "$deps" "$patch"
    local f
    for f in "$@"; do
      printf '\n[[test]]\nname = "%s"\npath = "tests/%s.rs"\n' "$f" "$f"
    done
  } > "$dir/Cargo.toml"
}

core_files=()
for f in "$CORE_SRC"/tests/*.rs; do core_files+=("$(basename "$f" .rs)"); done
# rayon-core's own unit tests (src/*/test.rs and src/test.rs), a further check beyond the 23
# files: ported by path substitution, plus a shim for rayon's private `unwind::halt_unwinding`
# (a catch_unwind); test functions that reach rayon's private registry cannot apply and are
# left out (listed in target/rayon-tests/unit-left-out.txt).
unit_files=()
for f in "$CORE_SRC"/src/*/test.rs "$CORE_SRC"/src/test.rs; do
  m=$(basename "$(dirname "$f")")
  [ "$f" = "$CORE_SRC/src/test.rs" ] && m=lib
  unit_files+=("unit_$m")
done
scratch_crate "$WORK/core" rayon-core-tests \
  "rayon-core = \"1.13.0\"
rand = \"0.9\"
rand_xorshift = \"0.4\"
scoped-tls = \"1.0\"
crossbeam-utils = \"0.8\"
libc = \"0.2\"" \
  "rayon-core = { path = \"$ROOT/compat/rayon-core\" }" \
  "${core_files[@]}" "${unit_files[@]}"
cp "$CORE_SRC"/tests/*.rs "$WORK/core/tests/"
: > "$WORK/unit-left-out.txt"
for f in "$CORE_SRC"/src/*/test.rs "$CORE_SRC"/src/test.rs; do
  m=$(basename "$(dirname "$f")")
  [ "$f" = "$CORE_SRC/src/test.rs" ] && m=lib
  {
    sed -e 's/^use super::\*;/use rayon_core::*;/' -e 's/^use super::{/use rayon_core::{/' \
      -e 's/^use crate::unwind;$//' -e 's/\(crate::\)\{0,1\}unwind::halt_unwinding/halt_unwinding/g' \
      -e 's/\bcrate::/rayon_core::/g' "$f" |
      awk -v file="unit_$m" -v out="$WORK/unit-left-out.txt" '
        # Keeps each top-level test function (its attributes, its lines up to a closing brace
        # in column 0) unless it reaches rayon-core internals.
        !inside && /^(#\[|\/\/\/)/ { buf = buf $0 "\n"; next }
        !inside && /^fn / { inside = 1; name = $2; sub(/[(<].*/, "", name); buf = buf $0 "\n"; next }
        !inside { printf "%s", buf; buf = ""; print; next }
        { buf = buf $0 "\n" }
        /^}/ {
          inside = 0
          if (buf ~ /rayon_core::registry|[a-z_]\.registry[^A-Za-z_(]/) print file ": " name >> out
          else printf "%s", buf
          buf = ""
        }
        END { printf "%s", buf }'
    printf '\n#[allow(dead_code)]\nfn halt_unwinding<F: FnOnce() -> R, R>(f: F) -> std::thread::Result<R> {\n'
    printf '    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))\n}\n'
  } > "$WORK/core/tests/unit_$m.rs"
done

rayon_files=()
for f in "$RAYON_SRC"/tests/*.rs; do rayon_files+=("$(basename "$f" .rs)"); done
rayon_files+=(iter_test)
scratch_crate "$WORK/rayon" rayon-tests \
  "rayon = \"1.12.0\"
rayon-core = \"1.13.0\"
rand = \"0.9\"
rand_xorshift = \"0.4\"" \
  "rayon = { path = \"$ROOT/compat/rayon\" }
rayon-core = { path = \"$ROOT/compat/rayon-core\" }" \
  "${rayon_files[@]}"
cp "$RAYON_SRC"/tests/*.rs "$WORK/rayon/tests/"
# `use super::*` in rayon's iter test module also sees the private imports of
# `src/iter/mod.rs` (`plumbing::*`, `LinkedList`, ...): the port spells out those imports (the
# ones that name a public path; `self::private::Try` does not).
# They go in a module that is glob-imported, so that the file's own imports still win over
# them, as they win over `super::*`.
private_uses=$(grep -E '^use (self|std)::' "$RAYON_SRC/src/iter/mod.rs" | grep -v 'private' |
  sed -e 's/^use self::/pub use rayon::iter::/' -e 's/^use std::/pub use std::/' | tr '\n' ' ')
sed -e "s/^use super::\*;/use rayon::iter::*; use iter_mod_imports::*; mod iter_mod_imports { ${private_uses//\//\\/}}/" \
  -e 's/\bcrate::/rayon::/g' \
  "$RAYON_SRC/src/iter/test.rs" > "$WORK/rayon/tests/iter_test.rs"

# --- 3. Build and run each file on its own ------------------------------------------------
LOGS=$WORK/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
rows=()
bad=0
expected() {
  local e
  for e in "${EXPECTED_PASS[@]}"; do [ "$e" = "$1" ] && return 0; done
  return 1
}
run_file() { # $1 suite, $2 crate dir, $3 test name
  local suite=$1 dir=$2 name=$3 key="$1/$3"
  [ -n "$filter" ] && [[ "$key" != *"$filter"* ]] && return 0
  local log="$LOGS/$suite-$name.log" compiles=no passed=- failed=- verdict
  printf 'rayon-tests.sh: %s ... ' "$key" >&2
  if cargo test "${profile_flag[@]}" --manifest-path "$dir/Cargo.toml" --test "$name" --no-run \
    > "$log.build" 2>&1; then
    compiles=yes
    local status=0
    timeout "$per_file_timeout" cargo test "${profile_flag[@]}" --manifest-path "$dir/Cargo.toml" \
      --test "$name" > "$log" 2>&1 || status=$?
    # `|| true`: a run cut short by the timeout has no summary line, and grep's "no match" must
    # not end the script (pipefail).
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
    # A build that failed without a compile error (rustc killed by a signal, a full disk, a
    # linker failure) says why only at the end of its log: show it, so that a CI log tells.
    {
      echo
      echo "rayon-tests.sh: $key did not build; the end of $log.build:"
      tail -n 25 "$log.build" | sed 's/^/  | /'
      echo "rayon-tests.sh: disk free where it builds: $(df -h "$WORK" | awk 'NR == 2 {print $4}')"
    } >&2
  fi
  local judged="reported"
  if expected "$key"; then
    judged="expected"
    if [ "$verdict" != ok ]; then bad=1; judged="EXPECTED TO PASS"; fi
  fi
  printf '%s\n' "$verdict" >&2
  rows+=("$(printf '| %-10s | %-22s | %-8s | %6s | %6s | %-20s | %-16s |' \
    "$suite" "$name" "$compiles" "$passed" "$failed" "$verdict" "$judged")")
}

for name in "${core_files[@]}" "${unit_files[@]}"; do run_file rayon-core "$WORK/core" "$name"; done
for name in "${rayon_files[@]}"; do run_file rayon "$WORK/rayon" "$name"; done

echo
echo "rayon's own tests against compat/ (logs: target/rayon-tests/logs/)"
printf '| %-10s | %-22s | %-8s | %6s | %6s | %-20s | %-16s |\n' \
  suite file compiles passed failed result list
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ------------ ------------------------ ---------- -------- \
  -------- ---------------------- ------------------
for r in "${rows[@]}"; do echo "$r"; done
n_compile=0
n_ok=0
for r in "${rows[@]}"; do
  [[ "$r" == *"| yes "* ]] && n_compile=$((n_compile + 1))
  [[ "$r" == *"| ok "* ]] && n_ok=$((n_ok + 1))
done
echo
echo "files: ${#rows[@]}, compile: $n_compile, pass: $n_ok"
if [ -s "$WORK/unit-left-out.txt" ]; then
  echo "unit_* rows: rayon-core's unit tests; left out as reaching rayon-core internals:" \
    "$(tr '\n' ' ' < "$WORK/unit-left-out.txt")"
fi
exit "$bad"
