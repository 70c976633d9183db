//! The state machine: one [`Sample`] in, the next `k` out ([`Controller::step`]).

use crate::fit::Fit;
use crate::judge::*;
use crate::{flat, load, noise};
use crate::{Config, Decision, Reason, Sample};
use std::time::Duration;

/// Fewest scan points before the scan may stop: the fit has three parameters, and a fourth point
/// makes it a least-squares fit that averages noise instead of passing through it.
const MIN_SCAN_POINTS: usize = 4;

/// Where the state machine is.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Measuring the halving scan; `points` so far, of which the first `seeds` are settled
    /// samples kept from before a rescan (`rescan_after_shift`).
    Scan {
        points: Vec<(usize, f64)>,
        seeds: usize,
    },
    /// Measuring the model's choice (`seeds` as in `Scan`).
    Verify {
        points: Vec<(usize, f64)>,
        seeds: usize,
        candidate: usize,
    },
    /// Measuring `larger` right after the candidate measured `candidate_x` (see
    /// [`Reason::Challenge`]).
    Challenge {
        points: Vec<(usize, f64)>,
        seeds: usize,
        candidate: usize,
        candidate_x: f64,
        larger: usize,
    },
    /// Staying at `k`.
    Settled(Settled),
}

#[derive(Debug, Clone, PartialEq)]
struct Settled {
    /// Mean throughput at the settled `k` (mean of the first samples, then a slow average).
    baseline: f64,
    /// Samples folded into `baseline`.
    n: u32,
    /// The noise of one interval's relative deviation (`noise.rs`): the scatter of the scan's
    /// repeated points about their medians, then each settled interval's deviation from the
    /// baseline, each entering after [`RESCAN_SEEDS`] intervals.
    noise: noise::LearnedNoise,
    /// The last few throughputs measured at the settled `k` (newest last): after a shift they
    /// are the first points of the new scan, so the scan need not measure this `k` again.
    recent: Vec<f64>,
    /// The run-queue fraction's level, noise and CUSUMs (`load.rs`).
    load: load::LoadWatch,
    /// One-sided CUSUMs of the relative deviation: upward and downward.
    up: f64,
    down: f64,
    /// What is left of the quiet, during which a throughput shift must pass [`QUIET_BAR`]
    /// thresholds and a load shift starts no rescan (see [`Controller::quiet`]). Counted down
    /// by each sample's length: settled samples are shorter while work runs (`auto.rs`).
    holdoff: Duration,
}

/// The controller state machine. See the module docs.
#[derive(Debug, Clone)]
pub struct Controller {
    cfg: Config,
    k: usize,
    phase: Phase,
    /// Idle intervals in a row.
    idle_run: u32,
    /// The `k` that a rescan left, while that rescan runs.
    rescanned_from: Option<usize>,
    /// Quiet after settling (see `Settled::holdoff`): none normally; a rescan that settles on
    /// the `k` it left (nothing had changed but noise) makes it [`QUIET_BASE`] or doubles it,
    /// up to [`QUIET_MAX`], and a rescan that finds another `k` resets it.
    pub(crate) quiet: Duration,
    /// The load detector of the last settled period, whose learned noise (the host's) the
    /// next one starts from.
    load: load::LoadWatch,
}

/// Quiet after the first rescan that came back to the same `k`: 1 s (20 intervals of the
/// default 50 ms), doubled by each further such rescan. A time, not a count of samples: the
/// settled controller samples twice per interval while work runs.
pub(crate) const QUIET_BASE: Duration = Duration::from_secs(1);
/// The longest quiet: 32 s.
const QUIET_MAX: Duration = Duration::from_secs(32);
/// During quiet a shift starts a rescan when its CUSUM passes this many thresholds: 2, so that
/// a burst of up to 4 intervals at the largest step passes.
const QUIET_BAR: f64 = 2.0;

impl Controller {
    /// A controller that starts scanning at `cfg.max_k`.
    pub fn new(cfg: Config) -> Controller {
        Controller {
            k: cfg.max_k,
            cfg,
            phase: Phase::Scan {
                points: Vec::new(),
                seeds: 0,
            },
            idle_run: 0,
            rescanned_from: None,
            quiet: Duration::ZERO,
            load: load::LoadWatch::new(),
        }
    }

    /// The `k` the controller wants in force now.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Whether it is settled (staying still until something changes).
    pub fn is_settled(&self) -> bool {
        matches!(self.phase, Phase::Settled(_))
    }

    /// The throughput (work per second) the next sample is judged against: settled, the
    /// baseline; scanning, verifying or challenging, the best point measured so far. `None`
    /// before the first point.
    pub fn expected_rate(&self) -> Option<f64> {
        match &self.phase {
            Phase::Settled(st) => Some(st.baseline),
            Phase::Scan { points, .. }
            | Phase::Verify { points, .. }
            | Phase::Challenge { points, .. } => {
                Some(best_mean(points).1).filter(|_| !points.is_empty())
            }
        }
    }

    /// Forgets what it learned and scans again from the top.
    pub fn restart(&mut self) {
        self.k = self.cfg.max_k;
        self.phase = Phase::Scan {
            points: Vec::new(),
            seeds: 0,
        };
    }

    /// Scans again from the top after a shift. A small pool (no fit: each of its two or three
    /// points is measured [`Config::scan_repeats`] times) keeps the latest measurements at the
    /// settled `k` (those after the shift) as the scan's first points, which saves an interval
    /// at that `k`, and starts one step below the top when that `k` is the top. A larger pool
    /// starts afresh: there the settled `k` is usually off the
    /// halving grid, and two noisy extra points moved the fit more than they helped (on the
    /// simulator: 6 more of 1 800 segments missed the 5 % band).
    fn rescan_after_shift(&mut self, st: &Settled, dev_sign: f64) {
        let k = self.k;
        self.rescanned_from = Some(k);
        self.load = st.load.clone();
        let keep = if self.cfg.scan_repeats > 1 {
            RESCAN_SEEDS_KEPT
        } else {
            0
        };
        // The samples that moved the CUSUM are after the shift; older ones may be before it.
        let seeds: Vec<(usize, f64)> = st
            .recent
            .iter()
            .rev()
            .take(keep)
            .take_while(|&&x| dev_sign == 0.0 || (x / st.baseline - 1.0) * dev_sign > 0.0)
            .map(|&x| (k, x))
            .collect();
        // The scan starts at the top, unless the seed is the top: then that point has its
        // fresh sample, and the next one down is the question. (A lock-bound phase found at
        // the top measured the top twice more, 76 ms at 0.15 × `k = 1`'s speed, before it
        // looked below.)
        self.k = if !seeds.is_empty() && k == self.cfg.max_k {
            (k / 2).max(1)
        } else {
            self.cfg.max_k
        };
        self.phase = Phase::Scan {
            seeds: seeds.len(),
            points: seeds,
        };
    }

    /// Takes the measurements of one interval and returns the `k` for the next.
    ///
    /// A sample measured under another `k` than the controller's (the limit changed behind its
    /// back, or had not yet been applied) is attributed to the `k` it names.
    pub fn step(&mut self, s: &Sample) -> Decision {
        let x = s.rate();
        // Idle means no finished work, whatever the busy time says: at `k = 1` one thread is
        // busy and at a large `k` work that does not scale keeps few threads busy, and both
        // are measurements the scan needs.
        if x <= 0.0 {
            self.idle_run = self.idle_run.saturating_add(1);
            if self.idle_run == self.cfg.idle_best_after {
                let best = match &self.phase {
                    Phase::Settled(_) => None,
                    Phase::Scan { points, .. }
                    | Phase::Verify { points, .. }
                    | Phase::Challenge { points, .. }
                        if points.is_empty() =>
                    {
                        Some(self.cfg.max_k)
                    }
                    Phase::Scan { points, .. }
                    | Phase::Verify { points, .. }
                    | Phase::Challenge { points, .. } => Some(best_mean(points).0),
                };
                if let Some(best) = best.filter(|&b| b != self.k) {
                    return self.decide(best, Reason::IdleBest);
                }
            }
            return self.decide(self.k, Reason::Idle);
        }
        // Work after an idle run long enough for `IdleBest` may not be the work that stopped:
        // a scan's points from before the gap do not compare with samples after it.
        let after_idle = self.idle_run >= self.cfg.idle_best_after;
        self.idle_run = 0;
        let phase = std::mem::replace(
            &mut self.phase,
            Phase::Scan {
                points: Vec::new(),
                seeds: 0,
            },
        );
        if after_idle && !matches!(phase, Phase::Settled(_)) {
            return self.scan_afresh(s.k, x);
        }
        match phase {
            Phase::Scan { mut points, seeds } => {
                points.push((s.k, x));
                self.after_scan_point(points, seeds)
            }
            Phase::Verify {
                mut points,
                seeds,
                candidate,
            } => {
                points.push((s.k, x));
                self.after_verify(points, seeds, candidate, s)
            }
            Phase::Challenge {
                mut points,
                seeds,
                candidate,
                candidate_x,
                larger,
            } => {
                points.push((s.k, x));
                if s.k != larger {
                    // Not yet in force: measure again.
                    return self.challenge(points, seeds, candidate, candidate_x, larger);
                }
                if x > (1.0 + self.cfg.challenge_margin) * candidate_x {
                    self.settle_at(points, seeds, larger, Reason::Challenged)
                } else {
                    self.settle_on(points, seeds, candidate)
                }
            }
            Phase::Settled(st) => self.while_settled(st, s, x),
        }
    }

    /// A scan that starts again from the top with one point, `x` measured at `k`: what is
    /// left of a scan when work returns after an idle run (see `step`). Before, such a scan
    /// went on from its points, and `throttle-bench --bench adaptive_jobs` (loops of 16 jobs,
    /// each job length run for 0.1 s with the pool idle in between) kept `k = 1` for loops of
    /// 10⁵ spins in 1 of 6 runs: its scan had seen `k = 1` on loops 10 times shorter, a rate
    /// no measurement of the long loops could match, and chose it.
    fn scan_afresh(&mut self, k: usize, x: f64) -> Decision {
        let points = vec![(k, x)];
        if k == self.cfg.max_k {
            return self.after_scan_point(points, 0);
        }
        self.phase = Phase::Scan { points, seeds: 0 };
        self.decide(self.cfg.max_k, Reason::Scan)
    }

    fn decide(&mut self, k: usize, reason: Reason) -> Decision {
        self.k = k.clamp(1, self.cfg.max_k);
        Decision { k: self.k, reason }
    }

    fn after_scan_point(&mut self, points: Vec<(usize, f64)>, seeds: usize) -> Decision {
        let best = best_mean(&points).1;
        let (last_k, _) = *points.last().expect("just pushed");
        let at_last = points.iter().filter(|p| p.0 == last_k).count() as u32;
        let last_x = mean_at(&points, last_k);
        let loses = |k: usize| clear_loser(&points, seeds, k, self.cfg.scan_stop);
        if at_last < self.cfg.scan_repeats && !loses(last_k) {
            self.phase = Phase::Scan { points, seeds };
            return self.decide(last_k, Reason::Scan);
        }
        let past_peak = points.len() >= MIN_SCAN_POINTS && last_x < self.cfg.scan_stop * best;
        if last_k > 1 && !past_peak {
            // The next point down; one the scan already has enough samples of (seeded from
            // the settled k after a shift), or knows to be a clear loser, is skipped.
            let enough = |k: usize| {
                let n = points.iter().filter(|p| p.0 == k).count();
                u32::try_from(n).unwrap_or(u32::MAX) >= self.cfg.scan_repeats || loses(k)
            };
            let mut next = last_k / 2;
            while next > 1 && enough(next) {
                next /= 2;
            }
            if !enough(next) {
                self.phase = Phase::Scan { points, seeds };
                return self.decide(next, Reason::Scan);
            }
        }
        // A `k` with fewer samples than the scan's repeats that is no clear loser is measured
        // until it has them, largest first: a rescan seeded at the top starts below it, and of
        // the top it then has only the sample that fired the rescan, a dip when the shift was
        // the host's noise. Chosen against that dip, `k = 1` won tsp's rescans (its rate
        // swings; `k = 1` is only 0.77 × `k = 2` there) and held for up to 0.6 s each: 7-28 %
        // of the run at `k = 1` in four runs, 3-4 % before the settled samples were 25 ms.
        // A top that is a clear loser (the lock phase's) is not measured again.
        if self.cfg.scan_repeats > 1 {
            let short = points
                .iter()
                .map(|p| p.0)
                .filter(|&k| {
                    let n = points.iter().filter(|p| p.0 == k).count();
                    u32::try_from(n).unwrap_or(u32::MAX) < self.cfg.scan_repeats && !loses(k)
                })
                .max();
            if let Some(k) = short {
                self.phase = Phase::Scan { points, seeds };
                return self.decide(k, Reason::Scan);
            }
        }
        // Does k matter at all? When the points cannot say (no significant difference
        // between the k's), the two that decide the question, the smallest k and the best,
        // are measured again until each has 3 samples (`flat.rs`): their spread is the
        // measured noise the test needs, and their means are what it compares.
        if let Some(k) = flat::undecided_repeat(&points) {
            self.phase = Phase::Scan { points, seeds };
            return self.decide(k, Reason::Scan);
        }
        // The candidate is measured (again) even if the scan already measured it: the scan saw
        // each point once, and the point we settle on deserves a second, averaged look.
        let candidate = self.model_choice(&points);
        self.phase = Phase::Verify {
            points,
            seeds,
            candidate,
        };
        self.decide(candidate, Reason::Fit)
    }

    /// The smallest `k` within `slack` of the fitted peak, or the best measured point when no
    /// sensible fit exists.
    ///
    /// On a plateau a small error of the fit moves that `k` a lot, so the choice is made
    /// robust by a jackknife: it is also computed with each point left out in turn, and the
    /// largest of the answers is taken. With quiet measurements they agree; with noisy ones
    /// the choice moves towards the peak, where an error costs least.
    ///
    /// Before any of that, the points are asked whether `k` matters at all
    /// (`flat::k_matters`): when they are consistent with the same throughput at every `k`
    /// measured, within the measured noise, the smallest measured `k` is the answer (a fit of
    /// a flat curve's noise places its peak anywhere).
    fn model_choice(&self, points: &[(usize, f64)]) -> usize {
        if !flat::k_matters(points) {
            return points.iter().map(|p| p.0).min().unwrap_or(1);
        }
        let Some(full) = self.efficient_k(points) else {
            return self.smallest_measured_within_slack(points);
        };
        let mut k = full;
        if points.len() > MIN_SCAN_POINTS - 1 {
            for skip in 0..points.len() {
                let rest: Vec<(usize, f64)> = points
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != skip)
                    .map(|(_, p)| *p)
                    .collect();
                if let Some(kj) = self.efficient_k(&rest) {
                    k = k.max(kj);
                }
            }
        }
        k
    }

    /// Without a fit (fewer than three distinct `k`: a pool of 2 or 3 threads): the smallest
    /// measured `k` whose mean throughput is within the slack of the best mean.
    fn smallest_measured_within_slack(&self, points: &[(usize, f64)]) -> usize {
        let mut ks: Vec<usize> = points.iter().map(|p| p.0).collect();
        ks.sort_unstable();
        ks.dedup();
        let best = ks.iter().map(|&k| mean_at(points, k)).fold(0.0, f64::max);
        ks.into_iter()
            .find(|&k| mean_at(points, k) >= (1.0 - self.cfg.slack) * best)
            .unwrap_or(self.cfg.max_k)
    }

    /// The smallest `k` within the slack of the peak of the curve fitted to `points`. The
    /// slack shrinks as the points scatter more about the fit (their relative residual, or the
    /// prior when too few points leave no residual): noisy points cannot tell a plateau's
    /// `k`s apart, and then the peak is the safe choice.
    fn efficient_k(&self, points: &[(usize, f64)]) -> Option<usize> {
        let fit = Fit::of(points)?;
        let preds: Vec<f64> = (1..=self.cfg.max_k)
            .map(|k| fit.predict(k))
            .collect::<Option<_>>()?;
        let dof = points.len().saturating_sub(3);
        let noise = if dof >= 2 {
            let ss: f64 = points
                .iter()
                .filter_map(|&(k, x)| Some((x / fit.predict(k)? - 1.0).powi(2)))
                .sum();
            (ss / dof as f64).sqrt()
        } else {
            PRIOR_NOISE
        };
        let slack = self.cfg.slack * (1.0 - noise / NOISE_NO_SLACK).clamp(0.0, 1.0);
        let peak = preds.iter().copied().fold(0.0, f64::max);
        let i = preds.iter().position(|&p| p >= (1.0 - slack) * peak)?;
        Some(i + 1)
    }

    fn after_verify(
        &mut self,
        points: Vec<(usize, f64)>,
        seeds: usize,
        candidate: usize,
        s: &Sample,
    ) -> Decision {
        if s.k != candidate {
            // Measured something else (the limit was not yet in force): measure again.
            self.phase = Phase::Verify {
                points,
                seeds,
                candidate,
            };
            return self.decide(candidate, Reason::Fit);
        }
        // The larger k that measured best, if any: measured once more, right after the
        // candidate (`Reason::Challenge`). The scan steps down, so every smaller k was measured
        // after every larger one, and a rate that grows through the run (quicksort's forks:
        // a few large partitions first, thousands of small ones last) made the smallest look
        // as fast as the larger (README.md, "What it cannot see"). Two samples
        // side by side share the trend; the larger k measured second even has it on its side,
        // so the candidate must beat a margin against it, not the trend.
        //
        // Only on pools of at most 3 threads (`scan_repeats` > 1), whose scan measures each
        // `k` three times in a row, so that the whole scan's trend lies between two `k`s. A
        // larger pool's scan takes each `k` once and fits a curve through them; there the
        // challenge would cost an excursion from the choice and back on every settle (two
        // changes of `k` on the simulator's plants, which have no trend), and it is not built.
        let larger = if self.cfg.scan_repeats > 1 {
            points
                .iter()
                .map(|p| p.0)
                .filter(|&k| {
                    k > candidate
                        && !trend_cannot_lift(&points, k, candidate, self.cfg.challenge_margin)
                })
                .max_by(|&a, &b| mean_at(&points, a).total_cmp(&mean_at(&points, b)))
        } else {
            None
        };
        if let Some(larger) = larger {
            let candidate_x = points.last().expect("just pushed").1;
            return self.challenge(points, seeds, candidate, candidate_x, larger);
        }
        self.settle_on(points, seeds, candidate)
    }

    /// Puts `larger` in force to be measured against the candidate's sample `candidate_x`.
    fn challenge(
        &mut self,
        points: Vec<(usize, f64)>,
        seeds: usize,
        candidate: usize,
        candidate_x: f64,
        larger: usize,
    ) -> Decision {
        self.phase = Phase::Challenge {
            points,
            seeds,
            candidate,
            candidate_x,
            larger,
        };
        self.decide(larger, Reason::Challenge)
    }

    fn settle_on(&mut self, points: Vec<(usize, f64)>, seeds: usize, candidate: usize) -> Decision {
        // Best by the mean of each k's measurements, so that one outlier cannot win alone.
        let (best_k, best_x) = best_mean(&points);
        let measured = mean_at(&points, candidate);
        let (k, reason) = if measured >= (1.0 - self.cfg.verify_tolerance) * best_x {
            (candidate, Reason::Verified)
        } else {
            (best_k, Reason::BestMeasured)
        };
        self.settle_at(points, seeds, k, reason)
    }

    /// Settles on `k`. The baseline and the noise's first estimate come from the samples this
    /// scan measured, not its seeds (`points[..seeds]`, samples of an earlier settled period):
    /// a seed is a 50 ms interval among 12.5 ms samples, and it may be the passing burst that
    /// fired the rescan. Settled on `k = 2` with a burst's seed (100 items/s) and one fresh
    /// sample (200) as its baseline's two samples, the pool started at 150 and every interval
    /// at 200 was a deviation of +33 %.
    fn settle_at(
        &mut self,
        points: Vec<(usize, f64)>,
        seeds: usize,
        k: usize,
        reason: Reason,
    ) -> Decision {
        let fresh = &points[seeds.min(points.len())..];
        let baseline = if fresh.iter().any(|p| p.0 == k) {
            mean_at(fresh, k)
        } else {
            mean_at(&points, k)
        };
        let (sq_dev, dof) = scatter(fresh);
        if let Some(from) = self.rescanned_from.take() {
            self.quiet = if from == k {
                (self.quiet * 2).clamp(QUIET_BASE, QUIET_MAX)
            } else {
                Duration::ZERO
            };
        }
        self.phase = Phase::Settled(Settled {
            baseline,
            n: 1,
            noise: noise::LearnedNoise::new(sq_dev, dof),
            recent: Vec::new(),
            load: self.load.renewed(),
            up: 0.0,
            down: 0.0,
            holdoff: self.quiet,
        });
        self.decide(k, reason)
    }

    fn while_settled(&mut self, mut st: Settled, s: &Sample, x: f64) -> Decision {
        if s.k != self.k {
            // Not yet in force: nothing to learn from it.
            self.phase = Phase::Settled(st);
            return self.decide(self.k, Reason::Hold);
        }
        // Noise: the measured spread of one interval around the baseline (a default until a few
        // samples are in), never below the floor.
        // The estimate is pooled with a prior of PRIOR_NOISE worth PRIOR_WEIGHT samples, so that
        // the first few deviations cannot make it tiny (a hair trigger) or huge (deaf).
        let noise = st
            .noise
            .sigma(PRIOR_NOISE, PRIOR_WEIGHT)
            .max(self.cfg.min_noise);
        let dev = x / st.baseline - 1.0;
        let (drift, h) = (
            self.cfg.shift_drift * noise,
            self.cfg.shift_threshold * noise,
        );
        // Each interval adds at most 0.6·h − drift = 0.4·h (with the default drift of h/5):
        // no one or two outliers, however large, start a rescan; a real step of any size does
        // within three intervals, a small one (a few noise widths) within a handful.
        //
        // A sample shorter than `cusum_period` weighs its length (`Config::cusum_period`),
        // unless it is a clear change.
        let step = dev.clamp(-0.6 * h, 0.6 * h);
        let clear = x < self.cfg.scan_stop * st.baseline || x * self.cfg.scan_stop > st.baseline;
        let weight = match self.cfg.cusum_period {
            Some(p) if !clear && !p.is_zero() => {
                (s.interval.as_secs_f64() / p.as_secs_f64()).clamp(0.0, 1.0)
            }
            _ => 1.0,
        };
        st.up = (st.up + weight * (step - drift)).max(0.0);
        st.down = (st.down - weight * (step + drift)).max(0.0);
        if st.recent.len() == RESCAN_SEEDS {
            st.recent.remove(0);
        }
        st.recent.push(x);
        // Quiet after rescans that found nothing new: what moved the throughput then is taken
        // for noise of this host. The bar is raised, not the eyes closed: a shift must pass
        // QUIET_BAR thresholds (5 intervals at the largest step, against 3) to start a rescan,
        // so a burst like the one that started the fruitless rescan passes, and a change of
        // the work is still seen. Before, the quiet zeroed the CUSUMs while the noise
        // estimate went on learning, and a change inside the quiet was learned as noise.
        let bar = if !st.holdoff.is_zero() {
            st.holdoff = st.holdoff.saturating_sub(s.interval);
            st.load.forget();
            if st.holdoff.is_zero() {
                // The quiet ends: what it collected below its bar was taken for noise.
                st.up = 0.0;
                st.down = 0.0;
            }
            QUIET_BAR * h
        } else {
            h
        };
        if st.up.max(st.down) > bar {
            let sign = if st.up > st.down { 1.0 } else { -1.0 };
            st.noise.drop_waiting();
            self.rescan_after_shift(&st, sign);
            return self.decide(self.k, Reason::ThroughputShift);
        }
        // Every interval enters the noise estimate, winsorized, once the CUSUM run it belongs
        // to (if any) ended as noise (`noise.rs`, `learn_between_runs`).
        st.noise
            .learn_between_runs(dev, noise, st.up > 0.0 || st.down > 0.0);
        if dev.abs() <= 3.0 * noise {
            // Fold in (outliers are not): a plain mean over the first 16 samples, then a slow
            // moving average, so that the baseline follows a slow drift.
            st.n += 1;
            let w = 1.0 / f64::from(st.n.min(16));
            st.baseline += w * (x - st.baseline);
        }
        // The load: has the run-queue fraction moved beyond its learned noise (`load.rs`)?
        if st.load.observe(s.runq_fraction(), &self.cfg) {
            self.rescan_after_shift(&st, 0.0);
            return self.decide(self.k, Reason::LoadShift);
        }
        self.phase = Phase::Settled(st);
        self.decide(self.k, Reason::Hold)
    }
}
