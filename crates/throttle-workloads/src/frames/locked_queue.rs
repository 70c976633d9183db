//! A shared lock-based task queue (seed 002's first scheduler).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::job::{keep_first, spawn_helpers, FrameJob, Panic};
use super::trace::{begin, end, rec, wake, LocalTrack, TraceHub};
use super::FrameScheduler;
use crate::Error;
use throttle::trace::{EventKind, Span, Trace};

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
    local: LocalTrack,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    trace: TraceHub,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Range<usize>>,
    job: Option<FrameJob>,
    /// Chunks of the current frame not yet finished (queued or running).
    unfinished: usize,
    panic: Option<Panic>,
    shutdown: bool,
    /// While recording: this frame's wake-up of each helper (by share).
    flows: Vec<u64>,
    /// While recording: the wake-up of the caller by the thread that finished the last chunk.
    done_flow: u64,
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
    fn drain<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        share: usize,
        local: &mut LocalTrack,
    ) -> MutexGuard<'a, State> {
        while let Some(range) = state.queue.pop_front() {
            let Some(job) = state.job else { break };
            drop(state);
            let t = self.trace.get(share, local);
            rec(t, begin(Span::Run));
            rec(t, EventKind::Busy);
            let result = job.run_range(range.start, range.end);
            rec(t, EventKind::Idle);
            rec(t, end(Span::Run, 0));
            state = self.lock();
            keep_first(&mut state.panic, result);
            state.unfinished -= 1;
            if state.unfinished == 0 {
                if share != 0 {
                    state.done_flow = wake(t);
                }
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
            local: LocalTrack::default(),
        };
        // On a failed spawn, `pool` drops and stops the helpers already started.
        spawn_helpers(
            &mut pool.helpers,
            "locked-queue",
            threads,
            &pool.shared,
            |s, share, _| helper(s, share),
        )?;
        Ok(pool)
    }
}

fn helper(shared: &Shared, share: usize) {
    let mut local = LocalTrack::default();
    let mut state = shared.lock();
    loop {
        state = shared.drain(state, share, &mut local);
        if state.shutdown {
            return;
        }
        rec(shared.trace.get(share, &mut local), begin(Span::Sleep));
        state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
        let flow = state.flows.get(share).copied().unwrap_or(0);
        rec(shared.trace.get(share, &mut local), end(Span::Sleep, flow));
    }
}

impl FrameScheduler for LockedQueuePool {
    fn name(&self) -> &'static str {
        "locked_queue"
    }

    fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    fn start_trace(&mut self) -> bool {
        self.shared
            .trace
            .start("locked_queue", "locked-queue", self.helpers.len() + 1);
        true
    }

    fn stop_trace(&mut self) -> Option<Trace> {
        self.shared.trace.stop()
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
        let shares = self.threads();
        let t = self.shared.trace.get(0, &mut self.local);
        rec(t, begin(Span::Call));
        let mut state = self.shared.lock();
        state.done_flow = 0;
        // notify_all wakes every waiting helper: one transition each.
        if t.is_some() {
            state.flows = (0..shares)
                .map(|s| if s == 0 { 0 } else { wake(t) })
                .collect();
        }
        state.job = Some(job);
        state
            .queue
            .extend((0..chunks).map(|c| c * n / chunks..(c + 1) * n / chunks));
        state.unfinished = chunks;
        self.shared.work.notify_all();
        state = self.shared.drain(state, 0, &mut self.local);
        let t = self.shared.trace.get(0, &mut self.local);
        if state.unfinished > 0 {
            rec(t, begin(Span::JoinSleep));
            while state.unfinished > 0 {
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
