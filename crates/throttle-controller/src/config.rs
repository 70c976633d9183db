//! The controller's knobs.

use std::time::Duration;

/// Tuning of the controller. Every default says where it comes from in its doc.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The highest `k` (the pool's threads). The lowest is 1.
    pub max_k: usize,
    /// Settle on the smallest `k` whose predicted throughput is within this fraction of the
    /// predicted peak, when the measurements are quiet; it shrinks as they get noisier (see
    /// `efficient_k`). 0.03: auto mode's target is 5 % of the peak; 2 % is left for the error
    /// of the fit.
    pub slack: f64,
    /// The scan stops once throughput fell below this fraction of the best point seen (after at
    /// least three points): the peak is then behind us. 0.6: a USL curve is flat near its peak,
    /// so a point that far below it is well past it even with 10 % noise.
    pub scan_stop: f64,
    /// The verifying measurement may fall this far below the best measured point before the
    /// model is overruled. 0.2: two samples with ±10 % noise can differ by that much by chance.
    pub verify_tolerance: f64,
    /// The larger `k` measured right after the model's choice ([`Reason::Challenge`](crate::Reason::Challenge)) wins when
    /// it is this much faster than the choice's own verifying sample. 0.2, as
    /// `verify_tolerance`: what two noisy samples can differ by, and far less than the gap the
    /// challenge is for (a `k` that runs half as fast).
    pub challenge_margin: f64,
    /// Settled: the CUSUM drift, in units of the measured noise (standard deviation of one
    /// interval's relative throughput). Deviations smaller than this are treated as noise.
    /// 1.0: detects a sustained shift of two standard deviations or more within a few
    /// intervals, while noise alone takes thousands of intervals to raise a false alarm.
    pub shift_drift: f64,
    /// Settled: the CUSUM threshold, in units of the measured noise. 5.0 (see `shift_drift`).
    pub shift_threshold: f64,
    /// Floor of the measured noise used by the CUSUM (relative): on a very quiet machine a shift
    /// of a few per cent is not worth a rescan. 0.03.
    pub min_noise: f64,
    /// Not used any more: the run-queue fraction had to move [`Config::load_threshold`] for
    /// this many intervals in a row to start a new scan; it is now judged by a CUSUM scaled to
    /// its learned noise (`load.rs`), which a large change fires within three intervals.
    /// Kept so that code which sets it still builds. 3.
    pub shift_intervals: u32,
    /// Settled: the smallest sustained change of the run-queue fraction that starts a new
    /// scan on a quiet host (a fifth of it is the floor of the fraction's learned noise, and
    /// the CUSUM fires at 5 noise widths). 0.25: a quarter of the busy time now (or no longer)
    /// spent waiting for a CPU. On a noisy host the learned noise raises the bar (`load.rs`).
    pub load_threshold: f64,
    /// An interval whose threads were busy at least this fraction of `k` threads' time but
    /// finished (almost) nothing is work in progress, not idle: the pool lets its sample grow
    /// (a task or a loop block longer than the interval) instead of reporting it. 0.05: a few
    /// per cent of busy time is what an idle pool's bookkeeping shows.
    ///
    /// The controller itself judges idleness by the work alone: an interval with no finished
    /// work is idle, one with finished work is not, however few threads were busy (a
    /// 64-thread pool at `k = 64` running work that does not scale is 1/64 busy, and exactly
    /// what the scan must see to move down).
    pub idle_utilisation: f64,
    /// Not settled, after this many idle intervals in a row the best `k` measured so far
    /// replaces the scan point in force (the top if none was measured). 5 (a quarter second
    /// at the default interval): a scan point is a question about the work, and with no work
    /// it gets no answer; meanwhile it is the limit anyone who calls the pool gets, and what
    /// the call-site memory measures the parallel way at. Without this, a pool whose callers
    /// had learned to run serially stayed at the scan's `k = 1` for good: its loops then
    /// measured as slow in parallel as serially, so they stayed serial, and the pool idle
    /// (seen with `throttle adapt --workloads jobs`).
    pub idle_best_after: u32,
    /// Samples per scan point. 1 when the scan has many points (their fit averages the
    /// noise); 3 for a pool of at most 3 threads, whose two or three points cannot be fitted
    /// and so must be averaged one by one (the median of 3 also drops one outlier).
    pub scan_repeats: u32,
    /// Settled: the sample length the CUSUM's step is made for. A shorter sample moves the
    /// CUSUM in proportion to its length, unless it is a clear change (below
    /// [`Config::scan_stop`] of the baseline, or as far above it): a moderate shift then takes
    /// as long to start a rescan as it did with samples of this length, and only a clear change
    /// is seen sooner. `None` (the default; simulators and tests): every sample a full step.
    /// The auto-mode thread sets the pool's interval, and samples half of it while work runs
    /// (`auto.rs`, `SETTLED_DIVISOR`): the shorter samples were for the phases workload's
    /// changes of the work (2 to 10 × in throughput), and with full steps they also made the
    /// host's own speed steps (±15–30 % for hundreds of ms) start twice as many rescans (the
    /// newcomer's `map_reduce` loop: changes of `k` in 3 s 2 2 2 2 2 4 6 8 before, 2 4 4 4 6 8
    /// 8 10 after). With this weight, at most 2 in 11 of 16 runs against 2 of 16 without
    /// (README.md, "Settled samples").
    pub cusum_period: Option<Duration>,
}

impl Config {
    /// Defaults for a pool of `max_k` threads.
    pub fn new(max_k: usize) -> Config {
        Config {
            max_k: max_k.max(1),
            slack: 0.03,
            scan_stop: 0.6,
            verify_tolerance: 0.2,
            challenge_margin: 0.2,
            shift_drift: 1.0,
            shift_threshold: 5.0,
            min_noise: 0.03,
            shift_intervals: 3,
            load_threshold: 0.25,
            idle_utilisation: 0.05,
            idle_best_after: 5,
            scan_repeats: if max_k <= 3 { 3 } else { 1 },
            cusum_period: None,
        }
    }
}
