//! `serialize_with` helpers: durations as `f64` seconds, [`Measured`] values as the value or `null`.
//!
//! Use them on your own types that embed probe data:
//!
//! ```
//! use std::time::Duration;
//! use throttle_probe::{serde_helpers, Measured, Unavailable};
//!
//! #[derive(serde::Serialize)]
//! struct Row {
//!     #[serde(serialize_with = "serde_helpers::duration_secs")]
//!     wall: Duration,
//!     #[serde(serialize_with = "serde_helpers::measured_duration_secs")]
//!     wait: Measured<Duration>,
//! }
//!
//! let row = Row { wall: Duration::from_millis(1500), wait: Err(Unavailable::new("n/a")) };
//! assert_eq!(serde_json::to_string(&row).unwrap(), r#"{"wall":1.5,"wait":null}"#);
//! ```

use std::time::Duration;

use serde::Serializer;

use crate::Measured;

/// Serializes a [`Duration`] as `f64` seconds.
///
/// # Errors
///
/// Whatever the serializer returns.
pub fn duration_secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Serializes a `Measured<Duration>` as `f64` seconds, or `null` when unavailable.
///
/// # Errors
///
/// Whatever the serializer returns.
pub fn measured_duration_secs<S: Serializer>(
    m: &Measured<Duration>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match m {
        Ok(d) => s.serialize_some(&d.as_secs_f64()),
        Err(_) => s.serialize_none(),
    }
}

/// Serializes any `Measured<T>` as the value, or `null` when unavailable.
///
/// # Errors
///
/// Whatever the serializer returns.
pub fn measured<T: serde::Serialize, S: Serializer>(
    m: &Measured<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match m {
        Ok(v) => s.serialize_some(v),
        Err(_) => s.serialize_none(),
    }
}
