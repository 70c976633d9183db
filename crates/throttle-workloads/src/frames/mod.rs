//! Seeds 002 and 003: a game loop that transforms every mesh each frame.
//!
//! A [`Scene`] holds meshes of vertices; each frame applies every mesh's 4×4
//! transform to each of its vertices, as one parallel loop over the meshes.
//! The loop is run by a [`FrameScheduler`]; this module has the schedulers
//! the seeds compare:
//!
//! | scheduler | seed | how a frame is dispatched |
//! |---|---|---|
//! | [`Serial`] | both | the calling thread does every mesh |
//! | [`ThreadPerFrame`] | 003 | `threads − 1` threads created per frame (scoped) |
//! | [`MutexPool`] | 003 (Monitor) | persistent helpers woken by `Mutex` + `Condvar` |
//! | [`EventPool`] | 003 (ManualResetEvent) | persistent helpers woken by an atomic epoch + `park` |
//! | [`LockedQueuePool`] | 002 (first version) | helpers pop chunks from a `Mutex<VecDeque>` |
//! | [`ThrottlePool`] | — | [`throttle::Pool::for_range`] |
//!
//! Every scheduler counts the calling thread in its `threads`: with `n`
//! threads the caller runs a share of the work and `n − 1` helpers exist.
//! Each mesh is transformed by exactly one thread per frame, so every
//! scheduler produces bit-for-bit the same [`Scene::checksum`].
//!
//! # Examples
//!
//! ```
//! use throttle_workloads::frames::{run_frames, EventPool, Scene, Serial};
//!
//! let mut a = Scene::new(50, 20);
//! let mut b = Scene::new(50, 20);
//! run_frames(&mut a, &mut Serial::new(), 10);
//! run_frames(&mut b, &mut EventPool::new(2)?, 10);
//! assert_eq!(a.checksum(), b.checksum());
//! # Ok::<(), throttle_workloads::Error>(())
//! ```

mod event_pool;
mod job;
mod locked_queue;
mod mutex_pool;
mod scene;
mod serial;
mod spawn;
mod throttle_pool;
mod trace;

pub use event_pool::EventPool;
pub use locked_queue::LockedQueuePool;
pub use mutex_pool::MutexPool;
pub use scene::Scene;
pub use serial::Serial;
pub use spawn::ThreadPerFrame;
pub use throttle_pool::ThrottlePool;

/// Something that runs one parallel loop per frame.
pub trait FrameScheduler: Send {
    /// A short name for tables (for example `"mutex_pool"`).
    fn name(&self) -> &'static str;

    /// The number of threads that run work, the calling thread included.
    fn threads(&self) -> usize;

    /// Calls `f(i)` exactly once for every `i` in `0..n` and returns when all
    /// calls have finished. A panic in `f` reaches the caller after every
    /// thread has stopped using `f`.
    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync));

    /// Starts recording a timeline of what every thread does (see [`throttle::trace`]).
    /// Returns false if this scheduler cannot record one (the default).
    fn start_trace(&mut self) -> bool {
        false
    }

    /// Stops the recording started by [`FrameScheduler::start_trace`] and returns it.
    fn stop_trace(&mut self) -> Option<throttle::trace::Trace> {
        None
    }
}

/// Runs `frames` frames of `scene` on `sched`: each frame is one
/// [`FrameScheduler::for_each`] over the meshes.
///
/// # Examples
///
/// ```
/// use throttle_workloads::frames::{run_frames, Scene, Serial};
///
/// let mut scene = Scene::new(4, 8);
/// let before = scene.checksum();
/// run_frames(&mut scene, &mut Serial::new(), 3);
/// assert_ne!(scene.checksum(), before);
/// ```
pub fn run_frames(scene: &mut Scene, sched: &mut dyn FrameScheduler, frames: usize) {
    let scene: &Scene = scene;
    let meshes = scene.meshes();
    for _ in 0..frames {
        sched.for_each(meshes, &|i| scene.transform_mesh(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(meshes: usize, vertices: usize, frames: usize) -> f64 {
        let mut scene = Scene::new(meshes, vertices);
        run_frames(&mut scene, &mut Serial::new(), frames);
        scene.checksum()
    }

    fn check(sched: &mut dyn FrameScheduler) {
        // Mesh counts below, equal to and above the thread count, and zero.
        for meshes in [0, 1, 2, 3, 17, 100] {
            let mut scene = Scene::new(meshes, 16);
            run_frames(&mut scene, sched, 7);
            assert_eq!(
                scene.checksum(),
                reference(meshes, 16, 7),
                "{} with {meshes} meshes",
                sched.name()
            );
        }
    }

    fn all(threads: usize) -> Vec<Box<dyn FrameScheduler>> {
        vec![
            Box::new(Serial::new()),
            Box::new(ThreadPerFrame::new(threads)),
            Box::new(MutexPool::new(threads).expect("mutex pool")),
            Box::new(EventPool::new(threads).expect("event pool")),
            Box::new(LockedQueuePool::new(threads).expect("locked queue pool")),
            Box::new(ThrottlePool::new(threads).expect("throttle pool")),
        ]
    }

    #[test]
    fn every_scheduler_matches_serial() {
        for threads in [1, 2, 3, 5] {
            for mut sched in all(threads) {
                check(sched.as_mut());
            }
        }
    }

    #[test]
    fn threads_count_the_caller() {
        for sched in all(3) {
            let expected = if sched.name() == "serial" { 1 } else { 3 };
            assert_eq!(sched.threads(), expected, "{}", sched.name());
        }
    }

    #[test]
    fn zero_threads_is_an_error() {
        assert!(MutexPool::new(0).is_err());
        assert!(EventPool::new(0).is_err());
        assert!(LockedQueuePool::new(0).is_err());
    }

    #[test]
    fn every_index_runs_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        for mut sched in all(3) {
            let counts: Vec<AtomicUsize> = (0..257).map(|_| AtomicUsize::new(0)).collect();
            for _ in 0..5 {
                sched.for_each(counts.len(), &|i| {
                    counts[i].fetch_add(1, Ordering::Relaxed);
                });
            }
            assert!(
                counts.iter().all(|c| c.load(Ordering::Relaxed) == 5),
                "{}",
                sched.name()
            );
        }
    }

    #[test]
    fn panics_reach_the_caller_and_the_pool_survives() {
        use std::panic::{catch_unwind, AssertUnwindSafe};
        for mut sched in all(3) {
            let result = catch_unwind(AssertUnwindSafe(|| {
                sched.for_each(64, &|i| assert_ne!(i, 40, "boom"));
            }));
            assert!(result.is_err(), "{} swallowed a panic", sched.name());
            check(sched.as_mut());
        }
    }
}
