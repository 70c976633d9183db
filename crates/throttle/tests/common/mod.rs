//! What several of the runtime's test binaries share. Each binary uses part of it.
#![allow(dead_code)]

use throttle::Pool;

/// A count from the pool's `Debug` (`active`, `sleeping`, `blocked`, `spares`,
/// `waiting_for_slot`, ...): the state a test waits for, read the way a user could.
pub fn debug_count(pool: &Pool, field: &str) -> usize {
    let debug = format!("{pool:?}");
    let key = format!("{field}: ");
    let at = debug
        .find(&key)
        .unwrap_or_else(|| panic!("Pool's Debug shows no {field}: {debug}"))
        + key.len();
    debug[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("Pool's Debug shows no count for {field}: {debug}"))
}
