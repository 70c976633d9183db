//! What a sweep's numbers say: the peak and the plateau around it, what oversubscription
//! costs, the recommendation and the warnings, every verdict by the one rule of
//! [`crate::verdict`].

use crate::experiments::sum;
use crate::results::{Machine, Row, Section};
use crate::verdict::{self, Comparison};
use crate::view::units;

/// The wall-time comparison of `a` against `b` by the one rule of [`crate::verdict`].
fn compare(a: &Row, b: &Row) -> Comparison {
    verdict::compare(&a.wall_runs, &b.wall_runs)
}

/// `1, 2, 4 and 0 (no limit)`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Two to five plain sentences derived from the numbers. `planned` are the levels the sweep
/// meant to measure; when an interrupt or the budget left some unmeasured, every claim says
/// that it holds over the levels measured only.
pub(super) fn findings(
    section: &Section,
    machine: &Machine,
    tasks: usize,
    planned: &[usize],
    rec: Option<&Recommendation>,
) -> Vec<String> {
    let mut out = Vec::new();
    let topo = &machine.topology;
    let cpus = machine.usable_cpus();
    let Some(best) = section.rows.iter().find(|r| r.best) else {
        return out;
    };
    let label = |level: usize| sum::level_label(level);
    let unmeasured: Vec<String> = planned
        .iter()
        .filter(|&&l| section.row(&best.series, l as u64).is_none())
        .map(|&l| label(l))
        .collect();
    let scope = if unmeasured.is_empty() {
        String::new()
    } else {
        format!(
            " of the levels measured ({} not measured)",
            and_list(&unmeasured)
        )
    };
    // No speedup of level 1 over itself.
    let speed = best
        .speedup
        .filter(|_| best.level != 1)
        .map_or(String::new(), |s| {
            format!(", {s:.2}× faster than one at a time")
        });
    let tasks_word = |r: &Row| {
        if r.level == 1 {
            "concurrent task"
        } else {
            "concurrent tasks"
        }
    };
    // The peak, judged against every other level of its series by the one rule: a level the
    // test cannot tell from the fastest shares the peak.
    let ties: Vec<(&Row, Comparison)> = section
        .rows
        .iter()
        .filter(|r| r.series == best.series && r.level != best.level)
        .map(|r| (r, compare(r, best)))
        .filter(|(_, c)| !c.is_real())
        .collect();
    let machine_words = format!(
        "on a machine with {} usable CPUs ({} physical cores, {} logical)",
        cpus, topo.physical_cores, topo.logical_cpus
    );
    if ties.is_empty() {
        out.push(format!(
            "It peaks at {} {}{scope} ({} mode: {}{}) {machine_words}; every other level of \
             that mode is slower by the test ({}).",
            best.label,
            tasks_word(best),
            best.series,
            units::secs(best.wall.median),
            speed,
            verdict::RULE_SHORT
        ));
    } else {
        let names: Vec<String> = ties.iter().map(|(r, _)| r.label.clone()).collect();
        out.push(format!(
            "The fastest median{scope} is at {} {} ({} mode: {}{}) {machine_words}, but the \
             test cannot tell it from {} ({}), so read the peak as a plateau, not a single best \
             level.",
            best.label,
            tasks_word(best),
            best.series,
            units::secs(best.wall.median),
            speed,
            and_list(&names),
            verdict::reasons(&ties.iter().map(|(_, c)| *c).collect::<Vec<_>>())
        ));
    }

    // What oversubscription costs, against the recommended level (the same baseline and rule
    // as the report's summary).
    if let Some(rec) = rec {
        let costs: Vec<String> = series_names(section)
            .iter()
            .filter_map(|mode| oversubscription(section, mode, rec.level, tasks))
            .collect();
        if !costs.is_empty() {
            out.push(format!("Oversubscription: {}.", costs.join("; ")));
        }
    }

    // The seed's claim: slower from M to 2M, flat beyond.
    let m = cpus as u64;
    for mode in series_names(section) {
        if let (Some(at_m), Some(at_2m)) = (section.row(&mode, m), section.row(&mode, 2 * m)) {
            let c = compare(at_2m, at_m);
            out.push(format!(
                "From {m} to {} concurrent tasks ({mode} mode) the wall time changes by {:+.1} %, \
                 {} (the seed predicted a loss between M and 2M cores).",
                2 * m,
                c.percent(),
                c.clause()
            ));
            break;
        }
    }

    // Too few repetitions for any verdict: say how to get one.
    let reps = section.rows.iter().map(|r| r.wall.count).min().unwrap_or(0);
    if reps < verdict::MIN_REPS {
        out.push(format!(
            "Only {} of every level fit the time given, and the test needs at least {} to call \
             any difference real: give it more time (`throttle report --budget`, `throttle sweep \
             --seconds`) or more repetitions (`throttle sweep --reps`).",
            units::plural(reps as u64, "repetition"),
            verdict::MIN_REPS
        ));
    }

    // The semaphore against the pool, level by level.
    let mut ratios = Vec::new();
    let mut real = 0;
    for row in section.rows.iter().filter(|r| r.series == "threads") {
        if let Some(p) = section.row("pool", row.level) {
            ratios.push(row.wall.median / p.wall.median);
            real += usize::from(compare(row, p).is_real());
        }
    }
    if let Some(summary) = throttle_probe::Summary::of(&ratios) {
        let median = (summary.median - 1.0) * 100.0;
        let faster = if median >= 0.0 { "slower" } else { "faster" };
        out.push(format!(
            "The semaphore with fresh threads is {:.1} % {faster} than the pool's limit (median over \
             {} levels; range {:+.1} % to {:+.1} %); the test calls the difference real at {real} \
             of the {} levels.",
            median.abs(),
            summary.count,
            (summary.min - 1.0) * 100.0,
            (summary.max - 1.0) * 100.0,
            summary.count
        ));
    }
    out
}

/// What letting every task contend costs in `mode`, against `baseline` (the recommended
/// level): one clause with both times, the difference and the test's verdict. `None` when
/// either row is missing or the baseline is itself "no limit". `throttle report`'s summary
/// prints the same clause, so the page cannot contradict itself.
pub fn oversubscription(
    section: &Section,
    mode: &str,
    baseline: u64,
    tasks: usize,
) -> Option<String> {
    if baseline == 0 {
        return None;
    }
    let chosen = section.row(mode, baseline)?;
    let free = section.row(mode, 0)?;
    let c = compare(free, chosen);
    Some(format!(
        "in {mode} mode letting all {tasks} tasks contend (no limit) took {} against {} at the \
         recommended {}, {:+.1} %: {}",
        units::secs(free.wall.median),
        units::secs(chosen.wall.median),
        chosen.label,
        c.percent(),
        c.clause()
    ))
}

/// The concurrency a sweep recommends and the sentence that says so.
#[derive(Debug, Clone)]
pub struct Recommendation {
    /// The level to use.
    pub level: u64,
    /// The series it was measured in.
    pub series: String,
    /// One plain sentence with the numbers behind it.
    pub sentence: String,
}

/// The level to run at: the usable CPU count when the test cannot tell it from the fastest
/// row of the same series, else the smallest level the test cannot tell from the fastest (more
/// concurrency than that buys nothing measurable), else the fastest. So a level away from the
/// CPU count must win by the test ([`crate::verdict`]): a noisy baseline or a single lucky
/// run cannot talk the recommendation into 8 or 32 threads on 2 CPUs.
pub fn recommend(section: &Section, cpus: usize) -> Option<Recommendation> {
    let best = section.rows.iter().find(|r| r.best)?;
    let mut plateau: Vec<(&Row, Comparison)> = section
        .rows
        .iter()
        .filter(|r| r.series == best.series && r.level != 0)
        .map(|r| (r, compare(r, best)))
        .filter(|(_, c)| !c.is_real())
        .collect();
    plateau.sort_by_key(|(r, _)| r.level);
    let (pick, c) = plateau
        .iter()
        .find(|(r, _)| r.level == cpus as u64)
        .or_else(|| plateau.first())
        .copied()
        .unwrap_or((best, compare(best, best)));
    let why = if pick.level == best.level {
        "the fastest level measured".to_string()
    } else {
        format!(
            "the fastest median was {} at {}, and the test cannot tell the two apart ({})",
            units::secs(best.wall.median),
            best.label,
            c.reason()
        )
    };
    let cores = if pick.level == cpus as u64 {
        format!(" = the {cpus} usable CPUs")
    } else {
        format!(" (this machine has {cpus} usable CPUs)")
    };
    // Level 0 is "no limit": say what it means rather than "run 0 tasks at once".
    let how = if pick.level == 0 {
        "run with no limit (every task at once)".to_string()
    } else {
        format!("run {} tasks at once", pick.label)
    };
    Some(Recommendation {
        level: pick.level,
        series: pick.series.clone(),
        sentence: format!(
            "Recommendation: {how}{cores}; in {} mode that took {}, {why}.",
            pick.series,
            units::secs(pick.wall.median)
        ),
    })
}

/// Why the sweep's times cannot overrule the CPU count, if they cannot: other programs kept
/// CPUs busy during it, or a speedup above what the CPUs can give shows that its one-at-a-time
/// baseline was slowed down.
fn disturbed_because(section: &Section, cpus: usize, outside: Option<f64>) -> Option<String> {
    if let Some(x) = outside.filter(|&x| crate::load::is_disturbing(x, cpus)) {
        return Some(format!("other programs kept {x:.2} CPUs busy during it"));
    }
    let over = section
        .rows
        .iter()
        .filter(|r| r.efficiency.is_some_and(|e| e > 1.05))
        .max_by(|a, b| {
            a.speedup
                .unwrap_or(0.0)
                .total_cmp(&b.speedup.unwrap_or(0.0))
        })?;
    Some(format!(
        "its {:.2}× speedup at {} ({} mode) is more than {cpus} CPUs can give: its \
         one-at-a-time baseline was slowed down",
        over.speedup.unwrap_or(0.0),
        over.label,
        over.series
    ))
}

/// [`recommend`], unless other programs disturbed the sweep (see [`crate::load`]): then a
/// measured best away from the CPU count cannot overrule it, and the sentence says both.
pub fn recommend_under(
    section: &Section,
    cpus: usize,
    outside: Option<f64>,
) -> Option<Recommendation> {
    let rec = recommend(section, cpus)?;
    let disturbed = disturbed_because(section, cpus, outside);
    let best = section.rows.iter().find(|r| r.best);
    match (disturbed, section.row(&rec.series, cpus as u64), best) {
        (Some(why), Some(at_cpus), Some(best)) if rec.level != cpus as u64 => {
            Some(Recommendation {
                level: cpus as u64,
                series: rec.series.clone(),
                sentence: format!(
                    "Recommendation: run {cpus} tasks at once = the {cpus} usable CPUs. The sweep \
                     was fastest at {} ({} mode: {}; {} at {cpus}), but {why}, so that \
                     measurement cannot overrule the CPU count.",
                    best.label,
                    best.series,
                    units::secs(best.wall.median),
                    units::secs(at_cpus.wall.median),
                ),
            })
        }
        _ => Some(rec),
    }
}

/// Warnings when the numbers cannot be taken at face value: other programs kept CPUs busy, or
/// an efficiency above 100 % shows that the level-1 baseline was slowed down.
pub(super) fn disturbance(section: &Section, outside: Option<f64>, cpus: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(x) = outside.filter(|&x| crate::load::is_disturbing(x, cpus)) {
        out.push(format!(
            "Warning: other programs kept {x:.2} of the {cpus} CPUs busy on average during the \
             sweep (/proc/stat minus this process): the times include their load, so rerun on an \
             idle machine before trusting small differences."
        ));
    }
    let over = section
        .rows
        .iter()
        .filter(|r| r.efficiency.is_some_and(|e| e > 1.05))
        .max_by(|a, b| {
            a.efficiency
                .unwrap_or(0.0)
                .total_cmp(&b.efficiency.unwrap_or(0.0))
        });
    if let Some(row) = over {
        out.push(format!(
            "Warning: {} mode at {} shows an efficiency of {:.0} %, more than the {} CPUs can give: \
             its level-1 baseline ran slower than the work needs (disturbed by other load or a \
             slow start), so the speedups of that mode are overstated.",
            row.series,
            row.label,
            row.efficiency.unwrap_or(0.0) * 100.0,
            cpus
        ));
    }
    out
}

fn series_names(section: &Section) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &section.rows {
        if !names.contains(&r.series) {
            names.push(r.series.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Sample;
    use std::time::Duration;

    /// A pool-mode sweep of 64 tasks on 2 CPUs, one repetition per level (wall times in ms).
    fn section(walls_ms: &[(u64, u64)]) -> Section {
        let runs: Vec<(u64, Vec<u64>)> = walls_ms.iter().map(|&(l, ms)| (l, vec![ms])).collect();
        section_of_runs(&runs)
    }

    /// As [`section`], with every repetition's wall time per level.
    fn section_of_runs(runs_ms: &[(u64, Vec<u64>)]) -> Section {
        let mut s = Section::new("sweep", "t", "mode", "concurrent tasks", true);
        for (level, runs) in runs_ms {
            let samples: Vec<Sample> = runs
                .iter()
                .map(|&ms| Sample {
                    wall: Duration::from_millis(ms),
                    ..Sample::default()
                })
                .collect();
            // As the sweep does: "no limit" sits at the task count.
            let x = if *level == 0 { 64.0 } else { *level as f64 };
            let row =
                Row::from_samples("pool", *level, &level.to_string(), x, &samples).expect("row");
            s.rows.push(row);
        }
        s.fill_speedup(1, |l| (l as f64).clamp(1.0, 2.0));
        s.mark_best();
        s
    }

    /// The seed's levels with one repetition each on 2 CPUs: level 1 at 2 s and every level
    /// that keeps both CPUs busy near 1 s, `at_cpus` at 2 and `at_8` at 8.
    fn one_rep_sweep(at_cpus: u64, at_8: u64) -> Section {
        section(&[
            (1, 2000),
            (2, at_cpus),
            (3, 1014),
            (4, 1016),
            (5, 1013),
            (6, 1012),
            (8, at_8),
            (16, 1011),
            (32, 1013),
            (64, 1020),
            (0, 1018),
        ])
    }

    /// Three repetitions per level: `(level, [ms, ms, ms])`.
    fn three_reps(rows: &[(u64, [u64; 3])]) -> Section {
        let runs: Vec<(u64, Vec<u64>)> = rows.iter().map(|(l, r)| (*l, r.to_vec())).collect();
        section_of_runs(&runs)
    }

    #[test]
    fn one_repetition_of_noise_does_not_recommend_oversubscription() {
        // As in `report --quick` on 2 CPUs with one repetition: 8 tasks at once happened to be
        // 1.5 % faster than 2. One run cannot tell 1.5 % from noise, so the CPU count stands.
        let s = one_rep_sweep(1015, 1000);
        let rec = recommend(&s, 2).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("= the 2 usable CPUs")
                && rec.sentence.contains("the test cannot tell the two apart")
                && rec
                    .sentence
                    .contains("only 1 and 1 run; the test needs at least 3"),
            "{}",
            rec.sentence
        );
        assert_eq!(recommend_under(&s, 2, Some(0.0)).expect("rec").level, 2);
        // The plateau finding gives the same reason.
        let plateau = findings(&s, &Machine::example(2, 2), 64, &[], Some(&rec))
            .into_iter()
            .find(|f| f.contains("plateau"))
            .expect("a plateau finding");
        assert!(plateau.contains("1 and 1 run"), "{plateau}");
        let f = findings(&s, &Machine::example(2, 2), 64, &[], Some(&rec));
        assert!(
            f.iter()
                .any(|x| x.starts_with("Only 1 repetition of every level fit")),
            "{f:?}"
        );

        // Even 20 % is no verdict from one run each: the rule needs 3 of each.
        assert_eq!(
            recommend(&one_rep_sweep(1200, 1000), 2).expect("rec").level,
            2
        );
        // With 3 runs each, a CPU count that is slower than every other busy level by the test
        // is overruled by the smallest level the test cannot tell from the fastest.
        let s = three_reps(&[
            (1, [2000, 2010, 2020]),
            (2, [1200, 1210, 1220]),
            (3, [1001, 1012, 1003]),
            (8, [1000, 1010, 1004]),
        ]);
        let rec = recommend(&s, 2).expect("rec");
        assert_eq!(rec.level, 3, "{}", rec.sentence);
    }

    #[test]
    fn one_outlier_does_not_make_a_plateau_of_a_1_9x_difference() {
        // A measured `sweep --quick --levels 1,2,4,0`: level 1 took 199.5 ms, level 2 105 ms
        // with one 193 ms outlier. A tolerance of level 2's own spread (92 %) would call level
        // 1 "within 92.0 %" of the peak.
        let s = three_reps(&[
            (1, [198, 199, 201]),
            (2, [104, 105, 193]),
            (4, [106, 108, 110]),
            (0, [107, 109, 111]),
        ]);
        let f = findings(&s, &Machine::example(2, 2), 64, &[1, 2, 4, 0], None);
        let peak = &f[0];
        assert!(peak.contains("fastest median is at 2"), "{peak}");
        assert!(
            peak.contains("cannot tell it from 4 and 0") && !peak.contains(" 1,"),
            "{peak}"
        );
        assert!(!f.iter().any(|x| x.contains("92")), "{f:?}");
        // Level 1 against level 2 is a real difference by the rule.
        let (one, two) = (s.row("pool", 1).unwrap(), s.row("pool", 2).unwrap());
        assert_eq!(compare(one, two).verdict, verdict::Verdict::Slower);
        // A clean 1.9× difference at every level: a single peak, said so.
        let s = three_reps(&[
            (1, [198, 199, 201]),
            (2, [104, 105, 106]),
            (4, [150, 151, 152]),
        ]);
        let f = findings(&s, &Machine::example(2, 2), 64, &[1, 2, 4], None);
        assert!(f[0].starts_with("It peaks at 2"), "{}", f[0]);
        assert!(f[0].contains("every other level of that mode is slower by the test"));
    }

    #[test]
    fn an_interrupted_sweep_claims_its_peak_over_the_levels_measured_only() {
        let s = three_reps(&[(1, [198, 199, 201]), (2, [104, 105, 106])]);
        let f = findings(&s, &Machine::example(2, 2), 64, &[1, 2, 4, 0], None);
        assert!(
            f[0].contains("It peaks at 2 concurrent tasks of the levels measured (4 and 0 (no limit) not measured)"),
            "{}",
            f[0]
        );
    }

    #[test]
    fn the_summary_and_the_section_compare_no_limit_with_the_same_baseline() {
        // The recommended level (2), not each mode's fastest median, is the baseline of both.
        let s = three_reps(&[
            (1, [2000, 2010, 2020]),
            (2, [1000, 1010, 1005]),
            (4, [990, 1500, 1600]),
            (0, [1080, 1090, 1095]),
        ]);
        let rec = recommend(&s, 2).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        let clause = oversubscription(&s, "pool", rec.level, 64).expect("clause");
        assert!(
            clause.contains("at the recommended 2") && clause.contains("a real difference"),
            "{clause}"
        );
        let f = findings(&s, &Machine::example(2, 2), 64, &[1, 2, 4, 0], Some(&rec));
        assert!(f.iter().any(|x| x.contains(&clause)), "{f:?}");
        assert_eq!(oversubscription(&s, "pool", 0, 64), None);
    }

    #[test]
    fn a_measured_spread_still_lets_a_clear_winner_away_from_the_cpus_win() {
        // Three repetitions each with a 1 % spread: level 8 beats 2 by 3 %, beyond the spread.
        let runs: Vec<(u64, Vec<u64>)> = [(1, 2000), (2, 1030), (8, 1000)]
            .into_iter()
            .map(|(l, ms)| (l, vec![ms, ms + 5, ms + 10]))
            .collect();
        let rec = recommend(&section_of_runs(&runs), 2).expect("rec");
        assert_eq!(rec.level, 8, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("the fastest level measured"),
            "{}",
            rec.sentence
        );
    }

    #[test]
    fn a_disturbed_baseline_is_called_out_and_the_cpus_recommended() {
        // Level 1 ran slow (disturbed): 2 CPUs give 2.6× "speedup" at level 4.
        let s = section(&[(1, 2600), (2, 1010), (4, 1000), (32, 1005)]);
        let warnings = disturbance(&s, Some(0.05), 2);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("efficiency of 130 %"), "{warnings:?}");
        let rec = recommend(&s, 2).expect("a recommendation");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("= the 2 usable CPUs"),
            "{}",
            rec.sentence
        );
        // Outside load alone.
        let calm = section(&[(1, 2000), (2, 1000)]);
        assert!(disturbance(&calm, Some(1.5), 2)[0].contains("other programs kept 1.50"));
        assert!(disturbance(&calm, Some(0.05), 2).is_empty());
        // Under outside load a best level away from the CPU count does not win.
        let noisy = three_reps(&[
            (1, [2000, 2001, 2002]),
            (2, [1100, 1101, 1102]),
            (32, [1000, 1001, 1002]),
        ]);
        assert_eq!(recommend(&noisy, 2).expect("rec").level, 32);
        let rec = recommend_under(&noisy, 2, Some(1.3)).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("other programs kept 1.30"),
            "{}",
            rec.sentence
        );
        assert_eq!(
            recommend_under(&noisy, 2, Some(0.0)).expect("rec").level,
            32
        );
    }

    #[test]
    fn no_limit_fastest_on_a_slowed_baseline_still_recommends_the_cpus() {
        // As in a CI run under load: "no limit" (level 0) fastest, 3.8× over level 1 on 2 CPUs.
        let s = three_reps(&[
            (1, [780, 781, 782]),
            (2, [400, 401, 402]),
            (4, [390, 391, 392]),
            (0, [205, 206, 207]),
        ]);
        let rec = recommend(&s, 2).expect("rec");
        assert_eq!(rec.level, 0);
        assert!(
            rec.sentence.contains("run with no limit") && !rec.sentence.contains("run 0"),
            "{}",
            rec.sentence
        );
        // No outside load was seen, but the speedup itself shows the baseline was slowed.
        let rec = recommend_under(&s, 2, Some(0.0)).expect("rec");
        assert_eq!(rec.level, 2, "{}", rec.sentence);
        assert!(
            rec.sentence.contains("more than 2 CPUs can give"),
            "{}",
            rec.sentence
        );
    }
}
