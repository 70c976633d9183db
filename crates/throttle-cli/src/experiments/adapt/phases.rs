//! `throttle adapt`'s phases: lock-bound, CPU-bound, lock-bound again, and how soon auto mode
//! reaches each phase's best `k` (its reach time).

use std::time::{Duration, Instant};

use throttle::controller::ControllerEvent;
use throttle::Pool;
use throttle_workloads::adaptive::{self, Kind, Shared};

use super::{judged, median, met, print_k_over_time, run_for_marked, times_of, BATCH};
use crate::experiments::adapt_plot::{self, Reference, Timeline};

/// Window over which [`reach_time`] measures throughput: the controller's interval.
const REACH_WINDOW: Duration = throttle::controller::DEFAULT_INTERVAL;

/// The reach time: how long after a phase began the throughput first reached
/// `share` of `target` (items/s), measured over a window of at least [`REACH_WINDOW`]
/// starting at the phase's start or at a batch's end. `ends` are the batch ends since the
/// phase began. `None` if it never did.
fn reach_time(ends: &[Duration], target: f64, share: f64) -> Option<Duration> {
    let starts = std::iter::once(Duration::ZERO).chain(ends.iter().copied());
    for (j, from) in starts.enumerate() {
        // Batches ending after `from`: ends[j..]; the window closes at the first one at least
        // REACH_WINDOW later.
        let m = ends[j..].iter().position(|&e| e - from >= REACH_WINDOW)?;
        let span = ends[j + m] - from;
        let rate = ((m + 1) * BATCH) as f64 / span.as_secs_f64();
        if rate >= share * target {
            return Some(from);
        }
    }
    None
}

/// Milliseconds, or "never".
fn ms_or_never(d: Option<Duration>) -> String {
    d.map_or_else(
        || "never".into(),
        |d| format!("{:.0}", d.as_secs_f64() * 1e3),
    )
}

/// lock, cpu, lock: per-phase throughput of every fixed k and of auto, and how soon auto
/// reached each phase's best k.
pub(super) fn phases(
    threads: usize,
    secs: f64,
    reps: usize,
    plot: bool,
) -> anyhow::Result<Timeline> {
    let plan = [Kind::Lock, Kind::Cpu, Kind::Lock];
    let shared = Shared::new();
    println!(
        "== phases: lock, cpu, lock, {secs} s each, pool of {threads} threads, {reps} repetitions \
         interleaved (one auto pool, kept warm across them) =="
    );
    let fixed = Pool::new(threads)?;
    let auto = Pool::new(threads)?;
    // The controller log counts from the pool's birth: this is a moment later (< 1 ms).
    let born = Instant::now();
    auto.set_concurrency_auto()?;
    // Warm-up in the last phase's workload: each repetition then starts as a long-running
    // program's next cycle would.
    adaptive::warm_until_settled(&auto, plan[2], 256, &shared, Duration::from_secs(5));
    // rates[case][phase] over the repetitions; case `threads` is auto.
    let mut rates: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); plan.len()]; threads + 1];
    // ends[case][phase][rep]: batch ends within the phase, for the reach times.
    let mut ends: Vec<Vec<Vec<Vec<Duration>>>> = vec![vec![Vec::new(); plan.len()]; threads + 1];
    // Per auto repetition: when each phase started (pool time) and how long until the phase's
    // best k was in force.
    let mut reached: Vec<Vec<Option<Duration>>> = vec![Vec::new(); plan.len()];
    let mut points = Vec::new();
    let mut first_starts: Vec<Duration> = Vec::new();
    for rep in 0..reps {
        for j in 0..=threads {
            let case = (j + rep) % (threads + 1);
            if case < threads {
                fixed.set_concurrency(case + 1)?;
                for (i, &kind) in plan.iter().enumerate() {
                    let (n, e) = run_for_marked(&fixed, kind, secs, &shared);
                    rates[case][i].push(n as f64 / secs);
                    ends[case][i].push(e);
                }
                continue;
            }
            let mut starts = Vec::new();
            let t0 = Instant::now();
            let ((), pts) = adapt_plot::record(&auto, plot && points.is_empty(), || {
                for (i, &kind) in plan.iter().enumerate() {
                    starts.push(t0.elapsed());
                    let (n, e) = run_for_marked(&auto, kind, secs, &shared);
                    rates[case][i].push(n as f64 / secs);
                    ends[case][i].push(e);
                }
            });
            if first_starts.is_empty() {
                points = pts;
                first_starts = starts.clone();
            }
            let base = t0.duration_since(born);
            for (i, s) in starts.iter().enumerate() {
                reached[i].push(Some(base + *s));
            }
        }
    }
    let med: Vec<Vec<f64>> = rates
        .iter()
        .map(|c| c.iter().map(|v| median(v.clone())).collect())
        .collect();
    println!("{:>6} items/s per phase (median of {reps})", "k");
    for (case, row) in med.iter().enumerate() {
        let name = if case == threads {
            "auto".to_string()
        } else {
            (case + 1).to_string()
        };
        println!(
            "{name:>6} {}",
            row.iter().map(|r| format!("{r:>9.0}")).collect::<String>()
        );
    }
    let best: Vec<(usize, f64)> = (0..plan.len())
        .map(|i| {
            (0..threads)
                .map(|c| (c + 1, med[c][i]))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((1, 0.0))
        })
        .collect();
    let log = auto.controller_log();
    for (i, &kind) in plan.iter().enumerate() {
        let ratio = med[threads][i] / best[i].1;
        // For each repetition: the time from the phase's start until the phase's best k was
        // in force (0 if it already was), or "never" if not before the phase ended.
        let phase_len = Duration::from_secs_f64(secs);
        let times: Vec<String> = reached[i]
            .iter()
            .flatten()
            .map(|&start| {
                if auto_k_at(&log, start) == Some(best[i].0) {
                    return "0".to_string();
                }
                log.iter()
                    .take_while(|e| e.at < start + phase_len)
                    .find(|e| e.at >= start && e.new_k == best[i].0)
                    .map(|e| format!("{:.0}", (e.at - start).as_secs_f64() * 1000.0))
                    .unwrap_or_else(|| "never".into())
            })
            .collect();
        // The measure: 95 % of the phase's best throughput (the best fixed k's
        // median), over a window of one controller interval. The best fixed k's own runs,
        // measured the same way, show how soon the measure itself can say "reached" on this
        // host (its floor: noise alone can delay it).
        let reach = |case: usize| -> Vec<Option<Duration>> {
            ends[case][i]
                .iter()
                .map(|e| reach_time(e, best[i].1, REACH_SHARE))
                .collect()
        };
        let (auto_reach, fixed_reach) = (reach(threads), reach(best[i].0 - 1));
        let within = auto_reach
            .iter()
            .filter(|r| r.is_some_and(|d| d <= REACH_TARGET))
            .count();
        let list = |v: &[Option<Duration>]| {
            v.iter()
                .map(|&d| ms_or_never(d))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "phase {} ({}): best fixed k = {}, auto/best throughput = {ratio:.3} (target ≥ {:.3}, judged on time per item ≤ 1.10 × best: {})",
            i + 1,
            kind.name(),
            best[i].0,
            1.0 / 1.10,
            judged(
                &times_of(&rates[threads][i]),
                &times_of(&rates[best[i].0 - 1][i]),
                1.10
            ),
        );
        println!(
            "  95 % of the best throughput ({} ms windows) reached after [{}] ms in auto's \
             repetitions, median {}; {within} of {} within {} ms ({}); the best fixed k's \
             own runs, measured alike: [{}] ms",
            REACH_WINDOW.as_millis(),
            list(&auto_reach),
            median_reach(&auto_reach),
            auto_reach.len(),
            REACH_TARGET.as_millis(),
            met(within == auto_reach.len()),
            list(&fixed_reach),
        );
        println!(
            "  k = {} in force after [{}] ms",
            best[i].0,
            times.join(", ")
        );
    }
    let starts = first_starts;
    print_k_over_time(&log, auto.concurrency());
    println!();
    let names: Vec<&str> = plan.iter().map(|k| k.name()).collect();
    Ok(Timeline {
        workload: "phases".into(),
        what: format!("{} for {secs} s each", names.join(", ")),
        threads,
        points,
        best_k: None,
        reference: Some(Reference {
            name: "best fixed k of each phase (sweep)".into(),
            spans: best
                .iter()
                .enumerate()
                .map(|(i, &(_, x))| (i as f64 * secs, (i + 1) as f64 * secs, x))
                .collect(),
        }),
        marks: starts
            .iter()
            .zip(&names)
            .skip(1)
            .map(|(t, n)| (t.as_secs_f64(), format!("{n} starts")))
            .collect(),
    })
}

/// Share of a phase's best throughput that counts as reached, and how soon (auto mode's
/// target for phase changes).
const REACH_SHARE: f64 = 0.95;
const REACH_TARGET: Duration = Duration::from_millis(100);

/// Median of reach times ("12 ms"), "never" counting as the longest.
fn median_reach(v: &[Option<Duration>]) -> String {
    let mut v = v.to_vec();
    v.sort_by_key(|d| d.unwrap_or(Duration::MAX));
    match v.get(v.len() / 2).copied().flatten() {
        Some(d) => format!("{} ms", ms_or_never(Some(d))),
        None => "never".into(),
    }
}

fn auto_k_at(log: &[ControllerEvent], t: Duration) -> Option<usize> {
    log.iter().take_while(|e| e.at <= t).last().map(|e| e.new_k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn reach_time_is_the_start_of_the_first_fast_enough_window() {
        // 64 items per batch. Slow at first (one batch per 20 ms = 3 200/s), then one per
        // 5 ms (12 800/s) from 100 ms on.
        let mut ends: Vec<u64> = (1..=5).map(|i| i * 20).collect();
        ends.extend((1..=40).map(|i| 100 + i * 5));
        let ends = ms(&ends);
        // Already reached at the start: a target the slow rate meets.
        assert_eq!(reach_time(&ends, 3_000.0, 0.95), Some(Duration::ZERO));
        // The fast rate: the first window [from, from + 50 ms] that holds only fast batches
        // starts at the last slow batch's end, 100 ms.
        assert_eq!(
            reach_time(&ends, 12_800.0, 0.95),
            Some(Duration::from_millis(100))
        );
        // 95 % of a rate never seen: never.
        assert_eq!(reach_time(&ends, 20_000.0, 0.95), None);
        // Too short a run for one window: never (not a guess).
        assert_eq!(reach_time(&ms(&[10, 20]), 1.0, 0.95), None);
    }

    #[test]
    fn median_reach_counts_never_as_the_longest() {
        let d = |m| Some(Duration::from_millis(m));
        assert_eq!(median_reach(&[d(30), None, d(10)]), "30 ms");
        assert_eq!(median_reach(&[None, None, d(10)]), "never");
    }
}
