//! Which thread of a pool burns CPU while the pool idles after a burst, and how: the per-thread
//! view behind `throttle-bench --bench idle_cpu`, which sums all threads.
//!
//! ```sh
//! cargo run --release -p throttle --example idle_threads -- 12
//! ```
//!
//! The argument is the number of rounds (default 12). Each round builds a pool of 2 threads,
//! runs a burst of 128 short tasks on it (which starts its threads), idles 50 ms, runs a
//! second burst (the bench's order), then reads every thread's CPU clock before and after one
//! second of sleep of the main thread, and prints each thread that ran meanwhile: its name, the
//! CPU time it gained (and how much of it in the second's first 5 ms, read in between), and
//! how many times it was scheduled in during the second (from
//! `/proc/self/task/<tid>/schedstat`; 0: it was already running when the second began, and
//! never ran again after it stopped). The CPU time comes from the thread's clock, not from
//! `schedstat`'s first field, which lags a thread on a CPU by up to a tick (the bench's doc).

use std::collections::HashMap;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

/// A thread's name, CPU time in ns (its CPU clock) and times scheduled in (`schedstat`).
struct ThreadTime {
    name: String,
    cpu_ns: u64,
    scheduled: u64,
}

/// One clock per thread, kept across readings so that two readings under one key are of one
/// thread: a key is the thread id and the number of the clock opened for it (a new thread given
/// an ended thread's id gets a new key).
#[derive(Default)]
struct Clocks {
    open: HashMap<i32, (u64, throttle_probe::ThreadClock)>,
    opened: u64,
}

impl Clocks {
    /// Every thread of this process now, by key.
    fn read(&mut self) -> HashMap<(i32, u64), ThreadTime> {
        let mut all = HashMap::new();
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return all;
        };
        for entry in dir.flatten() {
            let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            let path = entry.path();
            let Ok(stat) = std::fs::read_to_string(path.join("schedstat")) else {
                continue;
            };
            let fields: Vec<u64> = stat
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            if fields.len() < 3 {
                continue;
            }
            let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            let cpu = match self
                .open
                .get(&tid)
                .and_then(|(n, c)| Some((*n, c.cpu_time()?)))
            {
                Some(known) => Some(known),
                None => throttle_probe::ThreadClock::of_thread(tid).and_then(|clock| {
                    self.opened += 1;
                    let cpu = clock.cpu_time()?;
                    self.open.insert(tid, (self.opened, clock));
                    Some((self.opened, cpu))
                }),
            };
            let Some((number, cpu)) = cpu else {
                continue;
            };
            all.insert(
                (tid, number),
                ThreadTime {
                    name: name.trim().to_string(),
                    cpu_ns: u64::try_from(cpu.as_nanos()).unwrap_or(u64::MAX),
                    scheduled: fields[2],
                },
            );
        }
        // Ended threads' clocks are closed (each holds a descriptor).
        self.open.retain(|_, (_, clock)| clock.cpu_time().is_some());
        all
    }
}

/// A burst of 128 short tasks.
fn burst(pool: &throttle::Pool) {
    pool.for_range(0..128, |_| {
        let mut x = 0u64;
        for i in 0..20_000u64 {
            x = black_box(x.wrapping_add(i));
        }
    });
}

fn main() -> ExitCode {
    let rounds = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 12,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("error: rounds must be a positive whole number");
            return ExitCode::from(2);
        }
    };
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    let mut clocks = Clocks::default();
    for round in 0..rounds {
        let pool = throttle::Pool::new(2).expect("a pool of 2 threads");
        burst(&pool);
        std::thread::sleep(Duration::from_millis(50));
        burst(&pool);
        let before = clocks.read();
        std::thread::sleep(Duration::from_millis(5));
        let early = clocks.read();
        std::thread::sleep(Duration::from_millis(995));
        let after = clocks.read();
        let mut line = format!("round {round}:");
        let mut quiet = true;
        for (key, now) in &after {
            if key.0 == me {
                continue;
            }
            match before.get(key) {
                Some(then) if now.cpu_ns > then.cpu_ns => {
                    quiet = false;
                    let first = early
                        .get(key)
                        .map_or(0, |e| e.cpu_ns.saturating_sub(then.cpu_ns));
                    line += &format!(
                        " {} +{} µs ({} µs in the first 5 ms; scheduled in {} times)",
                        now.name,
                        (now.cpu_ns - then.cpu_ns) / 1000,
                        first / 1000,
                        now.scheduled - then.scheduled
                    );
                }
                Some(_) => {}
                None => {
                    quiet = false;
                    line += &format!(" {} started", now.name);
                }
            }
        }
        for (key, then) in &before {
            if !after.contains_key(key) {
                quiet = false;
                line += &format!(" {} exited", then.name);
            }
        }
        if quiet {
            line += " no thread of the pool ran";
        }
        println!("{line}");
        drop(pool);
    }
    ExitCode::SUCCESS
}
