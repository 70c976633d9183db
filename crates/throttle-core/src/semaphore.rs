//! `Throttle`: a FIFO-fair counting semaphore for any threads, with a live limit.
//!
//! Protocol (see also `sleep/README.md`, section "Throttle"): one mutex guards `held`, `limit`
//! and the FIFO of waiters. A permit is taken at once only if nobody queues and `held < limit`,
//! so no newcomer overtakes a waiter. On release, if the oldest waiter may run, the permit is
//! *handed over* (`held` unchanged, the waiter marked granted and signalled); otherwise it is
//! returned. A timed-out waiter that was granted meanwhile keeps its permit (no permit is lost,
//! none is duplicated).
//!
//! Backed by a jobserver ([`Throttle::with_jobserver`]): the first permit held at a time is the
//! process's implicit slot (no token); every further permit is a jobserver token, read when the
//! permit is taken and written back when it is dropped (also while unwinding). The implicit
//! slot is handed over like a plain permit; a token is read only by the *head* of the queue
//! (one reader at a time, so the FIFO order holds), which polls the jobserver in short steps of
//! [`TOKEN_POLL`] between looks at its grant. Lock order: `inner`, then the connection; the
//! connection is never held while taking `inner`. See `jobserver/README.md`, "Throttle".

#[cfg(not(loom))]
use crate::jobserver::{Jobserver, Token};
use crate::sync::{lock, Arc, AtomicBool, Condvar, Mutex, Ordering};
use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

/// How long the head waiter waits on the jobserver before it looks at its grant again: a permit
/// released in this process reaches a waiter that is polling for a token at most this late.
/// 1 ms, as the pool's budget thread (`jobserver/budget.rs`): far below a job that is worth a
/// jobserver token, and a waiter polls only while it waits.
const TOKEN_POLL: Duration = Duration::from_millis(1);

#[derive(Debug)]
struct Waiter {
    /// Set under the throttle's lock when a permit is handed to this waiter.
    granted: AtomicBool,
    /// Set with `granted` when the permit handed over is the implicit slot (jobserver only).
    implicit: AtomicBool,
    cv: Condvar,
}

#[derive(Debug)]
struct Inner {
    limit: usize,
    held: usize,
    queue: VecDeque<Arc<Waiter>>,
    /// Jobserver only: the implicit slot is not held by a permit.
    implicit_free: bool,
}

/// Under loom the jobserver module is not built (it does I/O): a throttle never has a budget,
/// and these stand-ins only keep the code paths type-checked.
#[cfg(loom)]
enum Token {}

#[cfg(loom)]
struct Budget {
    tokens: std::sync::atomic::AtomicUsize,
    failed: std::sync::atomic::AtomicBool,
}

#[cfg(loom)]
impl Budget {
    fn poll(&self, _wait: Duration) -> Option<Token> {
        None
    }

    fn release(&self, t: Token) {
        match t {}
    }

    fn tidy(&self) {}
}

/// The jobserver side of a [`Throttle`]: the connection and the tokens held now.
#[cfg(not(loom))]
struct Budget {
    conn: std::sync::Mutex<Jobserver>,
    tokens: std::sync::atomic::AtomicUsize,
    /// The jobserver failed once: no more tokens are asked for (the implicit slot still works).
    failed: std::sync::atomic::AtomicBool,
}

#[cfg(not(loom))]
impl Budget {
    fn conn(&self) -> std::sync::MutexGuard<'_, Jobserver> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One step of reading a token, waiting up to `wait`.
    ///
    /// The connection's lock is held only to ask and to read, never across the wait: the wait
    /// is a `poll(2)` on the connection's descriptor without the lock, so a permit released by
    /// another thread meanwhile (which writes its token back through the same connection) never
    /// waits for this one's poll to time out. A readable descriptor may still yield no token
    /// (another process of the build read the byte first): the read does not block, and the
    /// caller comes back after looking at its grant.
    fn poll(&self, wait: Duration) -> Option<Token> {
        if self.failed.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let (first, fd) = {
            let mut conn = self.conn();
            (conn.poll_token(true, Duration::ZERO), conn.readable_fd())
        };
        let got = match first {
            Ok(None) if !wait.is_zero() => {
                // The descriptor outlives this call: the connection is dropped only with the
                // throttle, which `&self` borrows.
                crate::jobserver::wait_readable(fd, wait);
                self.conn().poll_token(true, Duration::ZERO)
            }
            other => other,
        };
        match got {
            Ok(Some(t)) => {
                self.tokens
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Some(t)
            }
            Ok(None) => None,
            Err(e) => {
                self.failed
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                eprintln!(
                    "throttle: warning: jobserver failed ({e}); the throttle runs on its implicit slot"
                );
                None
            }
        }
    }

    /// Writes a token back.
    fn release(&self, t: Token) {
        let r = self.conn().release(t);
        self.tokens
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        if let Err(e) = r {
            eprintln!("throttle: warning: could not return a jobserver token: {e}");
        }
    }

    /// Collects and gives back the answer to a request nobody waits for any more (a throttle
    /// server's socket answers a request late; the waiter that asked got the implicit slot).
    fn tidy(&self) {
        let mut conn = self.conn();
        while conn.has_pending_request() {
            match conn.poll_token(false, Duration::ZERO) {
                Ok(Some(t)) => {
                    if let Err(e) = conn.release(t) {
                        eprintln!("throttle: warning: could not return a jobserver token: {e}");
                    }
                }
                _ => break,
            }
        }
    }
}

/// What a permit holds.
enum Slot {
    /// A permit of a throttle without a jobserver.
    Plain,
    /// The process's implicit jobserver slot (never written back).
    Implicit,
    /// A jobserver token, written back when the permit is dropped.
    Token(Token),
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
    budget: Option<Budget>,
}

/// A held permit of a [`Throttle`]; dropping it (also while unwinding) gives the permit back,
/// and with it the jobserver token it holds, if any.
#[must_use = "the permit is released as soon as it is dropped"]
pub struct Permit<'a> {
    throttle: &'a Throttle,
    slot: Option<Slot>,
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
                implicit_free: true,
            }),
            budget: None,
        }
    }

    /// A throttle admitting at most `limit` threads at once *and* at most 1 + the jobserver
    /// tokens it holds: one budget shared with every process of the build (`make -j`, `cargo`,
    /// `throttle run`).
    ///
    /// The first permit held at a time is the process's implicit slot (every process started
    /// under a jobserver has one; it is never written to the jobserver). Every further permit is
    /// a token, read only when that permit is taken and written back when it is dropped — also
    /// when the holder panics, and on SIGINT/SIGTERM for a shared fifo or pipe if the program asked
    /// for it ([`install_exit_hooks`](crate::jobserver::install_exit_hooks)); through a
    /// throttle server's socket the server takes a dead process's tokens back. Waiters are served
    /// in arrival order; the head of the queue waits for whichever comes first, a permit given
    /// back in this process or a token from the jobserver.
    ///
    /// # Examples
    /// ```
    /// use throttle::{Jobserver, Server, Style, Throttle};
    /// // A jobserver of 3 slots: the implicit one and 2 tokens (make -j3 would make the same).
    /// let server = Server::new(3, Style::Fifo).unwrap();
    /// let gate = Throttle::with_jobserver(8, Jobserver::from_auth(server.auth()).unwrap());
    /// let a = gate.acquire(); // the implicit slot: no token read
    /// assert_eq!(gate.jobserver_tokens(), Some(0));
    /// let b = gate.acquire(); // a token
    /// let c = gate.acquire(); // the last token
    /// assert_eq!(gate.jobserver_tokens(), Some(2));
    /// assert_eq!(server.tokens_in_pool().unwrap(), 0);
    /// assert!(gate.acquire_timeout(std::time::Duration::from_millis(5)).is_none());
    /// drop((b, c)); // both tokens go back at once
    /// assert_eq!(server.tokens_in_pool().unwrap(), 2);
    /// drop(a); // the implicit slot is never written back
    /// assert_eq!(server.tokens_in_pool().unwrap(), 2);
    /// ```
    #[cfg(not(loom))]
    pub fn with_jobserver(limit: usize, jobserver: Jobserver) -> Throttle {
        let mut t = Throttle::new(limit);
        t.budget = Some(Budget {
            conn: std::sync::Mutex::new(jobserver),
            tokens: std::sync::atomic::AtomicUsize::new(0),
            failed: std::sync::atomic::AtomicBool::new(false),
        });
        t
    }

    /// The jobserver tokens its permits hold now, or `None` for a throttle without a jobserver.
    ///
    /// # Examples
    /// ```
    /// assert_eq!(throttle::Throttle::new(2).jobserver_tokens(), None);
    /// ```
    pub fn jobserver_tokens(&self) -> Option<usize> {
        self.budget
            .as_ref()
            .map(|b| b.tokens.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Takes a permit at once if the limit allows and nobody queues: the implicit slot if free,
    /// else (jobserver) a token if one is waiting. Called with `inner` locked.
    fn take_now(&self, inner: &mut Inner) -> Option<Slot> {
        if !inner.queue.is_empty() || inner.held >= inner.limit {
            return None;
        }
        let slot = match &self.budget {
            None => Slot::Plain,
            Some(_) if inner.implicit_free => {
                inner.implicit_free = false;
                Slot::Implicit
            }
            Some(b) => Slot::Token(b.poll(Duration::ZERO)?),
        };
        inner.held += 1;
        Some(slot)
    }

    fn permit(&self, slot: Slot) -> Permit<'_> {
        Permit {
            throttle: self,
            slot: Some(slot),
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
        let slot = self.take_now(&mut inner)?;
        Some(self.permit(slot))
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
        if let Some(slot) = self.take_now(&mut inner) {
            return Some(self.permit(slot));
        }
        let me = Arc::new(Waiter {
            granted: AtomicBool::new(false),
            implicit: AtomicBool::new(false),
            cv: Condvar::new(),
        });
        inner.queue.push_back(me.clone());
        loop {
            // Relaxed: `granted` and `implicit` are only written and read under `inner`'s lock.
            if me.granted.load(Ordering::Relaxed) {
                let slot = if me.implicit.load(Ordering::Relaxed) {
                    Slot::Implicit
                } else {
                    Slot::Plain
                };
                return Some(self.permit(slot));
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                // Give up: leave the queue. A grant cannot race us: it happens under the lock
                // we hold, and was checked just above.
                inner.queue.retain(|w| !Arc::ptr_eq(w, &me));
                // Leaving may unblock the next waiter if we were first in line.
                self.grant(&mut inner);
                return None;
            }
            let left = deadline.map(|d| d - now);
            // Jobserver: the head of the queue, admitted by the limit but not by the implicit
            // slot, reads a token itself (one reader, so arrival order holds).
            let head = inner.queue.front().is_some_and(|w| Arc::ptr_eq(w, &me));
            match &self.budget {
                Some(b)
                    if head
                        && inner.held < inner.limit
                        && !b.failed.load(std::sync::atomic::Ordering::Relaxed) =>
                {
                    if inner.implicit_free {
                        // The implicit slot is free: it is this waiter's, no token needed.
                        self.grant(&mut inner);
                        continue;
                    }
                    drop(inner);
                    let wait = left.map_or(TOKEN_POLL, |l| l.min(TOKEN_POLL));
                    let token = b.poll(wait);
                    inner = lock(&self.inner);
                    let Some(token) = token else { continue };
                    if me.granted.load(Ordering::Relaxed) || inner.held >= inner.limit {
                        // The implicit slot came meanwhile, or the limit was lowered: the token
                        // is not needed. (Still at the head: only this thread removes itself.)
                        b.release(token);
                        continue;
                    }
                    inner.queue.pop_front();
                    inner.held += 1;
                    // The next waiter becomes the head and reads the next token.
                    self.grant(&mut inner);
                    return Some(self.permit(Slot::Token(token)));
                }
                _ => {}
            }
            inner = match left {
                None => me.cv.wait(inner).unwrap_or_else(|p| p.into_inner()),
                Some(l) => me
                    .cv
                    .wait_timeout(inner, l)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0),
            };
        }
    }

    /// Hands permits to queued waiters, oldest first, while the limit allows. With a jobserver,
    /// only the implicit slot is handed over; a head that needs a token is woken to read one.
    fn grant_with(inner: &mut Inner, jobserver: bool) {
        while inner.held < inner.limit {
            let Some(front) = inner.queue.front() else {
                return;
            };
            let implicit = jobserver && inner.implicit_free;
            if jobserver && !implicit {
                // Relaxed: under the lock, as every access to the waiter's flags.
                front.cv.notify_one();
                return;
            }
            let w = inner.queue.pop_front().expect("the front exists");
            if implicit {
                inner.implicit_free = false;
            }
            inner.held += 1;
            w.implicit.store(implicit, Ordering::Relaxed);
            w.granted.store(true, Ordering::Relaxed);
            w.cv.notify_one();
        }
    }

    fn grant(&self, inner: &mut Inner) {
        Self::grant_with(inner, self.budget.is_some());
    }

    fn release(&self, slot: Slot) {
        // A token goes back to the jobserver before the permit does, so this process never
        // holds more permits than 1 + tokens.
        let implicit = matches!(slot, Slot::Implicit);
        if let (Slot::Token(t), Some(b)) = (slot, &self.budget) {
            b.release(t);
        }
        {
            let mut inner = lock(&self.inner);
            inner.held -= 1;
            if implicit {
                inner.implicit_free = true;
            }
            self.grant(&mut inner);
        }
        if let Some(b) = &self.budget {
            b.tidy();
        }
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
        self.grant(&mut inner);
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
            .field("jobserver_tokens", &self.jobserver_tokens())
            .finish()
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.throttle.release(slot);
        }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::jobserver::{Server, Style};
    use std::sync::mpsc;

    /// A permit given back while another thread of the process polls the jobserver for a token
    /// never waits for that poll to end (were the connection's lock held across the poll, a
    /// release could wait up to a poll step). Here the poll is an hour long: a
    /// release queued behind it would not end within the minute this test allows, so the test
    /// tells the two designs apart without timing anything that should be fast.
    #[test]
    fn a_token_goes_back_while_another_thread_polls_for_one() {
        // Two slots: the implicit one and one token.
        let server = Server::new(2, Style::Pipe).unwrap();
        let budget = Arc::new(Budget {
            conn: std::sync::Mutex::new(Jobserver::from_auth(server.auth()).unwrap()),
            tokens: std::sync::atomic::AtomicUsize::new(0),
            failed: std::sync::atomic::AtomicBool::new(false),
        });
        let token = budget.poll(Duration::ZERO).expect("the server's one token");
        let b = budget.clone();
        let (tid_tx, tid_rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            tid_tx.send(crate::holders::current_tid()).unwrap();
            b.poll(Duration::from_secs(3600))
        });
        // The waiter reaches its poll before the release (if it had not, it would find the
        // token without one, and the test would pass without telling anything apart): where
        // the kernel shows it, until it sleeps there; elsewhere, a moment's grace.
        let tid = tid_rx.recv().unwrap();
        let status = format!("/proc/self/task/{tid}/status");
        if tid != 0 && std::path::Path::new(&status).exists() {
            let asleep = || {
                std::fs::read_to_string(&status).is_ok_and(|st| {
                    st.lines()
                        .find_map(|l| l.strip_prefix("State:"))
                        .is_some_and(|v| v.trim_start().starts_with('S'))
                })
            };
            let start = std::time::Instant::now();
            while !asleep() {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "the waiter never slept in its poll"
                );
                std::thread::yield_now();
            }
        } else {
            std::thread::sleep(Duration::from_millis(50));
        }
        let (done, released) = mpsc::channel();
        let b = budget.clone();
        std::thread::spawn(move || {
            b.release(token);
            done.send(()).unwrap();
        });
        released
            .recv_timeout(Duration::from_secs(60))
            .expect("the release waited for another thread's poll");
        let got = waiter
            .join()
            .unwrap()
            .expect("the waiter read the token given back");
        budget.release(got);
        assert_eq!(budget.tokens.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert_eq!(server.tokens_in_pool().unwrap(), 1);
    }
}
