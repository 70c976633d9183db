#!/usr/bin/env bash
# rayon's demos as a benchmark: rayon vs throttle's rayon facade (issue 15).
#
# Takes the path of rayon-demo (the `rayon-demo/` folder of a rayon-rs/rayon checkout; it is
# not on crates.io), makes two scratch copies under target/rayon-demo-bench/ and builds both in
# release into one target directory:
#   rayon   the demo against rayon from crates.io (=RAYON_VERSION, default 1.12.0);
#   facade  the same, with [patch.crates-io] pointing rayon and rayon-core at compat/.
# The copies are standalone packages: their `x.workspace = true` entries are resolved from the
# checkout's root Cargo.toml, nbody's OpenGL visualizer (glium, winit) is left out and its
# module replaced by a stub that exits, and nothing of the demo's is ever committed.
#
# Then it runs the demos interleaved: for each repetition and each demo, one run of each build
# (the order alternates between repetitions: A B, then B A), and prints per demo the median of
# the time the demo itself reports for its parallel part, the spread (min-max), and the ratio
# facade/rayon of the medians, and next to them each build's median user+sys CPU time of the
# whole process (the child's rusage from wait4, read by a few lines of python3) and its ratio:
# for noop (sleep, spawn an empty task, repeat) CPU time is the figure that matters, and on a
# loaded machine it is steadier than any wall time.
#
# Usage: scripts/rayon-demo-bench.sh [--quick] [--reps N] [--threads N] [--only DEMO,...] \
#            [--rayon-version V] RAYON_DEMO_PATH
#   --quick           small sizes and 3 repetitions (a smoke test, not a measurement)
#   --reps N          repetitions per demo and build (default 5)
#   --threads N       RAYON_NUM_THREADS for both builds (default: unset, i.e. one per CPU)
#   --only LIST       comma-separated subset of: life nbody sieve matmul mergesort quicksort
#                     tsp noop
#   --rayon-version V the crates.io rayon that the "rayon" build uses (default 1.12.0)
# Raw per-run figures go to target/rayon-demo-bench/runs.tsv, each run's output to logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

reps=5
quick=0
threads=""
only=""
rayon_version=1.12.0
demo_src=""
usage_err() { echo "rayon-demo-bench.sh: $1 (try --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --reps)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_err "invalid value '${2:-}' for '--reps': expected a whole number > 0"
      reps=$2; shift 2 ;;
    --threads)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_err "invalid value '${2:-}' for '--threads': expected a whole number > 0"
      threads=$2; shift 2 ;;
    --only) only=${2:-}; [ -n "$only" ] || usage_err "'--only' needs a list"; shift 2 ;;
    --rayon-version) rayon_version=${2:-}; [ -n "$rayon_version" ] || usage_err "'--rayon-version' needs a version"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage_err "unknown option '$1'" ;;
    *) [ -z "$demo_src" ] || usage_err "one demo path only, got '$demo_src' and '$1'"; demo_src=$1; shift ;;
  esac
done
[ -n "$demo_src" ] || usage_err "missing RAYON_DEMO_PATH (the rayon-demo folder of a rayon checkout)"
[ -f "$demo_src/Cargo.toml" ] && [ -f "$demo_src/src/main.rs" ] ||
  usage_err "'$demo_src' does not look like rayon-demo (no Cargo.toml or src/main.rs)"
command -v python3 > /dev/null ||
  { echo "rayon-demo-bench.sh: needs python3 (to read each run's CPU time with wait4)" >&2; exit 1; }
demo_src=$(cd "$demo_src" && pwd)
if [ "$quick" = 1 ] && [ "$reps" = 5 ]; then reps=3; fi

WORK=$ROOT/target/rayon-demo-bench
export CARGO_TARGET_DIR=$WORK/target
export CARGO_TERM_COLOR=never
mkdir -p "$WORK/logs"

# --- 1. Two standalone copies of the demo ------------------------------------------------------
# The checkout's root manifest, for `x.workspace = true` entries (none if the demo is standalone).
ws_manifest=$demo_src/../Cargo.toml
[ -f "$ws_manifest" ] || ws_manifest=/dev/null

# $1 variant (rayon|facade): writes $WORK/$1 with a rewritten Cargo.toml.
make_copy() {
  local variant=$1 dir=$WORK/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$demo_src" && tar cf - --exclude=./target .) | (cd "$dir" && tar xf -)
  awk -v variant="$variant" -v ver="$rayon_version" -v root="$ROOT" '
    # Pass 1: the workspace manifest: [workspace.package] and [workspace.dependencies] values.
    FNR == NR {
      if ($0 ~ /^\[/) { wsec = $0; next }
      if (match($0, /^[A-Za-z0-9_-]+[ \t]*=/)) {
        key = $0; sub(/[ \t]*=.*/, "", key); val = $0; sub(/^[^=]*=[ \t]*/, "", val)
        if (wsec == "[workspace.package]") pkg[key] = val
        if (wsec == "[workspace.dependencies]") dep[key] = val
      }
      next
    }
    # Pass 2: the demo manifest.
    /^\[/ { sec = $0 }
    sec == "[package]" && /^name[ \t]*=/ { print "name = \"rayon-demo-" variant "\""; next }
    /^[ \t]*workspace[ \t]*=[ \t]*true/ { next }      # [lints] workspace = true
    /^(glium|winit)[ \t]*=/ { next }                  # the OpenGL visualizer: left out
    /^rayon[ \t]*=/ { print "rayon = \"=" ver "\""; next }
    /^rayon-core[ \t]*=/ { next }
    match($0, /^[A-Za-z0-9_-]+\.workspace[ \t]*=[ \t]*true/) {
      key = $0; sub(/\.workspace.*/, "", key)
      if (sec == "[package]") {
        if (!(key in pkg)) next
        print key " = " pkg[key]
      } else {
        if (!(key in dep)) { print "rayon-demo-bench.sh: no workspace value for " key > "/dev/stderr"; exit 1 }
        print key " = " dep[key]
      }
      next
    }
    { print }
    END {
      if (FNR == NR) exit
      print "\n[workspace]"
      if (variant == "facade") {
        print "\n[patch.crates-io]"
        print "rayon = { path = \"" root "/compat/rayon\" }"
        print "rayon-core = { path = \"" root "/compat/rayon-core\" }"
      }
    }
  ' "$ws_manifest" "$demo_src/Cargo.toml" > "$dir/Cargo.toml"
  # Our own stand-in for nbody's visualizer module (its GUI dependencies are not built).
  if [ -f "$dir/src/nbody/visualize.rs" ]; then
    cat > "$dir/src/nbody/visualize.rs" <<'EOF'
// Written by throttle's scripts/rayon-demo-bench.sh: the OpenGL visualizer is not built.
pub fn visualize_benchmarks(_bodies: usize, _mode: super::ExecutionMode) {
    eprintln!("nbody visualize: not built by rayon-demo-bench.sh");
    std::process::exit(2);
}
EOF
  fi
}

declare -A BIN
for v in rayon facade; do
  make_copy "$v"
  echo "== building rayon-demo against $v (release)" >&2
  if ! cargo build --release --quiet --manifest-path "$WORK/$v/Cargo.toml" 2> "$WORK/logs/build-$v.log"; then
    echo "rayon-demo-bench.sh: the $v build failed; errors:" >&2
    grep -E '^error' -A6 "$WORK/logs/build-$v.log" | head -n 80 >&2
    exit 1
  fi
  BIN[$v]=$CARGO_TARGET_DIR/release/rayon-demo-$v
done

# --- 2. The demos: arguments, and how to read the parallel time from the output ---------------
if [ "$quick" = 1 ]; then
  life_args=(life bench --size 200 --gens 50)
  nbody_args=(nbody bench --mode par --bodies 1000 --ticks 10)
  matmul_size=256
  sort_size=2000000
  noop_args=(noop --sleep 10 --iters 30)
  tsp_data=dj10.tsp
else
  life_args=(life bench --size 500 --gens 100)
  nbody_args=(nbody bench --mode par --bodies 3000 --ticks 30)
  matmul_size=512
  sort_size=20000000
  noop_args=(noop --sleep 10 --iters 200)
  tsp_data=dj15.tsp
fi
# Each demo: its command, and an awk program that prints "row nanoseconds" for each figure
# the run yields: the demo's own timing of its parallel part. (The demos print durations as
# "N ns", "X s" or Rust's Duration Debug form.) One run may yield two rows: life's parallel and
# par_bridge versions, matmul's z-order and Strassen versions.
dur_awk='function ns(v,  u) { u = v; sub(/^[0-9.]+/, "", u); v += 0;
  if (u == "s") return v * 1e9; if (u == "ms") return v * 1e6;
  if (u == "µs" || u == "us") return v * 1e3; return v }'
DEMOS=(life nbody sieve matmul mergesort quicksort tsp noop)
declare -A CMD PARSE
CMD[life]="${life_args[*]}"
PARSE[life]='/^parallel:/ { print "life", $2 } /^par_bridge:/ { print "life-bridge", $2 }'
CMD[nbody]="${nbody_args[*]}"
PARSE[nbody]='/^Parallel time/ { print "nbody", $(NF-1) }'
CMD[sieve]="sieve bench"
PARSE[sieve]='/^parallel:/ { print "sieve", $2 }'
CMD[matmul]="matmul bench --size $matmul_size"
PARSE[matmul]='/^par z-order:/ { printf "matmul %.0f\n", $(NF-1) * 1e9 }
  /^par strassen:/ { printf "matmul-strassen %.0f\n", $(NF-1) * 1e9 }'
CMD[mergesort]="mergesort bench --size $sort_size"
PARSE[mergesort]='/^par: sorted/ { printf "mergesort %.0f\n", $(NF-1) * 1e9 }'
CMD[quicksort]="quicksort bench --par-only --size $sort_size"
PARSE[quicksort]='/^par: sorted/ { printf "quicksort %.0f\n", $(NF-1) * 1e9 }'
CMD[tsp]="tsp bench --seq-threshold 8 $demo_src/data/tsp/$tsp_data"
PARSE[tsp]="$dur_awk"' /^Total search time:/ { printf "tsp %.0f\n", ns($4) }'
CMD[noop]="${noop_args[*]}"
PARSE[noop]='/wallclock:/ { print "noop", $2 }'
if [ -n "$only" ]; then
  IFS=, read -r -a wanted <<< "$only"
  for w in "${wanted[@]}"; do
    [ -n "${CMD[$w]+x}" ] || usage_err "unknown demo '$w' in '--only' (one of: ${DEMOS[*]})"
  done
  DEMOS=("${wanted[@]}")
fi

# --- 3. Interleaved runs -------------------------------------------------------------------
runs=$WORK/runs.tsv
printf 'demo\tbuild\trep\tns\tcpu_s\twall_s\n' > "$runs"
if [ -n "$threads" ]; then export RAYON_NUM_THREADS=$threads; else unset RAYON_NUM_THREADS; fi
unset THROTTLE_THREADS THROTTLE_AUTO
cd "$WORK"
# Runs a command and writes "user sys wall" seconds (the child's rusage, microseconds) to $1.
rusage_py='
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%.6f %.6f %.3f\n" % (ru.ru_utime, ru.ru_stime, time.monotonic() - t0))
sys.exit(os.waitstatus_to_exitcode(status))
'
run_one() { # $1 demo, $2 build, $3 rep
  local log=$WORK/logs/$1-$2-$3.log t=$WORK/logs/$1-$2-$3.time
  # shellcheck disable=SC2086 # CMD holds whitespace-separated arguments
  if ! python3 -c "$rusage_py" "$t" "${BIN[$2]}" ${CMD[$1]} > "$log" 2>&1; then
    echo "rayon-demo-bench.sh: $1 ($2) failed, see $log" >&2
    tail -n 5 "$log" >&2
    return 1
  fi
  local rows cpu wall u s row ns
  rows=$(awk "${PARSE[$1]}" "$log")
  [ -n "$rows" ] || { echo "rayon-demo-bench.sh: no time found in $log" >&2; return 1; }
  read -r u s wall < <(tail -n1 "$t")
  cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.6f", u + s }')
  while read -r row ns; do
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$2" "$3" "$ns" "$cpu" "$wall" >> "$runs"
  done <<< "$rows"
}
echo "== $reps repetitions, interleaved; threads: ${threads:-default ($(nproc) CPUs)}" >&2
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= reps; r++)); do
  for d in "${DEMOS[@]}"; do
    if ((r % 2)); then order=(rayon facade); else order=(facade rayon); fi
    for b in "${order[@]}"; do
      printf '   rep %d/%d %-16s %s\n' "$r" "$reps" "$d" "$b" >&2
      run_one "$d" "$b" "$r" || true
    done
  done
done

# --- 4. Summary ----------------------------------------------------------------------------
echo
echo "rayon-demo: $(git -C "$demo_src" rev-parse --short HEAD 2>/dev/null || echo "$demo_src")," \
  "rayon $rayon_version vs facade at $(git -C "$ROOT" rev-parse --short HEAD)," \
  "$reps reps, $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
for d in "${DEMOS[@]}"; do
  echo "$d :: ${CMD[$d]/$demo_src\//}"
done | sed 's/^/  /'
echo
awk -F'\t' '
  NR == 1 { next }
  !($1 in seen) { seen[$1] = 1; order = order " " $1 }
  { k = $1 SUBSEP $2; n[k]++; v[k, n[k]] = $4; c[k, n[k]] = $5 }
  function sort_(k, arr, m,   i, j, t) {   # insertion sort of arr[k, 1..m] into s[]
    for (i = 1; i <= m; i++) s[i] = arr[k, i] + 0
    for (i = 2; i <= m; i++) { t = s[i]; for (j = i - 1; j >= 1 && s[j] > t; j--) s[j + 1] = s[j]; s[j + 1] = t }
  }
  function med(m) { return (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2 }
  function fmt(x) { return (x >= 1e9) ? sprintf("%.3f s", x / 1e9) : sprintf("%.1f ms", x / 1e6) }
  function ratio(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", b / a) : "-" }
  END {
    printf "| %-15s | %-30s | %-30s | %-6s | %-17s | %-17s | %-6s |\n", "demo", "rayon: median (min-max)",
      "facade: median (min-max)", "ratio", "rayon CPU", "facade CPU", "ratio"
    printf "|-----------------|--------------------------------|--------------------------------|--------|"
    printf "-------------------|-------------------|--------|\n"
    nd = split(order, ds, " ")
    for (i = 1; i <= nd; i++) {
      d = ds[i]; line = sprintf("| %-15s |", d); cpu = ""
      for (b = 1; b <= 2; b++) {
        bn = (b == 1) ? "rayon" : "facade"; k = d SUBSEP bn; m = n[k]
        if (!m) { line = line sprintf(" %-30s |", "no runs"); mm[b] = 0; cm[b] = 0; cpu = cpu sprintf(" %-17s |", "-"); continue }
        sort_(k, v, m); mm[b] = med(m)
        line = line sprintf(" %-30s |", fmt(mm[b]) " (" fmt(s[1]) "-" fmt(s[m]) ")")
        sort_(k, c, m); cm[b] = med(m)
        cpu = cpu sprintf(" %-17s |", (cm[b] >= 1) ? sprintf("%.2f s", cm[b]) : sprintf("%.1f ms", cm[b] * 1e3))
      }
      printf "%s %6s |%s %6s |\n", line, ratio(mm[1], mm[2]), cpu, ratio(cm[1], cm[2])
    }
  }' "$runs"
echo "load average (1, 5, 15 min): at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "times: the demo's own timing of its parallel part (noop: of its spawn loop); ratio = facade"
echo "median / rayon median. CPU: median user+sys time of the whole process (the child's rusage),"
echo "its serial parts included (life, sieve, matmul and mergesort also run a sequential version)."
