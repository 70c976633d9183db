//! Interleaved repetitions, medians, the per-bench table and the JSON file.
//!
//! A benchmark is a list of [`Case`]s (one system at one thread count).
//! [`run_interleaved`] runs `for rep in 0..reps { for case in cases { .. } }`,
//! so slow drift of the machine (frequency, other load) spreads over every
//! system instead of biasing the one measured last.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::machine::Machine;

/// One measured configuration: a system at a thread count, and how to
/// measure it once.
pub struct Case<'a> {
    system: &'static str,
    threads: usize,
    variant: Option<&'static str>,
    measure: Box<dyn FnMut() -> Result<f64> + 'a>,
}

impl<'a> Case<'a> {
    /// A case whose `measure` returns one sample in seconds (usually wall
    /// time, see [`time`]), or an error when the result was wrong.
    pub fn new(
        system: &'static str,
        threads: usize,
        measure: impl FnMut() -> Result<f64> + 'a,
    ) -> Case<'a> {
        Case {
            system,
            threads,
            variant: None,
            measure: Box::new(measure),
        }
    }

    /// Marks a second configuration of the same system and thread count
    /// (for example `stats_off`).
    pub fn variant(mut self, variant: &'static str) -> Case<'a> {
        self.variant = Some(variant);
        self
    }
}

/// Wall time of `f` in seconds, and its result.
pub fn time<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let start = Instant::now();
    let r = f();
    (start.elapsed().as_secs_f64(), r)
}

/// Fails with a clear message when a system computed a wrong answer.
pub fn check<T: PartialEq + std::fmt::Debug>(system: &str, got: T, want: T) -> Result<()> {
    if got != want {
        bail!("{system} computed {got:?}, expected {want:?}");
    }
    Ok(())
}

/// The samples of one case.
#[derive(Debug, Clone)]
pub struct Series {
    /// The system's name (`serial`, `throttle`, `rayon`, ...).
    pub system: &'static str,
    /// Threads that run work, the caller included (seed_throttle: the limit k).
    pub threads: usize,
    /// A second configuration of the same system, if any.
    pub variant: Option<&'static str>,
    /// One sample per repetition, in seconds.
    pub runs: Vec<f64>,
}

impl Series {
    /// The median sample (mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        median(&self.runs)
    }

    /// The smallest sample.
    pub fn min(&self) -> f64 {
        self.runs.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The largest sample.
    pub fn max(&self) -> f64 {
        self.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// The run-to-run spread: the interquartile range over the median (0.05 = 5 %). Robust to
    /// the one disturbed run a noisy host produces, unlike min–max (printed beside it).
    pub fn spread(&self) -> f64 {
        let mut v = self.runs.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n < 2 {
            return 0.0;
        }
        // Quartiles by linear interpolation between order statistics.
        let q = |p: f64| {
            let x = p * (n - 1) as f64;
            let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
        };
        let iqr = q(0.75) - q(0.25);
        if iqr == 0.0 {
            // Also when the median is 0 (idle_cpu: most samples read no CPU at all).
            return 0.0;
        }
        // Infinite when the median is 0 but the samples are not: printed as "-".
        iqr / self.median()
    }

    fn label(&self) -> String {
        match self.variant {
            Some(v) => format!("{} ({v})", self.system),
            None => self.system.to_string(),
        }
    }
}

/// The median of `xs` (NaN when empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs every case `reps` times, interleaved; with `warmup`, one unrecorded
/// run of each case first.
pub fn run_interleaved(reps: usize, warmup: bool, mut cases: Vec<Case<'_>>) -> Result<Vec<Series>> {
    if warmup {
        for case in &mut cases {
            settle();
            (case.measure)()?;
        }
    }
    let mut runs = vec![Vec::with_capacity(reps); cases.len()];
    for _ in 0..reps {
        for (case, runs) in cases.iter_mut().zip(&mut runs) {
            settle();
            runs.push((case.measure)()?);
        }
    }
    Ok(cases
        .iter()
        .zip(runs)
        .map(|(c, runs)| Series {
            system: c.system,
            threads: c.threads,
            variant: c.variant,
            runs,
        })
        .collect())
}

/// How long the machine idles before each measured case.
///
/// Several pools live in one process during a bench, and a pool keeps its threads spinning for a
/// while after its work ends (rayon yields for a while before it sleeps; chili runs a heartbeat
/// thread). Measured back to back, a case would share the two cores with the previous system's
/// spin-down: here that doubled some throttle and chili runs at random. After this pause every
/// pool's threads are asleep, so every system starts from the same idle machine and pays its own
/// wake-up cost.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(20);

fn settle() {
    std::thread::sleep(SETTLE);
}

/// A speed target the project set itself, and whether this run met it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// The target as stated, e.g. `throttle ≤ 0.3×rayon (2 threads)`.
    pub target: String,
    /// What was measured, e.g. `0.21`.
    pub measured: String,
    /// Whether the target was met (false when it could not be measured).
    pub met: bool,
    /// For a ratio of medians: the combined spread of the two series, and whether the target
    /// lies within it (then the verdict is the noise's, not the systems').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    /// True when the target's bound lies within `spread` of the measured ratio.
    pub within_spread: bool,
}

/// Which series the ratio column divides by.
#[derive(Debug, Clone, Copy)]
pub struct Baseline {
    /// The baseline's system.
    pub system: &'static str,
    /// The baseline's thread count.
    pub threads: usize,
    /// The baseline's variant.
    pub variant: Option<&'static str>,
}

/// Everything one bench measured.
#[derive(Debug)]
pub struct Report {
    /// The bench's name (`tree_sum`, ...).
    pub bench: &'static str,
    /// One line saying what was measured and in which unit.
    pub what: String,
    /// The series the ratio column is relative to.
    pub baseline: Baseline,
    /// The measured series.
    pub series: Vec<Series>,
    /// The targets, checked.
    pub targets: Vec<Target>,
    /// Extra lines printed under the table.
    pub notes: Vec<String>,
}

impl Report {
    /// A report with no targets yet.
    pub fn new(
        bench: &'static str,
        what: String,
        baseline: Baseline,
        series: Vec<Series>,
    ) -> Report {
        Report {
            bench,
            what,
            baseline,
            series,
            targets: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The series of `system` at `threads` (without a variant).
    pub fn find(&self, system: &str, threads: usize) -> Option<&Series> {
        self.find_variant(system, threads, None)
    }

    /// The series of `system` at `threads` with `variant`.
    pub fn find_variant(
        &self,
        system: &str,
        threads: usize,
        variant: Option<&str>,
    ) -> Option<&Series> {
        self.series
            .iter()
            .find(|s| s.system == system && s.threads == threads && s.variant == variant)
    }

    /// The median of `system` at `threads`, if it was measured.
    pub fn median_of(&self, system: &str, threads: usize) -> Option<f64> {
        self.find(system, threads).map(Series::median)
    }

    /// Adds the target `target` with the value `measured` (None: not measured)
    /// and the verdict `ok(value)`; `shown` formats the value.
    pub fn target(
        &mut self,
        target: impl Into<String>,
        measured: Option<f64>,
        ok: impl Fn(f64) -> bool,
        shown: impl Fn(f64) -> String,
    ) {
        let (measured, met) = match measured {
            Some(v) if v.is_finite() => (shown(v), ok(v)),
            _ => ("not measured".to_string(), false),
        };
        self.targets.push(Target {
            target: target.into(),
            measured,
            met,
            spread: None,
            within_spread: false,
        });
    }

    /// Adds the target `a ≤ factor × b` on medians, shown as the ratio a/b.
    pub fn ratio_target(
        &mut self,
        label: impl Into<String>,
        a: Option<f64>,
        b: Option<f64>,
        factor: f64,
    ) {
        let ratio = a.zip(b).map(|(a, b)| a / b);
        self.target(label, ratio, |r| r <= factor, |r| format!("{r:.2}"));
        // The ratio of two medians is as uncertain as both together.
        let spread = a
            .zip(b)
            .and_then(|(a, b)| Some(self.spread_of_median(a)? + self.spread_of_median(b)?));
        if let (Some(spread), Some(ratio), Some(t)) = (spread, ratio, self.targets.last_mut()) {
            t.spread = Some(spread);
            t.within_spread = (ratio - factor).abs() <= spread * factor;
        }
    }

    /// The spread of the series whose median is `m`, or a whole fraction of it such as
    /// serial ÷ cores (the target helpers receive medians, as `median_of` returns them; this
    /// finds the series such a median came from).
    fn spread_of_median(&self, m: f64) -> Option<f64> {
        let from = |s: &&Series| {
            let k = s.median() / m;
            k.round() >= 1.0 && (k - k.round()).abs() < 1e-9
        };
        self.series.iter().find(from).map(Series::spread)
    }

    fn baseline_median(&self) -> Option<f64> {
        let b = self.baseline;
        self.find_variant(b.system, b.threads, b.variant)
            .map(Series::median)
    }

    /// The table, the targets and the notes, ready to print.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let b = self.baseline;
        let _ = writeln!(out, "== {} — {}", self.bench, self.what);
        let variant = b.variant.map_or(String::new(), |v| format!(" {v}"));
        let _ = writeln!(
            out,
            "   ratio = median ÷ median of {}{variant} at {} threads",
            b.system, b.threads
        );
        let _ = writeln!(
            out,
            "{:<28} {:>7} {:>11} {:>11} {:>11} {:>7} {:>7}",
            "system", "threads", "median", "min", "max", "spread", "ratio"
        );
        let base = self.baseline_median();
        for s in &self.series {
            let ratio = base.map_or("-".to_string(), |m| format!("{:.3}", s.median() / m));
            let _ = writeln!(
                out,
                "{:<28} {:>7} {:>11} {:>11} {:>11} {:>7} {:>7}",
                s.label(),
                s.threads,
                seconds(s.median()),
                seconds(s.min()),
                seconds(s.max()),
                percent(s.spread()),
                ratio
            );
        }
        for t in &self.targets {
            let mark = if t.met { "✓" } else { "✗" };
            let noise = match t.spread {
                Some(sp) if t.within_spread => {
                    format!(" (within the ±{:.1} % spread: noise decides)", sp * 100.0)
                }
                Some(sp) => format!(" (spread ±{:.1} %)", sp * 100.0),
                None => String::new(),
            };
            let _ = writeln!(out, "target: {} → {} {mark}{noise}", t.target, t.measured);
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        out
    }
}

/// A spread as a percentage, or "-" when it has no finite value (a median of 0 with
/// samples that are not all 0).
fn percent(spread: f64) -> String {
    if spread.is_finite() {
        format!("{:.1}%", spread * 100.0)
    } else {
        "-".to_string()
    }
}

/// A duration in seconds with a readable unit.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "-".to_string()
    } else if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

#[derive(Serialize)]
struct Row<'a> {
    bench: &'a str,
    system: &'a str,
    threads: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'a str>,
    median_s: f64,
    min_s: f64,
    max_s: f64,
    /// Interquartile range over the median.
    spread: f64,
    runs_s: &'a [f64],
}

#[derive(Serialize)]
struct TargetRow<'a> {
    bench: &'a str,
    #[serde(flatten)]
    target: &'a Target,
}

#[derive(Serialize)]
struct Export<'a> {
    machine: &'a Machine,
    quick: bool,
    reps: usize,
    results: Vec<Row<'a>>,
    targets: Vec<TargetRow<'a>>,
}

/// The JSON document: `machine`, `results` (one row per series) and the
/// checked `targets`.
pub fn to_json(machine: &Machine, quick: bool, reps: usize, reports: &[Report]) -> Result<String> {
    let results = reports
        .iter()
        .flat_map(|r| {
            r.series.iter().map(|s| Row {
                bench: r.bench,
                system: s.system,
                threads: s.threads,
                variant: s.variant,
                median_s: s.median(),
                min_s: s.min(),
                max_s: s.max(),
                spread: s.spread(),
                runs_s: &s.runs,
            })
        })
        .collect();
    let targets = reports
        .iter()
        .flat_map(|r| {
            r.targets.iter().map(|t| TargetRow {
                bench: r.bench,
                target: t,
            })
        })
        .collect();
    let export = Export {
        machine,
        quick,
        reps,
        results,
        targets,
    };
    Ok(serde_json::to_string_pretty(&export)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn a_spread_of_zero_samples_is_zero_and_of_a_zero_median_is_printed_as_a_dash() {
        let series = |runs: Vec<f64>| Series {
            system: "s",
            threads: 1,
            variant: None,
            runs,
        };
        assert_eq!(series(vec![0.0; 7]).spread(), 0.0);
        assert_eq!(percent(series(vec![0.0; 7]).spread()), "0.0%");
        let mostly_zero = series(vec![0.0, 0.0, 0.0, 0.0, 1e-5, 2e-5, 5e-5]);
        assert_eq!(mostly_zero.median(), 0.0);
        assert_eq!(percent(mostly_zero.spread()), "-");
        assert_eq!(percent(series(vec![1.0, 2.0, 3.0]).spread()), "50.0%");
    }

    #[test]
    fn interleaves_cases_in_order() {
        let log = std::cell::RefCell::new(Vec::new());
        let cases = vec![
            Case::new("a", 1, || {
                log.borrow_mut().push('a');
                Ok(1.0)
            }),
            Case::new("b", 2, || {
                log.borrow_mut().push('b');
                Ok(2.0)
            }),
        ];
        let series = run_interleaved(3, true, cases).expect("no errors");
        assert_eq!(log.borrow().iter().collect::<String>(), "abababab");
        assert_eq!(series[0].runs, vec![1.0; 3]);
        assert_eq!(series[1].threads, 2);
    }

    #[test]
    fn targets_and_table() {
        let series = vec![
            Series {
                system: "serial",
                threads: 1,
                variant: None,
                runs: vec![2.0, 2.0, 2.0],
            },
            Series {
                system: "throttle",
                threads: 2,
                variant: None,
                runs: vec![1.0, 1.1, 0.9],
            },
        ];
        let base = Baseline {
            system: "serial",
            threads: 1,
            variant: None,
        };
        let mut r = Report::new("demo", "wall time".into(), base, series);
        let (a, b) = (r.median_of("throttle", 2), r.median_of("serial", 1));
        r.ratio_target("throttle ≤ 0.6×serial", a, b, 0.6);
        r.ratio_target("throttle ≤ 0.3×serial", a, b, 0.3);
        r.ratio_target("missing", None, b, 1.0);
        let met: Vec<bool> = r.targets.iter().map(|t| t.met).collect();
        assert_eq!(met, [true, false, false]);
        let text = r.render();
        assert!(text.contains("throttle ≤ 0.6×serial → 0.50 ✓"), "{text}");
        assert!(text.contains("0.500"), "{text}");
    }
}
