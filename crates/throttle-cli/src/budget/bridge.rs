//! The bridge between a cluster budget and the local jobserver of `throttle run --budget`.
//!
//! The server starts with no token ([`Server::new_empty`]). The command's implicit slot is one
//! cluster slot, taken before the command starts. Every token that exists in the local server
//! is backed by one more valid cluster slot:
//!
//! ```text
//! tokens that exist (in the pipe + held by jobs)  ≤  valid cluster slots − 1   (≤ N − 1)
//! ```
//!
//! except after a lease loss, for tokens that jobs already hold: those cannot be recalled.
//! What keeps them from being used again:
//! - the server's **token limit** and **grant deadline** (set at every tick): a token that
//!   comes back while more tokens circulate than valid slots back, or after the lease's trust
//!   window ended, leaves circulation instead of going back into the pipe. With two pipes
//!   (`Style::TwoPipes`, what make gets under `--budget`) every token make, cargo or a throttle
//!   program gives back passes through the server, so this catches make's recycling too (make
//!   writes a finished job's token back and reads one again at once). With the fifo (ninja)
//!   only socket clients' returns pass through the server; ninja itself is held (next point);
//! - the **hold** (`hold.rs`, driven by `throttle run` with [`command_backed`]): while no valid
//!   slot backs the command's implicit one, the command is stopped with SIGSTOP, so it starts
//!   nothing, not even on its implicit slot, which no pipe can take back.
//!
//! Slots of a lost lease are never deleted while the command runs (their keys go when etcd
//! expires the old lease): jobs started on them may still be running, and deleting the keys
//! would hand their slots to another host at once instead of no earlier than the lease's
//! expiry, which is at least the margin after the trust window ended.
//!
//! Demand of pipe readers (make, ninja, cargo) cannot be seen: a reader blocked in `read(2)` on
//! the pipe leaves no trace. So the bridge **offers one token when the pipe runs empty** (all
//! tokens in use), and watches what happens (`Offer`, a pure rule, unit-tested):
//! - a token taken from the pipe (its count went down without us) means demand is real: the
//!   backoff resets and the next empty pipe gets the next offer at once;
//! - a token that sat in the pipe for a whole linger window (default 200 ms) is taken back and
//!   its cluster slot released; then the next offer waits until the pipe has been empty for the
//!   backoff, which doubles from the linger up to [`MAX_BACKOFF`].
//!
//! The cost, stated: a command that never wants more than its implicit slot still holds a
//! second cluster slot for one linger window per backoff period (at most linger /
//! (linger + backoff): 200 ms of every 10.2 s once the backoff is at its cap, about 2 %); and a
//! reader that starts wanting tokens after a long idle time may wait up to the backoff
//! before the first offer (then each further token costs one etcd acquire, a few ms on a LAN).
//! The pipe is looked at every [`TICK`] (one FIONREAD): ~100 system calls a second.
//!
//! [`command_backed`]: Bridge::command_backed

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use throttle::Server;
use throttle_budget::{Cancel, ClusterSlot, EtcdBudget};

/// How often the bridge looks at the pipe and the lease. Far below the margin (≥ 1 s), so the
/// tokens of a lost lease are taken back at most this long after its trust ends.
pub const TICK: Duration = Duration::from_millis(10);

/// The longest wait, after unused offers, before offering again to an empty pipe.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// The offer rule: when to offer a token to an empty pipe, and which idle tokens to take back.
/// Pure: it sees only the time and the number of tokens in the pipe.
#[derive(Debug, Clone)]
pub struct Offer {
    linger: Duration,
    /// Wait this long with an empty pipe before the next offer (0: at once).
    backoff: Duration,
    /// Since when the pipe has been seen empty.
    empty_since: Option<Instant>,
    /// Tokens in the pipe at the last look.
    last_in_pool: usize,
    /// The current idle window: its start and the fewest tokens seen in the pipe during it.
    window_start: Instant,
    window_min: usize,
}

impl Offer {
    /// A rule with the given linger, starting at `now` with no backoff.
    pub fn new(linger: Duration, now: Instant) -> Offer {
        Offer {
            linger,
            backoff: Duration::ZERO,
            empty_since: Some(now),
            last_in_pool: 0,
            window_start: now,
            window_min: 0,
        }
    }

    /// One look at the pipe: `in_pool` tokens wait there at `now`.
    pub fn observe(&mut self, now: Instant, in_pool: usize) {
        if in_pool < self.last_in_pool {
            // Someone read a token: readers want tokens.
            self.backoff = Duration::ZERO;
        }
        self.last_in_pool = in_pool;
        if in_pool == 0 {
            self.empty_since.get_or_insert(now);
        } else {
            self.empty_since = None;
        }
        self.window_min = self.window_min.min(in_pool);
    }

    /// We put `k` tokens into the pipe at `now` (they start a fresh idle window).
    pub fn added(&mut self, now: Instant, k: usize) {
        self.last_in_pool += k;
        self.empty_since = None;
        self.window_start = now;
        self.window_min = self.last_in_pool;
    }

    /// We took `k` tokens out of the pipe ourselves (not a reader).
    pub fn removed(&mut self, k: usize) {
        self.last_in_pool = self.last_in_pool.saturating_sub(k);
        self.window_min = self.window_min.min(self.last_in_pool);
    }

    /// Offer one more token now? (The pipe has been empty for the backoff.)
    pub fn should_offer(&self, now: Instant) -> bool {
        self.empty_since
            .is_some_and(|since| now.duration_since(since) >= self.backoff)
    }

    /// At the end of each linger window: how many tokens sat in the pipe for the whole window
    /// (take them back). A window that ends with unused tokens doubles the backoff.
    pub fn idle_to_take_back(&mut self, now: Instant) -> usize {
        if now.duration_since(self.window_start) < self.linger {
            return 0;
        }
        let idle = self.window_min;
        if idle > 0 {
            self.backoff = (self.backoff * 2).clamp(self.linger, MAX_BACKOFF.max(self.linger));
        }
        self.window_start = now;
        self.window_min = self.last_in_pool;
        idle
    }

    /// The current backoff.
    pub fn backoff(&self) -> Duration {
        self.backoff
    }
}

/// A thread that takes cluster slots one request at a time (an acquire can wait long in the
/// cluster's queue; the bridge's loop must not).
struct Acquirer {
    requests: Option<mpsc::Sender<()>>,
    granted: mpsc::Receiver<ClusterSlot>,
    cancel: Arc<Cancel>,
    thread: Option<JoinHandle<()>>,
}

impl Acquirer {
    fn start(budget: Arc<EtcdBudget>) -> Acquirer {
        let (req_tx, req_rx) = mpsc::channel::<()>();
        let (slot_tx, slot_rx) = mpsc::channel();
        let cancel = Arc::new(Cancel::new());
        let c2 = cancel.clone();
        let thread = std::thread::Builder::new()
            .name("throttle-budget-acquire".into())
            .spawn(move || {
                for () in req_rx {
                    match budget.acquire_cancellable(&c2) {
                        Ok(Some(slot)) => {
                            if slot_tx.send(slot).is_err() {
                                return;
                            }
                        }
                        _ => return,
                    }
                }
            })
            .ok();
        Acquirer {
            requests: Some(req_tx),
            granted: slot_rx,
            cancel,
            thread,
        }
    }
}

impl Drop for Acquirer {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.requests.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The running bridge: the budget, the slots that back the command and its tokens, and the
/// offer rule. Call [`tick`](Bridge::tick) every [`TICK`] while the command runs.
pub struct Bridge {
    // Field order is drop order: the acquirer (it holds the budget) before the slots, the
    // slots before the budget, whose drop revokes the lease.
    acquirer: Acquirer,
    slots: Vec<ClusterSlot>,
    /// Slots of a lease that was given up: kept (not deleted) until the command has exited,
    /// because jobs started on them may still run; etcd deletes their keys when it expires
    /// that lease.
    lapsed: Vec<ClusterSlot>,
    budget: Arc<EtcdBudget>,
    n: usize,
    pending: bool,
    offer: Offer,
    /// A loss was announced (`budget lost`) and no `budget back` yet.
    announced_lost: bool,
    /// The lease epoch last seen trusted: a new epoch means the lease was lost and replaced,
    /// even if no tick saw it untrusted (the lease thread can replace it first after a stop).
    epoch: u64,
    /// The end of the trust window as last seen while a valid slot backed the command: once
    /// none does, the instant from which the command and its new jobs run without a slot.
    backed_until: Option<std::time::Instant>,
}

impl Bridge {
    /// Starts the bridge for a command that already holds `implicit` (its implicit slot).
    pub fn new(budget: EtcdBudget, implicit: ClusterSlot, linger: Duration) -> Bridge {
        let budget = Arc::new(budget);
        let epoch = budget.lease().epoch;
        Bridge {
            acquirer: Acquirer::start(budget.clone()),
            slots: vec![implicit],
            lapsed: Vec::new(),
            n: budget.slots(),
            budget,
            pending: false,
            offer: Offer::new(linger, Instant::now()),
            announced_lost: false,
            epoch,
            backed_until: None,
        }
    }

    /// One line for `throttle run`'s status (SIGUSR1): cluster slots held and the offer rule.
    pub fn status_line(&self) -> String {
        let lease = self.budget.lease();
        format!(
            "cluster budget {}: {} of {} slots held by this run (the implicit one included){}; next offer after {} ms of empty pipe{}\n",
            self.budget.url().name(),
            self.slots.len(),
            self.n,
            if self.pending { ", one more requested" } else { "" },
            self.offer.backoff().as_millis(),
            if lease.trusted { "" } else { "; lease not trusted: granting nothing" },
        )
    }

    /// Ends the bridge after the command exited: cancels a pending acquire, gives back every
    /// cluster slot (those of a lapsed lease too: nothing runs on them any more) and revokes the
    /// lease (so the keys go at once, not at the lease's expiry).
    pub fn finish(self) {
        drop(self);
    }

    /// When the lease's trust window ends if it is not renewed before (None: no trusted lease):
    /// `throttle run` wakes then, so the command is stopped at that instant rather than at the
    /// next tick.
    pub fn trust_end(&self) -> Option<std::time::Instant> {
        let lease = self.budget.lease();
        lease.valid_until.filter(|_| lease.trusted)
    }

    /// The end of the trust window as last seen while a valid slot backed the command (within
    /// one tick of the real one: the bridge looks every [`TICK`] while the process runs). Once
    /// [`command_backed`](Bridge::command_backed) is false, processes of the command's tree
    /// started after this instant started without a slot (`hold.rs` stops them).
    pub fn backed_until(&self) -> Option<Instant> {
        self.backed_until
    }

    /// Whether a valid cluster slot backs the command's implicit slot now (reads the clock: a
    /// process resumed past its trust window sees false at once). While false, `throttle run`
    /// holds the command stopped (`hold.rs`).
    pub fn command_backed(&self) -> bool {
        self.slots.iter().any(ClusterSlot::is_valid)
    }

    /// One step: take granted slots, drop lost ones, keep `tokens ≤ valid slots − 1`, offer or
    /// take back tokens by the offer rule. Messages go to stderr.
    pub fn tick(&mut self, server: &Server) {
        let now = Instant::now();
        while let Ok(slot) = self.acquirer.granted.try_recv() {
            self.pending = false;
            if slot.is_valid() {
                self.slots.push(slot);
            }
        }
        let lease = self.budget.lease();
        if !self.announced_lost && (!lease.trusted || lease.epoch != self.epoch) {
            let why = lease
                .lost
                .clone()
                .or(lease.last_error.clone())
                .unwrap_or_else(|| {
                    format!(
                        "the lease was not renewed within TTL {} s − margin {:.2} s (no answer from etcd)",
                        self.budget.ttl().as_secs(),
                        self.budget.margin().as_secs_f64()
                    )
                });
            eprintln!(
                "throttle run: budget lost: {why}; no new tokens, idle and returned ones taken out of circulation (jobs already running go on); re-acquiring when etcd answers"
            );
            self.announced_lost = true;
        }
        if self.announced_lost && lease.trusted {
            eprintln!("throttle run: budget back: new lease; taking cluster slots again");
            self.announced_lost = false;
        }
        if lease.trusted {
            self.epoch = lease.epoch;
        }
        // Slots no longer valid are kept, not deleted (module docs).
        let (valid, lapsed): (Vec<_>, Vec<_>) = std::mem::take(&mut self.slots)
            .into_iter()
            .partition(ClusterSlot::is_valid);
        self.slots = valid;
        self.lapsed.extend(lapsed);
        if !self.slots.is_empty() {
            self.backed_until = lease.valid_until;
        }
        // Throttle clients on the socket get tokens, and returned tokens go back into the pipe,
        // only within the trust window, checked by the server at each decision (so also right
        // after this process resumes from a stop), and only while valid slots back them.
        server.set_grant_deadline(Some(match lease.valid_until {
            Some(until) if lease.trusted => until,
            _ => now,
        }));
        let allowed = self.slots.len().saturating_sub(1);
        server.set_token_limit(Some(allowed));

        let mut tokens = server.tokens_expected();
        let in_pool = server.tokens_in_pool().unwrap_or(0);
        self.offer.observe(now, in_pool);
        // More tokens than valid slots back (a lease lost, or slots dropped): take idle ones
        // out at once; held ones as they come back.
        if tokens > allowed {
            let mut took = 0;
            while tokens > allowed && server.take_idle_token().unwrap_or(false) {
                tokens -= 1;
                took += 1;
            }
            self.offer.removed(took);
        }
        // A newly granted slot: its token goes into the pipe.
        if tokens < allowed {
            let mut added = 0;
            while tokens < allowed && server.add_token().is_ok() {
                tokens += 1;
                added += 1;
            }
            self.offer.added(now, added);
        }
        // Tokens idle for a whole linger window: out of circulation first, then their slots go.
        let idle = self.offer.idle_to_take_back(now);
        let mut took = 0;
        while took < idle && self.slots.len() > 1 && server.take_idle_token().unwrap_or(false) {
            took += 1;
            self.slots.pop();
        }
        self.offer.removed(took);
        let tokens = server.tokens_expected();
        // Ask for one more slot: the implicit one after a loss, one per unbacked token in
        // circulation, or an offer to an empty pipe.
        if lease.trusted && !self.pending && self.slots.len() < self.n {
            let want = self.slots.is_empty()
                || self.slots.len() < 1 + tokens
                || self.offer.should_offer(now);
            if want {
                if let Some(tx) = &self.acquirer.requests {
                    self.pending = tx.send(()).is_ok();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Duration = Duration::from_millis(200);

    #[test]
    fn offers_at_once_while_tokens_are_taken() {
        let t0 = Instant::now();
        let mut o = Offer::new(L, t0);
        o.observe(t0, 0);
        assert!(o.should_offer(t0));
        o.added(t0, 1);
        assert!(!o.should_offer(t0));
        // A reader takes it: the pipe is empty again, the next offer is immediate.
        o.observe(t0 + Duration::from_millis(1), 0);
        assert!(o.should_offer(t0 + Duration::from_millis(1)));
        assert_eq!(o.backoff(), Duration::ZERO);
    }

    #[test]
    fn unused_offers_back_off_exponentially_up_to_the_cap() {
        let mut now = Instant::now();
        let mut o = Offer::new(L, now);
        let mut backoffs = Vec::new();
        for _ in 0..10 {
            o.observe(now, 0);
            // Wait until the rule offers.
            while !o.should_offer(now) {
                now += Duration::from_millis(10);
                o.observe(now, 0);
            }
            o.added(now, 1);
            // Nobody reads it for a whole window: taken back.
            let mut idle = 0;
            while idle == 0 {
                now += Duration::from_millis(10);
                o.observe(now, 1);
                idle = o.idle_to_take_back(now);
            }
            assert_eq!(idle, 1);
            o.removed(1);
            backoffs.push(o.backoff().as_millis());
        }
        assert_eq!(
            backoffs,
            [200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000, 10000]
        );
        // Then a reader takes an offered token: back to offering at once.
        o.observe(now, 0);
        now += o.backoff();
        o.observe(now, 0);
        assert!(o.should_offer(now));
        o.added(now, 1);
        o.observe(now + Duration::from_millis(5), 0);
        assert_eq!(o.backoff(), Duration::ZERO);
    }

    #[test]
    fn only_tokens_idle_for_the_whole_window_are_taken_back() {
        let t0 = Instant::now();
        let mut o = Offer::new(L, t0);
        o.added(t0, 3);
        // At some moment only 1 token was in the pipe: 2 were in use then.
        o.observe(t0 + Duration::from_millis(50), 1);
        o.observe(t0 + Duration::from_millis(100), 3);
        assert_eq!(o.idle_to_take_back(t0 + Duration::from_millis(150)), 0);
        assert_eq!(o.idle_to_take_back(t0 + Duration::from_millis(200)), 1);
        // The next window starts with 3 in the pipe; all 3 stay idle.
        o.observe(t0 + Duration::from_millis(300), 3);
        assert_eq!(o.idle_to_take_back(t0 + Duration::from_millis(400)), 3);
    }
}
