//! Persistent helpers signalled with a Mutex and Condvar (seed 003's first
//! `PersistentThread`, built on a .NET `Monitor`).

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::job::{keep_first, spawn_helpers, FrameJob, Panic};
use super::trace::{begin, end, rec, wake, LocalTrack, TraceHub};
use super::FrameScheduler;
use crate::Error;
use throttle::trace::{EventKind, Span, Trace};

/// `threads − 1` persistent helper threads that sleep on a condition variable
/// between frames. Each frame the caller publishes the job under the mutex,
/// wakes all helpers, runs share 0 itself, and sleeps on a second condition
/// variable until the last helper reports.
#[derive(Debug)]
pub struct MutexPool {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
    local: LocalTrack,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    start: Condvar,
    done: Condvar,
    trace: TraceHub,
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
    /// While recording: the flow id of this frame's wake-up of each helper (by share).
    flows: Vec<u64>,
    /// While recording: the flow id of the last helper's wake-up of the caller.
    done_flow: u64,
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
            local: LocalTrack::default(),
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
    let mut local = LocalTrack::default();
    let mut state = shared.lock();
    loop {
        if state.epoch == seen && !state.shutdown {
            let t = shared.trace.get(share, &mut local);
            rec(t, begin(Span::Sleep));
            while state.epoch == seen && !state.shutdown {
                state = shared.start.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            // Looked up again: a recording may have started while this thread slept.
            let t = shared.trace.get(share, &mut local);
            let flow = state.flows.get(share).copied().unwrap_or(0);
            rec(t, end(Span::Sleep, flow));
        }
        if state.shutdown {
            return;
        }
        seen = state.epoch;
        let Some(job) = state.job else { continue };
        drop(state);
        let t = shared.trace.get(share, &mut local);
        rec(t, begin(Span::Run));
        rec(t, EventKind::Busy);
        let result = job.run_share(share, shares);
        rec(t, EventKind::Idle);
        rec(t, end(Span::Run, 0));
        state = shared.lock();
        keep_first(&mut state.panic, result);
        state.pending -= 1;
        if state.pending == 0 {
            state.done_flow = wake(t);
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

    fn start_trace(&mut self) -> bool {
        self.trace_start();
        true
    }

    fn stop_trace(&mut self) -> Option<Trace> {
        self.shared.trace.stop()
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let shares = self.threads();
        // SAFETY: below, this call waits until `pending == 0`, i.e. until
        // every helper has finished its share, and clears `job` before it
        // returns or resumes a panic; helpers copy the job only while
        // `pending > 0` for its epoch.
        let job = unsafe { FrameJob::new(f, n) };
        let t = self.shared.trace.get(0, &mut self.local);
        rec(t, begin(Span::Call));
        {
            let mut state = self.shared.lock();
            state.job = Some(job);
            state.epoch += 1;
            state.pending = shares - 1;
            state.done_flow = 0;
            // notify_all wakes every helper: one transition per helper.
            if t.is_some() {
                state.flows = (0..shares)
                    .map(|s| if s == 0 { 0 } else { wake(t) })
                    .collect();
            }
        }
        self.shared.start.notify_all();
        rec(t, EventKind::Busy);
        let mine = job.run_share(0, shares);
        rec(t, EventKind::Idle);
        let mut state = self.shared.lock();
        if state.pending > 0 {
            rec(t, begin(Span::JoinSleep));
            while state.pending > 0 {
                state = self
                    .shared
                    .done
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner());
            }
            rec(t, end(Span::JoinSleep, state.done_flow));
        }
        rec(t, end(Span::Call, 0));
        state.job = None;
        keep_first(&mut state.panic, mine);
        let panic = state.panic.take();
        drop(state);
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }
}

impl MutexPool {
    /// Starts recording a timeline (the helpers pick up their tracks at their next frame).
    fn trace_start(&mut self) {
        self.shared
            .trace
            .start(self.name(), "mutex-pool", self.threads());
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
