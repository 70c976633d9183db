//! A simulated machine for the controller: throughput from Universal Scalability Law curves
//! `X(k) = λk / (1 + σ(k−1) + κk(k−1))`, multiplicative noise, step changes of the curve, and
//! machines of any size (this project's test machine has 2 cores; the controller must also work
//! on 256). Deterministic: every run is a function of its seed.
//!
//! Beside the real controller runs a baseline written from the published description of .NET's
//! thread-pool hill climbing ([`HillClimb`]), so that both can be compared on the same plants in
//! *intervals to settle* (never wall time).
//!
//! # Examples
//! ```
//! use throttle_controller::sim::{Curve, Plant, Policy, run};
//! use throttle_controller::{Config, Controller};
//! let plant = Plant::new(64, 0.05, vec![(Curve::new(0.02, 0.0005), 60)], 7);
//! let mut c = Controller::new(Config::new(64));
//! let trace = run(&plant, &mut c);
//! let seg = &trace.segments()[0];
//! assert!(seg.settle.unwrap() <= 20);
//! ```

use crate::{Controller, Sample};
use std::time::Duration;

/// One USL curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Curve {
    /// Contention (serial fraction).
    pub sigma: f64,
    /// Coherency (crosstalk) cost.
    pub kappa: f64,
    /// Throughput of one thread.
    pub lambda: f64,
}

impl Curve {
    /// A curve with `λ = 1000` per second.
    pub fn new(sigma: f64, kappa: f64) -> Curve {
        Curve {
            sigma,
            kappa,
            lambda: 1000.0,
        }
    }

    /// The same curve with one thread's throughput `lambda`.
    pub fn with_lambda(mut self, lambda: f64) -> Curve {
        self.lambda = lambda;
        self
    }

    /// Noise-free throughput at `k`.
    pub fn x(&self, k: usize) -> f64 {
        let k = k as f64;
        self.lambda * k / (1.0 + self.sigma * (k - 1.0) + self.kappa * k * (k - 1.0))
    }

    /// The best throughput over `1..=max_k`.
    pub fn peak(&self, max_k: usize) -> f64 {
        (1..=max_k).map(|k| self.x(k)).fold(0.0, f64::max)
    }
}

/// A machine: `cores` (the pool's threads), relative noise (uniform in `±noise`), and a sequence
/// of curves, each in force for a number of intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct Plant {
    /// Cores, and the pool's threads.
    pub cores: usize,
    /// Half-width of the uniform multiplicative noise (0.1 = ±10 %).
    pub noise: f64,
    /// Curves and how many intervals each lasts.
    pub segments: Vec<(Curve, usize)>,
    /// Seed of the noise.
    pub seed: u64,
}

impl Plant {
    /// A plant; see the fields.
    pub fn new(cores: usize, noise: f64, segments: Vec<(Curve, usize)>, seed: u64) -> Plant {
        Plant {
            cores,
            noise,
            segments,
            seed,
        }
    }
}

/// Something that picks `k` from throughput: the real controller or the baseline.
pub trait Policy {
    /// The `k` to apply for the next interval.
    fn k(&self) -> usize;
    /// The `k` the policy means (for a prober, the centre of its probe; else `k()`).
    fn centre(&self) -> usize {
        self.k()
    }
    /// Feeds one interval measured at `k`; returns the next `k`.
    fn observe(&mut self, k: usize, throughput: f64) -> usize;
}

/// The interval the simulator reports: 100 ms (the length only scales the work figures).
const INTERVAL: Duration = Duration::from_millis(100);

impl Policy for Controller {
    fn k(&self) -> usize {
        Controller::k(self)
    }
    fn observe(&mut self, k: usize, throughput: f64) -> usize {
        self.step(&Sample::throughput(k, throughput, INTERVAL)).k
    }
}

/// A square-wave hill climber after the published description of .NET's thread-pool
/// controller (Hellerstein, Morrison and Fisher, "Optimizing concurrency levels in the .NET
/// ThreadPool", 2008; the CLR's `HillClimbing`): the thread count is modulated by a square wave
/// of amplitude `a` around a centre `c`; the throughput slope at the wave's frequency, relative
/// to the mean, estimates `dX/dk`; the centre moves by a gain times that slope, limited per
/// period. Our own code, and generous to the original: it moves in proportion to `c` (the
/// original is limited to a few threads per second), has no floor at the core count, and is
/// judged on its centre, not on the probe points it actually runs.
#[derive(Debug, Clone)]
pub struct HillClimb {
    max_k: usize,
    centre: f64,
    /// Intervals per half wave.
    half: usize,
    /// Position in the current period, `0..2*half`.
    pos: usize,
    hi_sum: f64,
    lo_sum: f64,
    hi_k: usize,
    lo_k: usize,
    /// Gain on the relative slope (elasticity).
    gain: f64,
    /// Largest relative move of the centre per period.
    max_move: f64,
}

impl HillClimb {
    /// Starts at `max_k`, as .NET starts at its minimum of one thread per core.
    pub fn new(max_k: usize) -> HillClimb {
        let mut h = HillClimb {
            max_k: max_k.max(1),
            centre: max_k.max(1) as f64,
            half: 2,
            pos: 0,
            hi_sum: 0.0,
            lo_sum: 0.0,
            hi_k: 1,
            lo_k: 1,
            gain: 0.5,
            max_move: 0.25,
        };
        h.set_wave();
        h
    }

    fn set_wave(&mut self) {
        let c = self.centre.round() as usize;
        let a = ((self.centre * 0.1).round() as usize).max(1);
        self.hi_k = (c + a).min(self.max_k);
        self.lo_k = c.saturating_sub(a).max(1);
        if self.hi_k == self.lo_k {
            self.hi_k = (self.lo_k + 1).min(self.max_k);
        }
    }
}

impl Policy for HillClimb {
    fn k(&self) -> usize {
        if self.pos < self.half {
            self.hi_k
        } else {
            self.lo_k
        }
    }

    fn centre(&self) -> usize {
        (self.centre.round() as usize).clamp(1, self.max_k)
    }

    fn observe(&mut self, _k: usize, x: f64) -> usize {
        if self.pos < self.half {
            self.hi_sum += x;
        } else {
            self.lo_sum += x;
        }
        self.pos += 1;
        if self.pos == 2 * self.half {
            let (hi, lo) = (
                self.hi_sum / self.half as f64,
                self.lo_sum / self.half as f64,
            );
            let mean = (hi + lo) / 2.0;
            let dk = self.hi_k as f64 - self.lo_k as f64;
            if mean > 0.0 && dk > 0.0 {
                // Elasticity: relative throughput change per relative k change.
                let e = ((hi - lo) / mean) / (dk / self.centre);
                let step = (self.gain * e).clamp(-self.max_move, self.max_move);
                self.centre = (self.centre * (1.0 + step)).clamp(1.0, self.max_k as f64);
            }
            self.pos = 0;
            self.hi_sum = 0.0;
            self.lo_sum = 0.0;
            self.set_wave();
        }
        self.k()
    }
}

/// One simulated interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Segment (curve) index.
    pub segment: usize,
    /// The `k` in force.
    pub k: usize,
    /// The policy's centre (its `k` for the controller).
    pub centre: usize,
    /// Noise-free throughput at `k`.
    pub x_true: f64,
    /// Noise-free throughput at the centre.
    pub centre_true: f64,
    /// What the policy saw.
    pub x_measured: f64,
    /// The curve's peak.
    pub peak: f64,
}

/// How one segment went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmentResult {
    /// Intervals from the segment's start until the `k` in force stays within 5 % of the peak
    /// to the end of the segment (what the workload experiences); `None` if it never does.
    pub settle: Option<usize>,
    /// The same, judged on the policy's centre instead (kinder to a prober, whose probe points
    /// are not counted); the controller's centre is its `k`, so this equals `settle` for it.
    pub settle_centre: Option<usize>,
    /// Changes of the centre after it settled.
    pub changes_after: usize,
    /// Largest change of the centre after it settled, in units of `k`.
    pub max_jump_after: usize,
    /// Mean true throughput over the segment relative to the peak.
    pub efficiency: f64,
}

/// The intervals of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Every interval.
    pub steps: Vec<Step>,
}

impl Trace {
    /// For segment `segment`: the intervals from its start until the policy's centre stops
    /// changing for the rest of the segment (0 if it never changed), and that centre. `None`
    /// if the segment did not run. Unlike [`SegmentResult::settle`] it judges the policy, not
    /// the throughput: on flat work every `k` is within 5 % of the peak from the first
    /// interval, and only this shows when the policy stopped moving.
    pub fn still_from(&self, segment: usize) -> Option<(usize, usize)> {
        let seg: Vec<&Step> = self.steps.iter().filter(|s| s.segment == segment).collect();
        let last = seg.last()?;
        let from = seg
            .windows(2)
            .rposition(|w| w[0].centre != w[1].centre)
            .map_or(0, |i| i + 1);
        Some((from, last.centre))
    }

    /// Per-segment results.
    pub fn segments(&self) -> Vec<SegmentResult> {
        let n = self.steps.iter().map(|s| s.segment + 1).max().unwrap_or(0);
        (0..n)
            .map(|i| {
                let seg: Vec<&Step> = self.steps.iter().filter(|s| s.segment == i).collect();
                segment_result(&seg)
            })
            .collect()
    }
}

fn segment_result(seg: &[&Step]) -> SegmentResult {
    let settled_from =
        |good: &dyn Fn(&Step) -> bool| (0..seg.len()).find(|&t| seg[t..].iter().all(|s| good(s)));
    let settle = settled_from(&|s| s.x_true >= 0.95 * s.peak);
    let settle_centre = settled_from(&|s| s.centre_true >= 0.95 * s.peak);
    let (mut changes, mut jump) = (0, 0);
    if let Some(t) = settle {
        for w in seg[t..].windows(2) {
            if w[0].centre != w[1].centre {
                changes += 1;
                jump = jump.max(w[0].centre.abs_diff(w[1].centre));
            }
        }
    }
    let efficiency = seg.iter().map(|s| s.x_true / s.peak).sum::<f64>() / seg.len().max(1) as f64;
    SegmentResult {
        settle,
        settle_centre,
        changes_after: changes,
        max_jump_after: jump,
        efficiency,
    }
}

/// Runs `policy` on `plant`.
pub fn run(plant: &Plant, policy: &mut dyn Policy) -> Trace {
    let mut rng = SplitMix(plant.seed);
    let mut steps = Vec::new();
    for (segment, &(curve, len)) in plant.segments.iter().enumerate() {
        let peak = curve.peak(plant.cores);
        for _ in 0..len {
            let k = policy.k();
            let centre = policy.centre();
            let x_true = curve.x(k);
            let noise = 1.0 + plant.noise * (2.0 * rng.unit() - 1.0);
            let x_measured = x_true * noise;
            steps.push(Step {
                segment,
                k,
                centre,
                x_true,
                centre_true: curve.x(centre),
                x_measured,
                peak,
            });
            policy.observe(k, x_measured);
        }
    }
    Trace { steps }
}

/// splitmix64: a small, well-known deterministic generator; enough for noise.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The plant of the blind spot on loops: a loop at `k = 1` makes no tasks, so a controller
/// that counted tasks would read `k = 1` as idle. Here the signal at `k = 1` is the same as at
/// every other `k` (work that does not scale at all, counted in items at every `k`: `σ = 1`),
/// then the work scales, and runs faster at `k = 1` too, so that the change shows at a settled
/// `k` (the controller does not probe). 8 cores, ±5 % noise, 60 intervals each.
pub fn blind_spot_plant(seed: u64) -> Plant {
    let flat_from_one = Curve::new(1.0, 0.0).with_lambda(1000.0);
    let scalable = Curve::new(0.01, 0.0).with_lambda(2000.0);
    Plant::new(8, 0.05, vec![(flat_from_one, 60), (scalable, 60)], seed)
}

/// The standard set of plants the tests and `throttle adapt --sim` use: for each machine size
/// (8, 64, 256 cores) and noise level (2 %, 5 %, 10 %), a curve that peaks at the top, one that
/// peaks low, then a step to a flat one and back to the first. Each segment lasts 60 intervals.
/// (The [`blind_spot_plant`] is apart: on its flat segment every `k` is within 5 % of the peak,
/// so [`SegmentResult`]'s throughput-based settling is at interval 0, before the scan's moves.)
pub fn standard_plants() -> Vec<(String, Plant)> {
    let mut out = Vec::new();
    for (i, &cores) in [8usize, 64, 256].iter().enumerate() {
        let n = cores as f64;
        // Scalable: peak at (or beyond) the top.
        let scalable = Curve::new(0.01, 0.0);
        // Peaked: κ chosen so that the peak sits near cores/4 ((1-σ)/κ = (n/4)²).
        let peaked = Curve::new(0.05, 0.95 / (n / 4.0).powi(2)).with_lambda(2000.0);
        // Flat beyond a few threads (memory-bound): heavy contention.
        let flat = Curve::new(0.5, 0.0).with_lambda(3000.0);
        for (j, &noise) in [0.02, 0.05, 0.10].iter().enumerate() {
            let segs = vec![(scalable, 60), (peaked, 60), (flat, 60), (scalable, 60)];
            let seed = 1 + (i * 3 + j) as u64;
            out.push((
                format!("{cores} cores, noise ±{:.0} %", noise * 100.0),
                Plant::new(cores, noise, segs, seed),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn curves_peak_where_intended() {
        let n = 64.0;
        let peaked = Curve::new(0.05, 0.95 / (n / 4.0f64).powi(2));
        let best = (1..=64).max_by(|&a, &b| peaked.x(a).total_cmp(&peaked.x(b)));
        assert_eq!(best, Some(16));
    }

    #[test]
    fn same_seed_same_trace() {
        let (_, p) = &standard_plants()[4];
        let a = run(p, &mut Controller::new(Config::new(p.cores)));
        let b = run(p, &mut Controller::new(Config::new(p.cores)));
        assert_eq!(a, b);
    }
}
