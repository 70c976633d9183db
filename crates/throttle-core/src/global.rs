//! The global pool behind the free functions: its size and options from the environment, the
//! free [`spawn`], [`PoolBuilder::build_global`], and the global pool's trace file.

use crate::error::Error;
use crate::hooks::{current_target, spawn_in};
use crate::pool::{default_threads, Pool, PoolBuilder};
use std::sync::OnceLock;

/// The environment variable that sets the global pool's size.
pub const THREADS_ENV: &str = "THROTTLE_THREADS";

/// The environment variable that starts the global pool, and pools built by
/// [`ThreadPoolBuilder`](crate::ThreadPoolBuilder), in auto mode
/// ([`Pool::set_concurrency_auto`]): `1`, `on`, `yes` or `true`; `0`, `off`, `no`, `false` or
/// empty leave it off (the default, so that rayon programs keep rayon's semantics unless asked).
/// Pools built with [`Pool::builder`] ignore it.
pub const AUTO_ENV: &str = "THROTTLE_AUTO";

/// Reads [`AUTO_ENV`].
pub(crate) fn auto_from_env() -> Result<bool, Error> {
    match std::env::var(AUTO_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(false),
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "on" | "yes" | "true" => Ok(true),
            "" | "0" | "off" | "no" | "false" => Ok(false),
            _ => Err(Error::env_flag(AUTO_ENV, v)),
        },
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(Error::env_flag(AUTO_ENV, v.to_string_lossy().into_owned()))
        }
    }
}

/// `b` in auto mode if [`AUTO_ENV`] asks for it.
pub(crate) fn with_env_auto(b: crate::PoolBuilder) -> Result<crate::PoolBuilder, Error> {
    Ok(if auto_from_env()? {
        b.auto_concurrency()
    } else {
        b
    })
}

/// rayon's variable for the same, read when [`THREADS_ENV`] is not set, the way rayon reads it:
/// a whole number above 0 counts (capped at the most threads a pool supports), anything else is
/// ignored. It also sizes pools built by [`ThreadPoolBuilder`](crate::ThreadPoolBuilder) without
/// a thread count, as in rayon.
pub const RAYON_THREADS_ENV: &str = "RAYON_NUM_THREADS";

/// Parses a `THROTTLE_THREADS` value.
pub(crate) fn parse_threads(value: &str) -> Result<usize, Error> {
    match value.trim().parse::<usize>() {
        Ok(n) if (1..=crate::sleep::state::MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(Error::env(THREADS_ENV, value.to_string())),
    }
}

/// `RAYON_NUM_THREADS`, read as rayon reads it (see [`RAYON_THREADS_ENV`]).
fn rayon_threads() -> Option<usize> {
    let n: usize = std::env::var(RAYON_THREADS_ENV).ok()?.trim().parse().ok()?;
    (n > 0).then(|| n.min(crate::sleep::state::MAX_THREADS))
}

/// The size the global pool gets: `THROTTLE_THREADS` if set, else `RAYON_NUM_THREADS` if it
/// holds a whole number above 0, else [`default_threads`].
///
/// # Errors
/// `THROTTLE_THREADS` is set but is not a whole number from 1 to 65 535.
///
/// # Examples
/// ```
/// assert!(throttle::global_threads().unwrap() >= 1);
/// ```
pub fn global_threads() -> Result<usize, Error> {
    match std::env::var(THREADS_ENV) {
        Ok(v) => parse_threads(&v),
        Err(std::env::VarError::NotPresent) => Ok(rayon_threads().unwrap_or_else(default_threads)),
        Err(std::env::VarError::NotUnicode(v)) => {
            Err(Error::env(THREADS_ENV, v.to_string_lossy().into_owned()))
        }
    }
}

static GLOBAL: OnceLock<Result<Pool, String>> = OnceLock::new();

/// The global pool, started on first use with [`global_threads`] threads (in auto mode if
/// [`AUTO_ENV`] asks for it).
///
/// # Errors
/// A bad `THROTTLE_THREADS` or a failure to start threads; the error is kept, so every later
/// call reports the same message.
///
/// # Examples
/// ```
/// let pool = throttle::global_pool().unwrap();
/// assert!(pool.threads() >= 1);
/// ```
pub fn global_pool() -> Result<&'static Pool, Error> {
    let built = GLOBAL.get_or_init(|| {
        global_threads()
            .and_then(|n| with_env_auto(global_builder(n)))
            .and_then(|b| b.build())
            .inspect(trace_from_env)
            .map_err(|e| e.to_string())
    });
    match built {
        Ok(pool) => {
            #[cfg(not(loom))]
            if pool.jobserver_tokens().is_some() && std::thread::current().name() == Some("main") {
                // The main thread registers the exit flush on its first use (one TLS access).
                // `try_with`: during another thread-local's destruction there is nothing to do.
                let _ = EXIT_FLUSH.try_with(|_| {});
            }
            Ok(pool)
        }
        Err(msg) => Err(Error::global(msg.clone())),
    }
}

/// Gives the global pool's jobserver tokens back when the main thread ends, if it used the
/// pool. The global pool is never dropped, so without this a program that returns from `main`
/// within the budget's grace period (a few milliseconds after its last parallel call) would take
/// the tokens it still held along, and the build would run with fewer slots. The main thread's
/// thread-local destructors run inside `exit()` while the budget thread still lives. This is a
/// thread-local destructor of the main thread's own, not a process-wide hook: no `atexit`, no
/// signal handler (those are opt-in: `jobserver::install_exit_hooks`). Other threads ending
/// need nothing: the process goes on and the grace period gives the tokens back.
#[cfg(not(loom))]
struct ExitFlush;

#[cfg(not(loom))]
impl Drop for ExitFlush {
    fn drop(&mut self) {
        if let Some(Ok(pool)) = GLOBAL.get() {
            pool.flush_jobserver_tokens();
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    static EXIT_FLUSH: ExitFlush = const { ExitFlush };
}

/// The global pool's builder: `n` threads, joined to the jobserver in the environment
/// (`CARGO_MAKEFLAGS`, `MAKEFLAGS`, `MFLAGS`) unless `THROTTLE_JOBSERVER` is `0` or `off`;
/// with the exit hooks only if `THROTTLE_JOBSERVER_HOOKS` asks.
fn global_builder(n: usize) -> crate::PoolBuilder {
    with_env_jobserver(Pool::builder().threads(n))
}

/// `b`, joined to the jobserver in the environment unless `THROTTLE_JOBSERVER` opts out: what
/// every global pool gets, also one built by `ThreadPoolBuilder::build_global`.
pub(crate) fn with_env_jobserver(b: crate::PoolBuilder) -> crate::PoolBuilder {
    #[cfg(not(loom))]
    {
        let off = std::env::var(crate::JOBSERVER_ENV)
            .is_ok_and(|v| matches!(v.trim(), "0" | "off" | "no" | "false"));
        if !off {
            if let Some(js) = crate::Jobserver::from_env() {
                let hooks = std::env::var(crate::jobserver::HOOKS_ENV)
                    .is_ok_and(|v| matches!(v.trim(), "1" | "on" | "yes" | "true"));
                return b.jobserver(js).jobserver_exit_hooks(hooks);
            }
        }
    }
    b
}

/// `THROTTLE_TRACE=FILE.json`: the global pool records its timeline from its start
/// ([`write_global_trace`] writes it).
fn trace_from_env(pool: &Pool) {
    if std::env::var_os(TRACE_ENV).is_some_and(|v| !v.is_empty()) {
        pool.start_trace();
    }
}

/// True once the global pool has started (or failed to).
pub(crate) fn started() -> bool {
    GLOBAL.get().is_some()
}

/// Makes `pool` the global pool (`PoolBuilder::build_global`).
pub(crate) fn install_global(pool: Pool) -> Result<(), Error> {
    trace_from_env(&pool);
    // On failure the pool comes back in the error and is dropped, stopping its threads.
    GLOBAL.set(Ok(pool)).map_err(|_| Error::global_started())
}

/// Runs `f` with the pool that a thread outside any pool's work uses: the pool of a serial run
/// in progress on this thread, or else the global pool. So a loop that auto mode runs on the
/// calling thread alone still belongs to its pool: `current_num_threads()` is that pool's,
/// and a `join` in it forks there (never starting the global pool).
pub(crate) fn with_default<R>(f: impl FnOnce(&Pool) -> R) -> R {
    crate::pool::with_serial_pool(|serial| match serial {
        Some(pool) => f(pool),
        None => f(global()),
    })
}

/// The global pool, or a panic that says what to fix.
pub(crate) fn global() -> &'static Pool {
    match global_pool() {
        Ok(p) => p,
        Err(e) => panic!("throttle: cannot start the global pool: {e}"),
    }
}

/// Spawns a detached task in the current pool (the pool whose task or `install` the calling
/// thread runs, or else the global pool). The task may run on any of the pool's threads, after
/// this call returns; its panic goes to the pool's panic handler (see
/// [`PoolBuilder::panic_handler`]), and dropping the pool waits for it. To wait for tasks or
/// borrow from the caller, use [`scope`](crate::scope) instead.
///
/// # Panics
/// From outside any pool, if the global pool cannot start (a bad `THROTTLE_THREADS`).
///
/// # Examples
/// ```
/// use std::sync::mpsc::channel;
/// let (tx, rx) = channel();
/// throttle::spawn(move || tx.send(6 * 7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 42);
/// ```
pub fn spawn<F>(task: F)
where
    F: FnOnce() + Send + 'static,
{
    match current_target() {
        // SAFETY: the registry belongs to the pool the calling thread takes part in right now,
        // so it is alive for the duration of this call.
        Some((registry, hooks)) => spawn_in(unsafe { &*registry }, hooks, task),
        None => with_default(|pool| pool.spawn(task)),
    }
}

impl PoolBuilder {
    /// Builds the pool and makes it the global pool, the one the free functions
    /// ([`join`](crate::join), [`spawn`](crate::spawn), parallel iterators, ...) use outside any
    /// pool. Call it before any parallel work: the global pool starts on first use.
    ///
    /// # Errors
    /// The global pool has already started (an earlier `build_global`, or a free function called
    /// before), or [`build`](PoolBuilder::build) failed.
    ///
    /// # Examples
    /// ```
    /// throttle::Pool::builder().threads(2).build_global().unwrap();
    /// assert_eq!(throttle::current_num_threads(), 2);
    /// let again = throttle::Pool::builder().threads(3).build_global();
    /// assert!(again.unwrap_err().to_string().contains("already started"));
    /// ```
    pub fn build_global(self) -> Result<(), crate::Error> {
        if started() {
            return Err(crate::Error::global_started());
        }
        install_global(self.build()?)
    }
}

/// The environment variable that traces the global pool: `THROTTLE_TRACE=FILE.json` starts
/// recording when the global pool starts; [`write_global_trace`] (which the `throttle` CLI calls
/// on exit) writes the Chrome JSON there.
pub const TRACE_ENV: &str = "THROTTLE_TRACE";

/// Stops the global pool's recording, if [`TRACE_ENV`] started one, and writes it to the file
/// the variable names. Returns the path written, or `None` if the variable is unset or the
/// global pool never started.
///
/// # Errors
/// Creating or writing the file.
///
/// # Examples
/// ```
/// // Without THROTTLE_TRACE in the environment there is nothing to write.
/// if std::env::var_os(throttle::trace::TRACE_ENV).is_none() {
///     assert!(throttle::trace::write_global_trace().unwrap().is_none());
/// }
/// ```
pub fn write_global_trace() -> std::io::Result<Option<std::path::PathBuf>> {
    let Some(path) = std::env::var_os(TRACE_ENV).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if !started() {
        return Ok(None);
    }
    let Ok(pool) = global_pool() else {
        return Ok(None);
    };
    let trace = pool.stop_trace();
    let path = std::path::PathBuf::from(path);
    let file = std::fs::File::create(&path)?;
    trace.write_chrome_json(std::io::BufWriter::new(file))?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_thread_counts() {
        assert_eq!(parse_threads("4").unwrap(), 4);
        assert_eq!(parse_threads(" 2 ").unwrap(), 2);
        for bad in ["0", "-1", "abc", "", "1.5", "70000"] {
            let e = parse_threads(bad).unwrap_err().to_string();
            assert!(
                e.contains(THREADS_ENV) && e.contains(&format!("'{bad}'")),
                "{e}"
            );
        }
    }
}
