//! Settled: has the machine's load changed? A CUSUM on the run-queue fraction (the share of
//! the pool's busy time its threads spent runnable but waiting for a CPU), scaled to the noise
//! of that fraction as measured on this host.
//!
//! The run-queue fraction answers what the throughput at the settled `k` cannot: a pool
//! settled on `k = 1` while another program held a CPU runs as fast as before when that
//! program ends, but `k = 2` would now be faster. Its own noise, though, depends on the host:
//! alone, it stays within a few hundredths; beside other sessions' builds it swings by ±0.3
//! from one 50 ms interval to the next. A fixed rule ("0.25 away for 3 intervals in a row")
//! rescanned on those swings: `throttle adapt --workloads phases` on a shared host logged 3
//! `load-shift` rescans in 40 s, each back on the same `k`. Here, as for the throughput
//! (`mod.rs`, `while_settled`), the yardstick is the learned noise: a change must be
//! sustained and large against it, with [`Config::load_threshold`] as the smallest change
//! that ever counts (the floor of the noise is a fifth of it, so on a quiet host a change of
//! 0.25 fires within three intervals, as the fixed rule did).

use crate::noise::LearnedNoise;
use crate::Config;

/// Prior of the run-queue fraction's noise (standard deviation of one interval): 0.05, the
/// floor on a quiet host (see the module docs), worth [`PRIOR_WEIGHT`] samples.
const PRIOR_NOISE: f64 = 0.05;
/// Weight of the prior, in samples: as for the throughput's noise.
const PRIOR_WEIGHT: f64 = 4.0;
/// Intervals a deviation waits before it enters the noise estimate: as for the throughput
/// (a real change fires within that time, so its deviations never widen the threshold while
/// they accumulate).
const DELAY: usize = 2;

/// Samples whose median is the first level: 3 (one outlier among them cannot set it).
const FIRST: usize = 3;

/// The load detector of a settled controller.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LoadWatch {
    /// The settled level of the run-queue fraction (NaN until [`FIRST`] samples are in).
    level: f64,
    /// The first samples, whose median becomes `level`.
    first: Vec<f64>,
    /// Samples folded into `level`.
    n: u32,
    /// The noise of one interval's fraction about `level` (`noise.rs`; see [`DELAY`]).
    noise: LearnedNoise,
    /// One-sided CUSUMs: the load rose, the load fell.
    up: f64,
    down: f64,
}

impl LoadWatch {
    pub(super) fn new() -> LoadWatch {
        LoadWatch {
            level: f64::NAN,
            first: Vec::new(),
            n: 0,
            noise: LearnedNoise::default(),
            up: 0.0,
            down: 0.0,
        }
    }

    /// The noise of one interval's run-queue fraction: the winsorized scatter pooled with the
    /// prior, never below a fifth of [`Config::load_threshold`] (in units of the CUSUM's
    /// threshold of 5σ: the smallest change that counts).
    fn noise(&self, cfg: &Config) -> f64 {
        let floor = cfg.load_threshold / cfg.shift_threshold.max(1.0);
        self.noise.sigma(PRIOR_NOISE, PRIOR_WEIGHT).max(floor)
    }

    /// Takes one settled interval's run-queue fraction; true when the load has moved beyond
    /// its noise for long enough to scan again. Each interval adds at most 0.6 of the
    /// threshold less the drift (the throughput CUSUM's rule), so no one or two outliers
    /// fire it and a large change does within three intervals.
    pub(super) fn observe(&mut self, rq: f64, cfg: &Config) -> bool {
        if self.level.is_nan() {
            // The level starts as the median of the first few samples, not the first one: a
            // level set by one outlier never moved (samples beyond 3σ of it are not folded
            // in), and the CUSUM then fired as soon as a quiet period let it.
            self.first.push(rq);
            if self.first.len() < FIRST {
                return false;
            }
            self.first.sort_by(f64::total_cmp);
            self.level = self.first[FIRST / 2];
            self.n = FIRST as u32;
            return false;
        }
        let noise = self.noise(cfg);
        let (drift, h) = (cfg.shift_drift * noise, cfg.shift_threshold * noise);
        let dev = rq - self.level;
        let step = dev.clamp(-0.6 * h, 0.6 * h);
        self.up = (self.up + step - drift).max(0.0);
        self.down = (self.down - step - drift).max(0.0);
        if self.up.max(self.down) > h {
            return true;
        }
        self.noise.learn(dev, noise, DELAY);
        if dev.abs() <= 3.0 * noise {
            self.n += 1;
            self.level += (rq - self.level) / f64::from(self.n.min(16));
        }
        false
    }

    /// A detector for the next settled period: the level and the evidence start afresh (the
    /// `k` and maybe the work are new), the learned noise is kept (it is the host's).
    pub(super) fn renewed(&self) -> LoadWatch {
        LoadWatch {
            noise: self.noise.settled(),
            ..LoadWatch::new()
        }
    }

    /// Forgets the evidence gathered so far (a quiet period after rescans that found nothing
    /// new takes what moved the load for this host's noise).
    pub(super) fn forget(&mut self) {
        self.up = 0.0;
        self.down = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform noise in [-1, 1), deterministic.
    fn noise(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// The rule this replaces, for comparison: a change beyond `load_threshold` for
    /// `shift_intervals` intervals in a row, the level following within-threshold samples.
    fn fixed_rule_alarms(rqs: &[f64], cfg: &Config) -> usize {
        let (mut level, mut streak, mut alarms) = (f64::NAN, 0, 0);
        for &rq in rqs {
            if level.is_nan() {
                level = rq;
            } else if (rq - level).abs() > cfg.load_threshold {
                streak += 1;
                if streak >= cfg.shift_intervals {
                    alarms += 1;
                    (level, streak) = (f64::NAN, 0);
                }
            } else {
                streak = 0;
                level += 0.125 * (rq - level);
            }
        }
        alarms
    }

    fn alarms(rqs: &[f64], cfg: &Config) -> usize {
        let mut w = LoadWatch::new();
        let mut n = 0;
        for &rq in rqs {
            if w.observe(rq, cfg) {
                n += 1;
                w = LoadWatch::new();
            }
        }
        n
    }

    /// A shared host: the run-queue fraction swings by ±0.4 about 0.3 from one interval to
    /// the next, and nothing else changes. The learned noise takes the swings for what they
    /// are; the fixed rule rescanned on them.
    #[test]
    fn swings_of_a_shared_host_are_learned_as_noise() {
        let cfg = Config::new(2);
        let mut s = 5u64;
        let rqs: Vec<f64> = (0..2000)
            .map(|_| (0.3 + 0.4 * noise(&mut s)).max(0.0))
            .collect();
        let (ours, fixed) = (alarms(&rqs, &cfg), fixed_rule_alarms(&rqs, &cfg));
        eprintln!("2000 intervals of ±0.4 swings: {ours} load alarms (fixed rule: {fixed})");
        assert!(ours <= 2, "{ours} alarms on noise alone");
        assert!(
            fixed >= 10,
            "the fixed rule's {fixed} alarms: the comparison lost its point"
        );
    }

    /// A quiet host whose load changes for good (another program takes a CPU: a quarter of
    /// the busy time is now spent waiting): found within three intervals, as the fixed rule
    /// did, and so is the change back.
    #[test]
    fn a_sustained_change_on_a_quiet_host_is_found_within_three_intervals() {
        let cfg = Config::new(2);
        for (from, to) in [(0.02, 0.3), (0.3, 0.02)] {
            let mut w = LoadWatch::new();
            for i in 0..50 {
                let jitter = if i % 2 == 0 { 0.01 } else { -0.01 };
                assert!(!w.observe(from + jitter, &cfg));
            }
            let fired = (1..=3).find(|_| w.observe(to, &cfg));
            assert!(fired.is_some(), "{from} -> {to} not found in 3 intervals");
        }
    }

    /// On the noisy host, a change far beyond the learned noise (the swings' centre moves from
    /// 0.3 to 1.5) is still found, within a handful of intervals.
    #[test]
    fn a_large_change_on_a_noisy_host_is_still_found() {
        let cfg = Config::new(2);
        let mut s = 9u64;
        let mut w = LoadWatch::new();
        for _ in 0..500 {
            w.observe((0.3 + 0.4 * noise(&mut s)).max(0.0), &cfg);
        }
        let fired = (1..=8).find(|_| w.observe(1.5 + 0.4 * noise(&mut s), &cfg));
        assert!(fired.is_some(), "a move of 1.2 not found in 8 intervals");
    }

    /// The first sample of a settled period is an outlier (the interval after a change of the
    /// limit, a burst): the level is the median of the first three, so the steady fraction
    /// after it is not a change. With the first sample as the level it fired within three
    /// intervals and kept firing after every quiet period.
    #[test]
    fn an_outlier_first_sample_does_not_set_the_level() {
        let cfg = Config::new(2);
        let mut w = LoadWatch::new();
        assert!(!w.observe(0.0, &cfg));
        for i in 0..200 {
            let jitter = if i % 2 == 0 { 0.02 } else { -0.02 };
            assert!(!w.observe(0.6 + jitter, &cfg), "fired at interval {i}");
        }
    }

    /// One or two outliers, however large, are not a change.
    #[test]
    fn two_outliers_are_not_a_change() {
        let cfg = Config::new(2);
        let mut w = LoadWatch::new();
        for _ in 0..20 {
            assert!(!w.observe(0.05, &cfg));
        }
        assert!(!w.observe(5.0, &cfg));
        assert!(!w.observe(5.0, &cfg));
        for _ in 0..20 {
            assert!(!w.observe(0.05, &cfg));
        }
    }
}
