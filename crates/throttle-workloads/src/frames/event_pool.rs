//! Persistent helpers signalled by a light event (seed 003's faster
//! `PersistentThread`, built on a .NET `ManualResetEvent`).
//!
//! The event is an atomic epoch plus `thread::park`/`unpark` (a futex on
//! Linux): a helper that sees a new epoch runs its share; otherwise it spins
//! for a moment and then parks. No lock is taken on the fast path.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Thread};

use super::job::{keep_first, spawn_helpers, FrameJob, Panic};
use super::trace::{begin, end, rec, wake, LocalTrack, TraceHub};
use super::FrameScheduler;
use crate::Error;
use throttle::trace::{EventKind, Span, Trace};

/// How many times a waiting thread checks its flag before parking. Frames
/// follow each other closely in a game loop, so a short spin usually catches
/// the next one without a futex round trip; a few microseconds at most.
const SPINS: u32 = 2_000;

/// `threads − 1` persistent helpers woken per frame by an atomic epoch and
/// `unpark`; the caller runs share 0 and then waits (spin, then park) until
/// the last helper unparks it.
#[derive(Debug)]
pub struct EventPool {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
    local: LocalTrack,
}

struct Shared {
    /// Incremented once per frame (and once at shutdown).
    epoch: AtomicU64,
    /// Written only by the caller while no helper runs (`pending == 0`),
    /// read by helpers after they observe a new epoch.
    slot: UnsafeCell<Slot>,
    /// Helpers that have not finished the current frame.
    pending: AtomicUsize,
    shutdown: AtomicBool,
    panic: Mutex<Option<Panic>>,
    trace: TraceHub,
    /// While recording: this frame's wake-up of each helper (by share), written before the
    /// epoch's Release increment.
    flows: Vec<AtomicU64>,
    /// While recording: `epoch << 32 | flow` of the last helper's wake-up of the caller (the
    /// epoch tells a late write from an earlier frame apart).
    done_flow: AtomicU64,
}

struct Slot {
    job: Option<FrameJob>,
    caller: Option<Thread>,
}

// SAFETY: `slot` is the only field that is not `Sync`. It is written only by
// the thread inside `for_each` (which holds `&mut EventPool`, so there is one)
// while `pending == 0`, i.e. while no helper reads it: [1] the write happens
// before the Release increment of `epoch` that helpers Acquire before reading;
// [2] helpers finish reading before their Release decrement of `pending`,
// which the caller Acquires before it writes again. `FrameJob` and `Thread`
// are `Send`.
unsafe impl Sync for Shared {}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("epoch", &self.epoch)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

/// Waits, spinning then parking, until `ready()` holds.
fn wait_until(ready: impl Fn() -> bool) {
    let mut spins = 0;
    while !ready() {
        if spins < SPINS {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::park();
        }
    }
}

impl EventPool {
    /// Starts `threads − 1` helpers (the caller is the other thread).
    ///
    /// # Errors
    ///
    /// If `threads` is 0 or a helper cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::{EventPool, FrameScheduler};
    ///
    /// let pool = EventPool::new(2)?;
    /// assert_eq!(pool.threads(), 2);
    /// # Ok::<(), throttle_workloads::Error>(())
    /// ```
    pub fn new(threads: usize) -> Result<EventPool, Error> {
        if threads == 0 {
            return Err(Error::zero_threads());
        }
        let mut pool = EventPool {
            shared: Arc::new(Shared {
                epoch: AtomicU64::new(0),
                slot: UnsafeCell::new(Slot {
                    job: None,
                    caller: None,
                }),
                pending: AtomicUsize::new(0),
                shutdown: AtomicBool::new(false),
                panic: Mutex::new(None),
                trace: TraceHub::default(),
                flows: (0..threads).map(|_| AtomicU64::new(0)).collect(),
                done_flow: AtomicU64::new(0),
            }),
            helpers: Vec::with_capacity(threads - 1),
            local: LocalTrack::default(),
        };
        // On a failed spawn, `pool` drops and stops the helpers already started.
        spawn_helpers(
            &mut pool.helpers,
            "event-pool",
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
    loop {
        // The wait spins for a few microseconds, then parks: drawn as asleep.
        rec(shared.trace.get(share, &mut local), begin(Span::Sleep));
        // Acquire pairs with the Release increment in `for_each`/`drop`.
        wait_until(|| shared.epoch.load(Ordering::Acquire) != seen);
        seen = shared.epoch.load(Ordering::Acquire);
        let t = shared.trace.get(share, &mut local);
        let flow = shared.flows[share].load(Ordering::Relaxed);
        rec(t, end(Span::Sleep, flow));
        if shared.shutdown.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: a new epoch was observed with Acquire and `pending > 0`
        // until this helper decrements it, so the caller does not write the
        // slot meanwhile (see `unsafe impl Sync for Shared`).
        let (job, caller) = unsafe {
            let slot = &*shared.slot.get();
            (slot.job, slot.caller.clone())
        };
        if let Some(job) = job {
            rec(t, begin(Span::Run));
            rec(t, EventKind::Busy);
            if let Err(payload) = job.run_share(share, shares) {
                let mut panic = shared.panic.lock().unwrap_or_else(|p| p.into_inner());
                panic.get_or_insert(payload);
            }
            rec(t, EventKind::Idle);
            rec(t, end(Span::Run, 0));
        }
        // Release pairs with the caller's Acquire load of `pending`.
        if shared.pending.fetch_sub(1, Ordering::Release) == 1 {
            let flow = wake(t);
            if flow != 0 {
                shared.done_flow.store(seen << 32 | flow, Ordering::Relaxed);
            }
            if let Some(caller) = caller {
                caller.unpark();
            }
        }
    }
}

impl FrameScheduler for EventPool {
    fn name(&self) -> &'static str {
        "event_pool"
    }

    fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    fn start_trace(&mut self) -> bool {
        self.shared
            .trace
            .start("event_pool", "event-pool", self.helpers.len() + 1);
        true
    }

    fn stop_trace(&mut self) -> Option<Trace> {
        self.shared.trace.stop()
    }

    fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let shares = self.threads();
        // SAFETY: this call waits until `pending == 0` (every helper is done
        // with the job) before it returns or resumes a panic.
        let job = unsafe { FrameJob::new(f, n) };
        let shared = &*self.shared;
        // SAFETY: `pending == 0` here (the previous call waited for it), so
        // no helper reads the slot; see `unsafe impl Sync for Shared`.
        unsafe {
            let slot = &mut *shared.slot.get();
            slot.job = Some(job);
            slot.caller = Some(std::thread::current());
        }
        shared.pending.store(shares - 1, Ordering::Relaxed);
        let t = shared.trace.get(0, &mut self.local);
        rec(t, begin(Span::Call));
        for (s, f) in shared.flows.iter().enumerate().skip(1) {
            // One unpark per helper: one transition each.
            f.store(if s < shares { wake(t) } else { 0 }, Ordering::Relaxed);
        }
        // Release publishes the slot and `pending` (and the flows); pairs with the helpers'
        // Acquire loads of `epoch`.
        let epoch = shared.epoch.fetch_add(1, Ordering::Release) + 1;
        for helper in &self.helpers {
            helper.thread().unpark();
        }
        rec(t, EventKind::Busy);
        let mine = job.run_share(0, shares);
        rec(t, EventKind::Idle);
        // The caller spins, then parks: a join wait.
        rec(t, begin(Span::JoinWait));
        // Acquire pairs with the helpers' Release decrements.
        wait_until(|| shared.pending.load(Ordering::Acquire) == 0);
        let done = shared.done_flow.load(Ordering::Relaxed);
        let flow = if done >> 32 == epoch {
            done & 0xffff_ffff
        } else {
            0
        };
        rec(t, end(Span::JoinWait, flow));
        rec(t, end(Span::Call, 0));
        let mut panic = shared.panic.lock().unwrap_or_else(|p| p.into_inner());
        keep_first(&mut panic, mine);
        if let Some(payload) = panic.take() {
            drop(panic);
            std::panic::resume_unwind(payload);
        }
    }
}

impl Drop for EventPool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        // Release pairs with the helpers' Acquire loads of `epoch`, so they
        // see `shutdown`.
        self.shared.epoch.fetch_add(1, Ordering::Release);
        for handle in self.helpers.drain(..) {
            handle.thread().unpark();
            // Helpers catch task panics, so a join error cannot carry one.
            let _ = handle.join();
        }
    }
}
