//! `PoolBuilder::build_global` (its own process: the global pool is per process).

use throttle::prelude::*;

#[test]
fn build_global_configures_the_free_functions_once() {
    throttle::Pool::builder()
        .threads(3)
        .thread_name(|i| format!("global-{i}"))
        .build_global()
        .unwrap();
    assert_eq!(throttle::current_num_threads(), 3);
    assert_eq!(throttle::global_pool().unwrap().threads(), 3);
    assert_eq!((0..100u32).into_par_iter().sum::<u32>(), 4950);
    let e = throttle::Pool::builder()
        .threads(2)
        .build_global()
        .unwrap_err();
    assert!(e.to_string().contains("already started"), "{e}");
}
