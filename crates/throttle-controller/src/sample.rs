//! What one interval measured, and what the controller answers.

use std::fmt;
use std::time::Duration;

/// What the pool measured over one interval, while `k` was the limit in force.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The limit in force during the interval.
    pub k: usize,
    /// Length of the interval.
    pub interval: Duration,
    /// Completed work during the interval, in any unit that stays the same from interval to
    /// interval and does not depend on `k` (the pool uses loop indices and iterator items when
    /// loops ran, else tasks: forks and spawns). Zero makes the interval idle.
    pub work: f64,
    /// Busy time summed over the pool's threads (running task code, not searching or parked).
    pub busy: Duration,
    /// Time the pool's threads spent runnable but waiting for a CPU (schedstat), summed.
    pub runq_wait: Duration,
}

impl Sample {
    /// A sample that carries only a throughput (work per second), as a simulator produces:
    /// busy time is `k × interval` (saturating at `Duration::MAX`), run-queue wait zero.
    pub fn throughput(k: usize, per_second: f64, interval: Duration) -> Sample {
        let k32 = u32::try_from(k).unwrap_or(u32::MAX);
        Sample {
            k,
            interval,
            work: per_second * interval.as_secs_f64(),
            busy: interval.saturating_mul(k32),
            runq_wait: Duration::ZERO,
        }
    }

    /// Completed work per second.
    pub fn rate(&self) -> f64 {
        let t = self.interval.as_secs_f64();
        if t > 0.0 {
            self.work / t
        } else {
            0.0
        }
    }

    /// Busy time as a fraction of `k` threads' time (1.0 = every slot busy all the time).
    pub fn utilisation(&self) -> f64 {
        let t = self.interval.as_secs_f64() * self.k.max(1) as f64;
        if t > 0.0 {
            self.busy.as_secs_f64() / t
        } else {
            0.0
        }
    }

    /// Run-queue wait as a fraction of busy time: how much of the time the pool's threads
    /// wanted a CPU they did not get.
    pub fn runq_fraction(&self) -> f64 {
        let b = self.busy.as_secs_f64();
        if b > 0.0 {
            self.runq_wait.as_secs_f64() / b
        } else {
            0.0
        }
    }
}

/// Why the controller chose its `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Scanning: the next point of the halving scan.
    Scan,
    /// The model's choice, about to be measured once.
    Fit,
    /// The model's choice, confirmed by its measurement: settled.
    Verified,
    /// The model's choice measured far below the best point: settled on the best point.
    BestMeasured,
    /// Settled, nothing changed: stay.
    Hold,
    /// Too little work ran to learn anything: stay.
    Idle,
    /// Throughput moved away from its settled level for several intervals: scan again.
    ThroughputShift,
    /// The run-queue wait (CPU contention from outside the pool) moved: scan again.
    LoadShift,
    /// Mid-scan, the pool has been idle for [`Config::idle_best_after`](crate::Config::idle_best_after) intervals: the best
    /// `k` measured so far is put in force until work returns (the scan then goes on).
    IdleBest,
    /// The model's choice measured, now the larger `k` that measured best, once more right
    /// after it: a throughput that grows through the run (the forks of a divide-and-conquer
    /// run) favours whatever `k` was measured last, and the scan measures the smaller `k`s
    /// last.
    Challenge,
    /// The larger `k`, measured right after the model's choice, was far faster: settled on it.
    Challenged,
}

impl Reason {
    /// Whether a decision with this reason ends a scan: the controller stays at its `k` from
    /// then on until a shift starts a rescan (`verified`, `best-measured`, `challenged`).
    ///
    /// # Examples
    /// ```
    /// use throttle_controller::Reason;
    /// assert!(Reason::Verified.settles());
    /// assert!(!Reason::Scan.settles());
    /// ```
    pub fn settles(self) -> bool {
        matches!(
            self,
            Reason::Verified | Reason::BestMeasured | Reason::Challenged
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::Scan => "scan",
            Reason::Fit => "fit",
            Reason::Verified => "verified",
            Reason::BestMeasured => "best-measured",
            Reason::Hold => "hold",
            Reason::Idle => "idle",
            Reason::ThroughputShift => "throughput-shift",
            Reason::LoadShift => "load-shift",
            Reason::IdleBest => "idle-best",
            Reason::Challenge => "challenge",
            Reason::Challenged => "challenged",
        })
    }
}

/// The controller's answer for the next interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The limit to apply.
    pub k: usize,
    /// Why.
    pub reason: Reason,
}

/// One decision of the controller, as a pool's log keeps it (`throttle::Pool::controller_log`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerEvent {
    /// When, since the pool was built.
    pub at: Duration,
    /// The limit in force during the interval just measured.
    pub old_k: usize,
    /// The limit chosen for the next interval.
    pub new_k: usize,
    /// Why.
    pub reason: Reason,
    /// Throughput measured over the interval: loop items per second when loops ran, else
    /// tasks per second (`throttle::Stats::items`, `throttle::Stats::tasks`).
    pub throughput: f64,
}
