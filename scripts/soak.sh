#!/usr/bin/env bash
# Flake hunt: runs tests many times in a row, optionally beside a CPU hog, and prints how often
# each test failed.
#
# Two suites:
#   workspace   README's test command, `cargo test --workspace --release`, with --no-fail-fast
#               so that one failing binary does not hide the others.
#   concurrency the runtime's concurrency test binaries (stress, waiting, limit, jobserver and the
#               others named in CONCURRENCY below) and its unit tests, each test executable run
#               directly, one after the other, once per round; the stress test runs
#               --stress-tasks random nested tasks (default 2,000,000; the workspace suite runs
#               the test's own default, 16 million).
# Everything is built once before the first round; a round that runs longer than --round-timeout
# counts as a failure (TIMEOUT) of that round, since a hang is a flake too.
#
# The hog (--hog) keeps every CPU busy with one spinning process per CPU (stress-ng --cpu if it is
# installed, a shell busy loop otherwise), as on a CI host shared with other work; it stops with
# the script.
#
# Output: one line per round (its number, its exit, its failing tests), then a table of every test
# that failed at least once with its count over the rounds. The logs of failing rounds are kept
# under target/soak/SUITE/ (SUITE-hog/ beside the hog). Ctrl-C or SIGTERM ends the current round
# and still prints the table of the rounds that finished. Exit status: 0 when no round failed, 1 otherwise, 2 for bad usage.
#
# Usage: scripts/soak.sh [--suite workspace|concurrency] [--runs N] [--hog] [--round-timeout SECONDS]
#                        [--stress-tasks N]
#   e.g. scripts/soak.sh --suite workspace --runs 20
#        scripts/soak.sh --suite concurrency --runs 50 --hog
set -uo pipefail
cd "$(dirname "$0")/.."

# The runtime's test binaries whose tests race threads against each other: random nesting, waits,
# the live limit, the jobserver's tokens, panics across threads, spares, broadcast, the trace and
# the controller on real threads.
CONCURRENCY=(stress waiting limit jobserver jobserver_safety throttle_jobserver throttle_semaphore
  broadcast panics iter_panics trust fork_join edges lifecycle no_leftover_threads auto auto_drop
  placement trace iter_props)

suite=workspace
runs=20
hog=0
round_timeout=1800
stress_tasks=2000000
usage_err() { echo "soak.sh: $1 (try --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --suite)
      case "${2:-}" in workspace|concurrency) suite=$2 ;;
        *) usage_err "invalid value '${2:-}' for '--suite': expected workspace or concurrency" ;; esac
      shift 2 ;;
    --runs)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_err "invalid value '${2:-}' for '--runs': expected a whole number > 0"
      runs=$2; shift 2 ;;
    --round-timeout)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_err "invalid value '${2:-}' for '--round-timeout': expected whole seconds > 0"
      round_timeout=$2; shift 2 ;;
    --stress-tasks)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_err "invalid value '${2:-}' for '--stress-tasks': expected a whole number > 0"
      stress_tasks=$2; shift 2 ;;
    --hog) hog=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_err "unknown argument '$1'" ;;
  esac
done

export CARGO_TERM_COLOR=never
logs=target/soak/$suite$([ "$hog" = 1 ] && echo -hog)
mkdir -p "$logs"
if [ "$suite" = workspace ]; then
  cmd=(cargo test --workspace --release --no-fail-fast)
  echo "soak: building (${cmd[*]} --no-run)"
  "${cmd[@]}" --no-run > "$logs/build.log" 2>&1 ||
    { tail -n 30 "$logs/build.log" >&2; echo "soak: the build failed" >&2; exit 1; }
else
  build=(cargo test --release -p throttle-core -p throttle-iter -p throttle --lib)
  for b in "${CONCURRENCY[@]}"; do build+=(--test "$b"); done
  echo "soak: building (${build[*]} --no-run)"
  "${build[@]}" --no-run --message-format=json > "$logs/build.json" 2> "$logs/build.log" ||
    { tail -n 30 "$logs/build.log" >&2; echo "soak: the build failed" >&2; exit 1; }
  # Each test executable with the name its log section gets, as cargo's "Running" line names it,
  # and its package's folder, which cargo runs it from.
  python3 -c '
import json, os, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kind = m["target"]["kind"][0]
        name = "unittests src/lib.rs" if kind == "lib" else "tests/" + m["target"]["name"] + ".rs"
        print(name + "\t" + os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
' "$logs/build.json" > "$logs/executables.tsv"
fi
export THROTTLE_STRESS_TASKS="${THROTTLE_STRESS_TASKS:-$stress_tasks}"
[ "$suite" = workspace ] && unset THROTTLE_STRESS_TASKS

# The concurrency suite's round: every executable in turn, each under a "Running" line as cargo
# prints it; fails if any failed.
run_executables() {
  local rc=0 name dir exe tsv
  tsv="$(pwd)/$logs/executables.tsv"
  # As cargo runs them: from the package's folder, with its manifest folder in the environment.
  while IFS=$'\t' read -r name dir exe; do
    echo "     Running $name ($exe)"
    (cd "$dir" && CARGO_MANIFEST_DIR="$dir" "$exe") ||
      { rc=$?; echo "error: test failed, to rerun pass \`$name\`"; }
  done < "$tsv"
  return "$rc"
}

hog_pids=()
stop_hog() {
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${hog_pids[@]}"; do wait "$p" 2>/dev/null; done
  hog_pids=()
}
if [ "$hog" = 1 ]; then
  cpus=$(nproc)
  if command -v stress-ng > /dev/null; then
    stress-ng --cpu "$cpus" --quiet > /dev/null 2>&1 &
    hog_pids+=($!)
    hog_what="stress-ng --cpu $cpus"
  else
    for _ in $(seq "$cpus"); do
      bash -c 'while :; do :; done' &
      hog_pids+=($!)
    done
    hog_what="$cpus shell busy loops"
  fi
  echo "soak: hog: $hog_what"
fi

declare -A failures=()
done_rounds=0
failed_rounds=0
stopping=0
summary() {
  stop_hog
  echo
  echo "soak: suite $suite, $done_rounds of $runs rounds finished, $failed_rounds failed$([ "$hog" = 1 ] && echo ", beside the hog")"
  if [ "${#failures[@]}" -eq 0 ]; then
    echo "soak: no test failed"
  else
    printf '%-8s  %s\n' failures test
    for t in "${!failures[@]}"; do printf '%8d  %s\n' "${failures[$t]}" "$t"; done | sort -rn
  fi
}
on_signal() { stopping=1; [ -n "${round_pid:-}" ] && kill -TERM "$round_pid" 2>/dev/null; }
trap on_signal INT TERM

# Reads a cargo test log; prints one `binary::test` per failing test, and `binary (exit)` for a
# binary that failed without a failing test line (a crash, an abort, a build error).
failing_tests() {
  awk '
    # A unit-test binary is named by its crate (the executable without its hash), a test by
    # its file.
    /^ *Running / {
      bin = $2; sub(/^.*\//, "", bin); sub(/\.rs$/, "", bin)
      if ($2 == "unittests") { bin = $NF; gsub(/[()]/, "", bin); sub(/^.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin); bin = bin " unittests" }
      named = 0; next
    }
    /^ *Doc-tests / { bin = "doc:" $2; named = 0; next }
    /^test .* \.\.\. FAILED$/ { t = $0; sub(/^test /, "", t); sub(/ \.\.\. FAILED$/, "", t); print bin "::" t; named = 1; next }
    /^error: test failed, to rerun pass/ { if (!named) print bin " (exit)"; next }
  ' "$1" | sort -u
}

for round in $(seq "$runs"); do
  [ "$stopping" = 1 ] && break
  log="$logs/round-$round.log"
  start=$(date +%s)
  if [ "$suite" = workspace ]; then
    timeout -s TERM -k 30 "$round_timeout" "${cmd[@]}" > "$log" 2>&1 &
  else
    export logs
    export -f run_executables
    timeout -s TERM -k 30 "$round_timeout" bash -c run_executables > "$log" 2>&1 &
  fi
  round_pid=$!
  wait "$round_pid"
  rc=$?
  if [ "$stopping" = 1 ]; then
    wait "$round_pid" 2>/dev/null
    echo "soak: round $round interrupted, not counted"
    break
  fi
  round_pid=
  secs=$(( $(date +%s) - start ))
  done_rounds=$round
  if [ "$rc" = 0 ]; then
    echo "soak: round $round ok (${secs} s)"
    rm -f "$log"
    continue
  fi
  failed_rounds=$((failed_rounds + 1))
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    tests="TIMEOUT after ${round_timeout} s"
    failures["$tests"]=$(( ${failures["$tests"]:-0} + 1 ))
  else
    tests=$(failing_tests "$log")
    [ -n "$tests" ] || tests="round exited $rc without a failing test line"
    while IFS= read -r t; do failures["$t"]=$(( ${failures["$t"]:-0} + 1 )); done <<< "$tests"
  fi
  echo "soak: round $round FAILED (exit $rc, ${secs} s; log $log): $(echo "$tests" | paste -sd ' ')"
done

summary
[ "$failed_rounds" = 0 ] && [ "$stopping" = 0 ]
