//! `throttle scan --self-overhead [--quick]`: what one measured run costs the profiler, against
//! hyperfine, on `true` (a command that does nothing, so all that is left is the tool).
//!
//! Both tools run as child processes of this one, in alternating order, for several rounds:
//! `throttle scan --procs 1 --runs N --warmup 0 -- true` and
//! `hyperfine -N --runs N --warmup 0 --style none --export-json F true`. Two figures per tool:
//!
//! - **reported mean**: the mean wall time of `true` that the tool itself reports (from its
//!   JSON). Whatever the tool adds between spawning and reaping inflates this number; lower
//!   means a cleaner measurement.
//! - **tool wall / run**: the whole tool process's wall time divided by N (start-up amortised):
//!   the real cost of one run, bookkeeping included.
//!
//! Medians over the rounds, min–max beside them, and the ratio throttle / hyperfine.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;
use throttle_probe::child;

use super::analysis::sig3;
use super::plan::find_program;
use crate::view::units::secs;
use throttle_probe::Summary;

struct Sample {
    reported_mean: f64,
    wall_per_run: f64,
}

fn read_mean(path: &Path) -> anyhow::Result<f64> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    v["results"][0]["mean"]
        .as_f64()
        .with_context(|| format!("{} has no results[0].mean", path.display()))
}

fn measure(cmd: &mut Command, json: &Path, runs: usize, what: &str) -> anyhow::Result<Sample> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let usage = child::run(cmd).with_context(|| format!("running {what}"))?;
    if !usage.success() {
        anyhow::bail!(
            "{what} failed (exit code {:?}, signal {:?})",
            usage.exit_code,
            usage.signal
        );
    }
    Ok(Sample {
        reported_mean: read_mean(json)?,
        wall_per_run: usage.wall.as_secs_f64() / runs as f64,
    })
}

/// Runs the comparison and prints it.
pub fn run(quick: bool) -> anyhow::Result<()> {
    if find_program("hyperfine").is_none() {
        anyhow::bail!("--self-overhead compares with hyperfine, which is not on PATH: install it (Debian: apt-get install hyperfine)");
    }
    let true_path = find_program("true")
        .context("`true` is not on PATH")?
        .display()
        .to_string();
    let me = std::env::current_exe().context("locating this executable")?;
    let (rounds, runs) = if quick { (3, 200) } else { (7, 1000) };
    let dir = std::env::temp_dir().join(format!("throttle-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let ours_json = dir.join("throttle.json");
    let theirs_json = dir.join("hyperfine.json");
    let runs_s = runs.to_string();
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    eprintln!("self-overhead: {rounds} rounds × {runs} runs of `true` per tool, interleaved…");
    for round in 0..rounds {
        let mut ours_cmd = Command::new(&me);
        ours_cmd
            .args([
                "scan",
                "--procs",
                "1",
                "--runs",
                &runs_s,
                "--warmup",
                "0",
                "--export-json",
            ])
            .arg(&ours_json)
            .args(["--", &true_path]);
        let mut theirs_cmd = Command::new("hyperfine");
        theirs_cmd
            .args([
                "-N",
                "--runs",
                &runs_s,
                "--warmup",
                "0",
                "--style",
                "none",
                "--export-json",
            ])
            .arg(&theirs_json)
            .arg(&true_path);
        // Alternate who goes first, so neither always runs on a warmer machine.
        if round % 2 == 0 {
            ours.push(measure(&mut ours_cmd, &ours_json, runs, "throttle scan")?);
            theirs.push(measure(&mut theirs_cmd, &theirs_json, runs, "hyperfine")?);
        } else {
            theirs.push(measure(&mut theirs_cmd, &theirs_json, runs, "hyperfine")?);
            ours.push(measure(&mut ours_cmd, &ours_json, runs, "throttle scan")?);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);

    let dist = |s: &[Sample], f: fn(&Sample) -> f64| {
        Summary::of(&s.iter().map(f).collect::<Vec<_>>()).context("no samples")
    };
    let cell = |d: &Summary| format!("{} ({} – {})", secs(d.median), secs(d.min), secs(d.max));
    let o_rep = dist(&ours, |s| s.reported_mean)?;
    let t_rep = dist(&theirs, |s| s.reported_mean)?;
    let o_wall = dist(&ours, |s| s.wall_per_run)?;
    let t_wall = dist(&theirs, |s| s.wall_per_run)?;
    println!("profiler overhead on `true`: {rounds} rounds × {runs} runs per tool, interleaved; medians over rounds (min – max)");
    println!(
        "{:<16} {:>34} {:>34}",
        "", "reported mean of `true`", "tool wall time per run"
    );
    println!(
        "{:<16} {:>34} {:>34}",
        "throttle scan",
        cell(&o_rep),
        cell(&o_wall)
    );
    println!(
        "{:<16} {:>34} {:>34}",
        "hyperfine -N",
        cell(&t_rep),
        cell(&t_wall)
    );
    let r_rep = o_rep.median / t_rep.median;
    let r_wall = o_wall.median / t_wall.median;
    println!(
        "{:<16} {:>34} {:>34}",
        "ratio (≤ 1 wins)",
        sig3(r_rep),
        sig3(r_wall)
    );
    let verdict = if r_wall <= 1.0 {
        "at or below"
    } else {
        "above"
    };
    println!(
        "throttle scan's cost per run is {verdict} hyperfine's ({}×), while it also records switches, run-queue wait and peak RSS per run.",
        sig3(r_wall)
    );
    Ok(())
}
