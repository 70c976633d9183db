//! The common results model that every experiment fills and every export reads.
//!
//! An experiment produces one [`Report`]: a few facts about the machine, the parameters it ran
//! with, one or more [`Section`]s (a table each: one [`Row`] per series and level), and a few plain
//! sentences derived from the numbers. The table printer, the JSON, CSV and SVG writers all consume
//! this model, so a new experiment gets every output format without format-specific code.
//!
//! Rows are built from [`Sample`]s, one per repetition, by [`Row::from_samples`], which takes
//! medians (never a single run) and keeps the repetitions themselves.
//!
//! `throttle scan` fills the same model (`scan::results`): one section whose rows are the
//! scanned values (a value that is not a number keeps its text in [`Row::label`] and has no
//! [`Row::value`]), its scan-specific numbers as metric columns, its fitted scaling [`Model`]
//! in [`Report::model`] and its notes and warnings in [`Report::findings`] and
//! [`Report::warnings`]. So the one table, CSV, Markdown and HTML writer serve both, and scan's
//! hyperfine-compatible JSON and CSV are layouts of this model, not writers of their own. Fields
//! only scan fills are skipped in the experiments' JSON (`#[serde(skip)]` or skipped when
//! empty), so the documented `schema_version` 1 layout does not change.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use throttle_probe::{Span, Summary, Topology};

pub mod model;

pub use model::Model;

/// Version of the JSON layout written by `--json`; documented in `docs/json.md`. Bump it on any
/// change that can break a reader (a renamed or removed field, a changed unit).
pub const SCHEMA_VERSION: u32 = 1;

/// Well-known metric keys: what `scan` records in [`Row::metrics`] and [`Sample::metrics`],
/// and what the hyperfine layouts of the JSON and CSV writers read.
pub mod keys {
    /// Row metric: sample standard deviation of the wall time, seconds (absent for one run).
    pub const WALL_STDDEV: &str = "wall_stddev_s";
    /// Row metric: the largest peak RSS over the runs, KiB. Sample metric: the run's peak RSS.
    pub const MAX_RSS_KIB: &str = "max_rss_kib";
    /// Row metric: copies (or runs) per second of median wall time.
    pub const THROUGHPUT: &str = "throughput";
    /// Row metric: the Karp–Flatt serial fraction (absent at the first value).
    pub const KARP_FLATT: &str = "karp_flatt";
    /// Row metric (a comparison of commands): mean wall time over the fastest command's.
    pub const RELATIVE: &str = "relative";
    /// Row metric: wall times flagged as outliers.
    pub const OUTLIERS: &str = "outliers";
    /// Row metric: runs that did not exit with status 0 (the table marks the value).
    pub const FAILURES: &str = "failures";
    /// Row metric: copies run at once (1 unless `--procs`).
    pub const COPIES: &str = "copies";
    /// Row metric: median CPU time (user + system) per run, seconds.
    pub const CPU_MEDIAN: &str = "cpu_median_s";
    /// Sample metric: the repetition (round) the run belongs to.
    pub const ROUND: &str = "round";
    /// Sample metric: the exit code (absent when a signal killed the run).
    pub const EXIT_CODE: &str = "exit_code";
    /// Sample metric: the signal that killed a copy (absent when none did).
    pub const SIGNAL: &str = "signal";

    /// The keys of [`Report::parameters`] scan fills.
    pub mod param {
        /// `parameter` or `procs`.
        pub const MODE: &str = "mode";
        /// The parameter's name (`n`), or `procs`.
        pub const PARAMETER: &str = "parameter";
        /// The command template, placeholders kept.
        pub const TEMPLATE: &str = "template";
        /// Warm-up runs per value.
        pub const WARMUP: &str = "warmup";
    }
}

/// One experiment's results, ready to print or export.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Layout version of this document ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool and its version, e.g. `throttle 0.1.0`.
    pub tool: String,
    /// The experiment (subcommand) that produced the report, e.g. `sweep`.
    pub experiment: String,
    /// The command line that produced the report.
    pub command: Vec<String>,
    /// True when the run was interrupted (Ctrl-C) and only part of it was measured.
    pub partial: bool,
    /// What the probe found about the machine.
    pub machine: Machine,
    /// The parameters the experiment ran with (work sizes, repetitions, levels, ...).
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// The measured tables.
    pub sections: Vec<Section>,
    /// Plain sentences derived from the numbers (where it peaks, what oversubscription costs, ...).
    pub findings: Vec<String>,
    /// Things that make the numbers less trustworthy (outliers, failed runs); written to JSON
    /// only when there are some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// One line under the title saying what ran, how often and where (scan's header line).
    #[serde(skip)]
    pub subtitle: Option<String>,
    /// A scaling model fitted to the rows (scan's USL and Amdahl fits), shown after the tables.
    #[serde(skip)]
    pub model: Option<Model>,
}

/// The machine the report was measured on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// The kernel release (`/proc/sys/kernel/osrelease`), or `unknown`.
    pub kernel: String,
    /// The CPU model name from `/proc/cpuinfo`, or `unknown`.
    pub cpu_model: String,
    /// The topology as detected by `throttle_probe::Topology::detect()`.
    pub topology: Topology,
}

impl Machine {
    /// Detects the machine this process runs on.
    pub fn detect() -> Machine {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        Machine {
            kernel,
            cpu_model,
            topology: Topology::detect(),
        }
    }

    /// The number of CPUs this process can use at once: the probe's recommendation (affinity
    /// mask and cgroup quota), at least 1.
    pub fn usable_cpus(&self) -> usize {
        self.topology.recommended.max(1)
    }

    /// The CPUs this process may keep busy, as a number that can be fractional under a cgroup
    /// quota: the least of the logical CPUs, the affinity mask and the quota. Unlike
    /// [`Machine::usable_cpus`] it is not rounded up, so a model can name `1.5 CPUs`.
    pub fn effective_cpus(&self) -> f64 {
        let t = &self.topology;
        let mut cpus = t.logical_cpus.max(1) as f64;
        if !t.affinity.is_empty() {
            cpus = cpus.min(t.affinity.len() as f64);
        }
        if let Some(q) = t.cgroup_quota {
            cpus = cpus.min(q);
        }
        cpus
    }

    /// A machine of `logical` CPUs on `physical` cores, all in the affinity mask, no quota: a
    /// fixture for tests of code that reads the machine.
    #[cfg(test)]
    pub fn example(logical: usize, physical: usize) -> Machine {
        Machine {
            kernel: "test".to_string(),
            cpu_model: "test CPU".to_string(),
            topology: Topology {
                logical_cpus: logical,
                physical_cores: physical,
                packages: 1,
                threads_per_core: (logical / physical.max(1)).max(1),
                affinity: (0..logical).collect(),
                cgroup_quota: None,
                cgroup_source: None,
                recommended: logical.max(1),
                reason: format!("{logical} CPUs in the affinity mask"),
            },
        }
    }
}

/// One table of a report: rows of series × level.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// A short identifier, e.g. `sweep` or `job_length`.
    pub id: String,
    /// A human title printed above the table.
    pub title: String,
    /// What a row's `series` means, e.g. `mode` or `scheduler`.
    pub series_name: String,
    /// What a row's `level` means, e.g. `concurrent tasks` or `iterations per job`.
    pub level_name: String,
    /// True when the levels are concurrency levels, so plots mark the core counts on them.
    pub levels_are_concurrency: bool,
    /// Experiment-specific metric columns, in table order.
    #[serde(skip)]
    pub metric_columns: Vec<MetricColumn>,
    /// True when the level is the value of a `{NAME}` placeholder in a command (scan): Markdown
    /// and HTML show the level's name as code.
    #[serde(skip)]
    pub level_is_placeholder: bool,
    /// A line under the table that explains its columns, if any.
    #[serde(skip)]
    pub legend: Option<String>,
    /// The rows, in measurement order of first appearance.
    pub rows: Vec<Row>,
}

/// An experiment-specific column of a section's table: which metric, its header, how it is
/// printed and when a narrow terminal may drop it.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricColumn {
    /// The key into [`Row::metrics`].
    pub key: String,
    /// The header.
    pub header: String,
    /// How a value is printed.
    pub format: Format,
    /// Drop order on a narrow terminal (see [`crate::view::grid::Column::priority`]).
    pub priority: u8,
}

/// How a metric is printed in tables (exports keep the plain number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// By its key: `*_s` as a duration, ratios and concurrency levels with two decimals,
    /// anything else as a count or rate.
    ByKey,
    /// A duration in seconds (`12.30 ms`).
    Secs,
    /// Three significant digits (`0.0812`).
    Sig3,
    /// A rate per second with three significant digits (`1.79/s`).
    PerSec,
    /// KiB shown as MiB with three significant digits (`51.8 MiB`).
    KibAsMib,
}

impl Section {
    /// An empty section.
    pub fn new(
        id: &str,
        title: &str,
        series_name: &str,
        level_name: &str,
        levels_are_concurrency: bool,
    ) -> Section {
        Section {
            id: id.to_string(),
            title: title.to_string(),
            series_name: series_name.to_string(),
            level_name: level_name.to_string(),
            levels_are_concurrency,
            metric_columns: Vec::new(),
            level_is_placeholder: false,
            legend: None,
            rows: Vec::new(),
        }
    }

    /// Adds an experiment-specific column shown in the table (and always present in JSON/CSV),
    /// printed by its key ([`Format::ByKey`]).
    pub fn metric_column(self, key: &str, header: &str) -> Section {
        self.metric_column_as(key, header, Format::ByKey, 1)
    }

    /// Adds a metric column with an explicit format and drop priority.
    pub fn metric_column_as(
        mut self,
        key: &str,
        header: &str,
        format: Format,
        priority: u8,
    ) -> Section {
        self.metric_columns.push(MetricColumn {
            key: key.to_string(),
            header: header.to_string(),
            format,
            priority,
        });
        self
    }

    /// Fills `speedup` and `efficiency` of every row against the row of the same series whose
    /// level is `base_level`: speedup = base wall median / wall median; efficiency = speedup /
    /// `parallelism(level)`. Rows of a series without a base row keep `None`.
    pub fn fill_speedup(&mut self, base_level: u64, parallelism: impl Fn(u64) -> f64) {
        let bases: BTreeMap<String, f64> = self
            .rows
            .iter()
            .filter(|r| r.level == base_level)
            .map(|r| (r.series.clone(), r.wall.median))
            .collect();
        for row in &mut self.rows {
            if let Some(&base) = bases.get(&row.series) {
                if row.wall.median > 0.0 {
                    let speedup = base / row.wall.median;
                    row.speedup = Some(speedup);
                    let p = parallelism(row.level);
                    row.efficiency = (p > 0.0).then(|| speedup / p);
                }
            }
        }
    }

    /// Marks the row with the lowest wall median (over all series) as the best; returns its index.
    pub fn mark_best(&mut self) -> Option<usize> {
        let best = self
            .rows
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.wall.median.total_cmp(&b.1.wall.median))
            .map(|(i, _)| i)?;
        for (i, row) in self.rows.iter_mut().enumerate() {
            row.best = i == best;
        }
        Some(best)
    }

    /// The row of `series` at `level`, if measured.
    pub fn row(&self, series: &str, level: u64) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.series == series && r.level == level)
    }
}

/// One measured configuration: a series (mode, system, scheduler) at one level.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The series this row belongs to, e.g. `threads` or `pool`.
    pub series: String,
    /// The level (concurrency, job length, ...); see [`Section::level_name`].
    pub level: u64,
    /// The level as printed, e.g. `0 (no limit)`; for scan the value as given, which need not
    /// be a number (`-L mode fast,slow`).
    pub label: String,
    /// Where the level sits on a plot's x axis (e.g. `0 = no limit` sits at the task count; a
    /// value that is not a number sits at its position, 1, 2, ...).
    pub x: f64,
    /// The level as a number when it is one (always, for the experiments); `None` for a label
    /// that is not a number, whose `level` is then its position.
    #[serde(skip)]
    pub value: Option<f64>,
    /// The command line this row ran, when the experiment runs one per row (scan).
    #[serde(skip)]
    pub command: Option<String>,
    /// Parameter values of a row that is not named by them (scan comparing several commands,
    /// each scanned over a parameter): written to hyperfine's `parameters`.
    #[serde(skip)]
    pub parameters: BTreeMap<String, String>,
    /// Wall time of the repetitions, in seconds.
    pub wall: Summary,
    /// Wall time of each repetition, in seconds, in measurement order.
    pub wall_runs: Vec<f64>,
    /// Median user CPU time, seconds.
    pub user: f64,
    /// Median system CPU time, seconds.
    pub system: f64,
    /// Median of (user + system) / wall: the average number of busy CPUs.
    pub cpu_per_wall: f64,
    /// Median voluntary context switches (a thread blocked or yielded).
    pub voluntary_switches: f64,
    /// Median involuntary context switches (a thread was preempted).
    pub involuntary_switches: f64,
    /// Median run-queue wait in seconds (time runnable but not running), or `None`.
    pub run_queue_wait: Option<f64>,
    /// Why `run_queue_wait` is missing, when it is.
    pub run_queue_wait_unavailable: Option<String>,
    /// Wall-time speedup over the section's base level of the same series.
    pub speedup: Option<f64>,
    /// Speedup divided by the parallelism the level allows.
    pub efficiency: Option<f64>,
    /// True for the fastest row of its section.
    pub best: bool,
    /// Experiment-specific metrics (medians over the repetitions).
    pub metrics: BTreeMap<String, f64>,
    /// A result check, when the experiment has one (e.g. the sum against its closed form).
    pub check: Option<Check>,
    /// The repetitions as measured, in measurement order (scan's per-run export reads them).
    #[serde(skip)]
    pub samples: Vec<Sample>,
}

/// A result compared with its known answer.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Check {
    /// The expected value, as a decimal string (it may exceed 2^53).
    pub expected: String,
    /// The value obtained, as a decimal string.
    pub got: String,
    /// Whether they are equal.
    pub ok: bool,
}

/// One repetition's measurements, the input of [`Row::from_samples`].
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Wall time.
    pub wall: Duration,
    /// User CPU time.
    pub user: Duration,
    /// System CPU time.
    pub system: Duration,
    /// Voluntary context switches.
    pub voluntary: u64,
    /// Involuntary context switches.
    pub involuntary: u64,
    /// Run-queue wait, or why it is unavailable.
    pub run_queue_wait: Option<Result<Duration, String>>,
    /// Experiment-specific metrics.
    pub metrics: BTreeMap<String, f64>,
}

impl Sample {
    /// A sample from a probe span over one repetition.
    pub fn from_span(span: &Span) -> Sample {
        Sample {
            wall: span.wall,
            user: span.user,
            system: span.system,
            voluntary: span.voluntary_switches,
            involuntary: span.involuntary_switches,
            run_queue_wait: Some(
                span.run_queue_wait
                    .clone()
                    .map_err(|u| u.reason.to_string()),
            ),
            metrics: BTreeMap::new(),
        }
    }

    /// Adds an experiment-specific metric.
    pub fn metric(mut self, key: &str, value: f64) -> Sample {
        self.metrics.insert(key.to_string(), value);
        self
    }
}

/// CPU time (user + system, seconds) below which the kernel's split between user and system
/// time says nothing: Linux measures a thread's total CPU time exactly but divides it by the
/// timer ticks that landed in user or kernel mode, and a run this short gets none or one (a
/// tick is 1–10 ms for HZ = 1000–100). Such a run shows all its time on one side and 0 on the
/// other, which is not a measurement of 0.
pub const CPU_SPLIT_RESOLUTION: f64 = 0.010;

/// What the tables print for the side of an unresolved split.
pub const UNRESOLVED: &str = "< 1 tick";

/// The note under a table with an unresolved split.
const UNRESOLVED_NOTE: &str = "< 1 tick: the kernel splits CPU time between user and system by \
timer ticks, and these runs were too short for the split (their total CPU time is exact)";

/// The median of `values` (0 for an empty slice, which callers never pass).
pub fn median(values: &[f64]) -> f64 {
    Summary::of(values).map(|s| s.median).unwrap_or(0.0)
}

impl Section {
    /// The line under the table: its legend, and the note on CPU times too short to split
    /// when a row has one ([`Row::cpu_split_unresolved`]). Every writer prints this.
    pub fn legend_text(&self) -> Option<String> {
        let note = self
            .rows
            .iter()
            .any(Row::cpu_split_unresolved)
            .then_some(UNRESOLVED_NOTE);
        match (&self.legend, note) {
            (Some(l), Some(n)) => Some(format!("{l}; {n}")),
            (Some(l), None) => Some(l.clone()),
            (None, Some(n)) => Some(n.to_string()),
            (None, None) => None,
        }
    }
}

impl Row {
    /// True when the row's CPU time is too short for the kernel to split it between user and
    /// system time ([`CPU_SPLIT_RESOLUTION`]) and one side shows 0: that 0 is not measured.
    pub fn cpu_split_unresolved(&self) -> bool {
        let total = self.user + self.system;
        total > 0.0 && total < CPU_SPLIT_RESOLUTION && (self.user == 0.0 || self.system == 0.0)
    }

    /// Summarises the repetitions of one configuration. Returns `None` when `samples` is empty.
    pub fn from_samples(
        series: &str,
        level: u64,
        label: &str,
        x: f64,
        samples: &[Sample],
    ) -> Option<Row> {
        let walls: Vec<f64> = samples.iter().map(|s| s.wall.as_secs_f64()).collect();
        let wall = Summary::of(&walls)?;
        let pick = |f: &dyn Fn(&Sample) -> f64| -> f64 {
            median(&samples.iter().map(f).collect::<Vec<_>>())
        };
        let waits: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.run_queue_wait.as_ref()?.as_ref().ok())
            .map(|d| d.as_secs_f64())
            .collect();
        let wait_reason = samples.iter().find_map(|s| match &s.run_queue_wait {
            Some(Err(reason)) => Some(reason.clone()),
            None => Some("not measured by this experiment".to_string()),
            Some(Ok(_)) => None,
        });
        let (run_queue_wait, run_queue_wait_unavailable) = if waits.len() == samples.len() {
            (Some(median(&waits)), None)
        } else {
            (None, wait_reason)
        };
        let mut metrics = BTreeMap::new();
        for key in samples.iter().flat_map(|s| s.metrics.keys()) {
            if metrics.contains_key(key) {
                continue;
            }
            let values: Vec<f64> = samples
                .iter()
                .filter_map(|s| s.metrics.get(key).copied())
                .collect();
            metrics.insert(key.clone(), median(&values));
        }
        Some(Row {
            series: series.to_string(),
            level,
            label: label.to_string(),
            x,
            value: Some(level as f64),
            command: None,
            parameters: BTreeMap::new(),
            wall,
            wall_runs: walls,
            user: pick(&|s| s.user.as_secs_f64()),
            system: pick(&|s| s.system.as_secs_f64()),
            cpu_per_wall: pick(&|s| {
                let w = s.wall.as_secs_f64();
                if w > 0.0 {
                    (s.user + s.system).as_secs_f64() / w
                } else {
                    0.0
                }
            }),
            voluntary_switches: pick(&|s| s.voluntary as f64),
            involuntary_switches: pick(&|s| s.involuntary as f64),
            run_queue_wait,
            run_queue_wait_unavailable,
            speedup: None,
            efficiency: None,
            best: false,
            metrics,
            check: None,
            samples: samples.to_vec(),
        })
    }
}

impl Report {
    /// An empty report for `experiment`, with the machine detected and the command line recorded.
    pub fn new(experiment: &str, machine: Machine) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool: format!("throttle {}", env!("CARGO_PKG_VERSION")),
            experiment: experiment.to_string(),
            command: std::env::args().collect(),
            partial: false,
            machine,
            parameters: BTreeMap::new(),
            sections: Vec::new(),
            findings: Vec::new(),
            warnings: Vec::new(),
            subtitle: None,
            model: None,
        }
    }

    /// Records a parameter.
    pub fn param(&mut self, key: &str, value: impl Serialize) {
        let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        self.parameters.insert(key.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ms: u64) -> Sample {
        Sample {
            wall: Duration::from_millis(ms),
            user: Duration::from_millis(ms * 2),
            system: Duration::ZERO,
            voluntary: 3,
            involuntary: 5,
            run_queue_wait: Some(Ok(Duration::from_millis(1))),
            metrics: BTreeMap::new(),
        }
        .metric("jobs_per_sec", 1000.0 / ms as f64)
    }

    #[test]
    fn rows_take_medians_and_keep_runs() {
        let row = Row::from_samples("a", 2, "2", 2.0, &[sample(30), sample(10), sample(20)])
            .expect("non-empty");
        assert_eq!(row.wall.count, 3);
        assert!((row.wall.median - 0.020).abs() < 1e-12);
        assert_eq!(row.wall_runs.len(), 3);
        assert!((row.cpu_per_wall - 2.0).abs() < 1e-9);
        assert_eq!(row.run_queue_wait, Some(0.001));
        assert!((row.metrics["jobs_per_sec"] - 50.0).abs() < 1e-9);
        assert!(Row::from_samples("a", 1, "1", 1.0, &[]).is_none());
    }

    #[test]
    fn missing_wait_keeps_the_reason() {
        let mut s = sample(10);
        s.run_queue_wait = Some(Err("no schedstat".into()));
        let row = Row::from_samples("a", 1, "1", 1.0, &[s, sample(10)]).expect("row");
        assert_eq!(row.run_queue_wait, None);
        assert_eq!(
            row.run_queue_wait_unavailable.as_deref(),
            Some("no schedstat")
        );
    }

    #[test]
    fn a_cpu_split_below_the_tick_is_not_shown_as_zero() {
        let mut s = sample(2);
        s.user = Duration::ZERO;
        s.system = Duration::from_micros(2312);
        let mut sec = Section::new("s", "t", "mode", "level", true);
        sec.rows
            .push(Row::from_samples("m", 1, "1", 1.0, &[s]).expect("row"));
        assert!(sec.rows[0].cpu_split_unresolved());
        assert!(sec.legend_text().expect("a note").contains("< 1 tick"));
        // A long CPU-bound run with no system time is a measurement.
        let mut long = sample(200);
        long.system = Duration::ZERO;
        let row = Row::from_samples("m", 1, "1", 1.0, &[long]).expect("row");
        assert!(!row.cpu_split_unresolved());
    }

    #[test]
    fn speedup_and_best() {
        let mut sec = Section::new("s", "t", "mode", "level", true);
        sec.rows
            .push(Row::from_samples("m", 1, "1", 1.0, &[sample(40)]).expect("row"));
        sec.rows
            .push(Row::from_samples("m", 2, "2", 2.0, &[sample(20)]).expect("row"));
        sec.fill_speedup(1, |l| l as f64);
        assert_eq!(sec.rows[1].speedup, Some(2.0));
        assert_eq!(sec.rows[1].efficiency, Some(1.0));
        assert_eq!(sec.mark_best(), Some(1));
        assert!(sec.rows[1].best && !sec.rows[0].best);
    }
}
