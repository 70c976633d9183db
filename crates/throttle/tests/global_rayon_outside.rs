//! rayon's semantics for the global pool built by the rayon-compatible
//! `ThreadPoolBuilder::build_global`: a call from a thread outside every pool is handed to a
//! worker, and the caller blocks (rayon's `named-threads` test checks it by thread names). Its
//! own binary: it builds the global pool.

use std::collections::HashSet;
use throttle::prelude::*;

#[test]
fn calls_from_outside_run_on_the_named_workers() {
    throttle::ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("hello-name-test-{i}"))
        .build_global()
        .unwrap();
    let names: HashSet<String> = (0..10_000)
        .into_par_iter()
        .flat_map(|_| std::thread::current().name().map(str::to_owned))
        .collect();
    assert!(
        names.iter().all(|n| n.starts_with("hello-name-test-")),
        "items ran on {names:?}"
    );
    // The free join and scope too: both halves on workers, the caller only waits.
    let me = std::thread::current().id();
    let (a, b) = throttle::join(
        || std::thread::current().id(),
        || std::thread::current().id(),
    );
    assert!(a != me && b != me);
    let mut ran = None;
    throttle::scope(|_| ran = Some(std::thread::current().id()));
    assert_ne!(ran, Some(me));
}
