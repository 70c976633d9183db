//! The process's one lease: granted at connect, kept alive every third of its trust window
//! (`queue::keepalive_interval`) by a task on the background runtime, trusted until
//! `sent + TTL − margin` (`../README.md`, "Lease safety").
//! When it cannot be renewed in time it is given up (epoch + 1) and a new one is granted as soon
//! as the cluster answers.

use crate::queue::{keepalive_interval, lease_end, trust_until};
use etcd_client::{Client, LeaseKeepAliveStream, LeaseKeeper};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The lease as every thread of the process sees it (published through a `watch` channel).
#[derive(Debug, Clone)]
pub(crate) struct LeaseState {
    /// Bumped each time a lease is given up or a new one is granted; a slot belongs to one epoch.
    pub(crate) epoch: u64,
    /// The lease id; 0 while the process has none.
    pub(crate) id: i64,
    /// When the last renewal was sent plus the granted TTL (`queue::lease_end`).
    pub(crate) end: Instant,
    /// The TTL asked for (the margin is computed from it).
    pub(crate) ttl: Duration,
    /// The TTL etcd granted for the current lease (at least `ttl`).
    pub(crate) granted: Duration,
    /// Why the last lease was given up (kept until a new one is granted).
    pub(crate) lost: Option<String>,
    /// The last renewal error, if the last attempt failed.
    pub(crate) last_error: Option<String>,
}

impl LeaseState {
    /// The lease may be used at `now` (`now < end − margin`).
    pub(crate) fn trusted_at(&self, now: Instant) -> bool {
        self.id != 0 && now < self.trust_until()
    }

    /// `end − margin(granted TTL)`.
    pub(crate) fn trust_until(&self) -> Instant {
        trust_until(self.end, self.granted)
    }
}

/// Grants a lease of `ttl` (whole seconds); returns its id, the granted TTL and
/// `lease_end(sent, granted TTL)`.
pub(crate) async fn grant(
    client: &Client,
    ttl: Duration,
) -> Result<(i64, Duration, Instant), String> {
    let mut lc = client.lease_client();
    let sent = Instant::now();
    let r = tokio::time::timeout(ttl, lc.grant(ttl.as_secs() as i64, None))
        .await
        .map_err(|_| format!("no answer to a lease grant within {} s", ttl.as_secs()))?
        .map_err(|e| super::short(&e))?;
    if r.ttl() <= 0 {
        return Err(format!("etcd granted a lease with TTL {}", r.ttl()));
    }
    let granted = Duration::from_secs(r.ttl() as u64);
    Ok((r.id(), granted, lease_end(sent, granted)))
}

/// One keep-alive stream; dropped after any error or timeout so that a late answer to an
/// earlier request is never taken for the answer to a later one (that would date the renewal
/// after it happened).
struct Renewer {
    id: i64,
    /// The TTL etcd granted (what a keep-alive renews the lease to).
    granted: Duration,
    stream: Option<(LeaseKeeper, LeaseKeepAliveStream)>,
}

impl Renewer {
    /// Sends one keep-alive and waits (at most `wait`) for its answer. Ok(Some(end)) renewed,
    /// Ok(None) the lease no longer exists in etcd, Err the cluster did not answer.
    async fn renew(&mut self, client: &Client, wait: Duration) -> Result<Option<Instant>, String> {
        let id = self.id;
        let sent = Instant::now();
        let attempt = async {
            if self.stream.is_none() {
                // `keep_alive` sends the first request and reads its answer itself: it fails
                // with "lease not found" if the lease is gone, else the lease was renewed to
                // its granted TTL.
                return match client.lease_client().keep_alive(id).await {
                    Ok(s) => {
                        self.stream = Some(s);
                        Ok(Some(self.granted))
                    }
                    Err(etcd_client::Error::LeaseKeepAliveError(e)) if e.contains("not found") => {
                        Ok(None)
                    }
                    Err(e) => Err(super::short(&e)),
                };
            }
            let (keeper, stream) = self.stream.as_mut().expect("checked");
            keeper.keep_alive().await.map_err(|e| super::short(&e))?;
            match stream.message().await.map_err(|e| super::short(&e))? {
                Some(r) if r.ttl() > 0 => Ok(Some(Duration::from_secs(r.ttl() as u64))),
                Some(_) => Ok(None),
                None => Err("the keep-alive stream closed".to_string()),
            }
        };
        match tokio::time::timeout(wait, attempt).await {
            Ok(Ok(Some(ttl))) => Ok(Some(lease_end(sent, ttl))),
            Ok(Ok(None)) => {
                self.stream = None;
                Ok(None)
            }
            Ok(Err(e)) => {
                self.stream = None;
                Err(e)
            }
            Err(_) => {
                self.stream = None;
                Err(format!(
                    "no answer to a keep-alive within {} ms",
                    wait.as_millis()
                ))
            }
        }
    }
}

/// Keeps the process's lease alive until `stop` fires; publishes every change through `state`.
/// Renews every third of the trust window (`keepalive_interval`); one attempt may take half of
/// that, and after a failed one it retries a quarter of it later (at least 100 ms), so three
/// attempts fit in the slack after a missed renewal (one that hangs on a stopped member cannot
/// eat the whole window: the next goes to whichever member the channel picks then), until
/// the trust window ends, then gives the lease up (without revoking it: `give_up`) and asks for
/// a new one every 500 ms until the cluster grants it.
pub(crate) async fn keep(
    client: Client,
    state: std::sync::Arc<watch::Sender<LeaseState>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let ttl = state.borrow().ttl;
    let every = keepalive_interval(ttl);
    let retry = (every / 4).max(Duration::from_millis(100));
    let attempt = (every / 2).max(Duration::from_millis(100));
    let mut renewer = Renewer {
        id: state.borrow().id,
        granted: state.borrow().granted,
        stream: None,
    };
    let mut next = tokio::time::Instant::now() + every;
    loop {
        let mut sleep = std::pin::pin!(tokio::time::sleep_until(next));
        let stopped = std::future::poll_fn(|cx| {
            use std::future::Future;
            use std::task::Poll;
            if let Poll::Ready(r) = std::pin::Pin::new(&mut stop).poll(cx) {
                return Poll::Ready(r.is_ok() || r.is_err());
            }
            sleep.as_mut().poll(cx).map(|()| false)
        })
        .await;
        if stopped {
            return;
        }
        let current = state.borrow().clone();
        if current.id == 0 {
            match grant(&client, ttl).await {
                Ok((id, granted, end)) => {
                    renewer = Renewer {
                        id,
                        granted,
                        stream: None,
                    };
                    state.send_modify(|s| {
                        s.epoch += 1;
                        s.id = id;
                        s.granted = granted;
                        s.end = end;
                        s.last_error = None;
                    });
                    next = tokio::time::Instant::now() + every;
                }
                Err(e) => {
                    state.send_modify(|s| s.last_error = Some(e));
                    next = tokio::time::Instant::now() + Duration::from_millis(500);
                }
            }
            continue;
        }
        let left = current
            .trust_until()
            .saturating_duration_since(Instant::now());
        let outcome = renewer.renew(&client, attempt.min(left.max(retry))).await;
        match outcome {
            // Renewed, but only after the trust window had ended: the process has already
            // stopped trusting this lease's slots (and said so); give it up rather than let
            // them become valid again, so "invalid" is final for an epoch.
            Ok(Some(_)) if !state.borrow().trusted_at(Instant::now()) => {
                give_up(
                    &state,
                    format!(
                        "the lease was renewed only after its trust window (TTL {} s − margin {:.2} s) had ended",
                        ttl.as_secs(),
                        crate::queue::margin(ttl).as_secs_f64()
                    ),
                );
                next = tokio::time::Instant::now();
            }
            Ok(Some(end)) => {
                state.send_modify(|s| {
                    s.end = end.max(s.end);
                    s.last_error = None;
                });
                next = tokio::time::Instant::now() + every;
            }
            Ok(None) => {
                give_up(
                    &state,
                    "the lease expired in etcd before it was renewed".into(),
                );
                next = tokio::time::Instant::now();
            }
            Err(e) => {
                if current.trusted_at(Instant::now()) {
                    state.send_modify(|s| s.last_error = Some(e));
                    next = tokio::time::Instant::now() + retry;
                } else {
                    let why = format!(
                        "could not renew the lease within TTL {} s − margin {:.2} s ({e})",
                        ttl.as_secs(),
                        crate::queue::margin(ttl).as_secs_f64()
                    );
                    give_up(&state, why);
                    next = tokio::time::Instant::now();
                }
            }
        }
    }
}

/// The lease is no longer trusted: publish a new epoch without a lease. The old lease is
/// **not** revoked: its keys stay until etcd expires it (no earlier than TTL after the last
/// renewal it received, so at least the margin after the trust window ended), or until their
/// holder drops them. Work started on those slots before the window ended may still be running;
/// a revoke would hand the slots to other hosts at once, under that work. (Revoking it here
/// would shorten a waiter's wait after a holder's hiccup, but would let every job running on
/// the holder overlap the new holders' jobs.)
fn give_up(state: &watch::Sender<LeaseState>, why: String) {
    state.send_modify(|s| {
        s.epoch += 1;
        s.id = 0;
        s.lost = Some(why);
    });
}
