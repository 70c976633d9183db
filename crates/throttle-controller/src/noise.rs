//! The noise of one interval, learned while settled: both CUSUMs of a settled controller (the
//! throughput's in `mod.rs`, the run-queue fraction's in `load.rs`) measure a change against
//! it.
//!
//! Every deviation enters winsorized at 3σ: dropping the large ones instead would keep the
//! estimate near the prior on a host whose real noise is far larger (a shared host: ±30 % and
//! more), and every burst of that noise would then look like a change. Each waits before it
//! enters, so that the deviations of a real change never widen the threshold while its CUSUM
//! accumulates: the run-queue fraction's a fixed few intervals (`learn`, which fires within
//! them), the throughput's until its CUSUM run ends below the threshold (`learn_between_runs`,
//! which may take longer: a step of a few σ, or the quiet's raised bar). The estimate is pooled
//! with a prior, so that the first few deviations cannot make it tiny (a hair trigger) or huge
//! (deaf).

/// Most deviations that wait for a CUSUM run to end (`learn_between_runs`): 16 intervals.
const MAX_WAITING: usize = 16;

/// Squared deviations and their count, plus the ones still waiting to enter.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct LearnedNoise {
    sq_dev: f64,
    dof: f64,
    pending: Vec<f64>,
}

impl LearnedNoise {
    /// Starts from `sq_dev` over `dof` degrees of freedom (a scan's scatter, or nothing).
    pub(super) fn new(sq_dev: f64, dof: f64) -> LearnedNoise {
        LearnedNoise {
            sq_dev,
            dof,
            pending: Vec::new(),
        }
    }

    /// The standard deviation of one interval: the learned scatter pooled with `prior` worth
    /// `weight` samples.
    pub(super) fn sigma(&self, prior: f64, weight: f64) -> f64 {
        ((self.sq_dev + weight * prior * prior) / (self.dof + weight)).sqrt()
    }

    /// Takes the deviation `dev` of one interval, winsorized at 3 × `noise`; it enters the
    /// estimate after `delay` more intervals.
    pub(super) fn learn(&mut self, dev: f64, noise: f64, delay: usize) {
        let w = dev.clamp(-3.0 * noise, 3.0 * noise);
        self.pending.push(w * w);
        if self.pending.len() > delay {
            self.sq_dev += self.pending.remove(0);
            self.dof += 1.0;
        }
    }

    /// Takes the deviation `dev` of one interval, winsorized at 3 × `noise`, for the settled
    /// throughput's CUSUM: while a CUSUM run is on (`running`: either sum above zero) the
    /// deviations wait, and they enter when the run ends below the threshold (it was noise);
    /// a run that fires discards them ([`drop_waiting`](Self::drop_waiting)). A fixed delay
    /// let the deviations of a change enter while its CUSUM was still short of the threshold
    /// (a step of a few σ, or a raised bar), and each entered at 3σ: the estimate grew by
    /// about a third per interval, the threshold with it, and the change was learned as noise
    /// instead of seen. At most `MAX_WAITING` wait; beyond that the oldest enter, so a host
    /// whose noise stays above the estimate still teaches it.
    pub(super) fn learn_between_runs(&mut self, dev: f64, noise: f64, running: bool) {
        let w = dev.clamp(-3.0 * noise, 3.0 * noise);
        self.pending.push(w * w);
        if !running {
            self.dof += self.pending.len() as f64;
            self.sq_dev += self.pending.drain(..).sum::<f64>();
        } else if self.pending.len() > MAX_WAITING {
            self.sq_dev += self.pending.remove(0);
            self.dof += 1.0;
        }
    }

    /// Forgets the deviations waiting to enter (a CUSUM run that fired: they were a change).
    pub(super) fn drop_waiting(&mut self) {
        self.pending.clear();
    }

    /// Everything learned, the waiting deviations included (for a next settled period).
    pub(super) fn settled(&self) -> LearnedNoise {
        LearnedNoise::new(
            self.sq_dev + self.pending.iter().sum::<f64>(),
            self.dof + self.pending.len() as f64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deviations_enter_late_winsorized_and_pooled_with_the_prior() {
        let mut n = LearnedNoise::default();
        // Nothing learned: the prior.
        assert!((n.sigma(0.05, 4.0) - 0.05).abs() < 1e-12);
        // A deviation of 10σ counts as 3σ, and only after `delay` more intervals.
        n.learn(1.0, 0.1, 2);
        n.learn(0.0, 0.1, 2);
        assert_eq!(n.dof, 0.0);
        n.learn(0.0, 0.1, 2);
        assert_eq!(n.dof, 1.0);
        assert!((n.sq_dev - 0.09).abs() < 1e-12);
        // The waiting ones are kept for the next period.
        let next = n.settled();
        assert_eq!((next.dof, next.pending.len()), (3.0, 0));
    }

    /// The settled throughput's deviations wait while a CUSUM run is on: they enter when it
    /// ends (noise), are dropped when it fires (a change), and at most MAX_WAITING wait.
    #[test]
    fn deviations_of_a_cusum_run_enter_only_when_it_ends_as_noise() {
        let mut n = LearnedNoise::default();
        // A run of 3 intervals that ends as noise: all 3 enter at its end.
        for _ in 0..3 {
            n.learn_between_runs(0.2, 0.1, true);
        }
        assert_eq!(n.dof, 0.0);
        n.learn_between_runs(0.0, 0.1, false);
        assert_eq!(n.dof, 4.0);
        assert!((n.sq_dev - 3.0 * 0.04).abs() < 1e-12);
        // A run that fires: its deviations never enter.
        n.learn_between_runs(0.3, 0.1, true);
        n.learn_between_runs(0.3, 0.1, true);
        n.drop_waiting();
        n.learn_between_runs(0.0, 0.1, false);
        assert_eq!(n.dof, 5.0);
        // A run longer than MAX_WAITING: its oldest enter.
        for _ in 0..MAX_WAITING + 4 {
            n.learn_between_runs(0.1, 0.1, true);
        }
        assert_eq!(n.dof, 9.0);
        assert_eq!(n.pending.len(), MAX_WAITING);
    }
}
