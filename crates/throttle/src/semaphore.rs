//! `Throttle`: a FIFO-fair counting semaphore for any threads, with a live limit.
//!
//! Protocol (see also `sleep/README.md`, section "Throttle"): one mutex guards `held`, `limit`
//! and the FIFO of waiters. A permit is taken at once only if nobody queues and `held < limit`,
//! so no newcomer overtakes a waiter. On release, if the oldest waiter may run, the permit is
//! *handed over* (`held` unchanged, the waiter marked granted and signalled); otherwise it is
//! returned. A timed-out waiter that was granted meanwhile keeps its permit (no permit is lost,
//! none is duplicated).

use crate::sync::{lock, Arc, AtomicBool, Condvar, Mutex, Ordering};
use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Waiter {
    /// Set under the throttle's lock when a permit is handed to this waiter.
    granted: AtomicBool,
    cv: Condvar,
}

#[derive(Debug)]
struct Inner {
    limit: usize,
    held: usize,
    queue: VecDeque<Arc<Waiter>>,
}

/// A counting semaphore that limits how many threads run a section at once (seed 000's
/// "semaphore throttle").
///
/// Waiters are served in arrival order, so none starves. The limit can change while threads hold
/// permits: raising it admits waiters at once; lowering it lets current holders finish and admits
/// no one until `held < limit` again.
///
/// # Examples
/// ```
/// use throttle::Throttle;
/// let gate = Throttle::new(2);
/// let a = gate.acquire();
/// let b = gate.acquire();
/// assert!(gate.try_acquire().is_none());
/// drop(a);
/// assert!(gate.try_acquire().is_some());
/// drop(b);
/// assert_eq!(gate.available(), 2);
/// ```
pub struct Throttle {
    inner: Mutex<Inner>,
}

/// A held permit of a [`Throttle`]; dropping it (also while unwinding) gives the permit back.
#[must_use = "the permit is released as soon as it is dropped"]
pub struct Permit<'a> {
    throttle: &'a Throttle,
}

impl Throttle {
    /// A throttle admitting `limit` threads at once. A limit of 0 admits nobody until
    /// [`set_limit`](Throttle::set_limit) raises it.
    pub fn new(limit: usize) -> Throttle {
        Throttle {
            inner: Mutex::new(Inner {
                limit,
                held: 0,
                queue: VecDeque::new(),
            }),
        }
    }

    /// Waits for a permit, in FIFO order.
    ///
    /// # Examples
    /// ```
    /// let gate = throttle::Throttle::new(1);
    /// {
    ///     let _permit = gate.acquire();
    ///     assert_eq!(gate.available(), 0);
    /// }
    /// assert_eq!(gate.available(), 1);
    /// ```
    pub fn acquire(&self) -> Permit<'_> {
        self.acquire_inner(None)
            .expect("an untimed acquire always ends with a permit")
    }

    /// Takes a permit if one is free and nobody is queued for it.
    ///
    /// # Examples
    /// ```
    /// let gate = throttle::Throttle::new(1);
    /// let p = gate.try_acquire();
    /// assert!(p.is_some());
    /// assert!(gate.try_acquire().is_none());
    /// ```
    pub fn try_acquire(&self) -> Option<Permit<'_>> {
        let mut inner = lock(&self.inner);
        if inner.queue.is_empty() && inner.held < inner.limit {
            inner.held += 1;
            Some(Permit { throttle: self })
        } else {
            None
        }
    }

    /// Waits at most `timeout` for a permit.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// let gate = throttle::Throttle::new(1);
    /// let _held = gate.acquire();
    /// assert!(gate.acquire_timeout(Duration::from_millis(5)).is_none());
    /// ```
    pub fn acquire_timeout(&self, timeout: Duration) -> Option<Permit<'_>> {
        // A timeout too large for the clock (`Duration::MAX`) is no timeout at all.
        self.acquire_inner(Instant::now().checked_add(timeout))
    }

    fn acquire_inner(&self, deadline: Option<Instant>) -> Option<Permit<'_>> {
        let mut inner = lock(&self.inner);
        if inner.queue.is_empty() && inner.held < inner.limit {
            inner.held += 1;
            return Some(Permit { throttle: self });
        }
        let me = Arc::new(Waiter {
            granted: AtomicBool::new(false),
            cv: Condvar::new(),
        });
        inner.queue.push_back(me.clone());
        loop {
            // Relaxed: `granted` is only written and read under `inner`'s lock.
            if me.granted.load(Ordering::Relaxed) {
                return Some(Permit { throttle: self });
            }
            match deadline {
                None => {
                    inner = me.cv.wait(inner).unwrap_or_else(|p| p.into_inner());
                }
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        // Give up: leave the queue. A grant cannot race us: it happens under the
                        // lock we hold, and was checked just above.
                        inner.queue.retain(|w| !Arc::ptr_eq(w, &me));
                        // Leaving may unblock the next waiter if we were first in line.
                        Self::grant(&mut inner);
                        return None;
                    }
                    inner = me
                        .cv
                        .wait_timeout(inner, d - now)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
            }
        }
    }

    /// Hands permits to queued waiters, oldest first, while the limit allows.
    fn grant(inner: &mut Inner) {
        while inner.held < inner.limit {
            let Some(w) = inner.queue.pop_front() else {
                return;
            };
            inner.held += 1;
            w.granted.store(true, Ordering::Relaxed);
            w.cv.notify_one();
        }
    }

    fn release(&self) {
        let mut inner = lock(&self.inner);
        inner.held -= 1;
        Self::grant(&mut inner);
    }

    /// Changes the limit. Raising it admits waiters at once; lowering it takes effect as holders
    /// release their permits.
    ///
    /// # Examples
    /// ```
    /// let gate = throttle::Throttle::new(1);
    /// let _a = gate.acquire();
    /// gate.set_limit(2);
    /// assert!(gate.try_acquire().is_some());
    /// ```
    pub fn set_limit(&self, limit: usize) {
        let mut inner = lock(&self.inner);
        inner.limit = limit;
        Self::grant(&mut inner);
    }

    /// The current limit.
    pub fn limit(&self) -> usize {
        lock(&self.inner).limit
    }

    /// Permits free right now (`limit - held`, or 0 while over a lowered limit).
    pub fn available(&self) -> usize {
        let inner = lock(&self.inner);
        inner.limit.saturating_sub(inner.held)
    }

    /// Threads waiting for a permit right now.
    pub fn waiting(&self) -> usize {
        lock(&self.inner).queue.len()
    }
}

impl fmt::Debug for Throttle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = lock(&self.inner);
        f.debug_struct("Throttle")
            .field("limit", &inner.limit)
            .field("held", &inner.held)
            .field("waiting", &inner.queue.len())
            .finish()
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.throttle.release();
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").finish_non_exhaustive()
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    //! `RUSTFLAGS="--cfg loom" cargo test -p throttle --release --lib loom_models`.

    use super::*;
    use crate::sync::AtomicUsize;
    use loom::thread;

    /// Mutual exclusion at limit 1 and no lost permit, with a concurrent timed acquire.
    #[test]
    fn permits_are_exclusive_and_never_lost() {
        loom::model(|| {
            let gate = Arc::new(Throttle::new(1));
            let inside = Arc::new(AtomicUsize::new(0));
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let (gate, inside) = (gate.clone(), inside.clone());
                    thread::spawn(move || {
                        let _p = gate.acquire();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        inside.fetch_sub(1, Ordering::SeqCst);
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(gate.available(), 1);
        });
    }

    /// A timed acquire that gives up (loom models no time, so a zero timeout gives up at its
    /// first check) races a release: it either gets the permit or leaves the queue, and the
    /// permit is never lost or handed to a waiter that has left.
    #[test]
    fn a_timed_acquire_gives_up_without_losing_a_permit() {
        loom::model(|| {
            let gate = Arc::new(Throttle::new(1));
            let inside = Arc::new(AtomicUsize::new(0));
            let (g, i) = (gate.clone(), inside.clone());
            let holder = thread::spawn(move || {
                let _p = g.acquire();
                assert_eq!(i.fetch_add(1, Ordering::SeqCst), 0);
                i.fetch_sub(1, Ordering::SeqCst);
            });
            if let Some(_p) = gate.acquire_timeout(std::time::Duration::ZERO) {
                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                inside.fetch_sub(1, Ordering::SeqCst);
            }
            holder.join().unwrap();
            assert_eq!(gate.available(), 1);
        });
    }

    /// Raising the limit while a thread waits admits it (no lost grant).
    #[test]
    fn set_limit_admits_waiters() {
        loom::model(|| {
            let gate = Arc::new(Throttle::new(0));
            let g = gate.clone();
            let t = thread::spawn(move || drop(g.acquire()));
            gate.set_limit(1);
            t.join().unwrap();
            assert_eq!(gate.available(), 1);
        });
    }
}
