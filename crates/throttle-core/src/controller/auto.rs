//! Auto mode: the thread that drives the [`Controller`] for a pool.
//!
//! Once per sample (a sixteenth of the interval while it scans, half of it while it is settled
//! and work runs, the whole interval while the pool is idle: `sampling_period`) it reads what
//! the pool already counts (no atomics are added to the fork
//! path; loops add their items to a per-thread counter as blocks end): loop items, else tasks
//! (forks and spawns), as the completed work (`work_done`), the busy histogram as the busy
//! thread-time, and the run-queue wait of the workers from `/proc/self/task/<tid>/schedstat`.
//! It steps the controller and applies its `k` through the same limit machinery as
//! [`Pool::set_concurrency`](crate::Pool::set_concurrency). Decisions other than "hold" go to a
//! bounded log ([`Pool::controller_log`](crate::Pool::controller_log)).

use super::{Config, Controller, ControllerEvent, Reason, Sample};
use crate::registry::Registry;
use crate::sync::Arc;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex as StdMutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Default controller interval: 50 ms. Long enough that an interval holds many tasks of a
/// typical fork-join workload (the throughput signal is a count) and that reading the workers'
/// schedstat files stays small (one `pread` per worker per sample: a settled pool with work
/// samples twice per interval, 40 times a second, about 2.8 ms of CPU per second for 64
/// threads, `RunQueue`; an idle one 20 times); short enough that a 20-interval settle takes
/// one second.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(50);

/// Fewest completed tasks that make a sample: with fewer, one task more or less moves the
/// rate by more than 3 %, the noise the controller is built for. 32.
const MIN_SAMPLE_TASKS: f64 = 32.0;
/// A sample grows for at most this many intervals while it has too few tasks.
const MAX_SAMPLE_INTERVALS: u32 = 8;

/// While the controller scans or verifies (not settled), it samples this many times per
/// interval: 3.125 ms at the default 50 ms. A scan point is a question about the work ("how
/// fast at this `k`?"), and while it is asked the pool may run at a poor `k`: a 2-thread pool's
/// cold start measures `k = 1` for two or three samples, and a program whose parallel part is
/// short pays for every millisecond of it (rayon-demo's `matmul`, about 70 ms at `k = 2`, was
/// 1.24 × the fixed `k = 2`'s time with 12.5 ms samples and 1.06 × with these, 30 alternated
/// runs each; throttle-controller/src/README.md, "Scan samples: a sixteenth of the interval"), for a
/// question that a 2 × difference answers in a few milliseconds. A sample still grows until it
/// holds [`MIN_SAMPLE_TASKS`] units of work, so coarse work gets the samples it needs; a
/// growing sample is read again once it has about doubled (`drive`), so its readings stay few.
const SCAN_DIVISOR: u32 = 16;

/// Settled and with work running, the controller samples this many times per interval: 25 ms
/// at the default 50 ms. A change of the work is seen when the settled CUSUM fires, which
/// takes three samples at the largest step (`Controller::step`, settled), and the samples'
/// length is most of the time a phase of new work runs at the old `k`: with 50 ms samples the
/// phases workload's cpu phase found at `k = 1` put `k = 2` in force after 261-302 and 33-362
/// ms in two runs of `throttle adapt --workloads phases,jobs,steady --reps 5`, with 25 ms after
/// 72-129 and 54-155 ms (alternated; throttle-controller/src/README.md, "Settled samples"). The noise
/// of the shorter samples is learned like any other (the CUSUM's threshold is in units of
/// it), the quiet after fruitless rescans is a time (`QUIET_BASE`), not a count, and a sample
/// moves the CUSUM by half a step unless it shows a clear change (`Config::cusum_period`): a
/// moderate shift, which on this host is mostly its own speed stepping, starts a rescan no
/// sooner than with 50 ms samples. An idle pool keeps the whole interval: nothing to see
/// sooner, and half the wake-ups.
const SETTLED_DIVISOR: u32 = 2;

/// The sampling period for the controller's phase: a [`SETTLED_DIVISOR`]th of `interval` when
/// settled with work running, `interval` when settled and idle, and a [`SCAN_DIVISOR`]th of it
/// while it scans (none below 1 ms, unless `interval` itself is shorter).
fn sampling_period(interval: Duration, settled: bool, idle: bool) -> Duration {
    let divisor = match (settled, idle) {
        (true, true) => 1,
        (true, false) => SETTLED_DIVISOR,
        (false, _) => SCAN_DIVISOR,
    };
    (interval / divisor).max(interval.min(Duration::from_millis(1)))
}

/// How long the controller waits for its next reading: the sampling period `base`, or, while
/// the sample being taken has grown for `growing` without being ready, about as long again
/// (its length doubles with each reading), at most `interval`. A scan sample of coarse work
/// then takes a few readings to reach [`MIN_SAMPLE_TASKS`], not one every scan period (each
/// reading is one `pread` per worker).
fn reading_period(base: Duration, growing: Duration, interval: Duration) -> Duration {
    base.max(growing.min(interval))
}

/// The transition after a change of the limit, excluded from the next sample: a fifth of the
/// sampling period (10 ms settled, 0.625 ms scanning, by default): a lowered limit takes effect
/// at task boundaries, usually within microseconds (`throttle-bench --bench limit_response`);
/// tasks of a few ms make a sample grow to [`MIN_SAMPLE_TASKS`] anyway.
const TRANSITION_DIVISOR: u32 = 5;

/// Entries the controller log keeps (the oldest go first): a full scan of a 256-thread pool
/// is about a dozen entries, so this holds the last many dozen decisions.
const LOG_CAPACITY: usize = 1024;

/// Locks a std mutex, ignoring poisoning (the data here is a log and a flag: always valid).
fn lock<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pool's side of auto mode: the running controller thread, if any, and the log (which
/// outlives a switch back to a fixed limit).
#[derive(Debug)]
pub(crate) struct AutoSlot {
    running: StdMutex<Option<Running>>,
    /// Mirrors `running.is_some()` for the loops' per-call check (one relaxed load).
    on: std::sync::atomic::AtomicBool,
    log: std::sync::Arc<StdMutex<Log>>,
    born: Instant,
}

/// The decisions kept, and how many were made in all (the kept ones are the last
/// [`LOG_CAPACITY`]).
#[derive(Debug, Default)]
struct Log {
    events: VecDeque<ControllerEvent>,
    total: u64,
}

impl Log {
    fn push(&mut self, e: ControllerEvent) {
        if self.events.len() == LOG_CAPACITY {
            self.events.pop_front();
        }
        self.events.push_back(e);
        self.total += 1;
    }
}

#[derive(Debug)]
struct Running {
    stop: std::sync::Arc<Stop>,
    handle: JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Stop {
    flag: StdMutex<bool>,
    cv: Condvar,
}

impl Stop {
    /// Sleeps for `d` or until stopped; true if stopped.
    fn wait(&self, d: Duration) -> bool {
        // An interval too long for the clock (`Duration::MAX`) waits for the stop alone.
        let Some(deadline) = Instant::now().checked_add(d) else {
            let mut stopped = lock(&self.flag);
            while !*stopped {
                stopped = match self.cv.wait(stopped) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
            }
            return true;
        };
        let mut stopped = lock(&self.flag);
        loop {
            if *stopped {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            stopped = match self.cv.wait_timeout(stopped, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    fn set(&self) {
        *lock(&self.flag) = true;
        self.cv.notify_all();
    }
}

impl AutoSlot {
    pub(crate) fn new() -> AutoSlot {
        AutoSlot {
            running: StdMutex::new(None),
            on: std::sync::atomic::AtomicBool::new(false),
            log: Default::default(),
            born: Instant::now(),
        }
    }

    pub(crate) fn is_on(&self) -> bool {
        lock(&self.running).is_some()
    }

    /// Like `is_on`, without the lock (may lag a concurrent switch by a call). Inline: the
    /// data-parallel calls of a user's crate ask it on every call.
    #[inline]
    pub(crate) fn is_on_fast(&self) -> bool {
        self.on.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts (or restarts, from a cold start) the controller thread.
    ///
    /// `set_limit` is how a choice becomes the limit: [`apply_limit`] for a pool without a
    /// jobserver, the budget's user-limit setter for one with (so the budget caps the choice).
    pub(crate) fn start(
        &self,
        registry: &Arc<Registry>,
        interval: Duration,
        set_limit: SetLimit,
    ) -> Result<(), std::io::Error> {
        let mut running = lock(&self.running);
        if let Some(r) = running.take() {
            r.stop.set();
            let _ = r.handle.join();
        }
        let stop = std::sync::Arc::new(Stop::default());
        let (s, reg, log, born) = (stop.clone(), registry.clone(), self.log.clone(), self.born);
        let handle = std::thread::Builder::new()
            .name("throttle-controller".into())
            .spawn(move || drive(&reg, interval, &s, &log, born, &set_limit))?;
        *running = Some(Running { stop, handle });
        self.on.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Stops and joins the controller thread, if one runs. The limit stays where it was.
    pub(crate) fn stop(&self) {
        let r = {
            let mut running = lock(&self.running);
            self.on.store(false, std::sync::atomic::Ordering::Relaxed);
            running.take()
        };
        if let Some(r) = r {
            r.stop.set();
            // The thread never waits on the pool's work, so this join is short (at most one
            // step of the controller).
            let _ = r.handle.join();
        }
    }

    pub(crate) fn log(&self) -> Vec<ControllerEvent> {
        lock(&self.log).events.iter().copied().collect()
    }

    /// Decisions made in all (not "hold"), and the latest of them.
    pub(crate) fn decisions(&self) -> (u64, Option<ControllerEvent>) {
        let log = lock(&self.log);
        (log.total, log.events.back().copied())
    }
}

/// How the controller's choice becomes the pool's limit. The controller sets the first term of
/// `effective k = min(user's or controller's k, 1 + jobserver tokens held)`; with a jobserver
/// this is the budget's setter of that term, without one it is [`apply_limit`].
pub(crate) type SetLimit = Box<dyn Fn(usize) + Send>;

/// Applies a limit as `Pool::set_concurrency` does: set it, and wake a worker for waiting work
/// if it rose.
pub(crate) fn apply_limit(registry: &Registry, k: usize) {
    let before = registry.sleep.load().limit();
    registry.sleep.set_limit(k);
    if k > before && registry.has_work() {
        registry.publish_wake();
    }
}

/// What the pool had counted at one instant.
struct Reading {
    at: Instant,
    tasks: u64,
    /// Loop indices and iterator items finished (`Stats::items`).
    items: u64,
    /// Time with no thread busy (level 0 of the busy histogram).
    idle: Duration,
    /// Busy thread-time: Σ level × time at that level, from the busy histogram.
    busy: Duration,
    runq_ns: u64,
}

impl Reading {
    fn take(registry: &Registry, runq: &mut RunQueue) -> Reading {
        let s = registry.stats.snapshot();
        let busy = s
            .busy_histogram
            .iter()
            .enumerate()
            .map(|(j, d)| d.as_secs_f64() * j as f64)
            .sum::<f64>();
        Reading {
            at: Instant::now(),
            tasks: s.tasks,
            items: s.items,
            idle: s.busy_histogram.first().copied().unwrap_or_default(),
            busy: Duration::from_secs_f64(busy),
            runq_ns: runq.total_ns(&registry.holders.first(registry.threads())),
        }
    }

    /// The sample of the interval from `earlier` to `self`. Its length is the *active* time
    /// (some thread busy), not the wall time: an interval in which the pool ran out of work
    /// for a while measures the rate while it had work, so that a program that pauses between
    /// batches does not look like a throughput drop. An interval active less than a quarter
    /// of the time is reported empty (idle: it teaches nothing).
    fn since(&self, earlier: &Reading, k: usize) -> Sample {
        let wall = self.at.saturating_duration_since(earlier.at);
        let active = wall.saturating_sub(self.idle.saturating_sub(earlier.idle));
        if active < wall / 4 {
            return Sample {
                k,
                interval: wall,
                work: 0.0,
                busy: Duration::ZERO,
                runq_wait: Duration::ZERO,
            };
        }
        Sample {
            k,
            interval: active,
            work: work_done(
                self.tasks.saturating_sub(earlier.tasks),
                self.items.saturating_sub(earlier.items),
            ),
            busy: self.busy.saturating_sub(earlier.busy),
            runq_wait: Duration::from_nanos(self.runq_ns.saturating_sub(earlier.runq_ns)),
        }
    }
}

/// The work of an interval, in units that do not depend on `k`: the loop indices and iterator
/// items finished if any were (a loop at `k = 1` makes no tasks, since it splits only for a
/// hungry thread, but it finishes as many items per second as its speed allows), else the tasks
/// (forks, all counted whether shared or plain, and spawns: as many at every `k`). Counting
/// both would count a loop's splits too, which exist only at `k > 1`.
fn work_done(tasks: u64, items: u64) -> f64 {
    if items > 0 {
        items as f64
    } else {
        tasks as f64
    }
}

/// Whether `sample`, grown over `waited` intervals, goes to the controller now. A sample with
/// too little finished work for a rate grows, for at most [`MAX_SAMPLE_INTERVALS`]: one with a
/// few tasks or items (long tasks), and one whose threads were busy but finished nothing yet (a
/// task or block longer than the interval). Before the second case grew, such intervals went
/// to the controller as idle, and five in a row mid-scan put another `k` in force
/// (`idle-best`) while the work was still running.
///
/// `expected` is the work the controller's expected rate (`Controller::expected_rate`: the
/// settled baseline, or the best point of a scan) would have done in the sample, 0 if it has
/// none. A sample whose work, even with three standard deviations of a count added, stays
/// below [`Config::scan_stop`] of that is a clear drop, which is what the settled controller
/// looks for and what makes a scan point a clear loser: it goes to the controller at once
/// instead of growing. (The phases workload's lock phase runs at about 1 000 items/s at
/// `k = 2`: found at the settled `k = 2` of a cpu phase, its first 25 ms samples grew to 50 ms
/// each before the drop could count, and a rescan from the settled `k = 1` measured the top
/// for 38 ms at a tenth of `k = 1`'s speed, where 12.5 ms held a dozen items against a
/// hundred expected.) A sample with no finished work still grows: its threads may be inside
/// long tasks.
fn sample_ready(sample: &Sample, waited: u32, cfg: &Config, expected: f64) -> bool {
    let in_progress = sample.work > 0.0 || sample.utilisation() >= cfg.idle_utilisation;
    let clear_drop = sample.work > 0.0
        && sample.work + 3.0 * sample.work.sqrt() + 3.0 < cfg.scan_stop * expected;
    clear_drop || !(in_progress && sample.work < MIN_SAMPLE_TASKS && waited < MAX_SAMPLE_INTERVALS)
}

/// The workers' run-queue wait so far: the second field of each worker's
/// `/proc/self/task/<tid>/schedstat`. `throttle-probe` has a full schedstat reader; the runtime
/// may not depend on the probe, and this is the one number it needs.
///
/// Each file is opened once and read again from offset 0 (`pread`) every interval: the kernel
/// writes the line anew on every read at 0. Opening is most of a read's cost here: one pass
/// over 64 threads' files took 560-1060 us with an open, read and close per file, 69 us with
/// the files kept open (one process of 64 threads, 500 passes; with an open per file the
/// controller's cost grows with threads). The descriptors (close-on-exec) live as long as auto
/// mode; a worker that exits leaves its file answering ESRCH, and a thread id reused later is
/// never read by mistake, as a path could be.
#[derive(Default)]
struct RunQueue {
    /// Per worker index: the thread id its file belongs to, and the file (`None` where it
    /// could not be opened).
    files: Vec<(u32, Option<std::fs::File>)>,
}

impl RunQueue {
    /// The sum over `tids` (indexed by worker; 0: not started).
    fn total_ns(&mut self, tids: &[u32]) -> u64 {
        if self.files.len() < tids.len() {
            self.files.resize_with(tids.len(), || (0, None));
        }
        let mut sum = 0;
        for (slot, &tid) in self.files.iter_mut().zip(tids) {
            if tid == 0 {
                continue;
            }
            if slot.0 != tid {
                let path = format!("/proc/self/task/{tid}/schedstat");
                *slot = (tid, std::fs::File::open(path).ok());
            }
            if let Some(ns) = slot.1.as_ref().and_then(runq_wait_ns) {
                sum += ns;
            }
        }
        sum
    }
}

/// The run-queue wait in a schedstat file, read from its start.
fn runq_wait_ns(file: &std::fs::File) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// How long before a reading the controller asks the participants for their counts: a tenth
/// of the sampling period (0.31 ms while scanning, 5 ms settled by default). A thread that
/// forks publishes at its next push, microseconds later; one inside a long leaf publishes when
/// the leaf ends, as before.
fn flush_lead(period: Duration) -> Duration {
    period / 10
}

/// Asks the participants to publish their counts (`Registry::request_flush`), waits
/// [`flush_lead`] for the answers, and reads. `None` if stopped meanwhile.
///
/// Both ends of a sample are read this way, so a sample holds the forks made between two
/// requests: those of the `k` it is attributed to (a change of `k` is followed by a transition
/// longer than the lead before the next sample's first reading).
fn fresh_reading(
    registry: &Registry,
    runq: &mut RunQueue,
    stop: &Stop,
    period: Duration,
) -> Option<Reading> {
    registry.request_flush();
    if stop.wait(flush_lead(period)) {
        return None;
    }
    Some(Reading::take(registry, runq))
}

/// The controller thread's loop.
fn drive(
    registry: &Registry,
    interval: Duration,
    stop: &Stop,
    log: &StdMutex<Log>,
    born: Instant,
    set_limit: &SetLimit,
) {
    let mut cfg = Config::new(registry.threads());
    // Settled samples are shorter than the interval while work runs: their CUSUM steps weigh
    // their length, except clear changes (`Config::cusum_period`).
    cfg.cusum_period = Some(interval);
    let mut ctl = Controller::new(cfg);
    // Cold start: the scan begins at the top (capped by the budget, if any).
    set_limit(ctl.k());
    let mut runq = RunQueue::default();
    let first = sampling_period(interval, false, false);
    let Some(mut prev) = fresh_reading(registry, &mut runq, stop, first) else {
        return;
    };
    // Whether the last sample found the pool idle (it then samples the whole interval).
    let mut idle = false;
    // How long the sample being taken has grown without being ready (zero after a sample
    // went to the controller): `reading_period`.
    let mut growing = Duration::ZERO;
    loop {
        let base = sampling_period(interval, ctl.is_settled(), idle);
        let period = reading_period(base, growing, interval);
        if stop.wait(period - flush_lead(period)) {
            return;
        }
        let Some(now) = fresh_reading(registry, &mut runq, stop, period) else {
            return;
        };
        let old_k = registry.sleep.load().limit();
        let sample = now.since(&prev, old_k);
        // How long the sample has grown, in whole intervals (scan samples are shorter).
        let grown = now.at.saturating_duration_since(prev.at);
        let waited =
            u32::try_from(grown.as_nanos() / interval.as_nanos().max(1)).unwrap_or(u32::MAX);
        let expected = ctl
            .expected_rate()
            .map_or(0.0, |rate| rate * sample.interval.as_secs_f64());
        if !sample_ready(&sample, waited.max(1), ctl.config(), expected) {
            growing = grown;
            continue;
        }
        growing = Duration::ZERO;
        prev = now;
        let d = ctl.step(&sample);
        idle = d.reason == Reason::Idle;
        registry
            .trace()
            .record_pool(crate::trace::model::EventKind::Controller {
                k: d.k as u32,
                reason: d.reason,
            });
        // `old_k` is the effective limit: under a jobserver it can be below the controller's
        // choice (too few tokens), and then the sample is attributed to the `k` that ran.
        // Logged before the transition below, which a stop may end: every change counted in
        // the stats is in the log.
        if d.k != old_k || !matches!(d.reason, Reason::Hold | Reason::Idle) {
            lock(log).push(ControllerEvent {
                at: born.elapsed(),
                old_k,
                new_k: d.k,
                reason: d.reason,
                throughput: sample.rate(),
            });
        }
        if d.k != old_k {
            set_limit(d.k);
            registry.stats.count_controller_change();
            // The next sample starts after a short transition: threads over a lowered limit
            // finish their current task, woken ones start. Measuring it would blur two `k`s.
            // Scaled to the period of the sample that follows it, not of the one just taken:
            // a settled pool's rescan that changes `k` at once (a small pool's rescan seeded
            // at the top starts below it) waited the settled 10 + 5 ms (then) at the new `k`
            // before its first scan sample, where a scan waited 2.5 + 1.25 ms (with the 12.5 ms
            // scan samples of then).
            let next = sampling_period(interval, ctl.is_settled(), idle);
            if stop.wait(next / TRANSITION_DIVISOR) {
                return;
            }
            let Some(p) = fresh_reading(registry, &mut runq, stop, next) else {
                return;
            };
            prev = p;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{sample_ready, work_done, RunQueue, Stop, MAX_SAMPLE_INTERVALS};
    use crate::controller::{Config, Sample};
    use std::time::Duration;

    /// The kept-open schedstat files read the live value, skip workers not started, and
    /// read nothing (no error, no stale value) from a thread that exited; a new thread id in a
    /// worker's place gets its own file.
    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn the_run_queue_reader_follows_threads_through_kept_open_files() {
        let tid_of = || {
            // SAFETY: gettid has no preconditions and cannot fail.
            (unsafe { libc::gettid() }) as u32
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            tx.send(tid_of()).unwrap();
            done_rx.recv().unwrap();
        });
        let other = rx.recv().unwrap();
        let me = tid_of();
        let mut runq = RunQueue::default();
        runq.total_ns(&[0, me, other]);
        assert!(
            runq.files[0].1.is_none(),
            "a worker not started has no file"
        );
        assert!(runq.files[1].1.is_some() && runq.files[2].1.is_some());
        // Our own wait only grows; the file is read again from its start.
        let read = |q: &RunQueue, i: usize| q.files[i].1.as_ref().and_then(super::runq_wait_ns);
        let before = read(&runq, 1).expect("our own schedstat reads");
        std::thread::yield_now();
        assert!(read(&runq, 1).unwrap() >= before);
        done_tx.send(()).unwrap();
        worker.join().unwrap();
        // `join` returns when the thread's id is cleared, a moment before the kernel lets the
        // task go: wait for that (a hang guard of a minute) before looking.
        let gone = std::time::Instant::now();
        while read(&runq, 2).is_some() && gone.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            read(&runq, 2),
            None,
            "an exited thread's file reads nothing"
        );
        // The worker's place now holds this thread: a file of its own.
        runq.total_ns(&[0, me, me]);
        assert_eq!(runq.files[2].0, me);
        assert!(read(&runq, 2).is_some());
    }

    /// Scan samples are a sixteenth of the interval, settled ones half of it while work runs
    /// and the whole interval while the pool is idle; a short interval is not cut below 1 ms
    /// (nor lengthened).
    #[test]
    fn the_scan_samples_sixteen_times_per_interval_and_the_settled_controller_twice() {
        let ms = Duration::from_millis;
        assert_eq!(super::sampling_period(ms(50), true, false), ms(25));
        assert_eq!(super::sampling_period(ms(50), true, true), ms(50));
        for idle in [false, true] {
            assert_eq!(
                super::sampling_period(ms(50), false, idle),
                Duration::from_micros(3_125)
            );
        }
        assert_eq!(super::sampling_period(ms(10), false, false), ms(1));
        assert_eq!(super::sampling_period(ms(2), false, false), ms(1));
        assert_eq!(super::sampling_period(ms(2), true, false), ms(1));
        assert_eq!(
            super::sampling_period(Duration::from_micros(400), false, false),
            Duration::from_micros(400)
        );
        assert_eq!(
            super::sampling_period(Duration::MAX, false, false),
            Duration::MAX / 16
        );
    }

    /// A sample that keeps growing is read at the scan period first, then each time it has
    /// about doubled, and never less often than once per interval.
    #[test]
    fn a_growing_sample_is_read_again_once_it_has_about_doubled() {
        let us = Duration::from_micros;
        let interval = us(50_000);
        let base = super::sampling_period(interval, false, false);
        let mut grown = Duration::ZERO;
        let mut waits = Vec::new();
        while grown < 4 * interval {
            let wait = super::reading_period(base, grown, interval);
            waits.push(wait.as_micros());
            grown += wait;
        }
        assert_eq!(
            waits,
            [3_125, 3_125, 6_250, 12_500, 25_000, 50_000, 50_000, 50_000]
        );
        // A sample that went to the controller starts again at the base period.
        assert_eq!(super::reading_period(base, Duration::ZERO, interval), base);
        // Settled samples (25 ms) are read no sooner than their own period.
        let settled = super::sampling_period(interval, true, false);
        assert_eq!(super::reading_period(settled, us(3_000), interval), settled);
    }

    /// An interval in which a thread was busy but nothing finished (one long block at
    /// `k = 1`) is work in progress: it grows, and is reported (idle) only after the
    /// longest growth. A truly idle interval is reported at once.
    #[test]
    fn busy_intervals_with_nothing_finished_grow_instead_of_reading_idle() {
        let cfg = Config::new(2);
        let t = Duration::from_millis(50);
        let busy_nothing_done = Sample {
            k: 1,
            interval: t,
            work: 0.0,
            busy: t,
            runq_wait: Duration::ZERO,
        };
        assert!(!sample_ready(&busy_nothing_done, 1, &cfg, 0.0));
        assert!(!sample_ready(
            &busy_nothing_done,
            MAX_SAMPLE_INTERVALS - 1,
            &cfg,
            0.0
        ));
        assert!(sample_ready(
            &busy_nothing_done,
            MAX_SAMPLE_INTERVALS,
            &cfg,
            0.0
        ));
        let idle = Sample {
            busy: Duration::ZERO,
            ..busy_nothing_done
        };
        assert!(sample_ready(&idle, 1, &cfg, 0.0));
        let few = Sample {
            work: 3.0,
            ..busy_nothing_done
        };
        assert!(!sample_ready(&few, 1, &cfg, 0.0));
        let enough = Sample {
            work: 20_000.0,
            ..busy_nothing_done
        };
        assert!(sample_ready(&enough, 1, &cfg, 0.0));
        // Where the expected rate would have done far more: a few units are a clear drop, and
        // go to the controller at once; nothing finished still grows; an expectation that a
        // count of 3 could reach within its noise leaves the rule as it was.
        assert!(sample_ready(&few, 1, &cfg, 250.0));
        assert!(!sample_ready(&busy_nothing_done, 1, &cfg, 250.0));
        assert!(!sample_ready(&few, 1, &cfg, 15.0));
    }

    /// A wait as long as `Duration::MAX` (from `set_concurrency_auto_every(Duration::MAX)`)
    /// waits for the stop instead of panicking on the clock's overflow, which killed the
    /// controller thread while `is_concurrency_auto()` stayed true.
    #[test]
    fn an_endless_interval_waits_for_the_stop() {
        let stop = std::sync::Arc::new(Stop::default());
        let s = stop.clone();
        let waiter = std::thread::spawn(move || s.wait(Duration::MAX));
        std::thread::sleep(Duration::from_millis(20));
        stop.set();
        assert!(waiter.join().expect("the wait panicked"));
        assert!(!Stop::default().wait(Duration::from_millis(1)));
    }

    /// Items win when a loop ran: its splits (tasks) exist only at `k > 1` and must not count.
    #[test]
    fn an_interval_with_items_is_judged_by_items_only() {
        assert_eq!(work_done(7, 20_000), 20_000.0);
        assert_eq!(work_done(0, 20_000), 20_000.0);
        assert_eq!(work_done(350, 0), 350.0);
        assert_eq!(work_done(0, 0), 0.0);
    }
}
