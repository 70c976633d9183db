//! The crate's one error type.

use std::fmt;

/// What went wrong building or configuring a pool.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    ZeroThreads,
    TooManyThreads(usize),
    Concurrency { requested: usize, threads: usize },
    Env { name: &'static str, value: String },
    EnvFlag { name: &'static str, value: String },
    Spawn(std::io::Error),
    Global(String),
    AutoNeedsStats,
    GlobalStarted,
    AlreadyInPool,
}

impl Error {
    pub(crate) fn zero_threads() -> Error {
        Error {
            kind: ErrorKind::ZeroThreads,
        }
    }
    pub(crate) fn too_many_threads(n: usize) -> Error {
        Error {
            kind: ErrorKind::TooManyThreads(n),
        }
    }
    pub(crate) fn concurrency(requested: usize, threads: usize) -> Error {
        Error {
            kind: ErrorKind::Concurrency { requested, threads },
        }
    }
    pub(crate) fn env(name: &'static str, value: String) -> Error {
        Error {
            kind: ErrorKind::Env { name, value },
        }
    }
    pub(crate) fn env_flag(name: &'static str, value: String) -> Error {
        Error {
            kind: ErrorKind::EnvFlag { name, value },
        }
    }
    pub(crate) fn global(msg: String) -> Error {
        Error {
            kind: ErrorKind::Global(msg),
        }
    }
    pub(crate) fn auto_needs_stats() -> Error {
        Error {
            kind: ErrorKind::AutoNeedsStats,
        }
    }
    pub(crate) fn global_started() -> Error {
        Error {
            kind: ErrorKind::GlobalStarted,
        }
    }
    pub(crate) fn already_in_pool() -> Error {
        Error {
            kind: ErrorKind::AlreadyInPool,
        }
    }
    pub(crate) fn spawn(e: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::Spawn(e),
        }
    }

    /// The OS error behind a failure to start a thread, or the error itself if it is another
    /// kind (for `ThreadPoolBuildError`, which reports OS errors as rayon does).
    pub(crate) fn into_io(self) -> Result<std::io::Error, Error> {
        match self.kind {
            ErrorKind::Spawn(e) => Ok(e),
            kind => Err(Error { kind }),
        }
    }

    /// True if this is the error of `use_current_thread` on a thread that takes part in a pool.
    pub(crate) fn is_already_in_pool(&self) -> bool {
        matches!(self.kind, ErrorKind::AlreadyInPool)
    }

    /// True if this is the error of a second `build_global`.
    pub(crate) fn is_global_started(&self) -> bool {
        matches!(self.kind, ErrorKind::GlobalStarted)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::ZeroThreads => f.write_str("a pool needs at least 1 thread"),
            ErrorKind::TooManyThreads(n) => write!(
                f,
                "a pool of {n} threads is too large: at most {} are supported",
                crate::sleep::state::MAX_THREADS
            ),
            ErrorKind::Concurrency { requested, threads } => write!(
                f,
                "invalid concurrency {requested}: must be 1..={threads} (the pool's thread count)"
            ),
            ErrorKind::Env { name, value } => write!(
                f,
                "invalid value '{value}' for environment variable {name}: expected a whole number of threads from 1 to {}; unset it to use all CPUs this process may use",
                crate::sleep::state::MAX_THREADS
            ),
            ErrorKind::EnvFlag { name, value } => write!(
                f,
                "invalid value '{value}' for environment variable {name}: expected 1, on, yes or true to turn it on, or 0, off, no, false or nothing to leave it off"
            ),
            ErrorKind::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
            ErrorKind::Global(msg) => f.write_str(msg),
            ErrorKind::AutoNeedsStats => f.write_str(
                "automatic concurrency learns from the pool's counters: build the pool with stats on (PoolBuilder::stats(true), the default)",
            ),
            ErrorKind::AlreadyInPool => f.write_str(
                "the current thread is already part of a thread pool, so it cannot become a worker of a new one (use_current_thread): build the pool from a thread outside every pool",
            ),
            ErrorKind::GlobalStarted => f.write_str(
                "the global pool has already started (an earlier build_global, or a parallel call before it); call PoolBuilder::build_global once, before any parallel work",
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Spawn(e) => Some(e),
            _ => None,
        }
    }
}
