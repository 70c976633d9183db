//! Seed 004's in-line instrument: mark the beginning and end of a piece of code and record both
//! its elapsed (wall) time and its CPU time, then summarise many such spans by name.
//!
//! Wall time answers "how long did the user wait"; CPU time answers "how much work was done".
//! Under load they part: wall time grows with the run-queue wait while CPU time stays nearly flat
//! (until SMT siblings slow each other down). Recording both, plus the run-queue wait, tells the
//! two stories apart.

use std::time::Duration;

use crate::{Snapshot, Span, Summary};

/// A running measurement, started by [`Scenario::begin`] and finished by [`Scenario::end`] on the
/// same thread.
///
/// # Examples
///
/// ```
/// use throttle_probe::Scenario;
///
/// let s = Scenario::begin("sum");
/// let total: u64 = (0..1_000_000u64).sum();
/// std::hint::black_box(total);
/// let done = s.end();
/// assert_eq!(done.name, "sum");
/// println!("{}: wall {:?}, thread cpu {:?}", done.name, done.span.wall, done.span.thread_cpu);
/// ```
#[derive(Debug, Clone, serde::Serialize)]
pub struct Scenario {
    name: String,
    start: Snapshot,
}

impl Scenario {
    /// Starts a scenario named `name` (takes a [`Snapshot`]).
    pub fn begin(name: impl Into<String>) -> Scenario {
        let name = name.into();
        Scenario {
            name,
            start: Snapshot::now(),
        }
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Ends the scenario (takes a second snapshot) and returns what happened in between.
    pub fn end(self) -> ScenarioSpan {
        let span = self.start.elapsed();
        ScenarioSpan {
            name: self.name,
            span,
        }
    }
}

/// A finished scenario: its name and its [`Span`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScenarioSpan {
    /// The name given to [`Scenario::begin`].
    pub name: String,
    /// What was measured between begin and end.
    pub span: Span,
}

/// Collects [`ScenarioSpan`]s and summarises them by name.
///
/// # Examples
///
/// ```
/// use throttle_probe::ScenarioLog;
///
/// let mut log = ScenarioLog::new();
/// for _ in 0..3 {
///     log.measure("spin", || (0..200_000u64).map(|i| i ^ 7).sum::<u64>());
/// }
/// let s = log.summary("spin").unwrap();
/// assert_eq!(s.count, 3);
/// assert!(s.wall.min <= s.wall.median && s.wall.median <= s.wall.max);
/// ```
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ScenarioLog {
    spans: Vec<ScenarioSpan>,
}

impl ScenarioLog {
    /// An empty log.
    pub fn new() -> ScenarioLog {
        ScenarioLog::default()
    }

    /// Adds a finished scenario.
    pub fn record(&mut self, span: ScenarioSpan) {
        self.spans.push(span);
    }

    /// Runs `f` inside a scenario named `name`, records it and returns `f`'s result.
    pub fn measure<R>(&mut self, name: &str, f: impl FnOnce() -> R) -> R {
        let s = Scenario::begin(name);
        let r = f();
        self.record(s.end());
        r
    }

    /// Every recorded span, in the order recorded.
    pub fn spans(&self) -> &[ScenarioSpan] {
        &self.spans
    }

    /// How many spans were recorded.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The distinct names, in the order first recorded.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for s in &self.spans {
            if !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
        names
    }

    /// The summary of the spans named `name`; `None` if there are none.
    pub fn summary(&self, name: &str) -> Option<ScenarioSummary> {
        let spans: Vec<&Span> = self
            .spans
            .iter()
            .filter(|s| s.name == name)
            .map(|s| &s.span)
            .collect();
        let of = |f: &dyn Fn(&Span) -> Duration| {
            Summary::of_durations(&spans.iter().map(|s| f(s)).collect::<Vec<_>>())
        };
        let waits: Vec<Duration> = spans
            .iter()
            .filter_map(|s| s.run_queue_wait.as_ref().ok().copied())
            .collect();
        Some(ScenarioSummary {
            name: name.to_string(),
            count: spans.len(),
            wall: of(&|s| s.wall)?,
            cpu: of(&|s| s.cpu())?,
            thread_cpu: of(&|s| s.thread_cpu)?,
            run_queue_wait: Summary::of_durations(&waits),
        })
    }

    /// The summaries of every name, in the order first recorded.
    pub fn summaries(&self) -> Vec<ScenarioSummary> {
        self.names()
            .into_iter()
            .filter_map(|n| self.summary(n))
            .collect()
    }
}

/// Statistics of all spans recorded under one name; every [`Summary`] is in seconds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScenarioSummary {
    /// The scenario name.
    pub name: String,
    /// How many spans were summarised.
    pub count: usize,
    /// Elapsed time.
    pub wall: Summary,
    /// Process CPU time (user + system).
    pub cpu: Summary,
    /// CPU time of the thread that ran the scenario.
    pub thread_cpu: Summary,
    /// Process run-queue wait; `None` where schedstat was unavailable in every span.
    pub run_queue_wait: Option<Summary>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_first_seen_order() {
        let mut log = ScenarioLog::new();
        log.measure("b", || ());
        log.measure("a", || ());
        log.measure("b", || ());
        assert_eq!(log.names(), vec!["b", "a"]);
        let sums = log.summaries();
        assert_eq!(sums.len(), 2);
        assert_eq!(sums[0].count, 2);
        assert!(log.summary("zzz").is_none());
    }
}
