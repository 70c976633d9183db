//! Panics from every API reach the caller; the pool stays usable; no permit is lost.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use throttle::{Pool, Throttle};

fn quiet<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

fn message(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

fn still_works(pool: &Pool) {
    let s = pool.map_reduce(0..10_000, || 0u64, |i| i as u64, |a, b| a + b);
    assert_eq!(s, 49_995_000);
}

#[test]
fn panics_reach_the_caller_and_the_pool_survives() {
    std::panic::set_hook(Box::new(|_| {})); // keep test output readable
    for threads in [1, 2, 4] {
        let pool = Pool::new(threads).unwrap();

        let e = quiet(|| pool.install(|| panic!("install"))).unwrap_err();
        assert_eq!(message(e), "install");
        still_works(&pool);

        let e = quiet(|| pool.join(|| panic!("left"), || 1)).unwrap_err();
        assert_eq!(message(e), "left");
        let e = quiet(|| pool.join(|| 1, || panic!("right"))).unwrap_err();
        assert_eq!(message(e), "right");
        still_works(&pool);

        // Deep in a recursion, with the other half possibly stolen.
        fn boom(depth: u32) -> u32 {
            if depth == 0 {
                panic!("deep");
            }
            let (a, b) = throttle::join(|| boom(depth - 1), || depth);
            a + b
        }
        let e = quiet(|| pool.install(|| boom(12))).unwrap_err();
        assert_eq!(message(e), "deep");
        still_works(&pool);

        let ran = AtomicUsize::new(0);
        let e = quiet(|| {
            pool.scope(|s| {
                for i in 0..50 {
                    let ran = &ran;
                    s.spawn(move |_| {
                        ran.fetch_add(1, Ordering::SeqCst);
                        if i == 17 {
                            panic!("spawned");
                        }
                    });
                }
            })
        })
        .unwrap_err();
        assert_eq!(message(e), "spawned");
        assert_eq!(
            ran.load(Ordering::SeqCst),
            50,
            "every task ran before the scope returned"
        );
        still_works(&pool);

        let e = quiet(|| pool.for_range(0..1000, |i| assert!(i != 500, "range"))).unwrap_err();
        assert!(message(e).contains("range"));
        let e = quiet(|| {
            pool.map_reduce(
                0..1000,
                || 0,
                |i| if i == 999 { panic!("mr") } else { i },
                |a, b| a + b,
            )
        })
        .unwrap_err();
        assert_eq!(message(e), "mr");
        still_works(&pool);
    }
    let _ = std::panic::take_hook();
}

#[test]
fn throttle_permits_come_back_after_panics() {
    let gate = Throttle::new(2);
    std::thread::scope(|s| {
        for i in 0..8 {
            let gate = &gate;
            s.spawn(move || {
                let r = quiet(|| {
                    let _p = gate.acquire();
                    if i % 2 == 0 {
                        panic!("holder {i}");
                    }
                });
                assert_eq!(r.is_err(), i % 2 == 0);
            });
        }
    });
    assert_eq!(gate.available(), 2);
    assert!(gate.acquire_timeout(Duration::from_millis(100)).is_some());
}
