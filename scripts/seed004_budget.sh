#!/usr/bin/env bash
# Seed 004 with and without a machine-wide budget, with real make as the launcher
# (the measured comparison, with repetitions and run-queue wait, is `throttle procs --budget`):
# K copies of a throttle program whose pool is built for all CPUs (`throttle __tasks`:
# 40 tasks of 5 ms CPU each), started by make -jK with no budget ("free", THROTTLE_JOBSERVER=off)
# versus under one budget of nproc slots (`throttle run -j $(nproc) --jobserver-style pipe -- make`).
# Prints the mean completion time and the makespan for each K; run it on a quiet machine and
# repeat (wall times on a shared machine are noisy).
#
#   cargo build --release -p throttle-cli && scripts/seed004_budget.sh 1 2 4 8 16
set -euo pipefail
T=${THROTTLE:-$(cd "$(dirname "$0")/.." && pwd)/target/release/throttle}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
one() {
  local k=$1 mode=$2
  rm -f done Makefile
  for i in $(seq 1 "$k"); do echo "all: c$i" >> Makefile; done
  for i in $(seq 1 "$k"); do
    printf 'c%s:\n\t+@%s __tasks --tasks 40 --micros 5000 --log /dev/null; date +%%s%%N >> done\n' "$i" "$T" >> Makefile
  done
  local t0
  t0=$(date +%s%N)
  if [ "$mode" = free ]; then
    THROTTLE_JOBSERVER=off make -s -j"$k"
  else
    "$T" run -j "$(nproc)" --jobserver-style pipe -- make -s 2>/dev/null
  fi
  awk -v t0="$t0" -v k="$k" -v m="$mode" \
    '{ d = ($1 - t0) / 1e9; s += d; if (d > x) x = d }
     END { printf "%-6s K=%-3d mean completion %.3f s   makespan %.3f s\n", m, k, s / NR, x }' done
}
ks=("$@")
[ "${#ks[@]}" -gt 0 ] || ks=(1 2 4 8)
for k in "${ks[@]}"; do
  one "$k" free
  one "$k" budget
done
