//! The noise of one interval, learned while settled: both CUSUMs of a settled controller (the
//! throughput's in `mod.rs`, the run-queue fraction's in `load.rs`) measure a change against
//! it.
//!
//! Every deviation enters winsorized at 3σ: dropping the large ones instead would keep the
//! estimate near the prior on a host whose real noise is far larger (a shared host: ±30 % and
//! more), and every burst of that noise would then look like a change. Each waits a few
//! intervals before it enters, so that the deviations of a real change (which fires the CUSUM
//! within that time) never widen the threshold while they accumulate. The estimate is pooled
//! with a prior, so that the first few deviations cannot make it tiny (a hair trigger) or huge
//! (deaf).

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
}
