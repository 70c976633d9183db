//! The crate's single error type.

use std::fmt;

/// Why a baseline scheduler or a pool could not be created.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    /// A thread count of zero was requested.
    ZeroThreads,
    /// The operating system refused to start a helper thread.
    Spawn(std::io::Error),
    /// The throttle runtime refused to build a pool.
    Runtime(throttle::Error),
}

impl Error {
    pub(crate) fn zero_threads() -> Error {
        Error {
            kind: ErrorKind::ZeroThreads,
        }
    }

    pub(crate) fn spawn(err: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::Spawn(err),
        }
    }
}

impl From<throttle::Error> for Error {
    fn from(err: throttle::Error) -> Error {
        Error {
            kind: ErrorKind::Runtime(err),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::ZeroThreads => {
                write!(f, "a scheduler needs at least 1 thread; pass a thread count of 1 or more")
            }
            ErrorKind::Spawn(err) => write!(
                f,
                "could not start a helper thread ({err}); lower the thread count or raise the process limit"
            ),
            ErrorKind::Runtime(err) => write!(f, "could not build the throttle pool: {err}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::ZeroThreads => None,
            ErrorKind::Spawn(err) => Some(err),
            ErrorKind::Runtime(err) => Some(err),
        }
    }
}
