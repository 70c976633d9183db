//! How the scan's points are compared: means, scatter, and whether a point has clearly lost,
//! each against the noise the controller measured or assumes.

/// Prior of the relative noise of one interval (standard deviation): 6 %, about what ±10 %
/// uniform noise gives; the estimate moves away from it as samples come in.
pub(crate) const PRIOR_NOISE: f64 = 0.06;
/// Relative noise (standard deviation) at which the slack of the efficient choice is gone.
/// 0.08: beyond ±10 % uniform noise (6 %), points cannot place a plateau's edge within 5 %.
pub(crate) const NOISE_NO_SLACK: f64 = 0.08;
/// Weight of the prior, in samples.
pub(crate) const PRIOR_WEIGHT: f64 = 4.0;
/// Samples at the settled `k` kept as the first points of a rescan: 2, the most a CUSUM with
/// steps of at most 0.6 of its threshold needs to fire on a large step (older samples may
/// predate the shift; only those on the side of the shift are kept).
pub(crate) const RESCAN_SEEDS: usize = 2;
/// Of those, how many a small pool's rescan takes as points: 1, the newest. The samples that
/// fired the CUSUM are often a passing burst of someone else's load, and with two of them
/// among the three samples of the settled `k` they were its median: on this host
/// (`examples/auto_newcomer -- 3 1 par_iter`, load 3) a dip at `k = 2` fired a rescan whose
/// `k = 2` point was the dip, `k = 1` measured as fast, and the pool settled on `k = 1` at
/// 1.9 × the time per call of `k = 2`. One seed is outvoted by two fresh samples when the dip
/// has passed, and still saves an interval when the shift is real.
pub(crate) const RESCAN_SEEDS_KEPT: usize = 1;

/// The scatter of repeated measurements about their `k`'s typical value: the sum of squared
/// relative deviations and its degrees of freedom (samples minus distinct `k`s).
///
/// Each deviation is winsorized at 3 × the larger of [`PRIOR_NOISE`] and a robust scale of the
/// deviations (1.4826 × their median absolute value, over the `k`s measured more than once),
/// as every settled interval's is at 3σ. The settled noise starts from this sum, and one
/// unwinsorized outlier deafened it for tens of seconds: a cold scan of the lock workload whose
/// first 12.5 ms sample at `k = 2` caught the pool before its threads contended (4 847 items/s
/// against 1 050 and 1 075 after it) put the settled σ at 0.92 in its first interval, still
/// 0.43 after 2 s of settled intervals, so a threshold of 5σ ≈ 200 % never saw the cpu phase's drop of 38 %
/// at `k = 1` (the phases workload's cpu phase stayed at `k = 1` throughout, 3 phases in a
/// row).
pub(crate) fn scatter(points: &[(usize, f64)]) -> (f64, f64) {
    let mut ks: Vec<usize> = points.iter().map(|p| p.0).collect();
    ks.sort_unstable();
    ks.dedup();
    let devs: Vec<f64> = points
        .iter()
        .filter(|&&(k, _)| points.iter().filter(|p| p.0 == k).count() > 1)
        .map(|&(k, x)| {
            let m = mean_at(points, k);
            if m > 0.0 {
                x / m - 1.0
            } else {
                0.0
            }
        })
        .collect();
    let mut abs: Vec<f64> = devs.iter().map(|d| d.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let robust = abs.get(abs.len() / 2).map_or(0.0, |m| 1.4826 * m);
    let cap = 3.0 * robust.max(PRIOR_NOISE);
    let ss = devs.iter().map(|d| d.clamp(-cap, cap).powi(2)).sum();
    (ss, points.len().saturating_sub(ks.len()) as f64)
}

/// Whether the scan knows `k` to be a clear loser, so that measuring it again only costs: its
/// typical throughput is below `scan_stop` times that of another measured `k` that is either
///
/// - *smaller*: more threads and far slower, whatever the order of the samples (after a shift
///   on a lock-bound workload the top of the scan is the slowest `k`); or
/// - *larger*, when every sample of `k` is a seed (`points[..seeds]`, settled samples kept
///   from before a rescan), or when at least two of them are fresh and every fresh one is
///   below. The first sample at a lower `k` is often low on real work (a pool of spawned
///   batches ramps up after a change), and judging fewer threads a loser on one such sample
///   settled the lock workload on `k = 2` (measured); a settled sample has no change of `k`
///   before it, and a second fresh sample comes after the ramp. Without the seeds' case, a
///   phase that wanted more threads than the settled `k = 1` went back to `k = 1` for two
///   more samples after the top had measured twice its speed (`throttle adapt`'s phases:
///   about 30 ms at half speed in every cpu phase, and the phase's reach time was the end of
///   that dip); without the second, every cold start and every rescan of a program that
///   wants all threads measured `k = 1` a third time at half speed (tsp rescans about once a
///   second; matmul's whole parallel part is 80 ms).
pub(crate) fn clear_loser(points: &[(usize, f64)], seeds: usize, k: usize, scan_stop: f64) -> bool {
    if !points.iter().any(|p| p.0 == k) {
        return false;
    }
    let x = mean_at(points, k);
    let fresh: Vec<f64> = points[seeds.min(points.len())..]
        .iter()
        .filter(|p| p.0 == k)
        .map(|p| p.1)
        .collect();
    // What a larger `k` is compared with: the seeds' typical value, or the best fresh sample
    // once there are two; a single fresh sample is not judged against a larger `k`.
    let against_larger = match fresh.len() {
        0 => Some(x),
        1 => None,
        _ => Some(fresh.iter().copied().fold(f64::MIN, f64::max)),
    };
    points.iter().any(|p| {
        let bar = scan_stop * mean_at(points, p.0);
        (p.0 < k && x < bar) || (p.0 > k && against_larger.is_some_and(|v| v < bar))
    })
}

/// Whether no trend that the candidate's own samples allow could have lifted `larger` above
/// the challenge's bar by now, so that the challenge (`Reason::Challenge`), which is there for
/// trends, has nothing to find.
///
/// The candidate's samples taken after `larger`'s last one show how fast the rate grows: their
/// last over their first, made generous by [`TREND_ALLOWANCE`] for the noise of two samples,
/// per sample between them (never below no growth). `larger`'s latest sample grown at that
/// rate up to the candidate's latest must still miss the bar, `1 + margin` times that sample.
/// A rate that grows through the run (quicksort's forks) shows its growth in the candidate's
/// samples, and then the top is measured again. A top whose loss no such growth explains is
/// not: a rescan of the lock phase seeded at the top (one settled sample at `k = 2`, 1 015
/// items/s, then four at `k = 1` of 10 221 - 10 392) challenged the top for 43 ms at
/// 0.1 × the speed of `k = 1` after every such rescan, and so did the rescans seeded at the
/// settled `k = 1` (the top measured between two samples of the choice) until a rule for
/// that case alone.
pub(crate) fn trend_cannot_lift(
    points: &[(usize, f64)],
    larger: usize,
    candidate: usize,
    margin: f64,
) -> bool {
    let Some(last_larger) = points.iter().rposition(|p| p.0 == larger) else {
        return false;
    };
    let after: Vec<(usize, f64)> = points
        .iter()
        .enumerate()
        .skip(last_larger + 1)
        .filter(|(_, p)| p.0 == candidate)
        .map(|(i, p)| (i, p.1))
        .collect();
    let (Some(&(i0, x0)), Some(&(i1, x1))) = (after.first(), after.last()) else {
        return false;
    };
    if i1 == i0 || x0 <= 0.0 {
        // One sample cannot show a trend.
        return false;
    }
    let growth = (x1 / x0 * TREND_ALLOWANCE)
        .max(1.0)
        .powf(1.0 / (i1 - i0) as f64);
    let lifted = points[last_larger].1 * growth.powi((i1 - last_larger) as i32);
    lifted < (1.0 + margin) * x1
}

/// How much larger than measured a trend may be, as a factor on the ratio of two samples:
/// each has the prior's relative noise ([`PRIOR_NOISE`]), so their ratio is off by about
/// √2 × 6 % ≈ 8.5 % (one standard deviation); three of those.
pub(crate) const TREND_ALLOWANCE: f64 = 1.0 + 3.0 * std::f64::consts::SQRT_2 * PRIOR_NOISE;

pub(crate) fn best_mean(points: &[(usize, f64)]) -> (usize, f64) {
    points
        .iter()
        .map(|p| (p.0, mean_at(points, p.0)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((1, 0.0))
}

/// The typical throughput measured at `k`: the mean of one or two samples, the median of three
/// or more (so that one outlier cannot carry a point).
pub(crate) fn mean_at(points: &[(usize, f64)], k: usize) -> f64 {
    let mut xs: Vec<f64> = points.iter().filter(|p| p.0 == k).map(|p| p.1).collect();
    match xs.len() {
        0 => 0.0,
        1 | 2 => xs.iter().sum::<f64>() / xs.len() as f64,
        n => {
            xs.sort_by(f64::total_cmp);
            if n % 2 == 1 {
                xs[n / 2]
            } else {
                (xs[n / 2 - 1] + xs[n / 2]) / 2.0
            }
        }
    }
}
