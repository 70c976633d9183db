//! The timeline trace against the pool's own counters: the exported JSON is well
//! formed, every slice that begins ends, the counts agree with `stats()` over the same window,
//! the concurrency level derived from the busy marks agrees with the stats' histogram, and a
//! full ring says how much it dropped. No timing assertions: only agreement between two records
//! of the same run.

mod common;

use common::debug_count;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use throttle::trace::{EventKind, Role, Span, Trace};
use throttle::Pool;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = throttle::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Frames-like work: bursts of parallel loops separated by short pauses of the caller, so that
/// workers sleep and wake between them.
fn frames(pool: &Pool, n: usize) -> u64 {
    let mut total = 0;
    for _ in 0..n {
        total += pool.map_reduce(
            0..64,
            || 0u64,
            |i| (0..2_000u64).fold(i as u64, |a, x| a.wrapping_mul(31).wrapping_add(x)) & 1,
            |a, b| a + b,
        );
        std::thread::sleep(Duration::from_micros(300));
    }
    total
}

/// Waits until `f` holds; fails after two minutes (a hang guard, not a timing target).
fn wait_until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(120), "never: {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn json_of(trace: &Trace) -> serde_json::Value {
    let mut out = Vec::new();
    trace.write_chrome_json(&mut out).unwrap();
    serde_json::from_slice(&out).expect("the export is valid JSON")
}

/// Every B has its E on the same thread, with the same name, properly nested.
fn check_pairs(doc: &serde_json::Value) -> usize {
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let mut stacks: HashMap<u64, Vec<String>> = HashMap::new();
    let mut pairs = 0;
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        let tid = e["tid"].as_u64().unwrap();
        if ph == "B" || ph == "E" {
            let ts = e["ts"].as_f64().unwrap();
            let last = last_ts.entry(tid).or_insert(f64::MIN);
            assert!(ts >= *last, "slices of thread {tid} out of order");
            *last = ts;
        }
        match ph {
            "B" => stacks
                .entry(tid)
                .or_default()
                .push(e["name"].as_str().unwrap().to_string()),
            "E" => {
                let open = stacks.get_mut(&tid).and_then(|s| s.pop());
                assert_eq!(open.as_deref(), e["name"].as_str(), "E without its B");
                pairs += 1;
            }
            _ => {}
        }
    }
    for (tid, s) in stacks {
        assert!(s.is_empty(), "thread {tid} has unclosed slices {s:?}");
    }
    pairs
}

#[test]
fn export_is_valid_json_with_matched_slices_names_flows_and_counters() {
    let pool = Pool::builder()
        .threads(2)
        .thread_name(|i| format!("crunch-{i}"))
        .build()
        .unwrap();
    pool.start_trace();
    let before = pool.stats();
    assert_eq!(pool.install(|| fib(22)), 17711);
    frames(&pool, 20);
    // The wake-up arrows below need a worker that slept and was woken. The frames' pauses let
    // the workers sleep on a quiet machine; on a loaded one (tests run in parallel) a worker
    // may still be spinning when the next frame comes, so more frames follow, each once a
    // worker sleeps, until the stats count a wake-up (each has its Wake event:
    // `counts_agree_with_stats_over_the_same_window`). The waker counts it; the woken worker
    // records its end of sleep (the arrow's head) when it runs, so every worker then runs a
    // broadcast operation, which it can only do after that record.
    let start = Instant::now();
    while pool.stats().wakeups == before.wakeups {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no wake-up counted in two minutes of frames"
        );
        wait_until("a worker asleep between frames", || {
            debug_count(&pool, "sleeping") > 0
        });
        frames(&pool, 1);
    }
    pool.broadcast(|_| ());
    let trace = pool.stop_trace();
    let doc = json_of(&trace);
    assert!(check_pairs(&doc) > 0, "no slices at all");
    let events = doc["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"crunch-0") && names.contains(&"crunch-1"));
    assert!(names.iter().any(|n| n.starts_with("caller")));
    let has = |ph: &str, name: &str| events.iter().any(|e| e["ph"] == ph && e["name"] == name);
    assert!(has("C", "concurrency") && has("C", "limit"));
    // Workers slept between the frames, and someone woke them: a wake-up flow starts and ends.
    assert!(
        has("s", "wake") && has("f", "wake"),
        "no wake-up arrows: {} wake-ups matched in the trace, {} Wake events, {} dropped, \
         {} wake-ups in the stats",
        trace.wakeups().len(),
        trace.count(|k| matches!(k, EventKind::Wake { .. })),
        trace.dropped(),
        pool.stats().wakeups - before.wakeups,
    );
    let starts = events.iter().filter(|e| e["ph"] == "s").count();
    let finishes = events.iter().filter(|e| e["ph"] == "f").count();
    assert_eq!(starts, finishes, "every flow that starts finishes");
    assert_eq!(doc["otherData"]["dropped_events"], 0);
    // The outside call carries its call site.
    assert!(trace.sites.iter().any(|s| s.contains("trace.rs")));
}

/// Runs `f` while every worker of `pool` is held inside a broadcast operation. A worker counts
/// a park in the stats a few instructions (and an affinity syscall) before it records its
/// sleep in the trace, and adds its task counts at flushes; a window edge drawn while a worker
/// is between the two would split one record from the other. Held workers are between none:
/// each finished its bookkeeping before it took the operation, and does none until released.
fn with_workers_held<R>(pool: &Pool, f: impl FnOnce() -> R) -> R {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (arrived, release) = (AtomicUsize::new(0), AtomicBool::new(false));
    std::thread::scope(|s| {
        s.spawn(|| {
            pool.broadcast(|_| {
                arrived.fetch_add(1, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            })
        });
        while arrived.load(Ordering::SeqCst) < pool.threads() {
            std::thread::yield_now();
        }
        let r = f();
        release.store(true, Ordering::SeqCst);
        r
    })
}

#[test]
fn counts_agree_with_stats_over_the_same_window() {
    let pool = Pool::new(2).unwrap();
    pool.install(|| fib(15)); // warm up
    let before = with_workers_held(&pool, || {
        pool.start_trace();
        pool.stats()
    });
    pool.install(|| fib(24));
    frames(&pool, 10);
    let (d, trace) = with_workers_held(&pool, || (pool.stats().since(&before), pool.stop_trace()));
    assert_eq!(trace.dropped(), 0);
    // Tasks are counted where the stats count them (at the same flushes).
    assert_eq!(trace.tasks(), d.tasks, "tasks");
    assert_eq!(
        trace.count(|k| matches!(k, EventKind::Steal { .. })),
        d.steals,
        "steals"
    );
    let sleeps = trace.count(|k| {
        matches!(
            k,
            EventKind::Begin {
                span: Span::Sleep,
                ..
            }
        )
    });
    assert_eq!(sleeps, d.parks, "parks");
    assert_eq!(trace.count(|k| matches!(k, EventKind::Share)), d.shared);
    // Every idle wake-up the stats count has its Wake event (limit hand-offs add more).
    assert!(trace.count(|k| matches!(k, EventKind::Wake { .. })) >= d.wakeups);
    // Every run the trace shows ran a job: at least the stolen ones.
    let runs = trace.count(|k| {
        matches!(
            k,
            EventKind::Begin {
                span: Span::Run,
                ..
            }
        )
    });
    assert!(runs >= d.steals);
}

/// The busy marks carry the very instants the stats' histogram was credited with, so the two
/// views of the concurrency level agree up to the edges of the window (the trace's window
/// starts a little before the first stats snapshot and ends a little after the second). Both
/// edges are drawn while no thread holds a slot (so none is busy): what lies between a
/// snapshot and its edge of the trace is time at level 0, however long a loaded host makes it.
/// The stated tolerance is 2 % of the busy thread-time plus 1 ms.
#[test]
fn concurrency_from_the_trace_agrees_with_the_stats_histogram() {
    let pool = Pool::new(2).unwrap();
    let idle = || debug_count(&pool, "active") == 0;
    wait_until("a new pool idle", idle);
    pool.start_trace();
    let before = pool.stats();
    pool.install(|| fib(25));
    frames(&pool, 20);
    wait_until("the pool idle after its work", idle);
    let d = pool.stats().since(&before);
    let trace = pool.stop_trace();
    let thread_time = |h: &[Duration]| -> f64 {
        h.iter()
            .enumerate()
            .map(|(j, d)| j as f64 * d.as_secs_f64())
            .sum()
    };
    let from_stats = thread_time(&d.busy_histogram);
    let from_trace = thread_time(&trace.busy_histogram());
    let tolerance = 0.02 * from_stats + 0.001;
    assert!(
        (from_stats - from_trace).abs() <= tolerance,
        "busy thread-time: stats {from_stats:.6} s, trace {from_trace:.6} s"
    );
    // Level by level, the time at each level agrees as well (same tolerance on each).
    let h = trace.busy_histogram();
    for (j, s) in d.busy_histogram.iter().enumerate().skip(1) {
        let t = h.get(j).copied().unwrap_or_default();
        assert!(
            (s.as_secs_f64() - t.as_secs_f64()).abs() <= tolerance,
            "level {j}: stats {s:?}, trace {t:?}"
        );
    }
    let max = trace.concurrency().iter().map(|c| c.1).max().unwrap();
    assert!(max <= 3, "two workers and one caller, yet {max} busy");
}

#[test]
fn a_full_ring_reports_what_it_dropped_and_still_exports_pairs() {
    let pool = Pool::builder()
        .threads(2)
        .trace_capacity(32)
        .build()
        .unwrap();
    pool.start_trace();
    pool.install(|| fib(22));
    frames(&pool, 10);
    let trace = pool.stop_trace();
    assert_eq!(trace.capacity, 32);
    assert!(trace.dropped() > 0, "nothing dropped from 32-event rings");
    for t in trace.tracks().iter().filter(|t| t.role != Role::Pool) {
        assert!(t.events.len() <= 32);
    }
    let doc = json_of(&trace);
    check_pairs(&doc);
    assert_eq!(doc["otherData"]["dropped_events"], trace.dropped());
    let names = doc["traceEvents"].as_array().unwrap();
    assert!(names
        .iter()
        .any(|e| e["name"] == "thread_name"
            && e["args"]["name"].as_str().unwrap().contains("dropped")));
}

#[test]
fn limit_changes_and_limit_waits_are_recorded() {
    let pool = Pool::new(2).unwrap();
    pool.start_trace();
    pool.set_concurrency(1).unwrap();
    pool.install(|| fib(20));
    pool.set_concurrency(2).unwrap();
    let trace = pool.stop_trace();
    assert_eq!(trace.initial_limit, Some(2));
    let limits: Vec<u32> = trace.limit().iter().map(|l| l.1).collect();
    assert_eq!(limits, [2, 1, 2]);
}

#[test]
fn recording_twice_gives_two_separate_traces_and_stopping_idle_is_empty() {
    let pool = Pool::new(2).unwrap();
    assert!(pool.stop_trace().tracks().is_empty());
    pool.start_trace();
    pool.install(|| fib(18));
    let first = pool.stop_trace();
    pool.start_trace();
    let second = pool.stop_trace();
    assert!(first.tasks() > 0);
    assert_eq!(second.tasks(), 0);
    // Events after a stop are not part of any trace.
    pool.install(|| fib(18));
    assert!(pool.stop_trace().tracks().is_empty());
}

/// `THROTTLE_TRACE=FILE.json` records the global pool from its start, and
/// `write_global_trace` writes it there. Run in a child process (this test binary re-run with the
/// variable set), because the global pool starts once per process.
#[test]
fn the_env_var_traces_the_global_pool() {
    if std::env::var_os("THROTTLE_TRACE_TEST_CHILD").is_some() {
        assert_eq!(throttle::join(|| fib(20), || fib(19)), (6765, 4181));
        let written = throttle::trace::write_global_trace().expect("writes");
        assert!(written.is_some(), "the variable names a file");
        return;
    }
    let path =
        std::env::temp_dir().join(format!("throttle-global-trace-{}.json", std::process::id()));
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "the_env_var_traces_the_global_pool",
            "--nocapture",
        ])
        .env("THROTTLE_TRACE_TEST_CHILD", "1")
        .env(throttle::trace::TRACE_ENV, &path)
        .env("THROTTLE_JOBSERVER", "off")
        .output()
        .expect("child runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("trace written")).expect("JSON");
    check_pairs(&doc);
    let events = doc["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["ph"] == "B" && e["name"] == "call"));
    let _ = std::fs::remove_file(&path);
}
