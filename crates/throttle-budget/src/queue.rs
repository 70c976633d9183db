//! The two pure rules of the protocol (`src/README.md`): where a key stands in the queue and what
//! it must watch, and until when a lease may be trusted. No I/O here, so both are unit-tested.

use std::time::{Duration, Instant};

/// Where one slot key stands among the budget's keys (sorted by creation revision) and,
/// for a waiter, what it watches until it looks again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Among the first N keys: the key holds a slot.
    Holder,
    /// Exactly N keys are older: the first waiter. It watches the whole slot prefix for DELETE
    /// events only (any older key going away may make it a holder).
    FirstWaiter,
    /// More than N keys are older: watches only the key just before it (`predecessor`), for
    /// any event (deleted: it moved up; re-put as granted: the predecessor became a holder, so
    /// this key is now the first waiter).
    Waiter {
        /// The key just before this one.
        predecessor: String,
        /// How many keys are older (≥ N + 1).
        position: usize,
    },
    /// The key is not there: its lease expired (or someone deleted it).
    Gone,
}

/// Where `mine` stands among `keys` (sorted by creation revision, oldest first) in a budget of
/// `slots` slots.
///
/// # Examples
/// ```
/// use throttle_budget::queue::{place, Place};
/// let keys = ["a", "b", "c", "d"];
/// assert_eq!(place(&keys, "b", 2), Place::Holder);
/// assert_eq!(place(&keys, "c", 2), Place::FirstWaiter);
/// assert_eq!(place(&keys, "d", 2), Place::Waiter { predecessor: "c".into(), position: 3 });
/// assert_eq!(place(&keys, "e", 2), Place::Gone);
/// ```
pub fn place<K: AsRef<str>>(keys: &[K], mine: &str, slots: usize) -> Place {
    let Some(i) = keys.iter().position(|k| k.as_ref() == mine) else {
        return Place::Gone;
    };
    if i < slots {
        Place::Holder
    } else if i == slots {
        Place::FirstWaiter
    } else {
        Place::Waiter {
            predecessor: keys[i - 1].as_ref().to_string(),
            position: i,
        }
    }
}

/// How long before the lease's end, as this process computes it, it stops trusting the lease:
/// `max(1 s, TTL / 4)`. `src/README.md` says why (clock rate drift, the time a grant needs to
/// reach the task, scheduling delays).
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use throttle_budget::queue::margin;
/// assert_eq!(margin(Duration::from_secs(5)), Duration::from_millis(1250));
/// assert_eq!(margin(Duration::from_secs(2)), Duration::from_secs(1));
/// ```
pub fn margin(ttl: Duration) -> Duration {
    (ttl / 4).max(Duration::from_secs(1))
}

/// The end of a lease as the holder may count on it: the local monotonic time when the
/// keep-alive (or grant) request was **sent**, plus the TTL the server granted in its answer.
/// The server counts its TTL from when it received the request, which is later.
pub fn lease_end(sent: Instant, granted_ttl: Duration) -> Instant {
    sent + granted_ttl
}

/// The last instant at which the holder may still use (or grant) slots of a lease ending at
/// `end` (see [`lease_end`]): `end − margin(ttl)`.
pub fn trust_until(end: Instant, ttl: Duration) -> Instant {
    end.checked_sub(margin(ttl)).unwrap_or(end)
}

/// True while slots of a lease ending at `end` may be used at `now`: `now < end − margin`.
///
/// # Examples
/// ```
/// use std::time::{Duration, Instant};
/// use throttle_budget::queue::{lease_end, trusted};
/// let ttl = Duration::from_secs(4);
/// let sent = Instant::now();
/// let end = lease_end(sent, ttl);
/// assert!(trusted(sent + Duration::from_millis(2999), end, ttl));
/// assert!(!trusted(sent + Duration::from_secs(3), end, ttl)); // margin: 1 s
/// ```
pub fn trusted(now: Instant, end: Instant, ttl: Duration) -> bool {
    now < trust_until(end, ttl)
}

/// How often the lease is kept alive: every third of the trust window, (TTL − margin) / 3, so
/// that a renewal due at one third may fail or be late by up to two thirds of the window
/// ([`renewal_slack`]) before trust ends: with the default TTL of 5 s, every 1.25 s with 2.5 s
/// of slack; with the minimum of 3 s, every 0.67 s with 1.33 s of slack. (An interval of
/// TTL / 3 would leave a renewal at TTL 2 s only a third of a second.)
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use throttle_budget::queue::keepalive_interval;
/// assert_eq!(keepalive_interval(Duration::from_secs(5)), Duration::from_millis(1250));
/// assert_eq!(keepalive_interval(Duration::from_secs(4)), Duration::from_secs(1));
/// ```
pub fn keepalive_interval(ttl: Duration) -> Duration {
    ttl.saturating_sub(margin(ttl)) / 3
}

/// How late a renewal may be (or how long the renewals after a successful one may fail) before
/// the lease stops being trusted: the trust window (TTL − margin) less one
/// [`keepalive_interval`], i.e. two thirds of the window.
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use throttle_budget::queue::renewal_slack;
/// assert_eq!(renewal_slack(Duration::from_secs(5)), Duration::from_millis(2500));
/// assert_eq!(renewal_slack(Duration::from_secs(3)).as_millis(), 1333);
/// ```
pub fn renewal_slack(ttl: Duration) -> Duration {
    ttl.saturating_sub(margin(ttl))
        .saturating_sub(keepalive_interval(ttl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_by_position() {
        let keys: Vec<String> = (0..6).map(|i| format!("k{i}")).collect();
        for n in 1..=6 {
            for (i, k) in keys.iter().enumerate() {
                let p = place(&keys, k, n);
                match i.cmp(&n) {
                    std::cmp::Ordering::Less => assert_eq!(p, Place::Holder),
                    std::cmp::Ordering::Equal => assert_eq!(p, Place::FirstWaiter),
                    std::cmp::Ordering::Greater => assert_eq!(
                        p,
                        Place::Waiter {
                            predecessor: keys[i - 1].clone(),
                            position: i
                        }
                    ),
                }
            }
        }
        assert_eq!(place::<&str>(&[], "x", 3), Place::Gone);
    }

    /// Keys only ever leave the middle of the queue or join at its end: a holder stays a
    /// holder, and a waiter's position never grows. Checked on every deletion sequence of a
    /// small queue.
    #[test]
    fn positions_only_move_up() {
        let all: Vec<String> = (0..6).map(|i| format!("k{i}")).collect();
        for n in 1..=3 {
            for mask in 0u32..(1 << 6) {
                let left: Vec<&String> = all
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) == 0)
                    .map(|(_, k)| k)
                    .collect();
                for k in &left {
                    let before = all.iter().position(|x| x == *k).unwrap();
                    let after = left.iter().position(|x| x == k).unwrap();
                    assert!(after <= before);
                    if before < n {
                        assert_eq!(place(&left, k, n), Place::Holder);
                    }
                }
                let holders = left
                    .iter()
                    .filter(|k| place(&left, k, n) == Place::Holder)
                    .count();
                assert!(holders <= n);
            }
        }
    }

    #[test]
    fn margin_is_a_quarter_but_at_least_a_second() {
        assert_eq!(margin(Duration::from_secs(2)), Duration::from_secs(1));
        assert_eq!(margin(Duration::from_secs(4)), Duration::from_secs(1));
        assert_eq!(margin(Duration::from_secs(5)), Duration::from_millis(1250));
        assert_eq!(margin(Duration::from_secs(60)), Duration::from_secs(15));
        // The margin is always shorter than the TTL; three keep-alives fit in the trust
        // window, so a renewal may be late by two thirds of it: at least 1.33 s from the
        // minimum TTL of 3 s on (crate::MIN_TTL), and only 0.67 s at 2 s, which is refused.
        for s in 2..120 {
            let ttl = Duration::from_secs(s);
            assert!(margin(ttl) < ttl);
            assert!(3 * keepalive_interval(ttl) <= ttl - margin(ttl));
            assert!(renewal_slack(ttl) >= 2 * keepalive_interval(ttl));
            if ttl >= crate::MIN_TTL {
                assert!(renewal_slack(ttl) > Duration::from_millis(1300), "{s}");
            }
        }
        assert!(renewal_slack(Duration::from_secs(2)) < Duration::from_secs(1));
    }

    #[test]
    fn trust_ends_margin_before_the_lease() {
        let ttl = Duration::from_secs(5);
        let sent = Instant::now();
        let end = lease_end(sent, ttl);
        assert_eq!(end - sent, ttl);
        assert_eq!(trust_until(end, ttl), sent + Duration::from_millis(3750));
        assert!(trusted(sent, end, ttl));
        assert!(trusted(sent + Duration::from_millis(3749), end, ttl));
        assert!(!trusted(sent + Duration::from_millis(3750), end, ttl));
        assert!(!trusted(end, end, ttl));
    }
}
