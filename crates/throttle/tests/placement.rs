//! Wake-up placement never overrides the user's CPU affinity: a mask set on a worker after the
//! pool started is what the worker keeps (narrowed to one CPU at most while it sleeps, never
//! widened), and with placement off the pool never touches affinity at all.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::time::Duration;
use throttle::Pool;

/// The CPUs in a `Cpus_allowed_list` line such as `0-3,6`.
fn parse_list(list: &str) -> BTreeSet<usize> {
    let mut cpus = BTreeSet::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => {
                cpus.insert(part.parse().unwrap());
            }
        }
    }
    cpus
}

/// The CPUs thread `tid` may run on (`None`: the whole process's main thread).
fn allowed(tid: Option<&str>) -> BTreeSet<usize> {
    let path = match tid {
        Some(tid) => format!("/proc/self/task/{tid}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = std::fs::read_to_string(path).unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list in status");
    parse_list(line)
}

/// Thread ids of this process's threads whose name starts with `prefix`.
fn tids_named(prefix: &str) -> Vec<String> {
    let mut tids = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").unwrap() {
        let tid = entry.unwrap().file_name().into_string().unwrap();
        let comm =
            std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).unwrap_or_default();
        if comm.trim().starts_with(prefix) {
            tids.push(tid);
        }
    }
    tids
}

fn set_affinity(tid: &str, cpus: &BTreeSet<usize>) {
    // SAFETY: an all-zero cpu_set_t is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: `c` comes from this machine's allowed list, below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let tid: libc::pid_t = tid.parse().unwrap();
    // SAFETY: the pointer and size describe a valid cpu_set_t; `tid` is one of our threads.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity");
}

fn work(pool: &Pool) {
    for _ in 0..20 {
        let n = pool.map_reduce(0..100_000, || 0u64, |i| i as u64, |a, b| a + b);
        assert_eq!(n, 4_999_950_000);
        // Long enough for the workers to give up searching and sleep.
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_mask_set_after_the_pool_started_is_kept() {
    let process = allowed(None);
    if process.len() < 2 {
        eprintln!("placement: this process may use one CPU only; nothing to steer here");
        return;
    }
    let pool = Pool::builder()
        .threads(2)
        .thread_name(|i| format!("plc-on-{i}"))
        .placement(true)
        .build()
        .unwrap();
    work(&pool);
    let tids = tids_named("plc-on-");
    assert_eq!(tids.len(), 2);
    // Pin the first worker to a CPU that is not its home. Its home shows while it sleeps (the
    // mask is then narrowed to it); a one-CPU mask equal to the home, set while the worker
    // sleeps, cannot be told from the pool's own narrowing (documented on the builder).
    let tid = &tids[0];
    // The worker goes to sleep once its search finds nothing (a minute is a hang guard).
    let mut home = allowed(Some(tid));
    let start = std::time::Instant::now();
    while home.len() != 1 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
        home = allowed(Some(tid));
    }
    assert_eq!(home.len(), 1, "a sleeping worker waits on its home CPU");
    let user: BTreeSet<usize> = process.difference(&home).copied().take(1).collect();
    set_affinity(tid, &user);
    let tids = vec![tid.clone()];
    for _ in 0..10 {
        work(&pool);
        // Asleep: the mask is the user's (it has one CPU, so it is not narrowed).
        for tid in &tids {
            assert_eq!(
                allowed(Some(tid)),
                user,
                "sleeping worker {tid} lost the affinity set after the pool started"
            );
        }
        // Awake: each worker reads its own mask while it runs a task.
        let masks = std::sync::Mutex::new(Vec::new());
        pool.for_range_grain(0..256, 1, |_| {
            let me = std::thread::current();
            if me.name() == Some("plc-on-0") {
                let mask = parse_list(
                    std::fs::read_to_string("/proc/thread-self/status")
                        .unwrap()
                        .lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .unwrap(),
                );
                masks.lock().unwrap().push(mask);
            }
            std::thread::sleep(Duration::from_micros(100));
        });
        for mask in masks.into_inner().unwrap() {
            assert_eq!(mask, user, "a running worker's affinity was widened");
        }
    }
}

#[test]
fn placement_off_never_touches_affinity() {
    let process = allowed(None);
    let pool = Pool::builder()
        .threads(2)
        .thread_name(|i| format!("plc-off-{i}"))
        .placement(false)
        .build()
        .unwrap();
    work(&pool);
    let tids = tids_named("plc-off-");
    assert_eq!(tids.len(), 2);
    for _ in 0..10 {
        work(&pool);
        for tid in &tids {
            assert_eq!(allowed(Some(tid)), process);
        }
    }
}

/// Placement is opt-in: a pool built without saying never narrows affinity, so a
/// sleeping worker keeps the process's mask (with placement on, it would show its one home CPU).
#[test]
fn placement_is_off_by_default() {
    let process = allowed(None);
    if std::env::var_os("THROTTLE_PLACEMENT").is_some() {
        eprintln!("placement: THROTTLE_PLACEMENT is set; the default is not what this tests");
        return;
    }
    let pool = Pool::builder()
        .threads(2)
        .thread_name(|i| format!("plc-dflt-{i}"))
        .build()
        .unwrap();
    work(&pool);
    let tids = tids_named("plc-dflt-");
    assert_eq!(tids.len(), 2);
    for _ in 0..10 {
        work(&pool);
        for tid in &tids {
            assert_eq!(
                allowed(Some(tid)),
                process,
                "a default pool changed affinity"
            );
        }
    }
}
