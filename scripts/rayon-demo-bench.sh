#!/usr/bin/env bash
# rayon's demos as a benchmark: rayon vs throttle's rayon facade, or auto mode vs fixed thread
# counts on the facade (--auto).
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
# --auto compares throttle's auto mode with fixed thread counts instead: it builds only
# the facade, and runs for each repetition and demo the variants auto (THROTTLE_AUTO=1, a pool of
# one thread per CPU whose controller chooses k) and k = 1..N (THROTTLE_THREADS=k, fixed; N = the
# CPUs, or --threads), interleaved, the order rotating by one variant per repetition. Every run
# has THROTTLE_AUTO, THROTTLE_THREADS, RAYON_NUM_THREADS and THROTTLE_TRACE unset except as its
# variant sets them, and THROTTLE_JOBSERVER=0 (a jobserver in the environment would cap k).
# Per demo it prints each variant's median time (min-max) and median CPU time, the best fixed k,
# auto/best, the smallest k whose median lies within the best's spread and auto's CPU time
# against that k's, and a verdict against auto mode's targets: auto's time <= 1.05 x the best
# fixed k's; where a k below N is as fast (within the best's spread), auto's CPU time <= 1.2 x
# that k's. A miss is marked "within spread" when auto's median still lies inside the
# reference's min-max. Demos: seven (noop only with --only). CPU time is the whole
# process's; the demos' own timed serial parts (life, sieve, matmul, mergesort run one) are the
# same work in every variant and dilute the ratio, so the table also gives it without them (CPU
# time minus their wall time: an estimate). --decisions adds, after the table, one more auto run
# per demo of a third build that prints the global pool's controller log at exit (k over time,
# and the time spent at each k): its main.rs is the demo's, renamed and called from a main of
# ours that then reads throttle::global_pool().controller_log(); the measured runs use the
# unchanged facade build. (THROTTLE_TRACE alone records the global pool's timeline but writes it
# only when the program calls throttle::trace::write_global_trace, which rayon-demo does not.)
#
# Usage: scripts/rayon-demo-bench.sh [--quick] [--reps N] [--threads N] [--only DEMO,...] \
#            [--rayon-version V | --auto [--decisions]] RAYON_DEMO_PATH
#   --quick           small sizes and 3 repetitions (a smoke test, not a measurement)
#   --reps N          repetitions per demo and build (default 5)
#   --threads N       RAYON_NUM_THREADS for both builds (default: unset, i.e. one per CPU);
#                     with --auto: the largest fixed k and auto's pool size (THROTTLE_THREADS)
#   --only LIST       comma-separated subset of: life nbody sieve matmul mergesort quicksort
#                     tsp noop
#   --rayon-version V the crates.io rayon that the "rayon" build uses (default 1.12.0)
#   --auto            auto mode against fixed k = 1..N, facade build only (see above)
#   --decisions       with --auto: also print auto's decisions (one extra run per demo)
# Raw per-run figures go to target/rayon-demo-bench/runs.tsv (with --auto: runs-auto.tsv; the
# build column is the variant: auto, k1, k2, ...), each run's output to logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

reps=5
quick=0
threads=""
only=""
rayon_version=1.12.0
rayon_version_set=0
auto=0
decisions=0
demo_src=""
usage_err() { echo "rayon-demo-bench.sh: $1 (try --help)" >&2; exit 2; }
# The demos and their command lines, for a summary's header.
print_demos() {
  for d in "${DEMOS[@]}"; do
    echo "$d :: ${CMD[$d]/$demo_src\//}"
  done | sed 's/^/  /'
}
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
    --rayon-version)
      rayon_version=${2:-}; rayon_version_set=1
      [ -n "$rayon_version" ] || usage_err "'--rayon-version' needs a version"; shift 2 ;;
    --auto) auto=1; shift ;;
    --decisions) decisions=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage_err "unknown option '$1'" ;;
    *) [ -z "$demo_src" ] || usage_err "one demo path only, got '$demo_src' and '$1'"; demo_src=$1; shift ;;
  esac
done
[ "$auto" = 1 ] || [ "$decisions" = 0 ] || usage_err "'--decisions' needs '--auto'"
[ "$auto" = 0 ] || [ "$rayon_version_set" = 0 ] || usage_err "'--rayon-version' has no use with '--auto' (it builds only the facade)"
if [ -n "$only" ]; then
  IFS=, read -r -a wanted <<< "$only"
  for w in "${wanted[@]}"; do
    [[ " life nbody sieve matmul mergesort quicksort tsp noop " == *" $w "* ]] ||
      usage_err "unknown demo '$w' in '--only' (one of: life nbody sieve matmul mergesort quicksort tsp noop)"
  done
fi
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

# --- 1. Standalone copies of the demo ----------------------------------------------------------
# The checkout's root manifest, for `x.workspace = true` entries (none if the demo is standalone).
ws_manifest=$demo_src/../Cargo.toml
[ -f "$ws_manifest" ] || ws_manifest=/dev/null

# $1 variant (rayon|facade|facade-log): writes $WORK/$1 with a rewritten Cargo.toml. facade-log
# is the facade plus a direct dependency on throttle and a main that prints the controller log.
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
    $0 == "[dependencies]" && variant == "facade-log" {
      print; print "throttle = { path = \"" root "/crates/throttle\" }"; next
    }
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
      if (variant != "rayon") {
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
  if [ "$variant" = facade-log ]; then
    [ "$(grep -c '^fn main() {$' "$dir/src/main.rs")" = 1 ] ||
      { echo "rayon-demo-bench.sh: no single 'fn main() {' line in $dir/src/main.rs to wrap" >&2; exit 1; }
    sed -i 's/^fn main() {$/fn rayon_demo_main() {/' "$dir/src/main.rs"
    cat >> "$dir/src/main.rs" <<'EOF'

// Written by throttle's scripts/rayon-demo-bench.sh --decisions: the demo's main (renamed
// rayon_demo_main) runs first; then the global pool's controller log goes to stderr.
fn main() {
    rayon_demo_main();
    let Ok(pool) = throttle::global_pool() else { return };
    let s = pool.stats();
    let log = pool.controller_log();
    let end = log.last().map_or(s.elapsed, |e| e.at.max(s.elapsed));
    eprintln!(
        "decisions: pool of {} threads; {} decisions ({} kept), {} changes of k in {:.2} s since \
         the pool started; k now {}; serial calls (call-site memory): {}",
        pool.threads(),
        s.controller_decisions,
        log.len(),
        s.controller_changes,
        end.as_secs_f64(),
        pool.concurrency(),
        s.serial_calls
    );
    let Some(first) = log.first() else { return };
    // Time at each k: before the first kept decision its old k (from the pool's start if no
    // decision was dropped from the log), then each decision's new k until the next, or the end.
    let mut at_k = vec![0f64; pool.threads() + 2];
    let complete = log.len() as u64 == s.controller_decisions;
    let mut from = if complete { std::time::Duration::ZERO } else { first.at };
    let mut k = first.old_k;
    let mut close = |k: usize, a: std::time::Duration, b: std::time::Duration| {
        let i = k.min(at_k.len() - 1);
        at_k[i] += b.saturating_sub(a).as_secs_f64();
    };
    for e in &log {
        close(k, from, e.at);
        from = e.at;
        k = e.new_k;
    }
    close(k, from, end);
    let total: f64 = at_k.iter().sum::<f64>().max(1e-9);
    let parts: Vec<String> = (1..at_k.len())
        .filter(|&k| at_k[k] > 0.0)
        .map(|k| format!("k={} {:.2} s ({:.0} %)", k, at_k[k], 100.0 * at_k[k] / total))
        .collect();
    eprintln!(
        "decisions: time at each k{}: {}",
        if complete { "" } else { " (since the first kept decision)" },
        parts.join(", ")
    );
    let shown = log.len().min(30);
    let steps: Vec<String> = log[log.len() - shown..]
        .iter()
        .map(|e| format!("{:.2}s {}->{} ({})", e.at.as_secs_f64(), e.old_k, e.new_k, e.reason))
        .collect();
    eprintln!("decisions: last {} of {} kept: {}", shown, log.len(), steps.join(", "));
}
EOF
  fi
}

declare -A BIN
if [ "$auto" = 1 ]; then
  builds=(facade)
  [ "$decisions" = 0 ] || builds+=(facade-log)
else
  builds=(rayon facade)
fi
for v in "${builds[@]}"; do
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
# The demo's own timings of its serial parts, in seconds (summed; none: 0), for --auto's CPU
# time without them.
declare -A SERIAL
SERIAL[life]='/^ *serial:/ { t += $2 / 1e9 }'
SERIAL[sieve]='/^ *serial:/ || /^ *chunks:/ { t += $2 / 1e9 }'
SERIAL[matmul]='/^seq row-major:/ || /^seq z-order:/ { t += $(NF-1) }'
SERIAL[mergesort]='/^seq: sorted/ { t += $(NF-1) }'
# Seven demos; noop (sleeps between empty tasks) has no parallel time to compare.
[ "$auto" = 0 ] || DEMOS=(life nbody sieve matmul mergesort quicksort tsp)
[ -z "$only" ] || DEMOS=("${wanted[@]}")   # checked above

# --- 3. Interleaved runs -------------------------------------------------------------------
if [ "$auto" = 1 ]; then runs=$WORK/runs-auto.tsv; else runs=$WORK/runs.tsv; fi
printf 'demo\tbuild\trep\tns\tcpu_s\twall_s\tserial_s\n' > "$runs"
unset THROTTLE_THREADS THROTTLE_AUTO THROTTLE_TRACE
# Per variant: the build and the environment it runs with.
declare -A VBIN VENV
if [ "$auto" = 1 ]; then
  unset RAYON_NUM_THREADS
  export THROTTLE_JOBSERVER=0
  kmax=${threads:-$(nproc)}
  variants=(auto)
  VBIN[auto]=${BIN[facade]}; VENV[auto]="THROTTLE_AUTO=1${threads:+ THROTTLE_THREADS=$threads}"
  for ((k = 1; k <= kmax; k++)); do
    variants+=("k$k"); VBIN[k$k]=${BIN[facade]}; VENV[k$k]="THROTTLE_THREADS=$k"
  done
else
  if [ -n "$threads" ]; then export RAYON_NUM_THREADS=$threads; else unset RAYON_NUM_THREADS; fi
  variants=(rayon facade)
  for v in rayon facade; do VBIN[$v]=${BIN[$v]}; VENV[$v]=""; done
fi
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
run_one() { # $1 demo, $2 variant, $3 rep
  local log=$WORK/logs/$1-$2-$3.log t=$WORK/logs/$1-$2-$3.time
  # shellcheck disable=SC2086 # CMD and VENV hold whitespace-separated words
  if ! env ${VENV[$2]} python3 -c "$rusage_py" "$t" "${VBIN[$2]}" ${CMD[$1]} > "$log" 2>&1; then
    echo "rayon-demo-bench.sh: $1 ($2) failed, see $log" >&2
    tail -n 5 "$log" >&2
    return 1
  fi
  local rows cpu wall u s row ns serial
  rows=$(awk "${PARSE[$1]}" "$log")
  [ -n "$rows" ] || { echo "rayon-demo-bench.sh: no time found in $log" >&2; return 1; }
  serial=$(awk "${SERIAL[$1]:-} END { printf \"%.6f\", t }" "$log")
  read -r u s wall < <(tail -n1 "$t")
  cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.6f", u + s }')
  while read -r row ns; do
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$2" "$3" "$ns" "$cpu" "$wall" "$serial" >> "$runs"
  done <<< "$rows"
}
if [ "$auto" = 1 ]; then
  echo "== $reps repetitions, interleaved; variants: ${variants[*]}" >&2
else
  echo "== $reps repetitions, interleaved; threads: ${threads:-default ($(nproc) CPUs)}" >&2
fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t_start=$(date +%s)
nv=${#variants[@]}
for ((r = 1; r <= reps; r++)); do
  # The order rotates by one variant per repetition (two variants: A B, then B A).
  order=()
  for ((i = 0; i < nv; i++)); do order+=("${variants[(i + r - 1) % nv]}"); done
  for d in "${DEMOS[@]}"; do
    for b in "${order[@]}"; do
      printf '   rep %d/%d %-16s %s\n' "$r" "$reps" "$d" "$b" >&2
      run_one "$d" "$b" "$r" || true
    done
  done
done
t_runs=$(($(date +%s) - t_start))

# --- 4a. With --auto: auto's decisions (extra runs), and the summary ---------------------------
if [ "$auto" = 1 ]; then
  if [ "$decisions" = 1 ]; then
    for d in "${DEMOS[@]}"; do
      printf '   decisions %-16s auto\n' "$d" >&2
      # shellcheck disable=SC2086 # VENV and CMD hold whitespace-separated words
      env ${VENV[auto]} "${BIN[facade-log]}" ${CMD[$d]} \
        > "$WORK/logs/decisions-$d.log" 2>&1 ||
        echo "rayon-demo-bench.sh: $d (facade-log) failed, see $WORK/logs/decisions-$d.log" >&2
    done
  fi
  echo
  echo "rayon-demo: $(git -C "$demo_src" rev-parse --short HEAD 2>/dev/null || echo "$demo_src")," \
    "facade at $(git -C "$ROOT" rev-parse --short HEAD): auto (THROTTLE_AUTO=1) vs fixed k = 1..$kmax" \
    "(THROTTLE_THREADS=k), $reps reps interleaved, $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
  print_demos
  awk -F'\t' -v kmax="$kmax" '
    NR == 1 { next }
    !($1 in seen) { seen[$1] = 1; order = order " " $1 }
    { k = $1 SUBSEP $2; n[k]++; v[k, n[k]] = $4; c[k, n[k]] = $5; p[k, n[k]] = $5 - $7 }
    function sort_(k, arr, m,   i, j, t) {   # insertion sort of arr[k, 1..m] into s[]
      for (i = 1; i <= m; i++) s[i] = arr[k, i] + 0
      for (i = 2; i <= m; i++) { t = s[i]; for (j = i - 1; j >= 1 && s[j] > t; j--) s[j + 1] = s[j]; s[j + 1] = t }
    }
    function med(m) { return (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2 }
    function fmt(x) { return (x >= 1e9) ? sprintf("%.3f s", x / 1e9) : sprintf("%.1f ms", x / 1e6) }
    function cfmt(x) { return sprintf("%.2f", x) }
    # stats of row d, variant b: tm/tlo/thi (time), cm/clo/chi (CPU s), pm (CPU s w/o serial parts)
    function stat(d, b,   k, m) {
      k = d SUBSEP b; m = n[k]; if (!m) return 0
      sort_(k, v, m); tm[b] = med(m); tlo[b] = s[1]; thi[b] = s[m]
      sort_(k, c, m); cm[b] = med(m); clo[b] = s[1]; chi[b] = s[m]
      sort_(k, p, m); pm[b] = med(m)
      return m
    }
    function name(b) { return (b == "auto") ? "auto" : "k=" substr(b, 2) }
    END {
      nd = split(order, ds, " ")
      for (i = 1; i <= nd; i++) {
        d = ds[i]; delete tm; delete cm; delete pm
        printf "\n%s\n", d
        printf "  %-7s %-32s %-24s %s\n", "variant", "time: median (min-max)", "CPU s: median (min-max)", "CPU s w/o serial parts"
        best = ""; has_serial = 0
        for (j = 0; j <= kmax; j++) {
          b = (j < kmax) ? "k" (j + 1) : "auto"
          if (!stat(d, b)) { printf "  %-7s no runs\n", name(b); continue }
          if (b != "auto" && (best == "" || tm[b] < tm[best])) best = b
          if (cm[b] - pm[b] > 1e-3) has_serial = 1
          printf "  %-7s %-32s %-24s %s\n", name(b), fmt(tm[b]) " (" fmt(tlo[b]) "-" fmt(thi[b]) ")",
            cfmt(cm[b]) " (" cfmt(clo[b]) "-" cfmt(chi[b]) ")", has_serial ? cfmt(pm[b]) : "-"
        }
        if (best == "" || !("auto" in tm)) { row[i] = sprintf("| %-15s | no runs |", d); continue }
        r = tm["auto"] / tm[best]
        if (r <= 1.05) tv = "met"
        else if (tm["auto"] <= thi[best]) tv = "MISSED, within spread"
        else tv = "MISSED"
        ks = ""
        for (j = 1; j <= kmax && ks == ""; j++) if (("k" j) in tm && tm["k" j] <= thi[best]) ks = "k" j
        cr = cm["auto"] / cm[ks]; pr = (pm[ks] > 0) ? sprintf("%.2f", pm["auto"] / pm[ks]) : "-"
        if (substr(ks, 2) + 0 >= kmax) cv = "n/a (no k below " kmax " as fast)"
        else if (cr <= 1.2) cv = "met"
        else if (cm["auto"] <= chi[ks]) cv = "MISSED, within spread"
        else cv = "MISSED"
        printf "  best fixed: %s (%s, max %s); auto/best = %.2f%s\n", name(best), fmt(tm[best]), fmt(thi[best]), r,
          (r > 1 && tm["auto"] <= thi[best]) ? " (auto median within the best'"'"'s spread)" : ""
        printf "  smallest k within the best'"'"'s spread: %s; auto CPU / its CPU = %.2f%s\n", name(ks), cr,
          has_serial ? " (w/o serial parts " pr ")" : ""
        printf "  targets: time <= 1.05 x best: %s (%.2f); CPU <= 1.2 x %s'"'"'s: %s", tv, r, name(ks), cv
        printf "%s\n", (cv ~ /^n\/a/) ? "" : sprintf(" (%.2f)", cr)
        row[i] = sprintf("| %-15s | %-6s | %9.2f | %-21s | %-10s | %-18s | %-21s |", d, name(best), r, tv, name(ks),
          sprintf("%.2f", cr) (has_serial ? " (" pr ")" : ""), (cv ~ /^n\/a/) ? "n/a" : cv)
      }
      printf "\n| %-15s | %-6s | %-9s | %-21s | %-10s | %-18s | %-21s |\n", "demo", "best k", "auto/best",
        "time <= 1.05 x best", "smallest k", "auto CPU / its CPU", "CPU <= 1.2 x its CPU"
      printf "|-----------------|--------|-----------|-----------------------|------------|--------------------|-----------------------|\n"
      for (i = 1; i <= nd; i++) print row[i]
    }' "$runs"
  echo "load average (1, 5, 15 min): at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg);" \
    "the measured runs took $((t_runs / 60)) min $((t_runs % 60)) s"
  echo
  echo "time: the demo's own timing of its parallel part, median (min-max) over the repetitions."
  echo "CPU s: user+sys of the whole process (wait4); a run that yields two rows (life, matmul) counts"
  echo "once in each. w/o serial parts: minus the wall time of the demo's own timed serial parts"
  echo "(an estimate; '-' if it has none). best fixed: the k with the smallest median time;"
  echo "smallest k: the smallest k whose median time is at most the best's max; the CPU target"
  echo "applies when that k is below $kmax. 'within spread': a miss where auto's median lies inside"
  echo "the reference's min-max (the best k's times; the smallest k's CPU times)."
  if [ "$decisions" = 1 ]; then
    echo
    echo "auto's decisions: one more run per demo with THROTTLE_AUTO=1 of a build that prints the"
    echo "global pool's controller log at exit (not in the table above; times since the pool started):"
    for d in "${DEMOS[@]}"; do
      echo "$d: $(awk "${PARSE[$d]}" "$WORK/logs/decisions-$d.log" | awk '{ printf "%s%s %.1f ms", (NR > 1 ? ", " : "this run: "), $1, $2 / 1e6 }')"
      grep '^decisions: ' "$WORK/logs/decisions-$d.log" | sed 's/^decisions: /  /' || echo "  (no controller log)"
    done
  fi
  exit 0
fi

# --- 4. Summary ----------------------------------------------------------------------------
echo
echo "rayon-demo: $(git -C "$demo_src" rev-parse --short HEAD 2>/dev/null || echo "$demo_src")," \
  "rayon $rayon_version vs facade at $(git -C "$ROOT" rev-parse --short HEAD)," \
  "$reps reps, $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
print_demos
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
