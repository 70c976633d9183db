//! Persistent helpers signalled with a Mutex and Condvar (seed 003's first
//! `PersistentThread`, built on a .NET `Monitor`).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::job::{keep_first, spawn_helpers, FrameJob, Panic};
use super::FrameScheduler;
use crate::Error;

/// `threads − 1` persistent helper threads that sleep on a condition variable
/// between frames. Each frame the caller publishes the job under the mutex,
/// wakes all helpers, runs share 0 itself, and sleeps on a second condition
/// variable until the last helper reports.
#[derive(Debug)]
pub struct MutexPool {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    start: Condvar,
    done: Condvar,
}

#[derive(Default)]
struct State {
    /// Incremented once per frame; a helper runs a frame when it sees a new value.
    epoch: u64,
    job: Option<FrameJob>,
    /// Helpers that have not finished the current frame.
    pending: usize,
    panic: Option<Panic>,
    shutdown: bool,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("epoch", &self.epoch)
            .field("pending", &self.pending)
            .field("shutdown", &self.shutdown)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Tasks run outside the lock, so a poisoned lock means nothing.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl MutexPool {
    /// Starts `threads − 1` helpers (the caller is the other thread).
    ///
    /// # Errors
    ///
    /// If `threads` is 0 or a helper cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::{FrameScheduler, MutexPool};
    ///
    /// let pool = MutexPool::new(2)?;
    /// assert_eq!(pool.threads(), 2);
    /// # Ok::<(), throttle_workloads::Error>(())
    /// ```
    pub fn new(threads: usize) -> Result<MutexPool, Error> {
        if threads == 0 {
            return Err(Error::zero_threads());
        }
        let mut pool = MutexPool {
            shared: Arc::default(),
            helpers: Vec::with_capacity(threads - 1),
        };
        // On a failed spawn, `pool` drops and stops the helpers already started.
        spawn_helpers(
            &mut pool.helpers,
            "mutex-pool",
            threads,
            &pool.shared,
            helper,
        )?;
        Ok(pool)
    }
}

fn helper(shared: &Shared, share: usize, shares: usize) {
    let mut seen = 0;
    let mut state = shared.lock();
    loop {
        while state.epoch == seen && !state.shutdown {
            state = shared.start.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        if state.shutdown {
            return;
        }
        seen = state.epoch;
        let Some(job) = state.job else { continue };
        drop(state);
        let result = job.run_share(share, shares);
        state = shared.lock();
        keep_first(&mut state.panic, result);
        state.pending -= 1;
        if state.pending == 0 {
            shared.done.notify_one();
        }
    }
}

impl FrameScheduler for MutexPool {
    fn name(&self) -> &'static str {
        "mutex_pool"
    }

    fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let shares = self.threads();
        // SAFETY: below, this call waits until `pending == 0`, i.e. until
        // every helper has finished its share, and clears `job` before it
        // returns or resumes a panic; helpers copy the job only while
        // `pending > 0` for its epoch.
        let job = unsafe { FrameJob::new(f, n) };
        {
            let mut state = self.shared.lock();
            state.job = Some(job);
            state.epoch += 1;
            state.pending = shares - 1;
        }
        self.shared.start.notify_all();
        let mine = job.run_share(0, shares);
        let mut state = self.shared.lock();
        while state.pending > 0 {
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
        state.job = None;
        keep_first(&mut state.panic, mine);
        let panic = state.panic.take();
        drop(state);
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }
}

impl Drop for MutexPool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.start.notify_all();
        for handle in self.helpers.drain(..) {
            // Helpers catch task panics, so a join error cannot carry one.
            let _ = handle.join();
        }
    }
}
