//! The pool's live limit: a fixed `k` ([`Pool::set_concurrency`]), auto mode
//! ([`Pool::set_concurrency_auto`]), and what caps both (the jobserver's tokens).

use super::Pool;
use crate::callsite::Way;
use crate::controller::auto::apply_limit;
use crate::controller::{ControllerEvent, DEFAULT_INTERVAL};
use crate::error::Error;
use std::time::Instant;

impl Pool {
    /// Sets the live concurrency limit `k`: at most `k` threads hold a *run slot* of this pool,
    /// callers included, and only slot holders start tasks.
    ///
    /// Exactly what is promised:
    /// - Raising the limit takes effect at once: queued threads get the new slots, and a sleeping
    ///   worker is woken if work is waiting.
    /// - Lowering it is cooperative: a thread over the limit gives back its slot at its next
    ///   *task boundary*: when it forks or takes a fork back to run its second half, when a job
    ///   or loop block ends, or when it waits. A task that runs for a long time without forking
    ///   keeps its slot until it ends: code cannot be interrupted. So for a short while after a
    ///   lowering, more than `k` threads may still run; [`Pool::await_concurrency`] waits until
    ///   that is over. `throttle-bench --bench limit_response` measures how long it takes. The
    ///   exact bound: once the limit has been `k` since a thread's previous leaf began (a loop
    ///   block, or a fork's half that does not fork), that thread looks before its next leaf,
    ///   so it starts none beside `k` other slot holders (`tests/limit.rs`).
    /// - From then on, at no instant do more than `k` threads hold slots.
    /// - One exception: the limit counts threads that can compute. When a thread has queued for
    ///   a slot for a millisecond or more and the kernel reports every slot holder blocked (on a
    ///   lock, in I/O, asleep: none runnable), the first thread in the queue takes a slot over
    ///   the limit (`Stats::limit_takeovers` counts these). Without it, a task that holds a lock
    ///   while it waits for its fork, behind slot holders blocked on that lock, would wait
    ///   forever. Whoever is over the limit gives a slot back at its next task boundary, as
    ///   after a lowering. Holders are known by their kernel thread ids (workers, spares, and
    ///   callers that took part with one of the pool's lent deques); on a system without
    ///   `/proc` no slot is ever taken over.
    ///
    /// # Errors
    /// `k` outside `1..=threads`.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(4).unwrap();
    /// pool.set_concurrency(2).unwrap();
    /// assert_eq!(pool.concurrency(), 2);
    /// assert!(pool.set_concurrency(0).is_err());
    /// assert!(pool.set_concurrency(5).is_err());
    /// ```
    pub fn set_concurrency(&self, k: usize) -> Result<(), Error> {
        if k == 0 || k > self.threads() {
            return Err(Error::concurrency(k, self.threads()));
        }
        // A fixed limit ends auto mode (the controller thread is joined first, so its last
        // decision cannot land after ours).
        self.auto.stop();
        // --- jobserver: the budget caps the user's limit ---
        #[cfg(not(loom))]
        if let Some(b) = &self.budget {
            b.set_user_limit(k);
            return Ok(());
        }
        apply_limit(&self.registry, k);
        Ok(())
    }

    /// Waits until no more threads hold run slots than the limit allows (after
    /// [`set_concurrency`](Pool::set_concurrency) lowered it), or until `timeout` passes.
    /// Returns true if the pool is within its limit.
    ///
    /// Called from inside one of the pool's tasks, the caller's own slot counts: with a limit of
    /// 1 and another thread busy, it cannot succeed before that thread yields.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.set_concurrency(1).unwrap();
    /// assert!(pool.await_concurrency(Duration::from_secs(10)));
    /// ```
    pub fn await_concurrency(&self, timeout: std::time::Duration) -> bool {
        use std::time::Duration;
        let start = std::time::Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            let s = self.registry.sleep.load();
            if s.active() <= s.limit() {
                return true;
            }
            let waited = start.elapsed();
            if waited >= timeout {
                return false;
            }
            // A limit takes effect within a task boundary, usually microseconds: poll (yielding
            // the CPU) for the first 100 µs, then sleep with a growing pause up to 1 ms, rather
            // than add a notification to the hot path. A sleep shorter than ~50 µs is not worth
            // asking for: the kernel's timer slack rounds it up to that.
            if waited < Duration::from_micros(100) {
                std::thread::yield_now();
                continue;
            }
            std::thread::sleep(pause.min(timeout - waited));
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// The current concurrency limit (in auto mode, the controller's current choice): the
    /// effective one, min(user limit, 1 + tokens held), if the pool joined a jobserver.
    pub fn concurrency(&self) -> usize {
        self.registry.sleep.load().limit()
    }

    // --- jobserver ---
    /// The jobserver tokens the pool holds now, or `None` if it joined no jobserver. The pool
    /// runs at most 1 + this many threads.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// assert_eq!(pool.jobserver_tokens(), None);
    /// ```
    #[cfg(not(loom))]
    pub fn jobserver_tokens(&self) -> Option<usize> {
        self.jobserver_tokens_inner()
    }

    /// Gives back the jobserver tokens no running work needs, at once (see `global.rs`).
    #[cfg(not(loom))]
    pub(crate) fn flush_jobserver_tokens(&self) {
        if let Some(b) = &self.budget {
            b.flush(std::time::Duration::from_millis(200));
        }
    }

    #[cfg(not(loom))]
    fn jobserver_tokens_inner(&self) -> Option<usize> {
        self.budget.as_ref().map(|b| b.tokens())
    }

    /// The limit set by [`set_concurrency`](Pool::set_concurrency) (or the thread count), before
    /// the jobserver's cap.
    #[cfg(not(loom))]
    pub fn user_concurrency(&self) -> usize {
        match &self.budget {
            Some(b) => b.user_limit(),
            None => self.concurrency(),
        }
    }
}

/// Auto mode: the pool chooses its own concurrency (`throttle-controller/src/README.md`).
impl Pool {
    /// Lets the pool choose its concurrency `k` in `1..=threads()` and keep choosing as the
    /// work changes. A controller thread measures the pool (completed work, busy time, the
    /// workers' run-queue wait) every half [`DEFAULT_INTERVAL`] while work runs, every
    /// sixteenth of it while it scans and every whole one while the pool is idle, and sets the
    /// limit through the same machinery as [`set_concurrency`](Pool::set_concurrency), which
    /// ends auto mode. It starts cold: a scan from `k = threads()` down, a fit, then it stays
    /// still until the throughput or the run-queue wait shifts beyond their measured noise.
    /// Calling it again restarts from cold.
    ///
    /// The throughput it learns from is completed work per second in units that exist at every
    /// `k`: loop indices and iterator items as their blocks end when loops ran, else tasks
    /// (forks, each published and counted at every `k`, and spawns). It learns best from work
    /// made of many units of similar cost; see `throttle-controller/src/README.md` for what it cannot see.
    ///
    /// # Errors
    /// The pool was built with `.stats(false)` (the controller reads the counters), or the OS
    /// refused to start the controller thread.
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.set_concurrency_auto().unwrap();
    /// assert!(pool.is_concurrency_auto());
    /// let k = pool.concurrency();
    /// assert!((1..=2).contains(&k));
    /// pool.set_concurrency(1).unwrap(); // back to a fixed limit
    /// assert!(!pool.is_concurrency_auto());
    /// ```
    pub fn set_concurrency_auto(&self) -> Result<(), Error> {
        self.set_concurrency_auto_every(DEFAULT_INTERVAL)
    }

    /// [`set_concurrency_auto`](Pool::set_concurrency_auto) with another controller interval
    /// (at least 1 ms).
    ///
    /// # Errors
    /// As [`set_concurrency_auto`](Pool::set_concurrency_auto).
    pub fn set_concurrency_auto_every(&self, interval: std::time::Duration) -> Result<(), Error> {
        if !self.registry.stats.enabled {
            return Err(Error::auto_needs_stats());
        }
        let interval = interval.max(std::time::Duration::from_millis(1));
        // --- jobserver: the budget caps the controller's choice like a user's ---
        #[cfg(not(loom))]
        if let Some(b) = &self.budget {
            return self
                .auto
                .start(&self.registry, interval, Box::new(b.user_limit_setter()))
                .map_err(Error::spawn);
        }
        let registry = self.registry.clone();
        self.auto
            .start(
                &self.registry,
                interval,
                Box::new(move |k| apply_limit(&registry, k)),
            )
            .map_err(Error::spawn)
    }

    /// Auto mode's "if any at all": runs a loop of `len` indices the way its call site's
    /// memory says is cheaper (serially on the calling thread, or split in the pool) and
    /// records what it cost when the memory asks for a timing. A serial run is plain code on
    /// the calling thread (no run slot, no set-up) that still belongs to this pool
    /// (`serial_in`, which `run` applies): `current_num_threads()` inside it is this
    /// pool's, and a `join` in it forks here. Inline: a serial, untimed call, the common one,
    /// runs here with `run`'s way known; the rest goes to [`remembered_way`](Pool::remembered_way).
    ///
    /// `site` is the call site, taken by the caller (`#[track_caller]` from the user's line):
    /// `for_range`, `map_reduce`, and the parallel iterators' consumers and sorts
    /// (`iter/runtime.rs`). Before the fast path was here, one closure handed down to the
    /// out-of-line part moved its captures on every call, about 60 instructions per call of
    /// 16 one-spin jobs (`examples/auto_call_cost.rs` as of f29fd09: 407.7 against about 345,
    /// the plain loop 148.8).
    #[inline]
    pub(crate) fn remembered_at<R>(
        &self,
        site: &'static std::panic::Location<'static>,
        len: usize,
        run: impl FnOnce(Way) -> R,
    ) -> R {
        let (way, timed) = self.sites.choose(site, len);
        if way == Way::Serial && !timed {
            return run(Way::Serial);
        }
        self.remembered_way(site, len, way, timed, run)
    }

    /// [`remembered_at`](Pool::remembered_at) once the site's memory has chosen `way`, and
    /// whether to time it: runs it, and records what it cost if timed. Out of line: the
    /// callers keep a serial, untimed call inline and come here for the rest.
    #[inline(never)]
    fn remembered_way<R>(
        &self,
        site: &'static std::panic::Location<'static>,
        len: usize,
        way: Way,
        timed: bool,
        run: impl FnOnce(Way) -> R,
    ) -> R {
        if !timed {
            return run(way);
        }
        // Whether a parallel run had one run slot on a pool of several threads (`alone`, see
        // `CallSites::record`): the limit at its start and at its end, so that a run during
        // which the controller raised the limit is recorded.
        let one_slot = || self.threads() > 1 && self.concurrency() == 1;
        let alone_at_start = way == Way::Parallel && one_slot();
        let start = Instant::now();
        let r = run(way);
        let took = start.elapsed();
        let alone = alone_at_start && one_slot();
        self.sites.record(site, way, len, took, alone);
        r
    }

    /// Whether data-parallel calls consult their call site's memory: in auto mode only (a
    /// relaxed load, may lag a concurrent switch by a call).
    pub(crate) fn remembers_call_sites(&self) -> bool {
        self.auto.is_on_fast()
    }

    /// Whether the pool chooses its own concurrency.
    pub fn is_concurrency_auto(&self) -> bool {
        self.auto.is_on()
    }

    /// The controller's recent decisions, oldest first (bounded: the last 1024 that were not
    /// "hold"). Kept after a switch back to a fixed limit.
    pub fn controller_log(&self) -> Vec<ControllerEvent> {
        self.auto.log()
    }
}

thread_local! {
    /// The pool of a serial run in progress on this thread (auto mode chose to run a loop on
    /// the calling thread alone, `serial_in`); null otherwise.
    static SERIAL_POOL: std::cell::Cell<*const Pool> = const { std::cell::Cell::new(std::ptr::null()) };
}

/// Runs `f` with the pool of the serial run in progress on this thread, if any.
pub(crate) fn with_serial_pool<R>(f: impl FnOnce(Option<&Pool>) -> R) -> R {
    let p = SERIAL_POOL.with(std::cell::Cell::get);
    // SAFETY: non-null only inside `serial_in`, which borrows the pool for as long as the
    // pointer is set (restored by a guard, also on unwinding).
    f(unsafe { p.as_ref() })
}

/// Runs `f`, the serial way of a call of `pool`, on the calling thread with `pool` as its
/// default pool (`global::with_default`). It takes no run slot: a thread outside the pool's work
/// calls in through the free functions, which enter `pool` as any caller does.
#[inline]
pub(crate) fn serial_in<R>(pool: &Pool, f: impl FnOnce() -> R) -> R {
    struct Restore(*const Pool);
    impl Drop for Restore {
        #[inline]
        fn drop(&mut self) {
            SERIAL_POOL.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(SERIAL_POOL.with(|c| c.replace(pool)));
    f()
}
