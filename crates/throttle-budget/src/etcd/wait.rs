//! Taking a slot: put a key on the lease, then look (one range read sorted by creation revision)
//! and, unless among the first N, watch exactly what `queue::place` says from the revision of
//! that read, until something changes. Protocol and proof sketch: `../README.md`.

use super::{Cancel, Core};
use crate::queue::{place, Place};
use crate::types::SlotValue;
use etcd_client::{
    Compare, CompareOp, GetOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp, WatchFilterType,
    WatchOptions,
};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// How an acquire ended.
pub(crate) enum Outcome {
    /// The key holds a slot of lease `epoch`.
    Granted { key: String, epoch: u64 },
    /// The deadline passed first.
    TimedOut,
    /// [`Cancel::cancel`] was called first.
    Cancelled,
}

/// What woke a waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// The watched key or prefix changed (or the watch broke: look again).
    Changed,
    /// The lease was renewed, lost or replaced, or its trust window ended.
    Lease,
    Deadline,
    Cancelled,
}

/// How long one unary request may take before it is retried: a third of the TTL, so a stuck
/// request cannot outlive the trust window unnoticed.
fn op_timeout(core: &Core) -> Duration {
    core.opts.ttl / 3
}

/// Pause after a failed request before the next one (the cluster may be electing a leader).
const RETRY: Duration = Duration::from_millis(200);

/// Polls the four wake sources; the first ready wins. (A hand-written `select!`: the crate keeps
/// tokio's features to rt, time and sync.)
struct Race<'a> {
    changed: Pin<&'a mut (dyn Future<Output = ()> + Send)>,
    lease: Pin<&'a mut (dyn Future<Output = ()> + Send)>,
    deadline: Pin<&'a mut (dyn Future<Output = ()> + Send)>,
    cancel: Pin<&'a mut (dyn Future<Output = ()> + Send)>,
}

impl Future for Race<'_> {
    type Output = Wake;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Wake> {
        if self.cancel.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Wake::Cancelled);
        }
        if self.lease.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Wake::Lease);
        }
        if self.changed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Wake::Changed);
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Wake::Deadline);
        }
        Poll::Pending
    }
}

async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
        None => std::future::pending::<()>().await,
    }
}

async fn cancelled(cancel: Option<&Cancel>) {
    match cancel {
        Some(c) => c.cancelled().await,
        None => std::future::pending::<()>().await,
    }
}

/// Waits for one of: `changed`, a change of the lease state (or the end of its trust window),
/// the deadline, the cancel.
async fn wait_for(
    core: &Core,
    changed: impl Future<Output = ()> + Send,
    deadline: Option<Instant>,
    cancel: Option<&Cancel>,
) -> Wake {
    let mut rx = core.lease.subscribe();
    let trust_end = {
        let st = rx.borrow_and_update();
        (st.id != 0).then(|| st.trust_until())
    };
    let lease = async move {
        let end = until(trust_end);
        let mut end = std::pin::pin!(end);
        let changed = rx.changed();
        let mut changed = std::pin::pin!(changed);
        std::future::poll_fn(|cx| {
            if end.as_mut().poll(cx).is_ready() || changed.as_mut().poll(cx).is_ready() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    };
    let changed = std::pin::pin!(changed);
    let lease = std::pin::pin!(lease);
    let deadline = std::pin::pin!(until(deadline));
    let cancel = std::pin::pin!(cancelled(cancel));
    Race {
        changed,
        lease,
        deadline,
        cancel,
    }
    .await
}

/// Waits until the process holds a trusted lease; returns its epoch and id.
async fn trusted_lease(
    core: &Core,
    deadline: Option<Instant>,
    cancel: Option<&Cancel>,
) -> Result<(u64, i64), Wake> {
    loop {
        {
            let st = core.lease.borrow();
            if st.trusted_at(Instant::now()) {
                return Ok((st.epoch, st.id));
            }
        }
        match wait_for(core, std::future::pending::<()>(), deadline, cancel).await {
            Wake::Deadline => return Err(Wake::Deadline),
            Wake::Cancelled => return Err(Wake::Cancelled),
            _ => {}
        }
    }
}

/// Sleeps `RETRY` unless the deadline or the cancel comes first.
async fn pause(core: &Core, deadline: Option<Instant>, cancel: Option<&Cancel>) -> Option<Wake> {
    match wait_for(core, tokio::time::sleep(RETRY), deadline, cancel).await {
        w @ (Wake::Deadline | Wake::Cancelled) => Some(w),
        _ => None,
    }
}

/// Takes one slot: the whole protocol of `../README.md`.
pub(crate) async fn acquire(
    core: &Core,
    deadline: Option<Instant>,
    cancel: Option<&Cancel>,
) -> Outcome {
    let give_up = |w: Wake| match w {
        Wake::Cancelled => Outcome::Cancelled,
        _ => Outcome::TimedOut,
    };
    loop {
        let (epoch, lease) = match trusted_lease(core, deadline, cancel).await {
            Ok(l) => l,
            Err(w) => return give_up(w),
        };
        let seq = core.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let key = format!("{}{lease:016x}-{seq}", core.url.slots_prefix());
        let since_unix = unix_now();
        let value = |granted| {
            serde_json::to_vec(&SlotValue {
                host: core.opts.host.clone(),
                pid: core.pid,
                since_unix,
                granted,
            })
            .expect("a SlotValue always serializes")
        };
        let mut kv = core.client.kv_client();
        let put = tokio::time::timeout(
            op_timeout(core),
            kv.put(
                key.clone(),
                value(false),
                Some(PutOptions::new().with_lease(lease)),
            ),
        )
        .await;
        let created = match put {
            Ok(Ok(r)) => r.header().map_or(0, |h| h.revision()),
            _ => {
                // Lease gone, no leader, or no answer: maybe the key was written. If it was, it
                // waits behind nobody forever only until its lease ends, and a stray waiter is
                // harmless for safety; delete it anyway so it blocks nobody.
                delete_in_background(core, key, epoch);
                if let Some(w) = pause(core, deadline, cancel).await {
                    return give_up(w);
                }
                continue;
            }
        };
        match wait_turn(core, &key, epoch, deadline, cancel).await {
            Turn::Granted => {
                mark_granted(core, &key, created, lease, value(true)).await;
                return Outcome::Granted { key, epoch };
            }
            Turn::Lost => {
                delete_in_background(core, key, epoch);
            }
            Turn::Stop(w) => {
                delete_in_background(core, key, epoch);
                return give_up(w);
            }
        }
    }
}

/// How waiting for one key ended.
enum Turn {
    Granted,
    /// The key or its lease is gone (or the lease is no longer trusted): start again with a
    /// new key.
    Lost,
    /// Deadline or cancel.
    Stop(Wake),
}

/// Looks, and watches until the key is among the first N (`queue::place`).
async fn wait_turn(
    core: &Core,
    key: &str,
    epoch: u64,
    deadline: Option<Instant>,
    cancel: Option<&Cancel>,
) -> Turn {
    let prefix = core.url.slots_prefix();
    loop {
        {
            let st = core.lease.borrow();
            if st.epoch != epoch || !st.trusted_at(Instant::now()) {
                return Turn::Lost;
            }
        }
        let mut kv = core.client.kv_client();
        let read = tokio::time::timeout(
            op_timeout(core),
            kv.get(
                prefix.clone(),
                Some(
                    GetOptions::new()
                        .with_prefix()
                        .with_keys_only()
                        .with_sort(SortTarget::Create, SortOrder::Ascend),
                ),
            ),
        )
        .await;
        let (revision, keys) = match read {
            Ok(Ok(r)) => (
                r.header().map_or(0, |h| h.revision()),
                r.kvs()
                    .iter()
                    .map(|kv| String::from_utf8_lossy(kv.key()).into_owned())
                    .collect::<Vec<_>>(),
            ),
            _ => {
                if let Some(w) = pause(core, deadline, cancel).await {
                    return Turn::Stop(w);
                }
                continue;
            }
        };
        let (watch_key, options) = match place(&keys, key, core.slots) {
            Place::Holder => {
                // Positions only move up while the key exists, and it exists while the lease
                // does: trusted now means held now.
                let st = core.lease.borrow();
                return if st.epoch == epoch && st.trusted_at(Instant::now()) {
                    Turn::Granted
                } else {
                    Turn::Lost
                };
            }
            Place::Gone => return Turn::Lost,
            Place::FirstWaiter => (
                prefix.clone(),
                WatchOptions::new()
                    .with_prefix()
                    .with_start_revision(revision + 1)
                    .with_filters([WatchFilterType::NoPut]),
            ),
            Place::Waiter { predecessor, .. } => (
                predecessor,
                WatchOptions::new().with_start_revision(revision + 1),
            ),
        };
        let mut wc = core.client.watch_client();
        let watch =
            tokio::time::timeout(op_timeout(core), wc.watch(watch_key, Some(options))).await;
        let (watcher, mut stream) = match watch {
            Ok(Ok(w)) => w,
            _ => {
                if let Some(w) = pause(core, deadline, cancel).await {
                    return Turn::Stop(w);
                }
                continue;
            }
        };
        let event = async move {
            // Progress notifications carry no events: keep waiting. Anything else (events, a
            // cancel because the revision was compacted, an error, the end) means look again.
            loop {
                match stream.message().await {
                    Ok(Some(m)) if m.events().is_empty() && !m.canceled() => continue,
                    _ => break,
                }
            }
        };
        let woke = wait_for(core, event, deadline, cancel).await;
        drop(watcher);
        match woke {
            Wake::Deadline | Wake::Cancelled => return Turn::Stop(woke),
            Wake::Changed | Wake::Lease => {}
        }
    }
}

/// Re-puts the key's value with `granted: true` on the same lease, only if the key is still the
/// one created at `created` (a key deleted meanwhile is not recreated at the back of the queue).
/// The put is what wakes the waiter watching this key; if it fails it is retried in the
/// background, because that waiter would otherwise sleep until this key is deleted.
async fn mark_granted(core: &Core, key: &str, created: i64, lease: i64, value: Vec<u8>) {
    let txn = || {
        Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, created)])
            .and_then([TxnOp::put(
                key,
                value.clone(),
                Some(PutOptions::new().with_lease(lease)),
            )])
    };
    let mut kv = core.client.kv_client();
    if let Ok(Ok(_)) = tokio::time::timeout(op_timeout(core), kv.txn(txn())).await {
        return;
    }
    let lease_state = core.lease.clone();
    let epoch = lease_state.borrow().epoch;
    let t = op_timeout(core);
    let txn = txn();
    core.handle.spawn(async move {
        while lease_state.borrow().epoch == epoch {
            tokio::time::sleep(RETRY).await;
            if let Ok(Ok(_)) = tokio::time::timeout(t, kv.txn(txn.clone())).await {
                return;
            }
        }
    });
}

/// Deletes `key` in the background, retrying while the lease of `epoch` is the process's
/// lease (after that the lease is revoked or expires, and its keys go with it).
pub(crate) fn delete_in_background(core: &Core, key: String, epoch: u64) {
    let mut kv = core.client.kv_client();
    let lease_state = core.lease.clone();
    let t = op_timeout(core);
    core.handle.spawn(async move {
        loop {
            if let Ok(Ok(_)) = tokio::time::timeout(t, kv.delete(key.clone(), None)).await {
                return;
            }
            if lease_state.borrow().epoch != epoch {
                return;
            }
            tokio::time::sleep(RETRY).await;
        }
    });
}

/// Seconds since the Unix epoch by the host's wall clock (for people reading the status only).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
