//! `Throttle`: mutual exclusion up to the limit, FIFO order, timeouts, and a live limit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use throttle::Throttle;

#[test]
fn never_more_holders_than_the_limit() {
    for limit in 1..=4 {
        let gate = Throttle::new(limit);
        let inside = AtomicUsize::new(0);
        let max = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..16 {
                s.spawn(|| {
                    for _ in 0..200 {
                        let _p = gate.acquire();
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        max.fetch_max(n, Ordering::SeqCst);
                        std::hint::spin_loop();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(max.load(Ordering::SeqCst) <= limit);
        assert_eq!(gate.available(), limit);
    }
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let gate = Throttle::new(1);
    let order = Mutex::new(Vec::new());
    let held = gate.acquire();
    std::thread::scope(|s| {
        for i in 0..6 {
            let (gate, order) = (&gate, &order);
            s.spawn(move || {
                let _p = gate.acquire();
                order.lock().unwrap().push(i);
            });
            // Wait until thread i is queued before starting the next one.
            let deadline = Instant::now() + Duration::from_secs(120);
            while gate.waiting() < i + 1 {
                assert!(Instant::now() < deadline, "thread {i} never queued");
                std::thread::yield_now();
            }
        }
        drop(held);
    });
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4, 5]);
}

#[test]
fn try_acquire_does_not_overtake_waiters() {
    let gate = Throttle::new(1);
    let held = gate.acquire();
    std::thread::scope(|s| {
        s.spawn(|| drop(gate.acquire()));
        while gate.waiting() == 0 {
            std::thread::yield_now();
        }
        // The limit allows nobody now; and once we release, the waiter comes first.
        assert!(gate.try_acquire().is_none());
        drop(held);
    });
    assert_eq!(gate.available(), 1);
}

#[test]
fn timeout_gives_up_and_leaves_the_queue() {
    let gate = Throttle::new(1);
    let held = gate.acquire();
    let t = Instant::now();
    assert!(gate.acquire_timeout(Duration::from_millis(30)).is_none());
    assert!(t.elapsed() >= Duration::from_millis(30));
    assert_eq!(gate.waiting(), 0);
    drop(held);
    assert!(gate.acquire_timeout(Duration::from_millis(30)).is_some());
}

#[test]
fn live_limit_changes() {
    let gate = Throttle::new(0);
    assert!(gate.try_acquire().is_none());
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let _p = gate.acquire();
        });
        while gate.waiting() == 0 {
            std::thread::yield_now();
        }
        gate.set_limit(1); // admits the waiter at once
        h.join().unwrap();
    });
    let a = gate.acquire();
    gate.set_limit(3);
    let b = gate.try_acquire().expect("raised limit admits more");
    gate.set_limit(1); // lowered: holders keep their permits
    assert_eq!(gate.available(), 0);
    assert!(gate.try_acquire().is_none());
    drop(a);
    assert!(gate.try_acquire().is_none(), "still over the lowered limit");
    drop(b);
    assert_eq!(gate.available(), 1);
    assert_eq!(gate.limit(), 1);
}
