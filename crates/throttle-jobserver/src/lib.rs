//! The machine-wide budget's protocol: a GNU make jobserver client, and the crash-safe server
//! behind `throttle run`. It knows nothing of thread pools: `throttle`'s `jobserver/budget.rs`
//! is the pool's side. The token protocol, why no token is lost or duplicated and why the client
//! never hoards: `crates/throttle-core/src/jobserver/README.md`.
//!
//! - [`Jobserver`]: a connection to a jobserver (from `CARGO_MAKEFLAGS`/`MAKEFLAGS`/`MFLAGS`, an
//!   explicit `--jobserver-auth` value, or a throttle server's socket).
//! - the pool's side (in `throttle`, not here): one thread per pool that asks for a token only
//!   when runnable work waits for a thread and every slot is busy, and gives it back after a
//!   short grace period once work runs out. Effective limit = min(user limit, 1 + tokens held).
//! - [`Server`]: N slots as a fifo (default) or inherited pipe, plus a unix socket through which
//!   throttle clients hold their tokens, so that a client killed with SIGKILL loses none.
//!
//! Why the I/O is hand-written rather than the `jobserver` crate's `Client` (the crate is used in
//! the tests as an independent peer implementation): the crate opens a jobserver only from the
//! process environment (no explicit auth string, which `PoolBuilder::jobserver` and the tests
//! need); it takes `--jobserver-auth` over any later `--jobserver-fds` instead of "last one
//! wins"; it accepts a fifo path that is not a fifo; its [`Acquired`](https://docs.rs/jobserver)
//! hides the byte and descriptor that a signal handler must write back on SIGINT/SIGTERM; and it
//! has no notion of a per-client connection for crash safety. The parts that are the same
//! protocol (open `/proc/self/fd/N` for a private non-blocking description of an inherited pipe,
//! write back the byte that was read) follow GNU make's documented rules.

mod env;
mod ledger;
mod server;
mod signal;
mod sys;

pub use env::adopt_from_env;
pub(crate) use env::parse_makeflags;
pub use server::{Server, Style};
pub use signal::install_exit_hooks;

use std::fmt;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The environment variable that keeps the global pool out of any jobserver: set it to `0` or
/// `off`. Any other value (or none) lets the global pool join the jobserver found in
/// `CARGO_MAKEFLAGS`, `MAKEFLAGS` or `MFLAGS`.
pub const JOBSERVER_ENV: &str = "THROTTLE_JOBSERVER";

/// The environment variable that makes the global pool install the SIGINT/SIGTERM/exit hooks
/// ([`install_exit_hooks`]) when it joins a jobserver: `1`, `on`, `yes` or `true`.
pub const HOOKS_ENV: &str = "THROTTLE_JOBSERVER_HOOKS";

/// The environment variable a throttle server (`throttle run`) sets to the path of its unix
/// socket. A throttle client that finds it (and a `MAKEFLAGS` naming the same server) holds its
/// tokens through that socket, so the server gets them back if the client dies.
pub const SOCKET_ENV: &str = "THROTTLE_JOBSERVER_SOCKET";

/// The environment variable a throttle server sets to `DEV:INODE` of its token fifo or pipe. A
/// client uses [`SOCKET_ENV`] only if the jobserver its `MAKEFLAGS` names is that very fifo or
/// pipe: a make started with its own `-jN` inside the tree makes a new jobserver, and its jobs
/// must draw on that one.
pub const ID_ENV: &str = "THROTTLE_JOBSERVER_ID";

/// The environment variable a throttle server of [`Style::TwoPipes`] sets to `DEV:INODE` of the
/// pipe its clients write tokens back into (the `W` of `--jobserver-auth=R,W`; [`ID_ENV`] names
/// the pipe they read from). Only with both does a client take `R` and `W` of two different
/// pipes for a jobserver: descriptor numbers alone prove nothing, and one pipe's two ends is the
/// only shape make itself ever hands out.
pub const RETURN_ID_ENV: &str = "THROTTLE_JOBSERVER_RETURN_ID";

/// The environment variables searched for a jobserver, in this order (the first that mentions
/// one is used), as cargo, rustc and the `jobserver` crate do.
pub const MAKEFLAGS_VARS: [&str; 3] = ["CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS"];

/// Where a jobserver's tokens live, as a `MAKEFLAGS` value names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Auth {
    /// `--jobserver-auth=fifo:PATH` (make 4.4's default; the only form ninja 1.13 reads).
    Fifo(PathBuf),
    /// `--jobserver-auth=R,W` or the older `--jobserver-fds=R,W`: inherited pipe descriptors.
    Pipe(i32, i32),
    /// Negative descriptors: make says the jobserver is off for this process (a recipe without
    /// `+`).
    Disabled,
}

/// A connection to a jobserver: where this process takes tokens from and gives them back.
///
/// Every process started under a jobserver holds one *implicit* token (its right to run at all);
/// each token it reads is the right to run one more thread. A pool built with
/// `throttle::PoolBuilder::jobserver` runs at most 1 + (tokens held)
/// threads, reads a token only when work waits for a thread, and writes it back when the work
/// runs out.
///
/// # Examples
/// ```
/// // With no jobserver in the environment, there is nothing to join.
/// std::env::remove_var("MAKEFLAGS");
/// std::env::remove_var("CARGO_MAKEFLAGS");
/// std::env::remove_var("MFLAGS");
/// assert!(throttle_jobserver::Jobserver::from_env().is_none());
/// ```
pub struct Jobserver {
    source: Source,
    description: String,
    /// Socket source: requests sent and not yet answered.
    asked: usize,
    /// Socket source: bytes of a partial message.
    inbox: Vec<u8>,
    /// The process that opened it: a `fork()` child (same memory, other pid) never gives the
    /// parent's tokens back.
    pid: u32,
}

/// A token held: the byte read (written back on release) and, for a shared fifo or pipe, its
/// entry in the token table (so a dropped [`Jobserver`], and the opt-in SIGINT/SIGTERM/exit hooks
/// of [`install_exit_hooks`], write it back too).
#[derive(Debug)]
#[must_use = "a token not released is lost for the whole build"]
pub struct Token {
    byte: u8,
    entry: Option<usize>,
}

impl Token {
    /// The byte read from the jobserver (written back on release).
    pub fn byte(&self) -> u8 {
        self.byte
    }
}

/// The two ways tokens travel.
enum Source {
    /// A fifo or pipe shared with every other client: `read` is this process's own non-blocking
    /// description of the read end (so polling it never disturbs other processes), `write` the
    /// write end.
    Fd { read: OwnedFd, write: OwnedFd },
    /// A throttle server's per-client socket: request with `A`, receive `T b`, release with
    /// `R b`; the server keeps the ledger and returns everything on EOF (README.md).
    Socket(UnixStream),
}

impl fmt::Debug for Jobserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Jobserver")
            .field("source", &self.description)
            .finish()
    }
}

impl Jobserver {
    /// The jobserver this process was started under, if any: the first of `CARGO_MAKEFLAGS`,
    /// `MAKEFLAGS`, `MFLAGS` that mentions one (last option in it wins). If [`SOCKET_ENV`] names
    /// a throttle server for the same jobserver, tokens are held through its socket (crash-safe).
    ///
    /// Inherited pipe descriptors (`R,W`) are used only when they are provably the jobserver's:
    /// the read and write ends of one pipe, inherited, and (on Linux) the same pipe they were
    /// when the process started; otherwise `None`, silently (a make recipe without `+`; set
    /// `THROTTLE_JOBSERVER=debug` for a note saying why). If [`adopt_from_env`] ran, its
    /// connection is returned (once). Returns `None` with one warning line on stderr for a value
    /// it cannot use (an unknown format, a path that is not a fifo), and silently when there is no
    /// jobserver or make disabled it (negative descriptors).
    pub fn from_env() -> Option<Jobserver> {
        env::from_env()
    }

    /// Opens the jobserver an auth value names: `fifo:PATH` or `R,W` (inherited descriptors),
    /// as written after `--jobserver-auth=`.
    ///
    /// Descriptors given here are the caller's word that they are the jobserver's: they must be
    /// the read and the write end of one pipe, or the two pipes a throttle server names in
    /// [`ID_ENV`] and [`RETURN_ID_ENV`] (checked), but may be close-on-exec and need not be
    /// inherited ([`from_env`](Jobserver::from_env) requires both).
    ///
    /// # Errors
    /// An unreadable value, a path that is not a fifo, descriptors that are closed, not pipes, not
    /// the two ends of one pipe or swapped, or negative descriptors (the jobserver is off).
    ///
    /// # Examples
    /// ```
    /// assert!(throttle_jobserver::Jobserver::from_auth("fifo:/nonexistent/x").is_err());
    /// assert!(throttle_jobserver::Jobserver::from_auth("-1,-1").is_err());
    /// assert!(throttle_jobserver::Jobserver::from_auth("banana").is_err());
    /// ```
    pub fn from_auth(auth: &str) -> io::Result<Jobserver> {
        match parse_makeflags(&format!("--jobserver-auth={auth}")) {
            Ok(Some(Auth::Disabled)) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "negative descriptors: the jobserver is disabled",
            )),
            Ok(Some(a)) => Jobserver::open(&a),
            Ok(None) => unreachable!("the option was just written"),
            Err(why) => Err(io::Error::new(io::ErrorKind::InvalidInput, why)),
        }
    }

    /// Connects to a throttle server's socket ([`SOCKET_ENV`]): tokens held through it go back
    /// to the server when this process dies, however it dies.
    ///
    /// # Errors
    /// Nobody listens on `path`.
    pub fn connect(path: &Path) -> io::Result<Jobserver> {
        let s = UnixStream::connect(path)?;
        Ok(Jobserver {
            source: Source::Socket(s),
            description: format!("throttle server at {}", path.display()),
            asked: 0,
            inbox: Vec::new(),
            pid: std::process::id(),
        })
    }

    fn open(auth: &Auth) -> io::Result<Jobserver> {
        let (source, description) = match auth {
            Auth::Fifo(path) => {
                let fd = sys::open_fifo(path)?;
                let write = fd.try_clone()?;
                (
                    Source::Fd { read: fd, write },
                    format!("fifo {}", path.display()),
                )
            }
            Auth::Pipe(r, w) => {
                env::proven_ends(*r, *w)
                    .map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
                let (read, write) = sys::open_inherited_pipe(*r, *w)?;
                (Source::Fd { read, write }, format!("pipe fds {r},{w}"))
            }
            Auth::Disabled => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the jobserver is disabled",
                ))
            }
        };
        Ok(Jobserver {
            source,
            description,
            asked: 0,
            inbox: Vec::new(),
            pid: std::process::id(),
        })
    }

    /// Takes one token, waiting up to `timeout`; `Ok(None)` if none came in time. A pool does
    /// this by itself; this is for code that runs its own jobs (and for measuring the protocol).
    /// The token must go back through [`release`](Jobserver::release).
    ///
    /// # Errors
    /// The jobserver closed or failed.
    ///
    /// A `timeout` too long for the clock (such as `Duration::MAX`) waits without a deadline.
    pub fn acquire_timeout(&mut self, timeout: Duration) -> io::Result<Option<Token>> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if let Some(t) = self.poll_token(true, left.min(Duration::from_millis(50)))? {
                return Ok(Some(t));
            }
            if left.is_zero() {
                return Ok(None);
            }
        }
    }

    /// Gives a token back (writes its byte to the jobserver).
    ///
    /// # Errors
    /// The write failed; the token is then lost for this build.
    pub fn release(&mut self, t: Token) -> io::Result<()> {
        if std::process::id() != self.pid {
            // A fork() child with a copy of the parent's token: the parent gives it back.
            return Ok(());
        }
        match &mut self.source {
            Source::Fd { write, .. } => signal::critical(|| {
                if signal::take(t.entry) {
                    sys::write_token(write.as_raw_fd(), t.byte)?;
                }
                Ok(())
            }),
            Source::Socket(s) => s.write_all(&[b'R', t.byte]),
        }
    }

    /// The descriptor a token arrives on (the read end, or the server's socket): a caller that
    /// must not hold the connection while it waits polls this for readability, then takes a
    /// token with [`Jobserver::poll_token`] and no wait (`Throttle` does, so that releases by
    /// other threads never queue behind a waiter). Valid as long as this `Jobserver` lives.
    pub fn readable_fd(&self) -> RawFd {
        match &self.source {
            Source::Fd { read, .. } => read.as_raw_fd(),
            Source::Socket(s) => s.as_raw_fd(),
        }
    }

    /// True while a throttle server has a request of ours to answer (socket only).
    pub fn has_pending_request(&self) -> bool {
        self.asked > 0
    }

    /// One step of taking a token, waiting up to `wait`. `want` false only collects a token
    /// already asked for (socket). For the socket, asks the server once and collects the answer
    /// whenever it comes (a late answer is a token like any other, released after the grace
    /// period if no longer needed).
    pub fn poll_token(&mut self, want: bool, wait: Duration) -> io::Result<Option<Token>> {
        match &mut self.source {
            Source::Fd { read, write } => {
                if !want {
                    std::thread::park_timeout(wait);
                    return Ok(None);
                }
                if !sys::poll_readable(read.as_raw_fd(), wait) {
                    return Ok(None);
                }
                signal::critical(|| {
                    if signal::dying() {
                        return Ok(None);
                    }
                    Ok(sys::try_read_token(read)?.map(|byte| Token {
                        byte,
                        entry: signal::record(write.as_raw_fd(), byte),
                    }))
                })
            }
            Source::Socket(s) => {
                if want && self.asked == 0 {
                    s.write_all(b"A\0")?;
                    self.asked += 1;
                }
                if self.asked == 0 {
                    std::thread::park_timeout(wait);
                    return Ok(None);
                }
                if self.inbox.len() < 2 {
                    if !sys::poll_readable(s.as_raw_fd(), wait) {
                        return Ok(None);
                    }
                    let mut buf = [0u8; 2];
                    let n = s.read(&mut buf)?;
                    if n == 0 {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                    self.inbox.extend_from_slice(&buf[..n]);
                }
                if self.inbox.len() >= 2 && self.inbox[0] == b'T' {
                    let byte = self.inbox[1];
                    self.inbox.drain(..2);
                    self.asked -= 1;
                    return Ok(Some(Token { byte, entry: None }));
                }
                Ok(None)
            }
        }
    }
}

impl Drop for Jobserver {
    /// Tokens still out (read through this connection and never released) go back now, through
    /// this connection's own descriptor, which is closed only after that: the signal table never
    /// keeps a descriptor number that could be reused for another file. Not in a `fork()` child.
    fn drop(&mut self) {
        if let Source::Fd { write, .. } = &self.source {
            if std::process::id() == self.pid {
                signal::return_fd(write.as_raw_fd());
            } else {
                signal::forget_fd(write.as_raw_fd());
            }
        }
    }
}

/// Waits up to `wait` until `fd` (a [`Jobserver::readable_fd`]) is readable; false on timeout.
pub fn wait_readable(fd: RawFd, wait: Duration) -> bool {
    sys::poll_readable(fd, wait)
}

/// `DEV:INODE` of the fifo or pipe an auth names (what [`ID_ENV`] holds), if it exists.
pub(crate) fn auth_id(auth: &Auth) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    match auth {
        Auth::Fifo(path) => {
            let m = std::fs::metadata(path).ok()?;
            Some(format!("{}:{}", m.dev(), m.ino()))
        }
        Auth::Pipe(r, _) => sys::fd_id(*r),
        Auth::Disabled => None,
    }
}

/// One warning line on stderr, in the crate's voice.
fn warn(msg: &str) {
    eprintln!("throttle: warning: {msg}; running without a machine-wide budget");
}

/// Locks a std mutex, ignoring poisoning: every value behind this crate's mutexes stays valid
/// whatever a panicking holder was doing (counts, lists of descriptors).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_used_only_for_the_servers_own_fifo() {
        let a = Server::new(2, Style::Fifo).unwrap();
        let b = Server::new(2, Style::Fifo).unwrap();
        let auth = |s: &Server| {
            let f = s.makeflags();
            parse_makeflags(&f).unwrap().unwrap()
        };
        assert_eq!(auth_id(&auth(&a)), Some(a.id().to_string()));
        assert_ne!(auth_id(&auth(&b)), Some(a.id().to_string()));
        let p = Server::new(2, Style::Pipe).unwrap();
        assert_eq!(auth_id(&auth(&p)), Some(p.id().to_string()));
    }

    #[test]
    fn parses_every_form_and_the_last_wins() {
        let p = |s| parse_makeflags(s);
        assert_eq!(p(" -j2 -s").unwrap(), None);
        assert_eq!(
            p(" -j --jobserver-auth=3,4").unwrap(),
            Some(Auth::Pipe(3, 4))
        );
        assert_eq!(p("--jobserver-fds=5,6 -j").unwrap(), Some(Auth::Pipe(5, 6)));
        assert_eq!(
            p("-j4 --jobserver-auth=fifo:/tmp/x/fifo").unwrap(),
            Some(Auth::Fifo("/tmp/x/fifo".into()))
        );
        // Last one wins, across both spellings.
        assert_eq!(
            p("--jobserver-auth=fifo:/a --jobserver-fds=7,8").unwrap(),
            Some(Auth::Pipe(7, 8))
        );
        assert_eq!(
            p("--jobserver-fds=7,8 --jobserver-auth=fifo:/a").unwrap(),
            Some(Auth::Fifo("/a".into()))
        );
        assert_eq!(p("--jobserver-auth=-2,-2").unwrap(), Some(Auth::Disabled));
        assert_eq!(p("--jobserver-auth=3,-1").unwrap(), Some(Auth::Disabled));
        for bad in [
            "--jobserver-auth=sem:foo",
            "--jobserver-auth=3",
            "--jobserver-auth=fifo:",
            "--jobserver-auth=a,b",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }
}
