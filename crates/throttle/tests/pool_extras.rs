//! Detached tasks, handlers and thread identity: `Pool::spawn`, `throttle::spawn`,
//! `start_handler`/`exit_handler`/`panic_handler`, `current_thread_index`,
//! `current_num_threads`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use throttle::prelude::*;
use throttle::Pool;

#[test]
fn dropping_a_pool_waits_for_its_detached_tasks() {
    let done = Arc::new(AtomicUsize::new(0));
    let pool = Pool::new(2).unwrap();
    for _ in 0..1000 {
        let done = done.clone();
        pool.spawn(move || {
            std::hint::black_box((0..1000u64).sum::<u64>());
            done.fetch_add(1, Ordering::Relaxed);
        });
    }
    drop(pool);
    assert_eq!(done.load(Ordering::Relaxed), 1000);
}

#[test]
fn detached_panics_reach_the_panic_handler_and_the_pool_goes_on() {
    let caught = Arc::new(Mutex::new(Vec::new()));
    let c = caught.clone();
    let pool = Pool::builder()
        .threads(2)
        .panic_handler(move |payload| {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            c.lock().unwrap().push(msg);
        })
        .build()
        .unwrap();
    for i in 0..10 {
        pool.spawn(move || panic!("task {i}"));
    }
    // A free spawn from inside the pool goes to the same pool and the same handler.
    pool.install(|| throttle::spawn(|| panic!("{}", "inner")));
    assert_eq!(
        pool.install(|| (0..1000u64).into_par_iter().sum::<u64>()),
        499_500
    );
    drop(pool);
    let mut got = caught.lock().unwrap().clone();
    got.sort();
    let mut want: Vec<String> = (0..10).map(|i| format!("task {i}")).collect();
    want.push("inner".into());
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn without_a_handler_a_panic_is_printed_and_the_pool_goes_on() {
    let pool = Pool::new(2).unwrap();
    pool.spawn(|| panic!("printed, not fatal"));
    let (tx, rx) = channel();
    pool.spawn(move || tx.send(1).unwrap());
    assert_eq!(rx.recv().unwrap(), 1);
}

#[test]
fn handlers_run_once_per_worker_with_its_index() {
    let started = Arc::new(Mutex::new(HashSet::new()));
    let exited = Arc::new(Mutex::new(HashSet::new()));
    let (s, e) = (started.clone(), exited.clone());
    let pool = Pool::builder()
        .threads(3)
        .start_handler(move |i| {
            assert_eq!(
                throttle::current_thread_index(),
                None,
                "before the worker loop"
            );
            s.lock().unwrap().insert(i);
        })
        .exit_handler(move |i| {
            e.lock().unwrap().insert(i);
        })
        .build()
        .unwrap();
    assert_eq!(pool.install(throttle::current_num_threads), 3);
    drop(pool);
    let all: HashSet<usize> = (0..3).collect();
    assert_eq!(*started.lock().unwrap(), all);
    assert_eq!(*exited.lock().unwrap(), all);
}

#[test]
fn thread_indices_are_the_workers_own() {
    let pool = Pool::new(3).unwrap();
    let (tx, rx) = channel();
    for _ in 0..30 {
        let tx = tx.clone();
        pool.spawn(move || tx.send(throttle::current_thread_index()).unwrap());
    }
    drop(tx);
    for index in rx {
        assert!(matches!(index, Some(i) if i < 3), "{index:?}");
    }
    assert_eq!(throttle::current_thread_index(), None);
    // Inside `install` the caller takes part without being a worker (None), unless every run
    // slot was busy and the call was handed to a worker.
    let inside = pool.install(throttle::current_thread_index);
    assert!(inside.map_or(true, |i| i < 3), "{inside:?}");
}
