//! Data that the kernel may not provide: a value or the reason it is missing.

use std::fmt;

/// Why a measurement is missing (for example, a kernel built without `CONFIG_SCHED_INFO` has no
/// `/proc/<pid>/schedstat`).
///
/// The probe never reports a made-up zero: where the kernel does not provide a datum, the field is
/// an `Err(Unavailable)` carrying the reason.
///
/// # Examples
///
/// ```
/// use throttle_probe::Unavailable;
///
/// let u = Unavailable::new("no schedstat in this kernel");
/// assert_eq!(u.to_string(), "no schedstat in this kernel");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unavailable {
    /// A human-readable reason, e.g. "reading /proc/self/schedstat: No such file or directory".
    pub reason: String,
}

impl Unavailable {
    /// Creates an `Unavailable` with the given reason.
    ///
    /// # Examples
    ///
    /// ```
    /// let u = throttle_probe::Unavailable::new("forbidden");
    /// assert_eq!(u.reason, "forbidden");
    /// ```
    pub fn new(reason: impl Into<String>) -> Unavailable {
        Unavailable {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Unavailable {}

impl From<crate::ProbeError> for Unavailable {
    fn from(e: crate::ProbeError) -> Unavailable {
        Unavailable::new(e.to_string())
    }
}

/// A datum that is either measured or [`Unavailable`] with a reason.
///
/// Serialized (with the helpers in [`crate::serde_helpers`]) as the value, or `null` when missing.
pub type Measured<T> = Result<T, Unavailable>;
