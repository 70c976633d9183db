//! The benchmarks, one module each, and the list that runs them.

mod adaptive;
mod adaptive_more;
mod coarse;
mod dispatch;
mod fib;
mod floor;
mod for_range;
mod frames;
mod idle_cpu;
pub mod instructions;
mod iter;
pub mod jobserver;
mod limit_response;
mod peers;
mod placement;
mod scaling;
mod seed_throttle;
mod sort;
mod stats_overhead;
mod trace;
mod tree_sum;

use anyhow::Result;

use crate::harness::Report;

/// What every bench needs to know about the run.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Small sizes for CI.
    pub quick: bool,
    /// Recorded repetitions per case.
    pub reps: usize,
    /// "All threads": the CPUs this process may use.
    pub threads: usize,
}

impl Settings {
    /// The thread counts a bench measures: 1 and all (just 1 on one CPU).
    pub fn one_and_all(&self) -> Vec<usize> {
        if self.threads > 1 {
            vec![1, self.threads]
        } else {
            vec![1]
        }
    }
}

/// One entry of the suite.
pub struct Bench {
    /// Its name on the command line and in the JSON (`for_range_compute`).
    pub name: &'static str,
    /// The group it belongs to on the command line (`for_range`).
    pub group: &'static str,
    /// Runs it.
    pub run: fn(&Settings) -> Result<Report>,
}

/// The suite, in the order it runs.
pub const ALL: &[Bench] = &[
    Bench {
        name: "tree_sum",
        group: "tree_sum",
        run: tree_sum::run,
    },
    Bench {
        name: "fib",
        group: "fib",
        run: fib::run,
    },
    Bench {
        name: "scaling_tree_sum",
        group: "scaling",
        run: scaling::run_tree_sum,
    },
    Bench {
        name: "scaling_spawn",
        group: "scaling",
        run: scaling::run_spawn,
    },
    Bench {
        name: "scaling_for_range",
        group: "scaling",
        run: scaling::run_for_range,
    },
    Bench {
        name: "coarse_join",
        group: "coarse",
        run: coarse::run_join,
    },
    Bench {
        name: "nested_scope",
        group: "coarse",
        run: coarse::run_nested_scope,
    },
    Bench {
        name: "for_range_compute",
        group: "for_range",
        run: for_range::run_compute,
    },
    Bench {
        name: "for_range_memory",
        group: "for_range",
        run: for_range::run_memory,
    },
    Bench {
        name: "frames",
        group: "frames",
        run: frames::run,
    },
    Bench {
        name: "dispatch_hot",
        group: "dispatch",
        run: dispatch::run_hot,
    },
    Bench {
        name: "dispatch_cold",
        group: "dispatch",
        run: dispatch::run_cold,
    },
    Bench {
        name: "idle_cpu",
        group: "idle_cpu",
        run: idle_cpu::run,
    },
    Bench {
        name: "seed_throttle",
        group: "seed_throttle",
        run: seed_throttle::run,
    },
    Bench {
        name: "stats_overhead",
        group: "stats_overhead",
        run: stats_overhead::run,
    },
    Bench {
        name: "trace_off",
        group: "trace",
        run: trace::run_off,
    },
    Bench {
        name: "trace_on",
        group: "trace",
        run: trace::run_on,
    },
    Bench {
        name: "limit_response",
        group: "limit_response",
        run: limit_response::run,
    },
    Bench {
        name: "placement",
        group: "placement",
        run: placement::run,
    },
    Bench {
        name: "adaptive_cpu",
        group: "adaptive",
        run: adaptive::cpu,
    },
    Bench {
        name: "adaptive_lock",
        group: "adaptive",
        run: adaptive::lock,
    },
    Bench {
        name: "adaptive_membound",
        group: "adaptive",
        run: adaptive::membound,
    },
    Bench {
        name: "adaptive_blocking",
        group: "adaptive",
        run: adaptive::blocking,
    },
    Bench {
        name: "adaptive_phases",
        group: "adaptive",
        run: adaptive_more::phases,
    },
    Bench {
        name: "adaptive_jobs",
        group: "adaptive",
        run: adaptive_more::jobs,
    },
    Bench {
        name: "adaptive_steady",
        group: "adaptive",
        run: adaptive_more::steady,
    },
    Bench {
        name: "iter_sum",
        group: "iter",
        run: iter::run_sum,
    },
    Bench {
        name: "iter_collect",
        group: "iter",
        run: iter::run_collect,
    },
    Bench {
        name: "iter_filter_count",
        group: "iter",
        run: iter::run_filter_count,
    },
    Bench {
        name: "iter_mut",
        group: "iter",
        run: iter::run_mut,
    },
    Bench {
        name: "nested_iter",
        group: "iter",
        run: iter::run_nested,
    },
    Bench {
        name: "sort_unstable",
        group: "sort",
        run: sort::run_unstable,
    },
    Bench {
        name: "sort_stable",
        group: "sort",
        run: sort::run_stable,
    },
    Bench {
        name: "jobserver_token",
        group: "jobserver",
        run: jobserver::token,
    },
    Bench {
        name: "jobserver_absent",
        group: "jobserver",
        run: jobserver::absent,
    },
];

/// Every name `--bench` accepts: bench names and group names.
pub fn selectable_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = ALL.iter().flat_map(|b| [b.name, b.group]).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The benches named by `wanted` (bench or group names), in suite order;
/// all of them when `wanted` is empty.
pub fn select(wanted: &[String]) -> Vec<&'static Bench> {
    ALL.iter()
        .filter(|b| wanted.is_empty() || wanted.iter().any(|w| w == b.name || w == b.group))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_by_name_and_group() {
        let names = |w: &[&str]| -> Vec<&str> {
            let w: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            select(&w).iter().map(|b| b.name).collect()
        };
        assert_eq!(names(&[]).len(), ALL.len());
        assert_eq!(
            names(&["for_range"]),
            ["for_range_compute", "for_range_memory"]
        );
        assert_eq!(names(&["fib", "tree_sum"]), ["tree_sum", "fib"]);
        assert!(selectable_names().contains(&"dispatch"));
    }
}
