#!/usr/bin/env bash
# Binary size and compile time of a small rayon program: rayon vs throttle's facade.
#
# Writes one small program (a parallel sum over a range, a par_sort_unstable of a Vec, and a
# rayon::join) into two scratch crates under target/rayon-size/: one depending on rayon from
# crates.io (=RAYON_VERSION, default 1.12.0), one the same with [patch.crates-io] pointing rayon
# and rayon-core at compat/. Dependencies are fetched first (not timed); then each crate is
# built in release from clean (its own empty target dir), and the script prints the build's
# wall time and CPU time (user+sys of cargo and everything it ran), the size of the binary as
# built and stripped (`strip`), and the ratio facade/rayon. Builds alternate (A B, B A, ...)
# over --reps repetitions (default 3); times are medians, with min-max.
#
# Usage: scripts/rayon-size.sh [--reps N] [--rayon-version V]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

reps=3
rayon_version=1.12.0
usage_err() { echo "rayon-size.sh: $1 (try --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --reps)
      [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_err "invalid value '${2:-}' for '--reps': expected a whole number > 0"
      reps=$2; shift 2 ;;
    --rayon-version) rayon_version=${2:-}; [ -n "$rayon_version" ] || usage_err "'--rayon-version' needs a version"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_err "unknown argument '$1'" ;;
  esac
done
command -v python3 > /dev/null ||
  { echo "rayon-size.sh: needs python3 (to read each build's CPU time with wait4)" >&2; exit 1; }
command -v strip > /dev/null || { echo "rayon-size.sh: needs strip (binutils)" >&2; exit 1; }

WORK=$ROOT/target/rayon-size
mkdir -p "$WORK"
export CARGO_TERM_COLOR=never
unset CARGO_TARGET_DIR RUSTFLAGS CARGO_BUILD_RUSTFLAGS

for v in rayon facade; do
  dir=$WORK/$v
  mkdir -p "$dir/src"
  {
    printf '[package]\nname = "size-%s"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n' "$v"
    printf '[workspace]\n\n[dependencies]\nrayon = "=%s"\n' "$rayon_version"
    if [ "$v" = facade ]; then
      printf '\n[patch.crates-io]\nrayon = { path = "%s/compat/rayon" }\n' "$ROOT"
      printf 'rayon-core = { path = "%s/compat/rayon-core" }\n' "$ROOT"
    fi
  } > "$dir/Cargo.toml"
  cat > "$dir/src/main.rs" <<'EOF'
use rayon::prelude::*;

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let sum: u64 = (0..n).into_par_iter().map(|i| i % 7).sum();
    let mut v: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7).collect();
    v.par_sort_unstable();
    let (a, b) = rayon::join(|| v[..v.len() / 2].iter().sum::<u64>(), || v.len());
    println!("{sum} {a} {b} {}", v.windows(2).all(|w| w[0] <= w[1]));
}
EOF
  cargo fetch --quiet --manifest-path "$dir/Cargo.toml"
done

rusage_py='
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%.3f %.3f\n" % (time.monotonic() - t0, ru.ru_utime + ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
'
results=$WORK/builds.tsv
: > "$results"
for ((r = 1; r <= reps; r++)); do
  if ((r % 2)); then order=(rayon facade); else order=(facade rayon); fi
  for v in "${order[@]}"; do
    dir=$WORK/$v
    rm -rf "$dir/target"
    echo "== build $r/$reps: $v" >&2
    python3 -c "$rusage_py" "$WORK/time-$v" cargo build --release --offline --quiet \
      --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target"
    bin=$dir/target/release/size-$v
    "$bin" 1000 > /dev/null # it runs
    cp "$bin" "$dir/stripped"
    strip "$dir/stripped"
    read -r wall cpu < "$WORK/time-$v"
    printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$wall" "$cpu" "$(stat -c %s "$bin")" \
      "$(stat -c %s "$dir/stripped")" >> "$results"
  done
done

echo
echo "rayon $rayon_version vs facade at $(git -C "$ROOT" rev-parse --short HEAD)," \
  "$reps clean release builds each, $(nproc) CPUs, $(rustc --version | cut -d' ' -f1-2)," \
  "$(date -u '+%Y-%m-%d %H:%M UTC')"
awk -F'\t' -v reps="$reps" '
  { k = $1; n[k]++; w[k, n[k]] = $2; c[k, n[k]] = $3; size[k] = $4; ssize[k] = $5 }
  function med(arr, k, m,   i, j, t) {
    for (i = 1; i <= m; i++) s[i] = arr[k, i] + 0
    for (i = 2; i <= m; i++) { t = s[i]; for (j = i - 1; j >= 1 && s[j] > t; j--) s[j + 1] = s[j]; s[j + 1] = t }
    return (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
  }
  END {
    printf "| %-24s | %-22s | %-22s | %-6s |\n", "", "rayon", "facade", "ratio"
    printf "|--------------------------|------------------------|------------------------|--------|\n"
    wr = med(w, "rayon", n["rayon"]); lo1 = s[1]; hi1 = s[n["rayon"]]
    wf = med(w, "facade", n["facade"]); lo2 = s[1]; hi2 = s[n["facade"]]
    printf "| %-24s | %-22s | %-22s | %6.2f |\n", "build wall time", sprintf("%.1f s (%.1f-%.1f)", wr, lo1, hi1), sprintf("%.1f s (%.1f-%.1f)", wf, lo2, hi2), wf / wr
    cr = med(c, "rayon", n["rayon"]); lo1 = s[1]; hi1 = s[n["rayon"]]
    cf = med(c, "facade", n["facade"]); lo2 = s[1]; hi2 = s[n["facade"]]
    printf "| %-24s | %-22s | %-22s | %6.2f |\n", "build CPU time (u+s)", sprintf("%.1f s (%.1f-%.1f)", cr, lo1, hi1), sprintf("%.1f s (%.1f-%.1f)", cf, lo2, hi2), cf / cr
    printf "| %-24s | %-22s | %-22s | %6.2f |\n", "binary size", sprintf("%d KiB", size["rayon"] / 1024), sprintf("%d KiB", size["facade"] / 1024), size["facade"] / size["rayon"]
    printf "| %-24s | %-22s | %-22s | %6.2f |\n", "binary size, stripped", sprintf("%d KiB", ssize["rayon"] / 1024), sprintf("%d KiB", ssize["facade"] / 1024), ssize["facade"] / ssize["rayon"]
  }' "$results"
echo
echo "build: cargo build --release from an empty target dir, dependencies already fetched."
