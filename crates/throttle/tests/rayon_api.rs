//! rayon-core's API on throttle: the behaviours a rayon program relies on that the
//! doctests do not pin down (orderings, where closures run, yielding, adoption).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use throttle::{ThreadPoolBuilder, Yield};

fn pool(n: usize) -> throttle::ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).build().unwrap()
}

#[test]
fn scope_fifo_runs_a_workers_spawns_oldest_first() {
    // One worker: the body runs on it, every spawn lands in its own queue, and it takes its
    // own newest job first (plain `spawn`s here run 49, 48, ...); the FIFO queue must still
    // start the tasks in spawn order.
    let order = Mutex::new(Vec::new());
    pool(1).scope_fifo(|s| {
        for i in 0..50 {
            let order = &order;
            s.spawn_fifo(move |_| order.lock().unwrap().push(i));
        }
    });
    assert_eq!(order.into_inner().unwrap(), (0..50).collect::<Vec<_>>());
}

#[test]
fn spawn_fifo_from_a_worker_keeps_spawn_order() {
    let p = pool(1);
    let (tx, rx) = channel();
    p.install(|| {
        for i in 0..30 {
            let tx = tx.clone();
            throttle::spawn_fifo(move || tx.send(i).unwrap());
        }
    });
    drop(tx);
    assert_eq!(rx.iter().collect::<Vec<_>>(), (0..30).collect::<Vec<_>>());
}

#[test]
fn yield_local_runs_the_threads_own_spawn() {
    let p = pool(1);
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let (before, y, after) = p.install(move || {
        throttle::spawn(move || r.store(true, Ordering::SeqCst));
        let before = throttle::current_thread_has_pending_tasks();
        let y = throttle::yield_local();
        (before, y, throttle::current_thread_has_pending_tasks())
    });
    assert_eq!(before, Some(true));
    assert_eq!(y, Some(Yield::Executed));
    assert!(ran.load(Ordering::SeqCst));
    assert_eq!(after, Some(false));
}

#[test]
fn yield_now_runs_pending_work_and_reports_idle_after() {
    let p = pool(1);
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let ys = p.install(move || {
        throttle::spawn(move || {
            m.fetch_add(1, Ordering::SeqCst);
        });
        (throttle::yield_now(), throttle::yield_now())
    });
    assert_eq!(ys, (Some(Yield::Executed), Some(Yield::Idle)));
    assert_eq!(n.load(Ordering::SeqCst), 1);
}

#[test]
fn join_context_reports_migration_truthfully() {
    let p = pool(2);
    for _ in 0..200 {
        let (a, (b_migrated, b_thread)) = p.install(|| {
            let me = std::thread::current().id();
            let (a, b) = throttle::join_context(
                |ctx| (ctx.migrated(), std::thread::current().id() == me),
                |ctx| {
                    std::hint::black_box((0..2000u64).sum::<u64>());
                    (ctx.migrated(), std::thread::current().id())
                },
            );
            (a, (b.0, b.1 != me))
        });
        assert_eq!(a, (false, true));
        assert_eq!(b_migrated, b_thread);
    }
}

#[test]
fn install_runs_on_a_worker_and_pool_install_on_the_caller() {
    let p = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("rayon-api-{i}"))
        .build()
        .unwrap();
    let on_worker = p.install(|| std::thread::current().name().map(str::to_owned));
    assert!(on_worker.unwrap().starts_with("rayon-api-"));
    let me = std::thread::current().id();
    // Through Deref, throttle's own install: the caller takes part.
    assert_eq!(
        throttle::Pool::install(&p, || std::thread::current().id()),
        me
    );
}

#[test]
fn in_place_scope_body_runs_here_and_tasks_borrow() {
    let p = pool(2);
    let me = std::thread::current().id();
    let mut parts = vec![0usize; 16];
    let body_thread = p.in_place_scope(|s| {
        for (i, x) in parts.iter_mut().enumerate() {
            s.spawn(move |_| *x = i * i);
        }
        std::thread::current().id()
    });
    assert_eq!(body_thread, me);
    assert_eq!(parts, (0..16).map(|i| i * i).collect::<Vec<_>>());
}

#[test]
fn spawn_broadcast_reaches_every_worker_once() {
    let p = pool(3);
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    p.spawn_broadcast(move |ctx| {
        let same = throttle::current_thread_index() == Some(ctx.index());
        tx.lock().unwrap().send((ctx.index(), same)).unwrap();
    });
    let mut seen: Vec<(usize, bool)> = rx.iter().take(3).collect();
    seen.sort();
    assert_eq!(seen, [(0, true), (1, true), (2, true)]);
}

#[test]
fn spawn_handler_threads_return_from_run_after_drop() {
    let handles = Mutex::new(Vec::new());
    let p = ThreadPoolBuilder::new()
        .num_threads(3)
        .spawn_handler(|t| {
            let h = std::thread::Builder::new().spawn(move || t.run())?;
            handles.lock().unwrap().push(h);
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(p.install(throttle::current_num_threads), 3);
    drop(p);
    let handles = handles.into_inner().unwrap();
    assert_eq!(handles.len(), 3);
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn spawn_handler_error_fails_the_build() {
    let mut calls = 0;
    let err = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|t| {
            calls += 1;
            if t.index() == 1 {
                return Err(std::io::Error::other("no more threads"));
            }
            std::thread::spawn(move || t.run());
            Ok(())
        })
        .build()
        .unwrap_err();
    assert_eq!(calls, 2);
    assert_eq!(err.to_string(), "no more threads");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn adopted_thread_is_worker_zero_and_runs_queued_work_when_it_yields() {
    // A pool whose only thread is this one: nothing runs its spawns unless it yields.
    let p = ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .unwrap();
    assert_eq!(throttle::current_thread_index(), Some(0));
    assert_eq!(p.current_thread_index(), Some(0));
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    p.spawn(move || r.store(true, Ordering::SeqCst));
    assert!(!ran.load(Ordering::SeqCst));
    assert_eq!(throttle::yield_now(), Some(Yield::Executed));
    assert!(ran.load(Ordering::SeqCst));
    // Parallel calls from the adopted thread run in its pool.
    let (a, b) = throttle::join(throttle::current_num_threads, || 7);
    assert_eq!((a, b), (1, 7));
    let err = ThreadPoolBuilder::new()
        .use_current_thread()
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "The current thread is already part of another thread pool."
    );
    drop(p);
    assert_eq!(throttle::current_thread_index(), None);
    // Adoptable again once released.
    let q = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap();
    assert_eq!(q.install(|| throttle::join(|| 1, || 2)), (1, 2));
}

#[test]
fn dropping_an_adopted_pool_runs_what_only_worker_zero_could() {
    // One thread, adopted: its spawns wait in its own queue; the drop must run them, not hang.
    let ran = Arc::new(AtomicUsize::new(0));
    let p = ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .unwrap();
    for _ in 0..3 {
        let r = ran.clone();
        p.spawn(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
    }
    let r = ran.clone();
    p.spawn_broadcast(move |_| {
        r.fetch_add(10, Ordering::SeqCst);
    });
    drop(p);
    assert_eq!(ran.load(Ordering::SeqCst), 13);

    // Two threads: worker 0's share of a broadcast is mail only this thread can run.
    let p = ThreadPoolBuilder::new()
        .num_threads(2)
        .use_current_thread()
        .build()
        .unwrap();
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    p.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    drop(p);
    let mut seen: Vec<usize> = rx.iter().collect();
    seen.sort();
    assert_eq!(seen, [0, 1]);
}
