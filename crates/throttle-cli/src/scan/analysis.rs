//! From runs to conclusions: per-value statistics, the scaling model and the plain-language
//! notes about the machine and the program.

use super::record::{Mode, Point, Scan};
use super::stats;
use crate::results::model::usl::{self, Fit};
pub use crate::results::model::Model;
use throttle_probe::Summary;

/// What scan concludes about one value's runs, beyond the medians every experiment's rows
/// have (user and system time, switches: [`crate::results::Row::from_samples`]). Times are in
/// seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct PointStats {
    /// Wall time.
    pub wall: Summary,
    /// CPU time (user + system).
    pub cpu: Summary,
    /// Median of CPU / wall: how many CPUs the command kept busy on average.
    pub cpu_per_wall: f64,
    /// Median run-queue wait, when the kernel reported it for every run.
    pub run_queue_wait: Option<f64>,
    /// Largest peak RSS over the runs, KiB.
    pub max_rss_kib: u64,
    /// Throughput, copies per second of median wall time.
    pub throughput: f64,
    /// Throughput over the first value's; `None` when the first value was not measured (an
    /// interrupted scan): no ratio against a baseline that has no runs.
    pub speedup: Option<f64>,
    /// Concurrency over the first value's (`n / n0`), when both are numbers.
    pub relative_concurrency: Option<f64>,
    /// Speedup over relative concurrency.
    pub efficiency: Option<f64>,
    /// Karp–Flatt serial fraction, defined above the first value.
    pub karp_flatt: Option<f64>,
    /// Wall times flagged by the modified z-score.
    pub outliers: usize,
    /// Runs that did not exit with status 0.
    pub failures: usize,
}

/// Statistics, model and notes of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// One entry per point, `None` for a point without runs (an interrupted scan).
    pub stats: Vec<Option<PointStats>>,
    /// The model; `None` when the values are not numbers or too few were measured.
    pub model: Option<Model>,
    /// Observations about the range, the machine and the program.
    pub notes: Vec<String>,
    /// Things that make the numbers less trustworthy (outliers, failures).
    pub warnings: Vec<String>,
}

fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

/// Everything of [`PointStats`] that needs only the point's own runs; `None` without runs.
fn point_stats(point: &Point) -> Option<PointStats> {
    let wall: Vec<f64> = point.runs.iter().map(|r| secs(r.wall)).collect();
    let cpu: Vec<f64> = point.runs.iter().map(|r| secs(r.cpu())).collect();
    let ratio: Vec<f64> = point
        .runs
        .iter()
        .map(|r| secs(r.cpu()) / secs(r.wall).max(1e-12))
        .collect();
    let rq: Option<Vec<f64>> = point
        .runs
        .iter()
        .map(|r| r.run_queue_wait.map(secs))
        .collect();
    let wall_summary = Summary::of(&wall)?;
    Some(PointStats {
        cpu: Summary::of(&cpu)?,
        cpu_per_wall: stats::median(&ratio)?,
        run_queue_wait: rq.and_then(|v| stats::median(&v)),
        max_rss_kib: point.runs.iter().map(|r| r.max_rss_kib).max().unwrap_or(0),
        throughput: point.copies as f64 / wall_summary.median.max(1e-12),
        speedup: None,
        relative_concurrency: None,
        efficiency: None,
        karp_flatt: None,
        outliers: stats::count_outliers(&wall),
        failures: point.runs.iter().filter(|r| !r.succeeded()).count(),
        wall: wall_summary,
    })
}

/// Computes statistics, fits the model and writes the notes.
pub fn analyse(scan: &Scan) -> Analysis {
    let mut stats_out: Vec<Option<PointStats>> = Vec::with_capacity(scan.points.len());
    // The baseline is the first value, and only if it was measured: an interrupted scan whose
    // first value has no runs gets no speedup, efficiency or Karp–Flatt fraction at all (the
    // second value is no stand-in for it).
    let base: Option<(f64, Option<f64>)> = scan
        .points
        .first()
        .and_then(|p| Some((point_stats(p)?.throughput, p.n)));
    for point in &scan.points {
        let Some(mut ps) = point_stats(point) else {
            stats_out.push(None);
            continue;
        };
        if let Some((x0, n0)) = base {
            let speedup = ps.throughput / x0;
            let relative_concurrency = match (point.n, n0) {
                (Some(n), Some(n0)) => Some(n / n0),
                _ => None,
            };
            ps.speedup = Some(speedup);
            ps.relative_concurrency = relative_concurrency;
            ps.efficiency = relative_concurrency.map(|p| stats::efficiency(speedup, p));
            ps.karp_flatt = relative_concurrency.and_then(|p| stats::karp_flatt(speedup, p));
        }
        stats_out.push(Some(ps));
    }
    let model = fit_model(scan);
    let notes = notes(scan, &stats_out);
    let warnings = warnings(scan, &stats_out);
    Analysis {
        stats: stats_out,
        model,
        notes,
        warnings,
    }
}

/// The throughput points the model is fitted to: every run, `(n, copies / wall)`.
pub fn throughput_points(scan: &Scan) -> Vec<(f64, f64)> {
    scan.points
        .iter()
        .filter_map(|p| p.n.map(|n| (n, p)))
        .flat_map(|(n, p)| {
            p.runs
                .iter()
                .map(move |r| (n, p.copies as f64 / secs(r.wall).max(1e-12)))
        })
        .collect()
}

/// True when every value is a positive number, as a count of threads or copies must be: only
/// then does a scalability model mean anything.
fn values_are_counts(scan: &Scan) -> bool {
    scan.points.iter().all(|p| p.n.is_some_and(|n| n > 0.0))
}

fn fit_model(scan: &Scan) -> Option<Model> {
    if !values_are_counts(scan) {
        return None;
    }
    let points = throughput_points(scan);
    if points.is_empty() {
        return None;
    }
    let usl = usl::fit_usl(&points).map_err(|e| e.to_string());
    let amdahl = usl::fit_amdahl(&points).map_err(|e| e.to_string());
    if usl.is_err() && amdahl.is_err() {
        return None;
    }
    let unit = match scan.mode {
        Mode::Parameter | Mode::Commands => "runs/s",
        Mode::Procs => "copies/s",
    };
    let n_max = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let n_min = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let cpus = Some(scan.machine.effective_cpus());
    let range = Range {
        min: n_min,
        max: n_max,
        cpus,
    };
    let summary = match (&usl, &amdahl) {
        (Ok(fit), _) => explain(fit, range, &scan.parameter, unit),
        (Err(_), Ok(fit)) => explain(fit, range, &scan.parameter, unit),
        (Err(_), Err(_)) => Vec::new(),
    };
    Some(Model {
        usl,
        amdahl,
        unit,
        summary,
    })
}

pub use crate::view::units::sig3;

/// The measured range of a scan and the CPUs the process may use.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    /// The smallest value measured.
    pub min: f64,
    /// The largest value measured.
    pub max: f64,
    /// The CPUs this process may use, when known.
    pub cpus: Option<f64>,
}

/// One to three sentences on what a fit means, for a reader who has not met the USL. When the
/// range passes the CPU count, the CPUs are named as the limit: above it, copies that share
/// nothing still slow down, and σ or κ would otherwise be blamed for it.
pub fn explain(fit: &Fit, range: Range, name: &str, unit: &str) -> Vec<String> {
    let (n_min, n_max) = (range.min, range.max);
    let mut out = Vec::new();
    let contention = fit.sigma * (n_max - 1.0);
    let coherency = fit.kappa * n_max * (n_max - 1.0);
    let of_linear = 100.0 / (1.0 + contention + coherency);
    let (s, k) = (sig3(fit.sigma), sig3(fit.kappa));
    let passes_cpus = range.cpus.filter(|&c| n_max > c);
    // The CPU count is the story only when the command scaled up to it (the fit gives at
    // least 70 % of linear speedup there over the smallest level) and gained little beyond it
    // (under 15 % more throughput from the CPU count to the end of the range).
    let scaled_to = |c: f64| {
        let top = c.min(n_max);
        let base = fit.predict(n_min);
        base > 0.0 && top > n_min && fit.predict(top) / base >= 0.7 * top / n_min
    };
    let flat_beyond = |c: f64| fit.predict(n_max) <= 1.15 * fit.predict(c.min(n_max));
    if let Some(cpus) = passes_cpus.filter(|&c| scaled_to(c) && flat_beyond(c)) {
        out.push(format!(
            "The range passes the {} CPUs this process may use: above {name} = {}, extra threads or copies wait for a CPU, so throughput cannot keep growing there whatever the command does; the fitted σ = {s} and κ = {k} describe mostly that limit, not the command's own contention or coherency (at {name} = {n_max} the model gives {of_linear:.0} % of linear scaling).",
            sig3(cpus),
            sig3(cpus)
        ));
    } else if contention + coherency < 0.02 {
        out.push(format!(
            "Scales almost linearly over the measured range: σ = {s} and κ = {k} cost under 2 % at {name} = {n_max}."
        ));
    } else if contention >= coherency {
        let coh = if fit.kappa == 0.0 {
            "no coherency penalty".to_string()
        } else {
            format!("coherency κ = {k} is smaller")
        };
        out.push(format!(
            "Contention σ = {s} dominates ({coh}); at {name} = {n_max} the model gives {of_linear:.0} % of linear scaling."
        ));
    } else {
        out.push(format!(
            "Coherency κ = {k} dominates over contention σ = {s}: the cost of keeping workers in step grows with the square of {name}; at {name} = {n_max} the model gives {of_linear:.0} % of linear scaling."
        ));
    }
    if let Some(cpus) = passes_cpus.filter(|&c| !scaled_to(c)) {
        out.push(format!(
            "The range also passes the {} CPUs this process may use, but throughput falls short of linear already below that, so the command itself limits its scaling.",
            sig3(cpus)
        ));
    } else if let Some(cpus) = passes_cpus.filter(|&c| !flat_beyond(c)) {
        out.push(format!(
            "The range also passes the {} CPUs this process may use: above {name} = {}, extra threads or copies share those CPUs, so what they still gain there comes from filling idle time, not from more CPUs (see the run-queue wait column).",
            sig3(cpus),
            sig3(cpus)
        ));
    }
    match fit.peak() {
        Some(peak) if peak <= n_min => out.push(format!(
            "Throughput is highest at the smallest level measured ({name} = {}): adding concurrency only makes this command slower here.",
            sig3(n_min)
        )),
        Some(peak) if peak <= n_max => out.push(format!(
            "Throughput peaks near {name}* = {} ({} {unit}); beyond it more concurrency makes it slower.",
            sig3(peak),
            sig3(fit.predict(peak)),
        )),
        Some(peak) => out.push(format!(
            "The predicted peak {name}* = {} ({} {unit}) lies beyond the measured range.",
            sig3(peak),
            sig3(fit.predict(peak)),
        )),
        None => match fit.ceiling() {
            // A ceiling within 10 % of one unit's throughput is a flat curve, not a rising one.
            Some(ceiling) if fit.sigma >= 1.0 / 1.1 => out.push(format!(
                "Throughput is flat: the model's ceiling λ/σ = {} {unit} is about one unit's, so adding concurrency gains nothing here.",
                sig3(ceiling),
            )),
            Some(ceiling) => out.push(format!(
                "No peak: throughput rises more and more slowly towards λ/σ = {} {unit} ({}× one unit's).",
                sig3(ceiling),
                sig3(1.0 / fit.sigma),
            )),
            None => out.push("No peak within the model: no sign of a limit yet.".to_string()),
        },
    }
    if let Some(r2) = fit.r_squared.filter(|r2| *r2 < 0.8) {
        out.push(format!(
            "The fit is poor (R² = {r2:.2}): the curve is noisy or not USL-shaped, so read σ and κ with caution."
        ));
    }
    out
}

fn notes(scan: &Scan, stats: &[Option<PointStats>]) -> Vec<String> {
    if scan.mode == Mode::Commands {
        return summary(scan, stats);
    }
    let mut out = Vec::new();
    let name = &scan.parameter;
    if !scan.points.is_empty() && !values_are_counts(scan) {
        out.push(format!(
            "No scalability model: the USL and Amdahl fits need every value of {name} to be a positive count of threads or copies; the table still compares the values."
        ));
    }
    let ns: Vec<f64> = scan.points.iter().filter_map(|p| p.n).collect();
    let n_max = ns.iter().copied().fold(0.0, f64::max);
    let m = &scan.machine.topology;
    let cpus = scan.machine.effective_cpus();
    if m.physical_cores > 0 && m.physical_cores < m.logical_cpus && n_max > m.physical_cores as f64
    {
        out.push(format!(
            "The range passes the {} physical cores ({} logical CPUs): above {name} = {}, SMT siblings share a core's execution units, so expect well under linear gains there.",
            m.physical_cores, m.logical_cpus, m.physical_cores
        ));
    }
    if m.logical_cpus > 0 && n_max > cpus {
        out.push(format!(
            "The range passes the {} CPUs this process may use: above {name} = {}, threads or copies wait for a CPU (see the run-queue wait column).",
            sig3(cpus),
            sig3(cpus)
        ));
    }
    let waiting: Vec<String> = scan
        .points
        .iter()
        .zip(stats)
        .filter_map(|(p, s)| s.as_ref().map(|s| (p, s)))
        .filter(|(_, s)| s.cpu_per_wall < 0.5)
        .map(|(p, s)| format!("{name} = {} ({:.2})", p.label, s.cpu_per_wall))
        .collect();
    if !waiting.is_empty() {
        out.push(format!(
            "Wall time is far above CPU time at {} (CPU/wall in brackets): the command waits (I/O, sleep, locks) more than it computes, and more threads can only overlap the waiting.",
            waiting.join(", ")
        ));
    }
    let measured: Vec<(&Point, &PointStats)> = scan
        .points
        .iter()
        .zip(stats)
        .filter_map(|(p, s)| s.as_ref().map(|s| (p, s)))
        .collect();
    if let (Some(first), Some(last)) = (measured.first(), measured.last()) {
        let per_copy = |p: &Point, s: &PointStats| s.cpu.median / p.copies as f64;
        let (c0, c1) = (per_copy(first.0, first.1), per_copy(last.0, last.1));
        if measured.len() > 1 && c0 > 0.0 && c1 > 1.25 * c0 {
            out.push(format!(
                "CPU time per {} grew {:.0} % from {name} = {} to {name} = {} ({} s → {} s): the extra concurrency costs work (spinning, contention, shared caches or SMT), not only waiting.",
                if scan.mode == Mode::Procs { "copy" } else { "run" },
                (c1 / c0 - 1.0) * 100.0,
                first.0.label,
                last.0.label,
                sig3(c0),
                sig3(c1)
            ));
        }
    }
    if let Some(verdict) = fastest(scan, &measured) {
        out.push(verdict);
    }
    if let Some((p, s)) = measured.first() {
        if let Some(rq) = s.run_queue_wait {
            let share = rq / s.wall.median.max(1e-12);
            if share > 0.05 {
                out.push(format!(
                    "Already at {name} = {} the command waited {} s for a CPU ({:.0} % of its wall time): other load competes with it on this machine, so the scan understates how it would scale on an idle one.",
                    p.label,
                    sig3(rq),
                    share * 100.0
                ));
            }
        }
    }
    if let Some(reason) = &scan.run_queue_unavailable {
        out.push(format!("Run-queue wait is not available: {reason}."));
    }
    out
}

/// The fastest value by median wall time, judged against the others by the one rule of
/// [`crate::verdict`]: a single fastest value only when every other is slower by the test.
/// Over the values measured only, and said so, when the scan was interrupted.
fn fastest(scan: &Scan, measured: &[(&Point, &PointStats)]) -> Option<String> {
    if measured.len() < 2 {
        return None;
    }
    let name = &scan.parameter;
    let walls = |p: &Point| -> Vec<f64> { p.runs.iter().map(|r| secs(r.wall)).collect() };
    let (best, best_stats) = measured
        .iter()
        .min_by(|a, b| a.1.wall.median.total_cmp(&b.1.wall.median))?;
    let best_walls = walls(best);
    let ties: Vec<(String, crate::verdict::Comparison)> = measured
        .iter()
        .filter(|(p, _)| !std::ptr::eq(*p, *best))
        .map(|(p, _)| {
            (
                p.label.clone(),
                crate::verdict::compare(&walls(p), &best_walls),
            )
        })
        .filter(|(_, c)| !c.is_real())
        .collect();
    let scope = if measured.len() < scan.points.len() {
        " of the values measured"
    } else {
        ""
    };
    let time = crate::view::units::secs(best_stats.wall.median);
    Some(if ties.is_empty() {
        format!(
            "Fastest{scope} at {name} = {} ({time} median wall time): every other value is slower by the test ({}).",
            best.label,
            crate::verdict::RULE_SHORT
        )
    } else {
        let labels: Vec<String> = ties.iter().map(|(l, _)| format!("{name} = {l}")).collect();
        format!(
            "The fastest median{scope} is at {name} = {} ({time}), but the test cannot tell it from {} ({}).",
            best.label,
            labels.join(", "),
            crate::verdict::reasons(&ties.iter().map(|(_, c)| *c).collect::<Vec<_>>())
        )
    })
}

/// hyperfine's summary of a comparison of commands: the fastest by mean, and how many times
/// faster it ran than each other (± by error propagation of both standard deviations, as
/// hyperfine computes it); each ratio followed by the one rule's verdict on the runs, so a
/// ratio that noise could give is said to be one.
fn summary(scan: &Scan, stats: &[Option<PointStats>]) -> Vec<String> {
    let measured: Vec<(&Point, &PointStats)> = scan
        .points
        .iter()
        .zip(stats)
        .filter_map(|(p, s)| s.as_ref().map(|s| (p, s)))
        .collect();
    let Some(&(fast, fs)) = measured
        .iter()
        .min_by(|a, b| a.1.wall.mean.total_cmp(&b.1.wall.mean))
    else {
        return Vec::new();
    };
    if measured.len() < 2 {
        return Vec::new();
    }
    let walls = |p: &Point| -> Vec<f64> { p.runs.iter().map(|r| secs(r.wall)).collect() };
    let mut out = vec![format!("Summary: '{}' ran", fast.label)];
    let mut others = measured.clone();
    others.sort_by(|a, b| a.1.wall.mean.total_cmp(&b.1.wall.mean));
    for &(p, s) in &others {
        if std::ptr::eq(p, fast) {
            continue;
        }
        let ratio = s.wall.mean / fs.wall.mean;
        let rel = |x: &Summary| {
            if x.count > 1 && x.mean > 0.0 {
                x.stddev / x.mean
            } else {
                0.0
            }
        };
        let err = ratio * (rel(&s.wall).powi(2) + rel(&fs.wall).powi(2)).sqrt();
        let c = crate::verdict::compare(&walls(p), &walls(fast));
        out.push(format!(
            "  {ratio:.2} ± {err:.2} times faster than '{}': {}",
            p.label,
            c.clause()
        ));
    }
    out
}

fn warnings(scan: &Scan, stats: &[Option<PointStats>]) -> Vec<String> {
    let mut out = Vec::new();
    let name = &scan.parameter;
    for (p, s) in scan.points.iter().zip(stats) {
        let Some(s) = s else {
            out.push(format!("{name} = {}: no runs measured.", p.label));
            continue;
        };
        if s.outliers > 0 {
            out.push(format!(
                "{name} = {}: {} of {} wall times are outliers (modified z-score > {} and more than {:.0} % from the median); other load on the machine may have disturbed them — consider more --warmup or --runs.",
                p.label, s.outliers, s.wall.count, stats::OUTLIER_THRESHOLD, stats::MIN_OUTLIER_DEVIATION * 100.0
            ));
        } else if s.wall.count < stats::MIN_RUNS_FOR_OUTLIERS {
            let walls: Vec<f64> = p.runs.iter().map(|r| r.wall.as_secs_f64()).collect();
            if let Some(spread) = stats::relative_spread(&walls).filter(|&x| x > stats::WIDE_SPREAD)
            {
                out.push(format!(
                    "{name} = {}: the {} wall times spread {:.0} % (min to max); too few runs to tell an outlier from noise — consider --runs {} or more.",
                    p.label, s.wall.count, spread * 100.0, stats::MIN_RUNS_FOR_OUTLIERS
                ));
            }
        }
        if s.failures > 0 {
            let codes: Vec<String> = p
                .runs
                .iter()
                .filter(|r| !r.succeeded())
                .map(|r| match (r.exit_code, r.signal) {
                    (_, Some(sig)) => format!("signal {sig}"),
                    (Some(c), None) => format!("exit {c}"),
                    (None, None) => "unknown".to_string(),
                })
                .collect();
            out.push(format!(
                "{name} = {}: {} of {} runs failed ({}).",
                p.label,
                s.failures,
                s.wall.count,
                codes.join(", ")
            ));
        }
    }
    if scan.partial {
        out.push("Interrupted: these results are partial.".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::record::Run;
    use super::*;
    use crate::results::Machine;
    use std::time::Duration;

    fn run(wall: f64, cpu: f64) -> Run {
        Run {
            round: 0,
            wall: Duration::from_secs_f64(wall),
            user: Duration::from_secs_f64(cpu * 0.9),
            system: Duration::from_secs_f64(cpu * 0.1),
            max_rss_kib: 1000,
            voluntary_switches: 3,
            involuntary_switches: 1,
            run_queue_wait: Some(Duration::from_millis(1)),
            exit_code: Some(0),
            signal: None,
        }
    }

    fn scan(walls: &[(f64, f64)], machine: Machine) -> Scan {
        Scan {
            mode: Mode::Parameter,
            parameter: "n".into(),
            template: "prog -j{n}".into(),
            points: walls
                .iter()
                .map(|&(n, wall)| Point {
                    label: format!("{n}"),
                    n: Some(n),
                    copies: 1,
                    command: format!("prog -j{n}"),
                    parameter: None,
                    runs: vec![run(wall, 1.0), run(wall * 1.01, 1.0), run(wall * 0.99, 1.0)],
                })
                .collect(),
            machine,
            partial: false,
            run_queue_unavailable: None,
            warmup: 0,
        }
    }

    #[test]
    fn no_speedup_against_an_unmeasured_first_value() {
        // Interrupted before n = 1 was measured: n = 2 must not read "speedup 1.00×".
        let mut s = scan(
            &[(1.0, 1.0), (2.0, 0.5), (4.0, 0.3)],
            Machine::example(4, 2),
        );
        s.points[0].runs.clear();
        s.partial = true;
        let a = analyse(&s);
        assert!(a.stats[0].is_none());
        for st in a.stats.iter().flatten() {
            assert_eq!(st.speedup, None);
            assert_eq!(st.efficiency, None);
            assert_eq!(st.karp_flatt, None);
        }
        let note = a
            .notes
            .iter()
            .find(|n| n.contains("Fastest"))
            .expect("a verdict");
        assert!(note.contains("of the values measured at n = 4"), "{note}");
    }

    #[test]
    fn the_fastest_value_is_judged_by_the_one_rule() {
        // 3 runs each within ±1 %: 0.5 s against 0.3 s separate, 0.30 against 0.301 do not.
        let a = analyse(&scan(
            &[(1.0, 1.0), (2.0, 0.5), (4.0, 0.3)],
            Machine::example(4, 2),
        ));
        let note = a
            .notes
            .iter()
            .find(|n| n.contains("Fastest"))
            .expect("a verdict");
        assert!(
            note.contains("every other value is slower by the test"),
            "{note}"
        );
        let a = analyse(&scan(
            &[(1.0, 1.0), (2.0, 0.301), (4.0, 0.3)],
            Machine::example(4, 2),
        ));
        let note = a
            .notes
            .iter()
            .find(|n| n.contains("fastest median"))
            .expect("a plateau");
        assert!(note.contains("cannot tell it from n = 2"), "{note}");
    }

    #[test]
    fn speedup_efficiency_and_model_of_amdahl_data() {
        let walls: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&n| (n, 0.1 + 0.9 / n))
            .collect();
        let machine = Machine::example(4, 2);
        let a = analyse(&scan(&walls, machine));
        let s4 = a.stats[2].as_ref().unwrap();
        assert!((s4.speedup.unwrap() - 1.0 / 0.325).abs() < 1e-9);
        assert!((s4.karp_flatt.unwrap() - 0.1).abs() < 1e-9);
        let model = a.model.unwrap();
        let fit = model.usl.unwrap();
        assert!((fit.sigma - 0.1).abs() < 0.01, "{fit:?}");
        assert!(
            model.summary[0].contains("Contention"),
            "{:?}",
            model.summary
        );
        assert!(
            a.notes.iter().any(|n| n.contains("2 physical cores")),
            "{:?}",
            a.notes
        );
        assert!(
            a.notes.iter().any(|n| n.contains("4 CPUs")),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn waiting_command_gets_a_note() {
        let mut s = scan(&[(1.0, 2.0), (2.0, 1.0)], Machine::example(64, 64));
        for p in &mut s.points {
            for r in &mut p.runs {
                r.user = Duration::from_millis(10);
                r.system = Duration::ZERO;
            }
        }
        let a = analyse(&s);
        assert!(a.notes.iter().any(|n| n.contains("waits")), "{:?}", a.notes);
    }

    #[test]
    fn labels_that_are_not_numbers_have_no_model() {
        let mut s = scan(&[(1.0, 1.0), (2.0, 0.6)], Machine::example(64, 64));
        s.points[1].n = None;
        let a = analyse(&s);
        assert!(a.model.is_none());
        assert!(a.stats[1].as_ref().unwrap().efficiency.is_none());
    }

    #[test]
    fn explain_names_the_peak_inside_the_range() {
        let fit = usl::fit_usl(
            &[1.0, 2.0, 4.0, 8.0, 16.0]
                .iter()
                .map(|&n| (n, usl::usl(10.0, 0.02, 0.01, n)))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let wide = Range {
            min: 1.0,
            max: 16.0,
            cpus: None,
        };
        let text = explain(&fit, wide, "n", "runs/s").join(" ");
        assert!(text.contains("peaks near n* = 9.9"), "{text}");
        let falling = Fit {
            sigma: 1.0,
            kappa: 0.1,
            ..fit.clone()
        };
        let short = Range {
            min: 1.0,
            max: 4.0,
            cpus: None,
        };
        let text = explain(&falling, short, "n", "runs/s").join(" ");
        assert!(text.contains("highest at the smallest level"), "{text}");
        assert!(!text.contains("NaN"), "{text}");
        let text = explain(&fit, wide, "n", "runs/s").join(" ");
        assert!(text.contains("Coherency"), "{text}");
        assert!(text.contains("peaks near n* = 9.9"), "{text}");
    }

    #[test]
    fn explain_names_the_cpu_count_and_never_calls_flat_rising() {
        // Copies that share nothing on 2 CPUs: linear to 2, flat beyond.
        let points: Vec<(f64, f64)> = [1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&n: &f64| (n, n.min(2.0)))
            .collect();
        let fit = usl::fit_usl(&points).unwrap();
        let range = Range {
            min: 1.0,
            max: 4.0,
            cpus: Some(2.0),
        };
        let text = explain(&fit, range, "K", "copies/s").join(" ");
        assert!(text.contains("passes the 2 CPUs"), "{text}");
        assert!(!text.contains("dominates"), "{text}");
        // σ = 1: a flat fit.
        let flat = Fit {
            sigma: 1.0,
            kappa: 0.0,
            ..fit.clone()
        };
        let text = explain(
            &flat,
            Range {
                cpus: None,
                ..range
            },
            "K",
            "copies/s",
        )
        .join(" ");
        assert!(
            !text.contains("keeps rising") && !text.contains("rises"),
            "{text}"
        );
        assert!(text.contains("flat"), "{text}");
    }
}
