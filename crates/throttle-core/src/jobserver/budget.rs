//! The pool's side of the jobserver: one small thread per pool that turns demand into tokens and
//! tokens into the pool's limit. Effective limit = min(user limit, 1 + tokens held).
//!
//! The thread reads only what the workers already publish (the state word and `has_work`), and a
//! pool without a jobserver has no such thread at all. The only addition to the pool's paths is
//! the [`Bell`](crate::sleep::Bell): one load where a slot is taken or work published, so that the thread can sleep
//! with no timeout while the pool is idle.
//! It asks for a token only when runnable work waits and every slot of the current limit is held
//! (work for another thread); it gives one back when no work waits and a slot has been idle for
//! [`GRACE`]; it never gives back the implicit slot. See README.md.

use super::{Jobserver, Token};
use crate::registry::Registry;
use crate::sync::{lock, Arc, Mutex};
use crate::trace::model::EventKind;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a token stays after its work ran out, so that a pool between two bursts of forks
/// does not give it back and queue for it again (make's own clients hold a token per job, for
/// milliseconds to seconds; 5 ms is a few scheduler ticks and far below that).
const GRACE: Duration = Duration::from_millis(5);
/// How often the thread looks at the pool while a slot holder is running (and may fork).
const TICK: Duration = Duration::from_millis(1);
/// How often it looks while a throttle server has not answered a request yet (the answer is a
/// token to collect and, idle, give back).
const IDLE_TICK: Duration = Duration::from_millis(10);

/// What the pool and the budget thread share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The user's limit (or the pool's thread count): the first term of the min.
    user: AtomicUsize,
    /// Tokens held now (for status and tests).
    held: AtomicUsize,
    stop: AtomicBool,
    /// Requests to give back every unneeded token now, without the grace period ([`Budget::flush`]).
    flush: AtomicUsize,
    /// Requests answered.
    flushed: AtomicUsize,
    /// Serializes computing and applying the effective limit.
    apply: Mutex<()>,
}

impl Shared {
    /// Sets the effective limit from the two terms.
    fn apply(&self, registry: &Registry) {
        let _g = lock(&self.apply);
        let user = self.user.load(Ordering::Relaxed);
        let k = user.min(1 + self.held.load(Ordering::Relaxed)).max(1);
        let before = registry.sleep.load().limit();
        if k != before {
            registry.sleep.set_limit(k);
            if k > before && registry.has_work() {
                registry.publish_wake();
            }
        }
    }
}

/// A running budget: dropping it stops the thread and gives every token back.
#[derive(Debug)]
pub(crate) struct Budget {
    /// The process that started it (see `flush`).
    pid: u32,
    shared: std::sync::Arc<Shared>,
    registry: Arc<Registry>,
    thread: Option<JoinHandle<()>>,
}

impl Budget {
    /// Starts the budget thread for `registry`. The limit drops to 1 (the implicit slot) until
    /// tokens arrive.
    pub(crate) fn start(js: Jobserver, registry: Arc<Registry>) -> std::io::Result<Budget> {
        let shared = std::sync::Arc::new(Shared {
            user: AtomicUsize::new(registry.sleep.load().limit()),
            held: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            flush: AtomicUsize::new(0),
            flushed: AtomicUsize::new(0),
            apply: Mutex::new(()),
        });
        shared.apply(&registry);
        let (s, r) = (shared.clone(), registry.clone());
        let thread = std::thread::Builder::new()
            .name("throttle-jobserver".into())
            .spawn(move || run(js, &r, &s))?;
        registry.budget_bell.set_thread(thread.thread().clone());
        Ok(Budget {
            pid: std::process::id(),
            shared,
            registry,
            thread: Some(thread),
        })
    }

    /// The user's side of the min changed.
    pub(crate) fn set_user_limit(&self, k: usize) {
        (self.user_limit_setter())(k);
    }

    /// A setter of the user's side of the min that the auto-mode controller thread can own:
    /// the controller's choice is the first term of the min, exactly like a user's `k`, so the
    /// budget caps it (`effective k = min(controller's k, 1 + tokens held)`).
    pub(crate) fn user_limit_setter(&self) -> impl Fn(usize) + Send + 'static {
        let (shared, registry) = (self.shared.clone(), self.registry.clone());
        let thread = self.thread.as_ref().map(|t| t.thread().clone());
        move |k| {
            shared.user.store(k, Ordering::Relaxed);
            shared.apply(&registry);
            // The budget thread may now want a token (a higher limit) or hold a surplus one.
            if let Some(t) = &thread {
                t.unpark();
            }
        }
    }

    /// The user's limit (the pool's limit without the budget).
    pub(crate) fn user_limit(&self) -> usize {
        self.shared.user.load(Ordering::Relaxed)
    }

    /// Tokens held now.
    pub(crate) fn tokens(&self) -> usize {
        self.shared.held.load(Ordering::Relaxed)
    }

    /// Gives back every token while no work waits, now (skipping the grace period), and waits up
    /// to `timeout` for it: for the main thread's exit, since the global pool is never dropped.
    pub(crate) fn flush(&self, timeout: Duration) {
        // In a fork() child the budget thread does not exist (and the tokens are the parent's).
        if self.tokens() == 0 || std::process::id() != self.pid {
            return;
        }
        // AcqRel/Acquire: pairs with the budget thread's Acquire load of `flush` and Release
        // store of `flushed` (the tokens are written back before the answer).
        let n = self.shared.flush.fetch_add(1, Ordering::AcqRel) + 1;
        let Some(t) = &self.thread else { return };
        t.thread().unpark();
        let start = Instant::now();
        while self.shared.flushed.load(Ordering::Acquire) < n && start.elapsed() < timeout {
            std::thread::sleep(Duration::from_micros(50));
            t.thread().unpark();
        }
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn run(mut conn: Jobserver, registry: &Registry, shared: &Shared) {
    let mut tokens: Vec<Token> = Vec::new();
    let mut idle_since: Option<Instant> = None;
    let threads = registry.threads();
    let mut failed = false;
    while !shared.stop.load(Ordering::Relaxed) {
        let s = registry.sleep.load();
        let cap = shared.user.load(Ordering::Relaxed).min(threads);
        let work = registry.has_work();
        // Work waits and every slot is held: another thread would run it.
        let want = !failed && work && s.active() >= s.limit() && 1 + tokens.len() < cap;
        // Acquire: pairs with `Budget::flush`'s AcqRel increment.
        let flush = shared.flush.load(Ordering::Acquire);
        let flushing = flush > shared.flushed.load(Ordering::Relaxed);
        // No work waits and a slot is unused, or the user lowered the limit below our tokens; or
        // a flush and no work waits (threads still finishing a task are not waited for: the
        // process is exiting; `release_one` lets them reach their task boundary first).
        let surplus = !tokens.is_empty()
            && (1 + tokens.len() > cap || (!work && (flushing || s.active() < s.limit())));
        if !surplus && flush > shared.flushed.load(Ordering::Relaxed) {
            // Release: the tokens went back before the answer (pairs with `flush`'s Acquire).
            shared.flushed.store(flush, Ordering::Release);
        }
        if surplus {
            let since = *idle_since.get_or_insert_with(Instant::now);
            if flushing || since.elapsed() >= GRACE || 1 + tokens.len() > cap {
                release_one(&mut conn, &mut tokens, registry, shared);
                idle_since = None;
                continue;
            }
        } else {
            idle_since = None;
        }
        let pending = !failed && conn.has_pending_request();
        if s.active() == 0 && tokens.is_empty() && !work && !pending {
            idle_sleep(registry, shared);
            continue;
        }
        if failed {
            std::thread::park_timeout(TICK);
            continue;
        }
        // Nobody runs and a throttle server still owes an answer: collect it (then give it
        // back); otherwise look every tick while a slot holder runs (and may fork).
        let wait = if s.active() == 0 { IDLE_TICK } else { TICK };
        match conn.poll_token(want, wait) {
            Ok(Some(t)) => {
                tokens.push(t);
                shared.held.store(tokens.len(), Ordering::Relaxed);
                registry.trace().record_pool(EventKind::TokenAcquire {
                    held: tokens.len() as u32,
                });
                shared.apply(registry);
            }
            Ok(None) => {}
            Err(e) => {
                // The jobserver went away: run on the implicit slot and the tokens we hold.
                eprintln!(
                    "throttle: warning: jobserver failed ({e}); no more tokens will be requested"
                );
                failed = true;
            }
        }
    }
    // Pool shutdown: everything goes back. The slot holders are finishing; the budget's limit no
    // longer matters.
    while let Some(t) = tokens.pop() {
        let _ = conn.release(t);
    }
    shared.held.store(0, Ordering::Relaxed);
}

/// Parks until the bell rings (a slot taken or work published), the user's limit changes or the
/// pool stops. No timeout: an idle pool's budget thread costs nothing.
fn idle_sleep(registry: &Registry, shared: &Shared) {
    // A spurious wake-up or an unpark for a limit change only costs one more round.
    registry.budget_bell.sleep_unless(|| {
        let idle = registry.sleep.load().active() == 0 && !registry.has_work();
        !idle || shared.stop.load(Ordering::Relaxed)
    });
}

/// Lowers the limit by one, waits until no more threads hold slots than that (a thread over the
/// limit yields at its next task boundary), then writes the token back. So the process never
/// runs more threads than it holds tokens for, even for an instant.
fn release_one(
    conn: &mut Jobserver,
    tokens: &mut Vec<Token>,
    registry: &Registry,
    shared: &Shared,
) {
    let Some(t) = tokens.pop() else { return };
    shared.held.store(tokens.len(), Ordering::Relaxed);
    registry.trace().record_pool(EventKind::TokenRelease {
        held: tokens.len() as u32,
    });
    shared.apply(registry);
    let mut pause = Duration::from_micros(20);
    loop {
        let s = registry.sleep.load();
        if s.active() <= s.limit() || shared.stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(TICK);
    }
    if let Err(e) = conn.release(t) {
        eprintln!("throttle: warning: could not return a jobserver token: {e}");
    }
}
