#!/usr/bin/env bash
# Third-party crates that implement rayon's traits for their own types, tested against
# throttle's rayon facades: their own tests, unchanged, on throttle.
#
#   ndarray 0.16.1   parallel iterators on rayon's plumbing (`Producer`s behind
#                    `with_producer`, `UnindexedProducer`s through `bridge_unindexed`);
#                    its tests par_rayon, par_azip and par_zip (features rayon, approx)
#   hashbrown 0.15.5 `UnindexedProducer`s over its raw tables; its test rayon (feature rayon)
#   indexmap 2.14.2  parallel iterators that forward `drive_unindexed`/`with_producer` to
#                    rayon's `vec` and slice iterators, and `par_sort*`; its unit tests whose
#                    names contain "rayon" (feature rayon)
#
# For each crate: fetches the exact release from crates.io into cargo's registry (a scratch
# crate that depends on it, `cargo fetch`), copies the unpacked package to
# target/crate-tests/<crate>, adds a [patch.crates-io] that points rayon and rayon-core at
# compat/, checks that the patch took (the resolved rayon is the facade), and runs the tests.
# Prints one row per test target, as rayon-tests.sh does. Nothing it copies is committed (it
# all lives under target/).
#
# Exit status: 1 if a target fails to compile, has a failing test or times out, or if the
# facade was not used; 0 otherwise.
#
# Usage: scripts/crate-tests.sh [--release] [--timeout SECONDS] [FILTER]
#   FILTER: only crates whose name contains it (e.g. "ndarray").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# crate, version, features, the test target (cargo test's flag), and a test-name filter ("-":
# none). One row of the table per line.
CRATES=(
  "ndarray 0.16.1 rayon,approx --test=par_rayon -"
  "ndarray 0.16.1 rayon,approx --test=par_azip -"
  "ndarray 0.16.1 rayon,approx --test=par_zip -"
  "hashbrown 0.15.5 rayon --test=rayon -"
  "indexmap 2.14.2 rayon --lib rayon"
)

profile_flag=()
per_file_timeout=600
filter=""
while [ $# -gt 0 ]; do
  case "$1" in
    --release) profile_flag=(--release); shift ;;
    --timeout)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "crate-tests.sh: invalid value '${2:-}' for '--timeout': expected whole seconds > 0" >&2
        exit 2
      fi
      per_file_timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "crate-tests.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) filter=$1; shift ;;
  esac
done

WORK=$ROOT/target/crate-tests
export CARGO_TARGET_DIR=$WORK/target
export CARGO_TERM_COLOR=never
mkdir -p "$WORK"
LOGS=$WORK/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"

# Copies crate $1 at version $2 (features $3, comma-separated) to target/crate-tests/$1 and
# patches it onto the facades; fails if rayon does not resolve to compat/rayon.
prepare() {
  local name=$1 version=$2 features=$3
  local fetch=$WORK/fetch-$name
  local feature_list
  feature_list=$(printf '"%s", ' ${features//,/ })
  mkdir -p "$fetch/src"
  cat > "$fetch/Cargo.toml" <<MANIFEST
[package]
name = "crate-tests-fetch-$name"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
$name = { version = "=$version", features = [${feature_list%, }] }
MANIFEST
  : > "$fetch/src/lib.rs"
  cargo fetch --quiet --manifest-path "$fetch/Cargo.toml"
  local src
  src=$(cargo metadata --quiet --format-version 1 --manifest-path "$fetch/Cargo.toml" |
    grep -o "\"manifest_path\":\"[^\"]*/$name-$version/Cargo.toml\"" | sed -n 1p |
    sed -e 's/^"manifest_path":"//' -e 's#/Cargo.toml"$##')
  if [ -z "$src" ] || [ ! -d "$src" ]; then
    echo "crate-tests.sh: could not find $name $version's sources in cargo's registry" >&2
    return 1
  fi
  local crate=$WORK/$name
  rm -rf "$crate"
  cp -R "$src" "$crate"
  chmod -R u+w "$crate"
  # The shipped lock file pins the real rayon; the patch re-resolves it.
  rm -f "$crate/Cargo.lock"
  cat >> "$crate/Cargo.toml" <<MANIFEST

[workspace]

[patch.crates-io]
rayon = { path = "$ROOT/compat/rayon" }
rayon-core = { path = "$ROOT/compat/rayon-core" }
MANIFEST
  local rayon_id
  rayon_id=$(cargo metadata --quiet --format-version 1 --features "$features" \
    --manifest-path "$crate/Cargo.toml" |
    grep -o '"name":"rayon","version":"[^"]*","id":"[^"]*"' | sed -n 1p)
  case "$rayon_id" in
    *"path+file://$ROOT/compat/rayon#"*) ;;
    *)
      echo "crate-tests.sh: $name's rayon did not resolve to the facade: $rayon_id" >&2
      return 1 ;;
  esac
}

rows=()
bad=0
prepared=" "
for spec in "${CRATES[@]}"; do
  read -r name version features target test_filter <<< "$spec"
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  manifest=$WORK/$name/Cargo.toml
  if [[ "$prepared" != *" $name "* ]]; then
    prepare "$name" "$version" "$features" || { bad=1; continue; }
    prepared="$prepared$name "
  fi
  filter_args=()
  [ "$test_filter" != - ] && filter_args=("$test_filter")
  label=${target#--}
  label=${label#test=}
  what=$label
  [ "$test_filter" != - ] && what="$label ($test_filter)"
  log="$LOGS/$name-$label.log"
  compiles=no passed=- failed=-
  printf 'crate-tests.sh: %s %s ... ' "$name" "$what" >&2
  if cargo test "${profile_flag[@]}" --features "$features" --manifest-path "$manifest" \
    "$target" --no-run > "$log.build" 2>&1; then
    compiles=yes
    status=0
    timeout "$per_file_timeout" cargo test "${profile_flag[@]}" --features "$features" \
      --manifest-path "$manifest" "$target" "${filter_args[@]}" > "$log" 2>&1 || status=$?
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
  fi
  [ "$verdict" = ok ] || bad=1
  printf '%s\n' "$verdict" >&2
  rows+=("$(printf '| %-16s | %-13s | %-8s | %6s | %6s | %-20s |' \
    "$name $version" "$what" "$compiles" "$passed" "$failed" "$verdict")")
done

echo
echo "third-party crates' tests against compat/ (logs: target/crate-tests/logs/)"
printf '| %-16s | %-13s | %-8s | %6s | %6s | %-20s |\n' crate tests compiles passed failed result
printf '|%s|%s|%s|%s|%s|%s|\n' ------------------ --------------- ---------- -------- -------- \
  ----------------------
for r in "${rows[@]}"; do echo "$r"; done
exit "$bad"
