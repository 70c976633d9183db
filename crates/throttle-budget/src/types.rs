//! What every build of the crate shares, with or without etcd: the options, the error, the value
//! stored in a slot key, and the status of a budget.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The environment variable that overrides the host name recorded in a slot's value (tests
/// simulate several hosts on one machine).
pub const HOST_ENV: &str = "THROTTLE_HOST";

/// The lease TTL when none is given: a holder that dies frees its slots within about this long.
pub const DEFAULT_TTL: Duration = Duration::from_secs(5);

/// The shortest lease TTL accepted: 3 s. The trust window is TTL − margin (margin at least
/// 1 s), renewed every third of it, so a renewal may be late by two thirds of the window
/// ([`renewal_slack`](crate::queue::renewal_slack)): 1.33 s at 3 s, but only 0.67 s at 2 s,
/// which a loaded machine's scheduling hiccups exceed (at TTL 2 s, an interval of TTL/3 leaves
/// a slack of 0.33 s, and leases were lost with it on a busy 2-core host). etcd itself
/// refuses less than its minimum TTL (about 1.5 × its election timeout, 1.5 s by default).
pub const MIN_TTL: Duration = Duration::from_secs(3);

/// How long `EtcdBudget::connect` waits for the cluster before it says it
/// is unreachable.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(4);

/// How a process joins a budget.
///
/// # Examples
/// ```
/// let opts = throttle_budget::Options::default().with_ttl(std::time::Duration::from_secs(3));
/// assert_eq!(opts.ttl.as_secs(), 3);
/// assert!(!opts.host.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The lease's TTL (default 5 s, at least [`MIN_TTL`]); kept alive every third of the trust
    /// window ([`keepalive_interval`](crate::queue::keepalive_interval)).
    pub ttl: Duration,
    /// The host name recorded in each slot (default: `THROTTLE_HOST`, else the machine's name).
    pub host: String,
    /// How long to wait for the cluster at connect time before giving up (default 4 s).
    pub connect_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            ttl: DEFAULT_TTL,
            host: default_host(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

impl Options {
    /// The same options with another TTL.
    pub fn with_ttl(mut self, ttl: Duration) -> Options {
        self.ttl = ttl;
        self
    }

    /// The same options with another host name.
    pub fn with_host(mut self, host: impl Into<String>) -> Options {
        self.host = host.into();
        self
    }
}

/// `THROTTLE_HOST` if set and not empty, else the machine's host name (`gethostname`), else
/// `"unknown"`.
pub fn default_host() -> String {
    if let Some(h) = std::env::var_os(HOST_ENV) {
        let h = h.to_string_lossy().into_owned();
        if !h.is_empty() {
            return h;
        }
    }
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is what we pass; gethostname writes
    // at most that many bytes.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let h = String::from_utf8_lossy(&buf[..end]).into_owned();
        if !h.is_empty() {
            return h;
        }
    }
    "unknown".to_string()
}

/// What kind of failure a [`BudgetError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The URL is not `etcd://HOST:PORT[,HOST:PORT...]/NAME`.
    BadUrl,
    /// No member answered within the connect timeout.
    Unreachable,
    /// The budget exists in etcd with another N.
    Mismatch,
    /// Bad options (a TTL below [`MIN_TTL`], zero slots).
    BadOptions,
    /// The process's lease is gone (not renewed in time); its slots are gone with it.
    LeaseLost,
    /// etcd answered with an error, or the connection broke.
    Etcd,
    /// This build has no etcd support (the crate's `etcd` feature is off).
    NoEtcdSupport,
}

/// The crate's one error: a kind and a one-line message that says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetError {
    kind: ErrorKind,
    message: String,
}

impl BudgetError {
    /// An error of `kind` with `message` (one line).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> BudgetError {
        BudgetError {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// True for errors of the caller's input or setup (bad URL, unreachable cluster, N mismatch,
    /// bad options, no etcd support): a command line exits with status 2 for these.
    pub fn is_usage(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::BadUrl
                | ErrorKind::Unreachable
                | ErrorKind::Mismatch
                | ErrorKind::BadOptions
                | ErrorKind::NoEtcdSupport
        )
    }
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BudgetError {}

impl From<crate::url::UrlError> for BudgetError {
    fn from(e: crate::url::UrlError) -> BudgetError {
        BudgetError::new(ErrorKind::BadUrl, e.to_string())
    }
}

/// The JSON value of a slot key: who holds or waits for it. `granted` is set (by a re-put of
/// the same key on the same lease) when the waiter became a holder; that put is also what wakes
/// the waiter behind it (`src/README.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotValue {
    /// The host name ([`Options::host`]).
    pub host: String,
    /// The process id on that host.
    pub pid: u32,
    /// When the key was created, seconds since the Unix epoch (the host's wall clock).
    pub since_unix: u64,
    /// True once the waiter saw itself among the first N and took the slot.
    #[serde(default)]
    pub granted: bool,
}

/// One slot key of a budget as [`Status`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Host name recorded in the key's value (`"?"` if the value is not ours).
    pub host: String,
    /// Process id recorded in the key's value (0 if the value is not ours).
    pub pid: u32,
    /// The etcd key.
    pub key: String,
    /// When the key was created, seconds since the Unix epoch.
    pub since_unix: u64,
}

/// A budget as etcd holds it at one revision: the first N slot keys by creation revision are
/// the holders, the rest wait in that order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The budget's name.
    pub name: String,
    /// N as stored in etcd (0 if the budget was never used).
    pub slots: usize,
    /// Slots held now: `min(N, keys)`.
    pub in_use: usize,
    /// One entry per held slot key, oldest first.
    pub holders: Vec<Entry>,
    /// One entry per waiting key, in the order they will be served.
    pub waiters: Vec<Entry>,
}

impl Status {
    /// Builds the status from the slot keys sorted by creation revision (oldest first), each
    /// with its value as stored.
    ///
    /// # Examples
    /// ```
    /// let keys = vec![
    ///     ("/k/a".to_string(), br#"{"host":"h1","pid":7,"since_unix":1}"#.to_vec()),
    ///     ("/k/b".to_string(), b"junk".to_vec()),
    /// ];
    /// let s = throttle_budget::Status::from_keys("b", 1, keys);
    /// assert_eq!((s.in_use, s.holders[0].host.as_str(), s.waiters[0].pid), (1, "h1", 0));
    /// ```
    pub fn from_keys(name: &str, slots: usize, keys: Vec<(String, Vec<u8>)>) -> Status {
        let mut holders = Vec::new();
        let mut waiters = Vec::new();
        for (i, (key, value)) in keys.into_iter().enumerate() {
            let entry = match serde_json::from_slice::<SlotValue>(&value) {
                Ok(v) => Entry {
                    host: v.host,
                    pid: v.pid,
                    key,
                    since_unix: v.since_unix,
                },
                Err(_) => Entry {
                    host: "?".into(),
                    pid: 0,
                    key,
                    since_unix: 0,
                },
            };
            if i < slots {
                holders.push(entry);
            } else {
                waiters.push(entry);
            }
        }
        Status {
            name: name.to_string(),
            slots,
            in_use: holders.len(),
            holders,
            waiters,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_value_round_trips_and_granted_defaults_to_false() {
        let v = SlotValue {
            host: "h".into(),
            pid: 3,
            since_unix: 9,
            granted: true,
        };
        let s = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<SlotValue>(&s).unwrap(), v);
        let old: SlotValue =
            serde_json::from_str(r#"{"host":"h","pid":3,"since_unix":9}"#).unwrap();
        assert!(!old.granted);
    }

    #[test]
    fn status_splits_at_n() {
        let key = |i: u32| {
            (
                format!("/k/{i}"),
                serde_json::to_vec(&SlotValue {
                    host: format!("h{i}"),
                    pid: i,
                    since_unix: 100 + u64::from(i),
                    granted: false,
                })
                .unwrap(),
            )
        };
        let s = Status::from_keys("b", 3, (0..5).map(key).collect());
        assert_eq!(s.in_use, 3);
        assert_eq!(
            s.holders.iter().map(|e| e.pid).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(s.waiters.iter().map(|e| e.pid).collect::<Vec<_>>(), [3, 4]);
        let s = Status::from_keys("b", 3, (0..2).map(key).collect());
        assert_eq!((s.in_use, s.waiters.len()), (2, 0));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["holders"][1]["key"], "/k/1");
        assert_eq!(json["slots"], 3);
    }

    #[test]
    fn usage_kinds() {
        assert!(BudgetError::new(ErrorKind::Mismatch, "x").is_usage());
        assert!(!BudgetError::new(ErrorKind::LeaseLost, "x").is_usage());
    }
}
