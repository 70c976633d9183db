//! The budget in etcd, behind the `etcd` feature: [`EtcdBudget`] (one per process and budget),
//! [`ClusterSlot`], [`status`]. A current-thread tokio runtime runs on one background thread
//! (`throttle-budget-etcd`) that keeps the lease alive; the blocking calls run their requests on
//! that runtime from the caller's thread. Protocol: `../README.md`.

mod lease;
mod wait;

use crate::queue::margin;
use crate::types::{BudgetError, ErrorKind, Options, Status, MIN_TTL};
use crate::url::BudgetUrl;
use etcd_client::{Client, Compare, CompareOp, ConnectOptions, GetOptions, SortOrder, SortTarget};
use etcd_client::{Txn, TxnOp, TxnOpResponse};
use lease::LeaseState;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio::sync::{oneshot, watch, Notify};

/// What the blocking calls and the background tasks share.
pub(crate) struct Core {
    client: Client,
    url: BudgetUrl,
    slots: usize,
    opts: Options,
    pid: u32,
    /// The lease as last renewed (written by `lease::keep` only).
    lease: Arc<watch::Sender<LeaseState>>,
    /// Makes each slot key of this process unique under one lease.
    seq: AtomicU64,
    handle: Handle,
}

/// The background thread, stopped when the last [`EtcdBudget`] or [`ClusterSlot`] goes.
struct Shared {
    core: Arc<Core>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Revoking the lease deletes every key of this process at once (held and waiting),
        // instead of at its expiry.
        let id = self.core.lease.borrow().id;
        if id != 0 {
            let mut lc = self.core.client.lease_client();
            let _ = self.core.handle.block_on(async {
                tokio::time::timeout(Duration::from_secs(1), lc.revoke(id)).await
            });
        }
        if let Some(stop) = lock(&self.stop).take() {
            let _ = stop.send(());
        }
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One process's membership in a cluster budget: its lease, kept alive in the background, and
/// the means to take slots. Dropping it (and every [`ClusterSlot`] taken from it) revokes the
/// lease, which deletes the process's keys at once.
///
/// The calls block the calling thread; do not call them from inside an async runtime.
///
/// # Examples
/// ```no_run
/// use std::time::Duration;
/// use throttle_budget::{BudgetUrl, EtcdBudget, Options};
/// let url: BudgetUrl = "etcd://127.0.0.1:2379/licences".parse().unwrap();
/// let budget = EtcdBudget::connect(&url, 2, Options::default()).unwrap();
/// if let Some(slot) = budget.try_acquire_for(Duration::from_secs(10)).unwrap() {
///     assert!(slot.is_valid());
/// }
/// ```
pub struct EtcdBudget {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for EtcdBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdBudget")
            .field("url", &self.shared.core.url.to_string())
            .field("slots", &self.shared.core.slots)
            .finish_non_exhaustive()
    }
}

/// A cancel switch for [`EtcdBudget::acquire_cancellable`]: another thread calls
/// [`cancel`](Cancel::cancel) and the wait ends (its waiting key is deleted).
#[derive(Debug, Default)]
pub struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    /// A switch not yet pulled.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Ends every wait that uses this switch, now and later.
    pub fn cancel(&self) {
        // Release: pairs with the Acquire load in `cancelled`, after its waiter is registered.
        self.flag.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// True once [`cancel`](Cancel::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the flag is checked: a cancel after the check wakes it.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// The process's lease as seen now (for a bridge that must stop granting in time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseView {
    /// Changes each time a lease is given up or a new one granted; slots of another epoch are
    /// gone.
    pub epoch: u64,
    /// Slots of this epoch may be used now (`now < valid_until`).
    pub trusted: bool,
    /// The end of the trust window: lease end − margin (None while there is no lease).
    pub valid_until: Option<Instant>,
    /// Why the previous lease was given up, if one was.
    pub lost: Option<String>,
    /// The last renewal error, if the last attempt failed.
    pub last_error: Option<String>,
}

/// One slot of the cluster budget: an etcd key among the first N, on this process's lease.
/// Dropping it deletes the key (in the background, retried while the lease lives), which wakes
/// the first waiter.
pub struct ClusterSlot {
    shared: Arc<Shared>,
    key: String,
    epoch: u64,
}

impl std::fmt::Debug for ClusterSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSlot")
            .field("key", &self.key)
            .field("epoch", &self.epoch)
            .field("valid", &self.is_valid())
            .finish()
    }
}

impl ClusterSlot {
    /// The etcd key that holds this slot.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// True while the slot may be used: its lease is the process's lease and was renewed
    /// recently enough that etcd cannot have expired it (`now < valid_until`). Once false it
    /// never becomes true again: take a new slot.
    pub fn is_valid(&self) -> bool {
        let st = self.shared.core.lease.borrow();
        st.epoch == self.epoch && st.trusted_at(Instant::now())
    }

    /// Until when the slot may be used if the lease is not renewed again: the send time of the
    /// last renewal + the granted TTL − the margin. Later renewals move it on; None once the
    /// lease was given up.
    pub fn valid_until(&self) -> Option<Instant> {
        let st = self.shared.core.lease.borrow();
        (st.epoch == self.epoch && st.id != 0).then(|| st.trust_until())
    }
}

impl Drop for ClusterSlot {
    fn drop(&mut self) {
        let core = &self.shared.core;
        wait::delete_in_background(core, std::mem::take(&mut self.key), self.epoch);
    }
}

fn unreachable(url: &BudgetUrl, detail: &str) -> BudgetError {
    let members: Vec<String> = url
        .members()
        .iter()
        .map(|(h, p)| format!("{h}:{p}"))
        .collect();
    // Members that answer "no leader" are reachable, but fewer than a majority of the cluster
    // run (or they are still electing): say so rather than "cannot reach".
    let text = if detail.contains("no leader") {
        format!(
            "the etcd cluster at {} has no leader ({detail}); are most of its members running?",
            members.join(","),
        )
    } else {
        format!(
            "cannot reach the etcd cluster at {} ({detail}); is etcd running there?",
            members.join(","),
        )
    };
    BudgetError::new(ErrorKind::Unreachable, text)
}

fn silent(within: Duration) -> String {
    format!("no member answered within {} s", within.as_secs_f64())
}

/// An etcd client error in one short line (gRPC statuses as `Code: message`, without the
/// metadata dump).
pub(crate) fn short(e: &etcd_client::Error) -> String {
    match e {
        etcd_client::Error::GRpcStatus(s) => format!("{:?}: {}", s.code(), s.message()),
        other => other.to_string().replace('\n', " "),
    }
}

/// HTTP/2 pings on every connection: a member that stops answering (stopped, cut off) is
/// noticed within interval + timeout, and the watches and keep-alives on it fail (and are
/// retried on another member) instead of hanging. etcd refuses pings more often than every
/// 5 s (`--grpc-keepalive-min-time`): 5 s is the shortest interval it accepts by default.
const PING_INTERVAL: Duration = Duration::from_secs(5);
/// How long a ping may go unanswered before the connection is dropped.
const PING_TIMEOUT: Duration = Duration::from_secs(3);

async fn connect_client(url: &BudgetUrl, timeout: Duration) -> Result<Client, BudgetError> {
    connect_endpoints(&url.endpoints(), timeout).await
}

/// A client of one member only, the `attempt`-th in turn: what the joining calls ask (see
/// [`Rotation`]).
async fn connect_one(
    url: &BudgetUrl,
    timeout: Duration,
    attempt: usize,
) -> Result<Client, BudgetError> {
    let endpoints = url.endpoints();
    let one = endpoints[attempt % endpoints.len()].clone();
    connect_endpoints(&[one], timeout).await
}

/// The members a joining call asks in turn, one per attempt. A client of every member
/// balances its requests over connections made lazily, and a request sent over the connection
/// of a member that is down fails with "tcp connect error"; the balancer keeps choosing that
/// connection (it is never busy), so in the randomized fault run one host of 108, started
/// while a member was down, failed every attempt for its whole 4 s patience and exited 2. A
/// client of one member fails at once when that member is down, and the next attempt asks the
/// next one.
struct Rotation(std::cell::Cell<usize>);

impl Rotation {
    fn new() -> Rotation {
        Rotation(std::cell::Cell::new(0))
    }

    /// A client of the next member in turn.
    async fn next(&self, url: &BudgetUrl, timeout: Duration) -> Result<Client, BudgetError> {
        let attempt = self.0.get();
        self.0.set(attempt.wrapping_add(1));
        connect_one(url, timeout, attempt).await
    }
}

async fn connect_endpoints(endpoints: &[String], timeout: Duration) -> Result<Client, BudgetError> {
    // `require_leader`: a member cut off from the leader fails watches and requests at once
    // (etcd's "no leader" error) instead of holding them while it cannot know the truth.
    let options = ConnectOptions::new()
        .with_connect_timeout(timeout)
        .with_keep_alive(PING_INTERVAL, PING_TIMEOUT)
        .with_keep_alive_while_idle(true)
        .with_require_leader(true);
    Client::connect(endpoints, Some(options))
        .await
        .map_err(|e| BudgetError::new(ErrorKind::Etcd, short(&e)))
}

/// Stores N at the budget's meta key if the budget is new; else checks it.
async fn ensure_meta(client: &Client, url: &BudgetUrl, slots: usize) -> Result<(), BudgetError> {
    let meta = url.meta_key();
    let txn = Txn::new()
        .when([Compare::create_revision(meta.clone(), CompareOp::Equal, 0)])
        .and_then([TxnOp::put(meta.clone(), slots.to_string(), None)])
        .or_else([TxnOp::get(meta.clone(), None)]);
    let r = client.kv_client().txn(txn).await.map_err(|e| {
        BudgetError::new(
            ErrorKind::Etcd,
            format!("storing the budget's N: {}", short(&e)),
        )
    })?;
    if r.succeeded() {
        return Ok(());
    }
    let stored = r.op_responses().into_iter().find_map(|op| match op {
        TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.value().to_vec()),
        _ => None,
    });
    let stored = String::from_utf8_lossy(&stored.unwrap_or_default()).into_owned();
    if stored.trim() == slots.to_string() {
        Ok(())
    } else {
        Err(BudgetError::new(
            ErrorKind::Mismatch,
            format!(
                "budget {} has N={} slots in etcd, not {slots}",
                url.name(),
                stored.trim()
            ),
        ))
    }
}

async fn read_status(client: &Client, url: &BudgetUrl) -> Result<Status, BudgetError> {
    let txn = Txn::new().and_then([
        TxnOp::get(url.meta_key(), None),
        TxnOp::get(
            url.slots_prefix(),
            Some(
                GetOptions::new()
                    .with_prefix()
                    .with_sort(SortTarget::Create, SortOrder::Ascend),
            ),
        ),
    ]);
    let r = client.kv_client().txn(txn).await.map_err(|e| {
        BudgetError::new(
            ErrorKind::Etcd,
            format!("reading the budget: {}", short(&e)),
        )
    })?;
    let mut gets = r.op_responses().into_iter().filter_map(|op| match op {
        TxnOpResponse::Get(g) => Some(g),
        _ => None,
    });
    let meta = gets.next();
    let keys = gets.next();
    let slots = meta
        .as_ref()
        .and_then(|g| g.kvs().first())
        .and_then(|kv| String::from_utf8_lossy(kv.value()).trim().parse().ok())
        .unwrap_or(0);
    let keys = keys
        .map(|g| {
            g.kvs()
                .iter()
                .map(|kv| {
                    (
                        String::from_utf8_lossy(kv.key()).into_owned(),
                        kv.value().to_vec(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Status::from_keys(url.name(), slots, keys))
}

/// Reads a budget's holders and waiters (one consistent read), without joining it.
///
/// # Errors
/// The URL's cluster does not answer within [`DEFAULT_CONNECT_TIMEOUT`](crate::DEFAULT_CONNECT_TIMEOUT),
/// or cannot serve for five times that ([`ErrorKind::Unreachable`]), or etcd refuses the read.
pub fn status(url: &BudgetUrl) -> Result<Status, BudgetError> {
    let rt = runtime()?;
    let within = crate::DEFAULT_CONNECT_TIMEOUT;
    let mut patience = Patience::new(within);
    let members = Rotation::new();
    rt.block_on(retrying(url, &mut patience, || async {
        read_status(&members.next(url, within).await?, url).await
    }))
}

/// How long the joining calls ([`EtcdBudget::connect`], [`status`]) keep trying: until
/// `start + within` while no member has answered at all, until `start + 5 × within` once one
/// has answered with an error of etcd's own (`etcdserver: no leader`, `request timed out`, …):
/// the cluster is there but cannot serve yet (an election, a member rejoining, a majority
/// still starting), which on a loaded machine can outlast the few seconds that tell a dead
/// address from a live one.
///
/// Only time this process spent trying counts: a step (an attempt, the pause after it) that
/// took more than its bound plus [`STALL_SLACK`] was a stretch in which the process did not run
/// (stopped by SIGSTOP, a paused VM, starved of CPU), and the excess moves `start` on. Counting
/// the frozen time instead made the randomized fault run exit 2 on rare occasions: a host
/// frozen for 2.1 and 2.3 s while it joined during an election resumed past its 4 s, with the
/// attempt in flight timed out by the freeze ("no answer within 1000 ms from the member
/// asked"), and gave up without asking a member again.
struct Patience {
    within: Duration,
    start: Instant,
    answered: bool,
}

/// How much longer than its bound a step of [`retrying`] may take before the excess counts as
/// time the process did not run (timer and scheduling delays on a busy machine stay below it).
const STALL_SLACK: Duration = Duration::from_millis(250);

impl Patience {
    fn new(within: Duration) -> Patience {
        Patience {
            within,
            start: Instant::now(),
            answered: false,
        }
    }

    /// A step bounded by `bound` took `took`: time beyond `bound + STALL_SLACK` is time the
    /// process did not run, and is not counted.
    fn forgive(&mut self, bound: Duration, took: Duration) {
        self.start += took.saturating_sub(bound + STALL_SLACK);
    }

    fn deadline(&self) -> Instant {
        self.start
            + if self.answered {
                self.within * 5
            } else {
                self.within
            }
    }
}

/// An error etcd itself sent (as opposed to a connection that failed or hung): the cluster is
/// reachable.
fn from_etcd_server(text: &str) -> bool {
    text.contains("etcdserver:")
}

/// Runs `op` until it succeeds, fails for a reason other than the cluster (an N mismatch), or
/// the patience runs out; a failed attempt (a dead member, an election under way) is retried
/// after 100 ms, on whichever member the channel picks then. Out of time:
/// [`ErrorKind::Unreachable`] with the last failure.
///
/// Each attempt gets at most [`attempt_timeout`]: a write sent to a follower whose leader was
/// just killed is forwarded to the dead leader and hangs (etcd gives up on it only after its
/// own request timeout, 7 s by default), so one attempt allowed the whole connect timeout would
/// end in "cannot reach the etcd cluster" although the two other members elected a new leader
/// within about 2 s. A hung attempt is abandoned; the next one finds the new leader, or etcd's
/// "no leader" answer, which extends the patience.
async fn retrying<T, F, Fut>(
    url: &BudgetUrl,
    patience: &mut Patience,
    mut op: F,
) -> Result<T, BudgetError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, BudgetError>>,
{
    let mut last = silent(patience.within);
    let per_attempt = attempt_timeout(patience.within);
    loop {
        let left = patience
            .deadline()
            .saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(unreachable(url, &last));
        }
        let bound = left.min(per_attempt);
        let sent = Instant::now();
        let outcome = tokio::time::timeout(bound, op()).await;
        patience.forgive(bound, sent.elapsed());
        match outcome {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) if e.kind() == ErrorKind::Etcd => {
                last = e.to_string();
                patience.answered |= from_etcd_server(&last);
            }
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                last = format!(
                    "no answer within {} ms from the member asked",
                    bound.as_millis()
                )
            }
        }
        let pause = Duration::from_millis(100);
        let paused = Instant::now();
        tokio::time::sleep(pause).await;
        patience.forgive(pause, paused.elapsed());
    }
}

/// How long one attempt of [`retrying`] may take: a quarter of the connect timeout, at least
/// 500 ms (1 s with the default 4 s). A healthy cluster answers in milliseconds (p99 under
/// 200 ms on a loaded 2-core host, `cluster_budget`'s grant latency); only a request stuck on a
/// member that cannot reach its leader takes longer.
fn attempt_timeout(within: Duration) -> Duration {
    (within / 4).max(Duration::from_millis(500))
}

fn runtime() -> Result<tokio::runtime::Runtime, BudgetError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BudgetError::new(ErrorKind::Etcd, format!("starting the etcd client: {e}")))
}

impl EtcdBudget {
    /// Joins the budget at `url` with `slots` slots: connects (waiting at most
    /// `opts.connect_timeout` for a member to answer, and up to five times that while members
    /// answer but the cluster cannot serve yet, e.g. during an election), stores N if the
    /// budget is new or checks it, grants the process's lease and starts keeping it alive.
    ///
    /// # Errors
    /// - [`ErrorKind::BadOptions`]: `slots` is 0, or the TTL is below [`MIN_TTL`].
    /// - [`ErrorKind::Unreachable`]: no member answered in time, or the cluster had no leader
    ///   for five times that.
    /// - [`ErrorKind::Mismatch`]: the budget exists with another N
    ///   (`budget NAME has N=3 slots in etcd, not 4`).
    pub fn connect(
        url: &BudgetUrl,
        slots: usize,
        opts: Options,
    ) -> Result<EtcdBudget, BudgetError> {
        if slots == 0 {
            return Err(BudgetError::new(
                ErrorKind::BadOptions,
                "a budget needs at least 1 slot",
            ));
        }
        if opts.ttl < MIN_TTL {
            return Err(BudgetError::new(
                ErrorKind::BadOptions,
                format!(
                    "a lease TTL of {:?} is too short: at least {} s",
                    opts.ttl,
                    MIN_TTL.as_secs()
                ),
            ));
        }
        let ttl = Duration::from_secs(opts.ttl.as_secs());
        let rt = runtime()?;
        let within = opts.connect_timeout;
        let mut patience = Patience::new(within);
        let (client, id, granted, end) = rt.block_on(async {
            // The client kept for the lease and the slots balances over every member; the
            // joining requests ask one member per attempt, in turn (`Rotation`).
            let client = retrying(url, &mut patience, || connect_client(url, within)).await?;
            let members = Rotation::new();
            retrying(url, &mut patience, || async {
                ensure_meta(&members.next(url, within).await?, url, slots).await
            })
            .await?;
            let (id, granted, end) = retrying(url, &mut patience, || async {
                lease::grant(&members.next(url, within).await?, ttl)
                    .await
                    .map_err(|e| BudgetError::new(ErrorKind::Etcd, e))
            })
            .await?;
            Ok::<_, BudgetError>((client, id, granted, end))
        })?;
        let state = Arc::new(watch::Sender::new(LeaseState {
            epoch: 1,
            id,
            end,
            ttl,
            granted,
            lost: None,
            last_error: None,
        }));
        let core = Arc::new(Core {
            client: client.clone(),
            url: url.clone(),
            slots,
            opts: Options { ttl, ..opts },
            pid: std::process::id(),
            lease: state.clone(),
            seq: AtomicU64::new(0),
            handle: rt.handle().clone(),
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("throttle-budget-etcd".into())
            .spawn(move || rt.block_on(lease::keep(client, state, stop_rx)))
            .map_err(|e| {
                BudgetError::new(ErrorKind::Etcd, format!("starting the lease thread: {e}"))
            })?;
        Ok(EtcdBudget {
            shared: Arc::new(Shared {
                core,
                stop: Mutex::new(Some(stop_tx)),
                thread: Mutex::new(Some(thread)),
            }),
        })
    }

    fn run(&self, deadline: Option<Instant>, cancel: Option<&Cancel>) -> Option<ClusterSlot> {
        let core = &self.shared.core;
        match core.handle.block_on(wait::acquire(core, deadline, cancel)) {
            wait::Outcome::Granted { key, epoch } => Some(ClusterSlot {
                shared: self.shared.clone(),
                key,
                epoch,
            }),
            wait::Outcome::TimedOut | wait::Outcome::Cancelled => None,
        }
    }

    /// Waits (in arrival order, across every host) until a slot is free and takes it. While the
    /// process has no trusted lease (the cluster is unreachable) it waits for a new one.
    ///
    /// # Errors
    /// None today; the `Result` leaves room for a budget that is shut down.
    pub fn acquire(&self) -> Result<ClusterSlot, BudgetError> {
        Ok(self
            .run(None, None)
            .expect("an acquire without deadline or cancel only ends granted"))
    }

    /// Like [`acquire`](EtcdBudget::acquire), but gives up after `timeout` (None then; the
    /// waiting key is deleted, so the place in the queue is lost).
    ///
    /// # Errors
    /// None today (see [`acquire`](EtcdBudget::acquire)).
    pub fn try_acquire_for(&self, timeout: Duration) -> Result<Option<ClusterSlot>, BudgetError> {
        Ok(self.run(Some(Instant::now() + timeout), None))
    }

    /// Like [`acquire`](EtcdBudget::acquire), but gives up (None) when `cancel` is pulled.
    ///
    /// # Errors
    /// None today (see [`acquire`](EtcdBudget::acquire)).
    pub fn acquire_cancellable(&self, cancel: &Cancel) -> Result<Option<ClusterSlot>, BudgetError> {
        if cancel.is_cancelled() {
            return Ok(None);
        }
        Ok(self.run(None, Some(cancel)))
    }

    /// The process's lease now.
    pub fn lease(&self) -> LeaseView {
        let st = self.shared.core.lease.borrow();
        LeaseView {
            epoch: st.epoch,
            trusted: st.trusted_at(Instant::now()),
            valid_until: (st.id != 0).then(|| st.trust_until()),
            lost: st.lost.clone(),
            last_error: st.last_error.clone(),
        }
    }

    /// Blocks until the lease state changes (renewed, given up, replaced) or `timeout` passes.
    pub fn wait_lease_change(&self, timeout: Duration) {
        let mut rx = self.shared.core.lease.subscribe();
        let _ = self
            .shared
            .core
            .handle
            .block_on(async { tokio::time::timeout(timeout, rx.changed()).await });
    }

    /// The budget's holders and waiters now (a failed read is retried on any member for up to
    /// the TTL, or five times that while members answer with etcd's own errors).
    ///
    /// # Errors
    /// No member answers within the TTL ([`ErrorKind::Unreachable`]).
    pub fn status(&self) -> Result<Status, BudgetError> {
        let core = &self.shared.core;
        let ttl = core.opts.ttl;
        let mut patience = Patience::new(ttl);
        core.handle.block_on(retrying(&core.url, &mut patience, || {
            read_status(&core.client, &core.url)
        }))
    }

    /// The budget's N.
    pub fn slots(&self) -> usize {
        self.shared.core.slots
    }

    /// The budget's address.
    pub fn url(&self) -> &BudgetUrl {
        &self.shared.core.url
    }

    /// The lease TTL in use (whole seconds).
    pub fn ttl(&self) -> Duration {
        self.shared.core.opts.ttl
    }

    /// How long before the lease's computed end slots stop being trusted: `max(1 s, TTL/4)`.
    pub fn margin(&self) -> Duration {
        margin(self.shared.core.lease.borrow().granted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patience_does_not_count_time_the_process_did_not_run() {
        let within = Duration::from_secs(4);
        let mut p = Patience::new(within);
        let deadline = p.deadline();
        // Steps within their bound plus the slack move nothing.
        p.forgive(Duration::from_secs(1), Duration::from_secs(1));
        p.forgive(
            Duration::from_millis(100),
            Duration::from_millis(100) + STALL_SLACK,
        );
        assert_eq!(p.deadline(), deadline);
        // An attempt bounded by 1 s that took 3.5 s (the process was stopped): 2.25 s given
        // back.
        p.forgive(Duration::from_secs(1), Duration::from_millis(3500));
        assert_eq!(p.deadline(), deadline + Duration::from_millis(2250));
        // The fivefold patience after an answer from etcd keeps it too.
        p.answered = true;
        assert_eq!(
            p.deadline(),
            p.start + within * 5,
            "the deadline is counted from the moved start"
        );
        assert!(p.deadline() > deadline + within * 4);
    }
}
