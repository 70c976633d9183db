//! The crate's one error type.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// Why a probe operation failed.
///
/// Every variant names what it was working on: spawn failures name the program, I/O and parse
/// failures name the path, wait failures name the child's process id. The underlying
/// [`io::Error`] is kept behind an [`Arc`] so the error stays [`Clone`].
///
/// # Examples
///
/// ```
/// use std::process::Command;
/// use throttle_probe::{child, ProbeError};
///
/// let err = child::run(&mut Command::new("no-such-program-xyz")).unwrap_err();
/// assert!(matches!(err, ProbeError::Spawn { .. }));
/// assert!(err.to_string().contains("no-such-program-xyz"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// A child process could not be started.
    #[error("could not start `{program}`: {}", spawn_hint(source))]
    Spawn {
        /// The program as given to the command.
        program: String,
        /// The operating system's reason.
        #[source]
        source: Arc<io::Error>,
    },
    /// A file under `/proc`, `/sys` or elsewhere could not be read.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file that was being read.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: Arc<io::Error>,
    },
    /// A file was read but its text did not have the expected shape.
    #[error("parsing {what}: {detail}")]
    Parse {
        /// What was being parsed (usually a path).
        what: String,
        /// What was wrong with it.
        detail: String,
    },
    /// Waiting for a child process failed.
    #[error("{call} on child process {pid} failed: {source}")]
    Wait {
        /// The child's process id.
        pid: u32,
        /// The system call that failed (`waitid` or `wait4`).
        call: &'static str,
        /// The operating system's reason.
        #[source]
        source: Arc<io::Error>,
    },
}

impl ProbeError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> ProbeError {
        ProbeError::Io {
            path: path.into(),
            source: Arc::new(source),
        }
    }

    pub(crate) fn parse(what: impl Into<String>, detail: impl Into<String>) -> ProbeError {
        ProbeError::Parse {
            what: what.into(),
            detail: detail.into(),
        }
    }
}

/// Turns the OS error of a failed spawn into advice.
fn spawn_hint(source: &io::Error) -> String {
    match source.kind() {
        io::ErrorKind::NotFound => {
            "program not found (check the spelling, or that it is installed and on PATH)".into()
        }
        io::ErrorKind::PermissionDenied => "permission denied (is the file executable?)".into(),
        _ => source.to_string(),
    }
}

impl serde::Serialize for ProbeError {
    /// Serializes as the error's message.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}
