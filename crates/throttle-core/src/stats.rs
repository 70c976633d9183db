//! Counters of what a pool did: tasks, shares, steals, sleeps, wake-ups, and how many threads were
//! busy for how long (the "concurrency level" view of a thread profiler).

use crate::sync::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;
use std::time::{Duration, Instant};

/// A snapshot of a pool's counters, from [`Pool::stats`](crate::Pool::stats).
///
/// Counts are totals since the pool was built. Use [`Stats::since`] for the difference over an
/// interval. When the pool was built with `.stats(false)` every count is zero.
///
/// "Busy" means executing task code: a worker running a job it found, or a caller inside
/// `install`/`join`/`scope`/`for_range`/`map_reduce` (not while it sleeps waiting for a stolen
/// half). Spinning in search of work is not busy.
///
/// Read right after a call returns, the counts include every task of that call: a thread that
/// ran part of it adds its counts before it lets the caller go. Busy time of such a helper is
/// added when it stops being busy, so it may lag by the helper's current stretch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Worker threads of the pool.
    pub threads: usize,
    /// Time covered by the histogram: since the pool was built, in its 16 ns ticks.
    pub elapsed: Duration,
    /// Tasks: forks made (each fork's second half runs once, on its thread or a thief; a half
    /// whose first half panicked is dropped instead) and scope spawns (counted when they
    /// finish, so this is completed work: the adaptive controller's throughput signal).
    pub tasks: u64,
    /// Loop indices and iterator items finished (counted per block as it ends): completed work
    /// in units that exist at every concurrency, even at 1, where loops make no tasks (the
    /// adaptive controller's throughput signal when loops run).
    pub items: u64,
    /// Forks announced: pushed while another thread had to be told (an idle thread asleep
    /// beside a free slot, a thread waiting for one of the pusher's forks), or while the pool
    /// was over its limit. Every fork's second half is stealable from its thread's deque; these
    /// are the pushes that took the slow path (the trace's `Share` events).
    pub shared: u64,
    /// Jobs taken from another thread's queue or from the injector.
    pub steals: u64,
    /// Times a worker went to sleep for lack of work.
    pub parks: u64,
    /// Sleeping workers woken because work appeared.
    pub wakeups: u64,
    /// `busy_histogram[j]`: time during which exactly `j` threads were busy, `j = 0..=threads`
    /// (outside callers count towards `j`). Its entries add up to `elapsed` (to 16 ns per
    /// change), except that a read concurrent with a change may miss that change's closing
    /// interval; nothing is ever counted twice. A last entry `threads + 1` appears only if a
    /// transient count went past `threads` (it then collects all higher levels).
    pub busy_histogram: Vec<Duration>,
    /// Busy time of each worker thread.
    pub busy_per_worker: Vec<Duration>,
    /// Busy time of callers from outside the pool.
    pub busy_outside: Duration,
    /// Total time threads waited for a run slot because of the concurrency limit.
    pub limit_wait: Duration,
    /// Changes of the limit made by the adaptive controller (auto mode; see
    /// [`Pool::set_concurrency_auto`](crate::Pool::set_concurrency_auto)).
    pub controller_changes: u64,
    /// Decisions of the adaptive controller other than "hold" (each is an entry of
    /// [`Pool::controller_log`](crate::Pool::controller_log), which keeps the last 1024).
    pub controller_decisions: u64,
    /// The controller's latest decision: when, from which `k` to which, why, and the
    /// throughput it measured. In [`Stats::since`], the later snapshot's.
    pub controller_last: Option<throttle_controller::ControllerEvent>,
    /// Calls that auto mode's call-site memory ran the serial way: on the calling thread alone,
    /// in the pool's context, because its site measured them too short to pay for threads.
    pub serial_calls: u64,
    /// Spare threads started to stand in for threads blocked in a wait that may not run the
    /// pool's other work, while that work had no other runner (`src/spare.rs`). Counted
    /// whether or not stats are enabled. Spares run under the limit, in the slots of the
    /// threads they stand in for.
    pub spares_started: u64,
    /// Times a blocked thread's periodic look (every 100 ms) found work queued with nobody to
    /// run it, and woke or started a spare: the backstop for a state the publishers' counts
    /// missed. Zero in a healthy run; each one cost the pool up to 100 ms of a free slot.
    pub starvation_rescues: u64,
    /// Times a thread queued for a run slot took one over the limit because every slot holder
    /// was blocked in the kernel (on a lock, in I/O, asleep): see
    /// [`Pool::set_concurrency`](crate::Pool::set_concurrency). Counted whether or not stats
    /// are enabled.
    pub limit_takeovers: u64,
}

impl Stats {
    /// The mean number of busy threads over `elapsed` (the profiler's "average concurrency").
    ///
    /// # Examples
    /// ```
    /// let pool = throttle::Pool::new(2).unwrap();
    /// pool.for_range(0..1000, |i| { std::hint::black_box(i); });
    /// let avg = pool.stats().average_concurrency();
    /// assert!(avg >= 0.0 && avg <= 3.0);
    /// ```
    pub fn average_concurrency(&self) -> f64 {
        let total = self.elapsed.as_secs_f64();
        if total == 0.0 {
            return 0.0;
        }
        let weighted: f64 = self
            .busy_histogram
            .iter()
            .enumerate()
            .map(|(j, d)| j as f64 * d.as_secs_f64())
            .sum();
        weighted / total
    }

    /// The counts accumulated between `earlier` and `self` (both from the same pool).
    pub fn since(&self, earlier: &Stats) -> Stats {
        fn sub_all(a: &[Duration], b: &[Duration]) -> Vec<Duration> {
            a.iter()
                .enumerate()
                .map(|(i, d)| d.saturating_sub(b.get(i).copied().unwrap_or_default()))
                .collect()
        }
        Stats {
            threads: self.threads,
            elapsed: self.elapsed.saturating_sub(earlier.elapsed),
            tasks: self.tasks.saturating_sub(earlier.tasks),
            items: self.items.saturating_sub(earlier.items),
            shared: self.shared.saturating_sub(earlier.shared),
            steals: self.steals.saturating_sub(earlier.steals),
            parks: self.parks.saturating_sub(earlier.parks),
            wakeups: self.wakeups.saturating_sub(earlier.wakeups),
            busy_histogram: sub_all(&self.busy_histogram, &earlier.busy_histogram),
            busy_per_worker: sub_all(&self.busy_per_worker, &earlier.busy_per_worker),
            busy_outside: self.busy_outside.saturating_sub(earlier.busy_outside),
            limit_wait: self.limit_wait.saturating_sub(earlier.limit_wait),
            controller_changes: self
                .controller_changes
                .saturating_sub(earlier.controller_changes),
            controller_decisions: self
                .controller_decisions
                .saturating_sub(earlier.controller_decisions),
            controller_last: self.controller_last,
            serial_calls: self.serial_calls.saturating_sub(earlier.serial_calls),
            spares_started: self.spares_started.saturating_sub(earlier.spares_started),
            starvation_rescues: self
                .starvation_rescues
                .saturating_sub(earlier.starvation_rescues),
            limit_takeovers: self.limit_takeovers.saturating_sub(earlier.limit_takeovers),
        }
    }
}

/// One thread's counters (a worker's, or the shared slot of outside callers).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) tasks: AtomicU64,
    pub(crate) items: AtomicU64,
    pub(crate) shared: AtomicU64,
    pub(crate) steals: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) wakeups: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
    pub(crate) limit_wait_ns: AtomicU64,
}

impl Counters {
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// The concurrency histogram, without a lock: one word packs the time of the last change (in
/// ticks since the pool started) and how many threads are busy since then. A change swaps in
/// `(now, busy ± 1)` with one compare-exchange and then credits the interval it closed,
/// `[last, now)`, to the level that held during it. The intervals closed by successful exchanges
/// tile the timeline exactly, so no time is counted twice or out of order, whatever the number
/// of threads. A reader adds the open interval `[last, now)` itself; it can miss only an
/// interval whose exchange has happened but whose credit has not yet (nanoseconds), never count
/// one twice.
#[derive(Debug)]
struct Levels {
    /// `(ticks << LEVEL_BITS) | busy`.
    word: AtomicU64,
    /// Ticks spent at each level; the last entry also collects any higher level.
    ticks_at: Box<[AtomicU64]>,
}

/// Bits of the packed word that hold the busy count (at most 65 535 threads, as the state word).
const LEVEL_BITS: u32 = 16;
/// One tick of the histogram's clock: 16 ns, so that the 48 bits left hold 52 days; the ticks
/// of a longer-lived pool stop advancing (the histogram then stops growing).
const TICK_NS: u128 = 16;
const MAX_TICKS: u64 = (1 << (64 - LEVEL_BITS)) - 1;

impl Levels {
    fn new(levels: usize) -> Levels {
        Levels {
            word: AtomicU64::new(0),
            ticks_at: (0..levels).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn bucket(&self, busy: u64) -> &AtomicU64 {
        let last = self.ticks_at.len() - 1;
        &self.ticks_at[(busy as usize).min(last)]
    }
}

fn ticks(since_start: Duration) -> u64 {
    u64::try_from(since_start.as_nanos() / TICK_NS).map_or(MAX_TICKS, |t| t.min(MAX_TICKS))
}

fn duration_of(ticks: u64) -> Duration {
    Duration::from_nanos(ticks.saturating_mul(TICK_NS as u64))
}

/// Where the pool's counters live.
#[derive(Debug)]
pub(crate) struct Collector {
    pub(crate) enabled: bool,
    start: Instant,
    pub(crate) workers: Box<[CachePadded<Counters>]>,
    pub(crate) outside: CachePadded<Counters>,
    levels: Levels,
    /// Limit changes made by the controller (written by the controller thread only).
    controller_changes: AtomicU64,
}

impl Collector {
    pub(crate) fn new(threads: usize, enabled: bool) -> Collector {
        let start = Instant::now();
        Collector {
            enabled,
            start,
            workers: (0..threads).map(|_| CachePadded::default()).collect(),
            outside: CachePadded::default(),
            // Busy threads hold run slots, so there are at most `threads` of them; a spare level
            // catches a transient overshoot of the count (a thread between its slot and its
            // busy mark).
            levels: Levels::new(threads + 2),
            controller_changes: AtomicU64::new(0),
        }
    }

    /// One more limit change by the controller.
    pub(crate) fn count_controller_change(&self) {
        self.controller_changes.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters of worker `index`, or the outside callers' for `None`.
    pub(crate) fn counters(&self, index: Option<usize>) -> &Counters {
        match index {
            Some(i) => &self.workers[i],
            None => &self.outside,
        }
    }

    /// One more (`+1`) or one fewer (`-1`) thread is busy. Returns the time of the change.
    pub(crate) fn busy_changed(&self, delta: isize) -> Instant {
        let now = Instant::now();
        let t = ticks(now.saturating_duration_since(self.start));
        let levels = &self.levels;
        let mut cur = levels.word.load(Ordering::Relaxed);
        loop {
            let (last, busy) = (cur >> LEVEL_BITS, cur & ((1 << LEVEL_BITS) - 1));
            // Clocks of different threads may be read out of order: never move time backwards.
            let t = t.max(last);
            let next_busy = (busy as i64 + delta as i64).clamp(0, (1 << LEVEL_BITS) - 1) as u64;
            let next = (t << LEVEL_BITS) | next_busy;
            // Relaxed: the word orders the intervals among the changers (every exchange reads
            // the latest value); the credits are plain counters read by `snapshot`.
            match levels
                .word
                .compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    if t > last {
                        levels.bucket(busy).fetch_add(t - last, Ordering::Relaxed);
                    }
                    return now;
                }
                Err(actual) => cur = actual,
            }
        }
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let threads = self.workers.len();
        let mut s = Stats {
            threads,
            controller_changes: self.controller_changes.load(Ordering::Relaxed),
            ..Stats::default()
        };
        if !self.enabled {
            s.busy_histogram = vec![Duration::ZERO; threads + 1];
            s.busy_per_worker = vec![Duration::ZERO; threads];
            return s;
        }
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        for c in self.workers.iter().map(|c| &**c).chain([&*self.outside]) {
            s.tasks += load(&c.tasks);
            s.items += load(&c.items);
            s.shared += load(&c.shared);
            s.steals += load(&c.steals);
            s.parks += load(&c.parks);
            s.wakeups += load(&c.wakeups);
            s.limit_wait += Duration::from_nanos(load(&c.limit_wait_ns));
        }
        s.busy_per_worker = self
            .workers
            .iter()
            .map(|c| Duration::from_nanos(load(&c.busy_ns)))
            .collect();
        s.busy_outside = Duration::from_nanos(load(&self.outside.busy_ns));
        let word = self.levels.word.load(Ordering::Relaxed);
        let now = Instant::now();
        let (last, busy) = (word >> LEVEL_BITS, word & ((1 << LEVEL_BITS) - 1));
        let t = ticks(now.saturating_duration_since(self.start)).max(last);
        let mut hist: Vec<u64> = self.levels.ticks_at.iter().map(load).collect();
        let top = hist.len() - 1;
        hist[(busy as usize).min(top)] += t - last;
        // The spare level only shows when it was used.
        if hist[top] == 0 {
            hist.pop();
        }
        s.busy_histogram = hist.into_iter().map(duration_of).collect();
        s.elapsed = duration_of(t);
        s
    }
}
