//! Counters of what a pool did: tasks, shares, steals, sleeps, wake-ups, and how many threads were
//! busy for how long (the "concurrency level" view of a thread profiler).

use crate::sync::{lock, AtomicU64, Mutex, Ordering};
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Worker threads of the pool.
    pub threads: usize,
    /// Time covered by the histogram.
    pub elapsed: Duration,
    /// Tasks: forks made (each fork's second half runs once, on its thread or a thief; a half
    /// whose first half panicked is dropped instead), scope spawns, and calls handed to the
    /// workers because no run slot was free.
    pub tasks: u64,
    /// Fork halves made visible to other threads (promoted from private to shared).
    pub shared: u64,
    /// Jobs taken from another thread's queue or from the injector.
    pub steals: u64,
    /// Times a worker went to sleep for lack of work.
    pub parks: u64,
    /// Sleeping workers woken because work appeared.
    pub wakeups: u64,
    /// `busy_histogram[j]`: time during which exactly `j` threads were busy, `j = 0..=threads`
    /// (outside callers count towards `j`; the vector grows if they push it past `threads`).
    pub busy_histogram: Vec<Duration>,
    /// Busy time of each worker thread.
    pub busy_per_worker: Vec<Duration>,
    /// Busy time of callers from outside the pool.
    pub busy_outside: Duration,
    /// Total time threads waited for a run slot because of the concurrency limit.
    pub limit_wait: Duration,
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
            shared: self.shared.saturating_sub(earlier.shared),
            steals: self.steals.saturating_sub(earlier.steals),
            parks: self.parks.saturating_sub(earlier.parks),
            wakeups: self.wakeups.saturating_sub(earlier.wakeups),
            busy_histogram: sub_all(&self.busy_histogram, &earlier.busy_histogram),
            busy_per_worker: sub_all(&self.busy_per_worker, &earlier.busy_per_worker),
            busy_outside: self.busy_outside.saturating_sub(earlier.busy_outside),
            limit_wait: self.limit_wait.saturating_sub(earlier.limit_wait),
        }
    }
}

/// One thread's counters (a worker's, or the shared slot of outside callers).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) tasks: AtomicU64,
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

#[derive(Debug)]
struct Levels {
    last: Instant,
    busy: usize,
    time_at: Vec<Duration>,
}

/// Where the pool's counters live.
#[derive(Debug)]
pub(crate) struct Collector {
    pub(crate) enabled: bool,
    start: Instant,
    pub(crate) workers: Box<[CachePadded<Counters>]>,
    pub(crate) outside: CachePadded<Counters>,
    levels: Mutex<Levels>,
}

impl Collector {
    pub(crate) fn new(threads: usize, enabled: bool) -> Collector {
        let start = Instant::now();
        Collector {
            enabled,
            start,
            workers: (0..threads).map(|_| CachePadded::default()).collect(),
            outside: CachePadded::default(),
            levels: Mutex::new(Levels {
                last: start,
                busy: 0,
                time_at: vec![Duration::ZERO; threads + 1],
            }),
        }
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
        let mut l = lock(&self.levels);
        let since = now.saturating_duration_since(l.last);
        let at = l.busy;
        if at >= l.time_at.len() {
            l.time_at.resize(at + 1, Duration::ZERO);
        }
        l.time_at[at] += since;
        l.last = now;
        l.busy = l.busy.saturating_add_signed(delta);
        now
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let threads = self.workers.len();
        let mut s = Stats {
            threads,
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
        let now = Instant::now();
        let l = lock(&self.levels);
        let mut hist = l.time_at.clone();
        if l.busy >= hist.len() {
            hist.resize(l.busy + 1, Duration::ZERO);
        }
        hist[l.busy] += now.saturating_duration_since(l.last);
        s.busy_histogram = hist;
        s.elapsed = now.saturating_duration_since(self.start);
        s
    }
}
