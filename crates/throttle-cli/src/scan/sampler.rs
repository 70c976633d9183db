//! Run-queue wait of a child's *worker* threads, sampled while it runs.
//!
//! The probe reads a child's schedstat when it has exited but is not yet reaped, which is exact
//! for its main thread; worker threads that exit earlier have left `/proc` by then. For a
//! multi-threaded program (`xz -T4`) that would miss most of the waiting. So one background
//! thread reads `/proc/<pid>/task/<tid>/schedstat` of every watched child every few
//! milliseconds and keeps the last value of each non-main thread; [`ThreadSampler::finish`] adds
//! them up. The result is a lower bound: what a thread waited after its last sample, and threads
//! that lived less than one interval, are missed. The main thread is not sampled here (the
//! probe's zombie read covers it exactly), so nothing is counted twice.
//!
//! The sampler runs in the profiler's process, not the child's; its cost is one directory read
//! and one small file read per child thread per interval; idle, it wakes once per interval.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use throttle_probe::schedstat::SchedStat;

#[derive(Default)]
struct State {
    /// Watched child pid → (thread id → last run-queue wait seen).
    watched: BTreeMap<u32, BTreeMap<u64, Duration>>,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock can only come from this module's own bookkeeping; the
        // map stays consistent (each update is one insert), so the poison flag is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A background thread that samples the schedstat of watched children's threads.
pub struct ThreadSampler {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl ThreadSampler {
    /// Starts the sampling thread, reading every `interval`.
    pub fn start(interval: Duration) -> std::io::Result<ThreadSampler> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("scan-sampler".into())
            .spawn(move || sample_loop(&worker, interval))?;
        Ok(ThreadSampler {
            shared,
            handle: Some(handle),
        })
    }

    /// Starts watching child `pid`.
    pub fn watch(&self, pid: u32) {
        // No wake-up: the sampler looks at the watch list at its next tick, so a command that
        // ends within one interval costs no context switch to the sampler at all.
        self.shared.lock().watched.insert(pid, BTreeMap::new());
    }

    /// Stops watching `pid` and returns the run-queue wait of its non-main threads as last
    /// sampled, and how many such threads were seen.
    pub fn finish(&self, pid: u32) -> (Duration, usize) {
        let seen = self.shared.lock().watched.remove(&pid).unwrap_or_default();
        (seen.values().sum(), seen.len())
    }
}

impl Drop for ThreadSampler {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(h) = self.handle.take() {
            // The loop has no panicking paths; a failed join only means it is already gone.
            let _ = h.join();
        }
    }
}

fn sample_loop(shared: &Shared, interval: Duration) {
    let mut state = shared.lock();
    loop {
        if state.stop {
            return;
        }
        // Tick every interval (only `Drop` notifies). A child that ends within its first
        // interval is read by the probe alone, so short commands cost no sampling at all.
        state = shared
            .wake
            .wait_timeout(state, interval)
            .map(|(s, _)| s)
            .unwrap_or_else(|e| e.into_inner().0);
        if state.stop {
            return;
        }
        if state.watched.is_empty() {
            continue;
        }
        let pids: Vec<u32> = state.watched.keys().copied().collect();
        drop(state);
        let readings: Vec<(u32, Vec<(u64, Duration)>)> = pids
            .into_iter()
            .map(|pid| (pid, read_threads(pid)))
            .collect();
        state = shared.lock();
        for (pid, threads) in readings {
            // Only if still watched: `finish` may have taken it meanwhile.
            if let Some(seen) = state.watched.get_mut(&pid) {
                for (tid, wait) in threads {
                    let slot = seen.entry(tid).or_default();
                    *slot = (*slot).max(wait);
                }
            }
        }
    }
}

/// Run-queue wait of every thread of `pid` except its main thread.
fn read_threads(pid: u32) -> Vec<(u64, Duration)> {
    let dir = format!("/proc/{pid}/task");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let tid: u64 = e.file_name().to_str()?.parse().ok()?;
            if tid == u64::from(pid) {
                return None;
            }
            let s = SchedStat::read(Path::new(&e.path().join("schedstat"))).ok()?;
            Some((tid, s.run_queue_wait))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_the_threads_of_this_process() {
        let sampler = ThreadSampler::start(Duration::from_millis(2)).unwrap();
        let me = std::process::id();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            // At least the helper thread (and the sampler itself, and test harness threads),
            // once the sampler has taken a sample: watched again until it has (every 10 ms,
            // for at most two minutes; a loaded machine may run the sampler late).
            let sampled = Path::new("/proc/self/task/").exists()
                && SchedStat::read(Path::new("/proc/thread-self/schedstat")).is_ok();
            let start = std::time::Instant::now();
            let threads = loop {
                sampler.watch(me);
                std::thread::sleep(Duration::from_millis(10));
                let (_, threads) = sampler.finish(me);
                if threads >= 1 || !sampled || start.elapsed() > Duration::from_secs(120) {
                    break threads;
                }
            };
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            if sampled {
                assert!(
                    threads >= 1,
                    "no thread of this process sampled in two minutes"
                );
            }
        });
        assert_eq!(sampler.finish(me), (Duration::ZERO, 0), "no longer watched");
    }
}
