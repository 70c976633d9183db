//! `frames`: the seeds' game loop — every frame one parallel loop over the
//! meshes, each mesh's vertices multiplied by its 4×4 transform.

use anyhow::{bail, Result};
use rayon::prelude::*;
use throttle_workloads::frames::{
    run_frames, FrameScheduler, MutexPool, Scene, Serial, ThreadPerFrame, ThrottlePool,
};

use super::tree_sum::serial_baseline;
use super::{peers, Settings};
use crate::harness::{run_interleaved, time, Case, Report};

/// Meshes × vertices per mesh, in the full run and under `--quick`.
pub(super) const MESHES: usize = 2_000;
pub(super) const VERTICES: usize = 200;
/// Frames of the full run.
const FRAMES: usize = 1_000;
/// Frames under `--quick`.
const QUICK_FRAMES: usize = 100;

/// rayon as a frame scheduler: `par_iter` over the meshes inside `install`.
struct RayonFrames {
    pool: rayon::ThreadPool,
}

impl FrameScheduler for RayonFrames {
    fn name(&self) -> &'static str {
        "rayon"
    }

    fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        self.pool.install(|| (0..n).into_par_iter().for_each(f));
    }
}

/// Runs the bench.
pub fn run(settings: &Settings) -> Result<Report> {
    let frames = if settings.quick { QUICK_FRAMES } else { FRAMES };
    let threads = settings.threads;
    let schedulers: Vec<Box<dyn FrameScheduler>> = vec![
        Box::new(Serial::new()),
        Box::new(ThreadPerFrame::new(threads)),
        Box::new(MutexPool::new(threads)?),
        Box::new(ThrottlePool::new(threads)?),
        Box::new(RayonFrames {
            pool: peers::rayon_pool(threads)?,
        }),
    ];
    // One scene per system: each goes through the same frames, so the
    // checksums must agree at the end.
    let mut runs: Vec<(Box<dyn FrameScheduler>, Scene)> = schedulers
        .into_iter()
        .map(|s| (s, Scene::new(MESHES, VERTICES)))
        .collect();
    let cases = runs
        .iter_mut()
        .map(|(sched, scene)| {
            let system = match sched.name() {
                "std_spawn" => "std_spawn",
                "mutex_pool" => "mutex_pool",
                "throttle" => "throttle",
                "rayon" => "rayon",
                _ => "serial",
            };
            let n = sched.threads();
            Case::new(system, n, move || {
                let (t, ()) = time(|| run_frames(scene, sched.as_mut(), frames));
                Ok(t)
            })
        })
        .collect();
    let series = run_interleaved(settings.reps, true, cases)?;
    let reference = runs[0].1.checksum();
    for (sched, scene) in &runs {
        if scene.checksum() != reference {
            bail!("{} produced a different scene than serial", sched.name());
        }
    }
    let what = format!(
        "{MESHES} meshes × {VERTICES} vertices, 4×4 transform per vertex, {frames} frames; wall time"
    );
    let mut report = Report::new("frames", what, serial_baseline(), series);
    let throttle = report.median_of("throttle", threads);
    let ideal = report.median_of("serial", 1).map(|s| s / threads as f64);
    let rayon = report.median_of("rayon", threads);
    report.ratio_target(
        format!("throttle ≤ 1.10×serial/{threads}"),
        throttle,
        ideal,
        1.10,
    );
    report.ratio_target("throttle ≤ 1.0×rayon", throttle, rayon, 1.0);
    Ok(report)
}
