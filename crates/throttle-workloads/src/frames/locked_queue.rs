//! A shared lock-based task queue (seed 002's first scheduler).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::job::{keep_first, spawn_helpers, FrameJob, Panic};
use super::FrameScheduler;
use crate::Error;

/// How many chunks per thread a frame is cut into: enough that a slow thread
/// does not hold up the frame, few enough that the queue lock is taken
/// rarely relative to the work.
const CHUNKS_PER_THREAD: usize = 4;

/// `threads − 1` persistent helpers that pop chunks of the loop from one
/// `Mutex<VecDeque>` and sleep on a condition variable when it is empty. The
/// caller pushes a frame's chunks, pops chunks like a helper until the queue
/// is empty, then waits for the chunks still running.
#[derive(Debug)]
pub struct LockedQueuePool {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Range<usize>>,
    job: Option<FrameJob>,
    /// Chunks of the current frame not yet finished (queued or running).
    unfinished: usize,
    panic: Option<Panic>,
    shutdown: bool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("queued", &self.queue.len())
            .field("unfinished", &self.unfinished)
            .field("shutdown", &self.shutdown)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Tasks run outside the lock, so a poisoned lock means nothing.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Pops and runs chunks until the queue is empty; returns the guard.
    fn drain<'a>(&'a self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        while let Some(range) = state.queue.pop_front() {
            let Some(job) = state.job else { break };
            drop(state);
            let result = job.run_range(range.start, range.end);
            state = self.lock();
            keep_first(&mut state.panic, result);
            state.unfinished -= 1;
            if state.unfinished == 0 {
                self.done.notify_all();
            }
        }
        state
    }
}

impl LockedQueuePool {
    /// Starts `threads − 1` helpers (the caller is the other thread).
    ///
    /// # Errors
    ///
    /// If `threads` is 0 or a helper cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::{FrameScheduler, LockedQueuePool};
    ///
    /// let pool = LockedQueuePool::new(2)?;
    /// assert_eq!(pool.threads(), 2);
    /// # Ok::<(), throttle_workloads::Error>(())
    /// ```
    pub fn new(threads: usize) -> Result<LockedQueuePool, Error> {
        if threads == 0 {
            return Err(Error::zero_threads());
        }
        let mut pool = LockedQueuePool {
            shared: Arc::default(),
            helpers: Vec::with_capacity(threads - 1),
        };
        // On a failed spawn, `pool` drops and stops the helpers already started.
        spawn_helpers(
            &mut pool.helpers,
            "locked-queue",
            threads,
            &pool.shared,
            |s, _, _| helper(s),
        )?;
        Ok(pool)
    }
}

fn helper(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        state = shared.drain(state);
        if state.shutdown {
            return;
        }
        state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
    }
}

impl FrameScheduler for LockedQueuePool {
    fn name(&self) -> &'static str {
        "locked_queue"
    }

    fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        if n == 0 {
            return;
        }
        let chunks = (self.threads() * CHUNKS_PER_THREAD).min(n);
        // SAFETY: this call waits until `unfinished == 0`, i.e. until every
        // chunk has been run, and clears `job` before returning or resuming a
        // panic; threads copy the job only while a chunk of this frame is
        // queued.
        let job = unsafe { FrameJob::new(f, n) };
        let mut state = self.shared.lock();
        state.job = Some(job);
        state
            .queue
            .extend((0..chunks).map(|c| c * n / chunks..(c + 1) * n / chunks));
        state.unfinished = chunks;
        self.shared.work.notify_all();
        state = self.shared.drain(state);
        while state.unfinished > 0 {
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        state.job = None;
        let panic = state.panic.take();
        drop(state);
        debug_assert_eq!(job.len(), n);
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }
}

impl Drop for LockedQueuePool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
        for handle in self.helpers.drain(..) {
            // Helpers catch task panics, so a join error cannot carry one.
            let _ = handle.join();
        }
    }
}
