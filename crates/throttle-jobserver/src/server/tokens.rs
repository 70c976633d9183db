//! The server's tokens: how many exist, where they are, and the one path by which every token
//! that comes back re-enters circulation (or, for an owner who says so, leaves it).
//!
//! A token is, at every instant, in exactly one of: the fifo or pipe clients read ("the pool"),
//! a foreign client (make, ninja, rustc), a socket client's ledger, the return pipe of
//! [`Style::TwoPipes`](super::Style::TwoPipes) (written back, not yet read by the server), or
//! taken out of circulation by the server. `tokens` counts every token in the first four.

use crate::lock;
use crate::sys;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The token byte the server fills its fifo with (make uses `+` too).
pub(super) const TOKEN: u8 = b'+';
/// How often a server thread looks at the stop flag while idle.
pub(super) const POLL: Duration = Duration::from_millis(50);

/// What the server's threads share.
#[derive(Debug)]
pub(super) struct Inner {
    /// This server's own non-blocking description of the end clients read tokens from.
    pub(super) read: OwnedFd,
    /// Where the server puts tokens: the fifo, or the write end of the (out) pipe.
    pub(super) write: OwnedFd,
    /// [`Style::TwoPipes`](super::Style::TwoPipes): the server's read end of the pipe clients
    /// write tokens back into (non-blocking; no other process holds it).
    pub(super) back: Option<OwnedFd>,
    /// Held while a token read from `back` is being given back, so that [`drain_returns`] knows
    /// when nothing is in flight between the two pipes.
    pub(super) returning: Mutex<()>,
    pub(super) stop: AtomicBool,
    /// Connected throttle clients and the tokens each holds (for status and exit).
    pub(super) clients: Mutex<Vec<(u64, Arc<AtomicUsize>)>>,
    pub(super) live: AtomicUsize,
    /// The slots N now (changed by [`resize`]).
    pub(super) slots: AtomicUsize,
    /// Tokens in circulation now: N − 1 once a shrink has collected its tokens.
    pub(super) tokens: AtomicUsize,
    /// Tokens a shrink still has to take out of circulation (as they come back).
    pub(super) debt: AtomicUsize,
    /// Serializes resizes (and, for an owned server, every change of `tokens`).
    pub(super) resizing: Mutex<()>,
    /// Made by `Server::new_empty`: the owner adds and takes tokens; no resize.
    pub(super) owned_tokens: bool,
    /// Socket clients are granted tokens, and returned tokens passed on, only before this
    /// instant (None: always); set by the owner with `Server::set_grant_deadline`.
    pub(super) grant_until: Mutex<Option<Instant>>,
    /// An owned server passes a returned token on only while `tokens` (that token included) is
    /// at most this; above it the token leaves circulation. `usize::MAX`: no limit.
    pub(super) limit: AtomicUsize,
    /// Tokens the server took out of circulation itself (returned or idle past the deadline, or
    /// returned over the limit), for the status.
    pub(super) kept_out: AtomicUsize,
}

impl Inner {
    /// May a socket client be handed a token, or a returned token be passed on, now? (Reads the
    /// clock: a server resumed from SIGSTOP past its deadline hands out nothing.)
    pub(super) fn may_grant(&self) -> bool {
        match *lock(&self.grant_until) {
            Some(until) => Instant::now() < until,
            None => true,
        }
    }
}

/// A token `b` came back from a client (a socket release, a socket client's EOF, or the return
/// pipe): for a server made by `new`, into the pool; for an owned one, into the pool only
/// before the owner's deadline and while the tokens in circulation (this one included) are at
/// most its limit, else out of circulation (`tokens` − 1). So once the deadline has passed, no
/// token that comes back reaches a client again, and a client holding tokens can only give
/// them up.
pub(super) fn give_back(inner: &Inner, b: u8) {
    let _g = inner.owned_tokens.then(|| lock(&inner.resizing));
    if inner.owned_tokens {
        let over = inner.tokens.load(Ordering::Relaxed) > inner.limit.load(Ordering::Relaxed);
        if over || !inner.may_grant() {
            inner.tokens.fetch_sub(1, Ordering::Relaxed);
            inner.kept_out.fetch_add(1, Ordering::Relaxed);
            return;
        }
    }
    if let Err(e) = sys::write_token(inner.write.as_raw_fd(), b) {
        eprintln!("throttle run: could not return a token to the jobserver: {e}");
    }
}

/// [`Style::TwoPipes`](super::Style::TwoPipes): the thread that reads every token clients write
/// back and gives it back ([`give_back`]), until the server stops. For an owned server it also
/// wakes at the owner's deadline and takes every idle token out of the pool then
/// ([`drain_past_deadline`]), so that from the deadline on no token is left for a client to
/// read, without waiting for the owner's next look.
pub(super) fn forward_returns(inner: &Inner) {
    let Some(back) = &inner.back else { return };
    while !inner.stop.load(Ordering::Relaxed) {
        let wait = match *lock(&inner.grant_until) {
            Some(until) if inner.owned_tokens => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    POLL
                } else {
                    left.min(POLL)
                }
            }
            _ => POLL,
        };
        if sys::poll_readable(back.as_raw_fd(), wait) && !give_back_one(inner, back) {
            // Nothing there after all (a racing `drain_returns` took it) or an error.
            std::thread::sleep(Duration::from_millis(1));
        }
        drain_past_deadline(inner);
    }
}

/// An owned server past its deadline: takes every idle token out of the pool (out of
/// circulation, counted as kept out). Nothing for a server made by `new`, or before the
/// deadline.
pub(super) fn drain_past_deadline(inner: &Inner) {
    if !inner.owned_tokens || inner.may_grant() {
        return;
    }
    while let Ok(true) = take_idle_token(inner) {
        inner.kept_out.fetch_add(1, Ordering::Relaxed);
    }
}

/// Reads one returned token, if one waits, and gives it back; false if none was there.
fn give_back_one(inner: &Inner, back: &OwnedFd) -> bool {
    let _g = lock(&inner.returning);
    match sys::try_read_token(back) {
        Ok(Some(b)) => {
            give_back(inner, b);
            true
        }
        _ => false,
    }
}

/// Gives back every token waiting in the return pipe now (nothing if there is none), so that
/// a count of the pool right after sees them.
pub(super) fn drain_returns(inner: &Inner) {
    if let Some(back) = &inner.back {
        while give_back_one(inner, back) {}
    }
}

/// Puts one more token into the pool (an owned server's owner: one more slot backs it).
pub(super) fn add_token(inner: &Inner) -> io::Result<()> {
    let _g = lock(&inner.resizing);
    sys::write_token(inner.write.as_raw_fd(), TOKEN)?;
    inner.tokens.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Takes one idle token out of the pool, if one waits there.
pub(super) fn take_idle_token(inner: &Inner) -> io::Result<bool> {
    let _g = lock(&inner.resizing);
    match sys::try_read_token(&inner.read)? {
        Some(_) => {
            inner.tokens.fetch_sub(1, Ordering::Relaxed);
            Ok(true)
        }
        None => Ok(false),
    }
}

pub(super) fn status(inner: &Inner) -> String {
    let clients = lock(&inner.clients);
    let mut s = String::new();
    let mut held = 0;
    for (id, n) in clients.iter() {
        let n = n.load(Ordering::Relaxed);
        held += n;
        if n > 0 {
            s.push_str(&format!("throttle client {id}: {n} tokens\n"));
        }
    }
    let free = sys::bytes_waiting(inner.read.as_raw_fd()).unwrap_or(0);
    let tokens = inner.tokens.load(Ordering::Relaxed);
    let debt = inner.debt.load(Ordering::Relaxed);
    let kept_out = inner.kept_out.load(Ordering::Relaxed);
    s.push_str(&format!(
        "{} slots: {free} tokens free, {held} held by throttle clients, {} by other clients (the implicit slot not counted){}{}\n",
        inner.slots.load(Ordering::Relaxed),
        tokens.saturating_sub(free + held),
        if debt > 0 {
            format!("; shrinking: {debt} tokens still to collect")
        } else {
            String::new()
        },
        if kept_out > 0 {
            format!("; {kept_out} tokens taken out of circulation (returned or idle past the deadline, or returned over the limit)")
        } else {
            String::new()
        }
    ));
    s
}

pub(super) fn resize(inner: &Arc<Inner>, slots: usize) -> io::Result<()> {
    if inner.owned_tokens {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this server's tokens come from a cluster budget (throttle run --budget): its N is the budget's",
        ));
    }
    if slots == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a jobserver needs at least 1 slot",
        ));
    }
    let _g = lock(&inner.resizing);
    let old = inner.slots.swap(slots, Ordering::Relaxed);
    if slots > old {
        let mut grow = slots - old;
        // Cancel an unpaid shrink first.
        let debt = inner.debt.load(Ordering::Relaxed);
        let cancel = debt.min(grow);
        inner.debt.fetch_sub(cancel, Ordering::Relaxed);
        grow -= cancel;
        for _ in 0..grow {
            sys::write_token(inner.write.as_raw_fd(), TOKEN)?;
            inner.tokens.fetch_add(1, Ordering::Relaxed);
        }
    } else if slots < old {
        let before = inner.debt.fetch_add(old - slots, Ordering::Relaxed);
        if before == 0 {
            let i2 = inner.clone();
            std::thread::Builder::new()
                .name("throttle-jobserver-shrink".into())
                .spawn(move || collect_debt(&i2))?;
        }
    }
    Ok(())
}

/// Takes tokens out of the fifo as they come back until the shrink is paid.
fn collect_debt(inner: &Inner) {
    while inner.debt.load(Ordering::Relaxed) > 0 && !inner.stop.load(Ordering::Relaxed) {
        if !sys::poll_readable(inner.read.as_raw_fd(), POLL) {
            continue;
        }
        let _g = lock(&inner.resizing);
        if inner.debt.load(Ordering::Relaxed) == 0 {
            break;
        }
        if let Ok(Some(_)) = sys::try_read_token(&inner.read) {
            inner.debt.fetch_sub(1, Ordering::Relaxed);
            inner.tokens.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
