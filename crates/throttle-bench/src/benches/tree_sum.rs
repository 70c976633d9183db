//! `tree_sum`: a perfect tree of boxed nodes summed with a join at every
//! node (chili's and spice's benchmark), no sequential cutoff.

use anyhow::Result;
use throttle_workloads::tree::{sum_serial, Node};

use super::floor::{sum_floor, Floor};
use super::{peers, Settings};
use crate::harness::{check, run_interleaved, time, Baseline, Case, Report};

/// Depth of the full run (2^23 − 1 nodes).
const DEPTH: u32 = 23;
/// Depth under `--quick`.
const QUICK_DEPTH: u32 = 18;

/// The tree summed with the free `throttle::join` (shared with `scaling`).
pub(super) fn sum_throttle(node: &Node) -> u64 {
    let (l, r) = throttle::join(
        || node.left.as_deref().map_or(0, sum_throttle),
        || node.right.as_deref().map_or(0, sum_throttle),
    );
    node.value + l + r
}

pub(super) fn sum_throttle_cx(cx: &throttle::Context, node: &Node) -> u64 {
    let (l, r) = cx.join(
        |cx| node.left.as_deref().map_or(0, |n| sum_throttle_cx(cx, n)),
        |cx| node.right.as_deref().map_or(0, |n| sum_throttle_cx(cx, n)),
    );
    node.value + l + r
}

/// The tree summed with `rayon::join` (shared with `scaling`).
pub(super) fn sum_rayon(node: &Node) -> u64 {
    let (l, r) = rayon::join(
        || node.left.as_deref().map_or(0, sum_rayon),
        || node.right.as_deref().map_or(0, sum_rayon),
    );
    node.value + l + r
}

pub(super) fn sum_chili(node: &Node, s: &mut chili::Scope<'_>) -> u64 {
    let (l, r) = s.join(
        |s| node.left.as_deref().map_or(0, |n| sum_chili(n, s)),
        |s| node.right.as_deref().map_or(0, |n| sum_chili(n, s)),
    );
    node.value + l + r
}

/// The throttle system on a given pool: `install` then recursive joins.
/// Shared with `stats_overhead`.
pub(super) fn throttle_case<'a>(
    pool: &'a throttle::Pool,
    tree: &'a Node,
    want: u64,
) -> impl FnMut() -> Result<f64> + 'a {
    move || {
        let (t, got) = time(|| pool.install(|| sum_throttle(tree)));
        check("throttle", got, want)?;
        Ok(t)
    }
}

/// Builds the tree for this run's size.
pub(super) fn build(settings: &Settings) -> (Node, u32) {
    let depth = if settings.quick { QUICK_DEPTH } else { DEPTH };
    (Node::tree(depth), depth)
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let (tree, depth) = build(settings);
    let want = Node::expected_sum(depth);
    let counts = settings.one_and_all();
    let throttles = counts
        .iter()
        .map(|&t| peers::throttle_pool(t))
        .collect::<Result<Vec<_>>>()?;
    let rayons = counts
        .iter()
        .map(|&t| peers::rayon_pool(t))
        .collect::<Result<Vec<_>>>()?;
    let chilis = counts
        .iter()
        .map(|&t| peers::chili_pool(t))
        .collect::<Result<Vec<_>>>()?;
    let tree = &tree;
    let floor = Floor::new();
    let mut cases = vec![Case::new("serial", 1, || {
        let (t, got) = time(|| sum_serial(tree));
        check("serial", got, want)?;
        Ok(t)
    })];
    let floor = &floor;
    cases.push(Case::new(FLOOR, 1, move || {
        let (t, got) = time(|| sum_floor(floor, tree));
        check(FLOOR, got, want)?;
        Ok(t)
    }));
    for (i, &threads) in counts.iter().enumerate() {
        cases.push(Case::new(
            "throttle",
            threads,
            throttle_case(&throttles[i], tree, want),
        ));
        let throttle = &throttles[i];
        cases.push(
            Case::new("throttle", threads, move || {
                let (t, got) = time(|| throttle.install_cx(|cx| sum_throttle_cx(cx, tree)));
                check("throttle cx", got, want)?;
                Ok(t)
            })
            .variant("cx"),
        );
        let rayon = &rayons[i];
        cases.push(Case::new("rayon", threads, move || {
            let (t, got) = time(|| rayon.install(|| sum_rayon(tree)));
            check("rayon", got, want)?;
            Ok(t)
        }));
        let chili = &chilis[i];
        cases.push(Case::new("chili", threads, move || {
            let (t, got) = time(|| sum_chili(tree, &mut chili.scope()));
            check("chili", got, want)?;
            Ok(t)
        }));
    }
    let series = run_interleaved(settings.reps, true, cases)?;
    let what =
        format!("sum of a boxed binary tree of depth {depth}, join at every node; wall time");
    let mut report = Report::new("tree_sum", what, serial_baseline(), series);
    fork_join_targets(&mut report, settings);
    Ok(report)
}

/// The serial system is every fork-join bench's ratio baseline.
pub(super) fn serial_baseline() -> Baseline {
    Baseline {
        system: "serial",
        threads: 1,
        variant: None,
    }
}

/// The targets for `tree_sum` and `fib`: at all threads throttle ≤
/// chili and ≤ 0.3 × rayon; at 1 thread throttle ≤ 1.15 × serial, checked for the
/// free `join` and for the explicit-context form (`cx`).
pub(super) fn fork_join_targets(report: &mut Report, settings: &Settings) {
    let n = settings.threads;
    let throttle_all = report.median_of("throttle", n);
    let chili_all = report.median_of("chili", n);
    let rayon_all = report.median_of("rayon", n);
    let throttle_one = report.median_of("throttle", 1);
    let serial = report.median_of("serial", 1);
    report.ratio_target(
        format!("throttle ≤ 1.0×chili ({n} threads)"),
        throttle_all,
        chili_all,
        1.0,
    );
    report.ratio_target(
        format!("throttle ≤ 0.3×rayon ({n} threads)"),
        throttle_all,
        rayon_all,
        0.3,
    );
    report.ratio_target(
        "throttle ≤ 1.15×serial (1 thread)",
        throttle_one,
        serial,
        1.15,
    );
    let cx_one = report
        .find_variant("throttle", 1, Some("cx"))
        .map(|s| s.median());
    report.ratio_target(
        "throttle cx.join ≤ 1.15×serial (1 thread)",
        cx_one,
        serial,
        1.15,
    );
    // What keeping every fork stealable costs at least (floor.rs), next to what chili, which
    // shares 1 join in 64 once 3 are queued, and throttle pay, all on one thread.
    let floor = report.median_of(FLOOR, 1);
    let chili_one = report.median_of("chili", 1);
    if let (Some(floor), Some(chili_one), Some(throttle_one)) = (floor, chili_one, throttle_one) {
        report.notes.push(format!(
            "1 thread: the publish-every-fork floor = {:.2} × chili, throttle = {:.2} × the floor (floor.rs: a fork that stays stealable costs at least the floor)",
            floor / chili_one,
            throttle_one / floor
        ));
    }
    // The same bound at n threads: the floor's one-thread time split over n threads with no
    // cost for stealing, waking or waiting. A target below it cannot be met by a scheduler
    // that keeps every fork stealable (as throttle's does: no fork is ever hidden) the
    // cheapest way known, the floor's.
    if let (Some(floor), Some(chili_all), Some(rayon_all)) = (floor, chili_all, rayon_all) {
        let bound = floor / n as f64;
        report.notes.push(format!(
            "{n} threads: the floor ÷ {n} = {} = {:.2} × chili, {:.2} × rayon: keeping every fork stealable the floor's way costs at least that at {n} threads (throttle = {})",
            crate::harness::seconds(bound),
            bound / chili_all,
            bound / rayon_all,
            throttle_all.map_or_else(|| "-".to_string(), |t| format!("{:.2} × the bound", t / bound)),
        ));
    }
}

/// The system name of the publish-every-fork floor (`floor.rs`).
pub(super) const FLOOR: &str = "publish-all floor";
