//! The crash-safe jobserver behind `throttle run`: N slots (the command holds the implicit one,
//! N − 1 tokens wait in a fifo or pipe), plus a unix socket through which throttle clients hold
//! their tokens. README.md has the protocol and its proof sketch.
//!
//! Files: this one (the [`Server`] and its styles), `tokens.rs` (the token count and the one
//! path by which returned tokens re-enter circulation), `clients.rs` (the socket), `dir.rs`
//! (the private directory).

mod clients;
mod dir;
mod tokens;

use super::sys;
use clients::accept_loop;
use dir::private_dir;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokens::{resize, status, Inner, TOKEN};

/// How tokens are passed to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A named fifo in a private 0700 directory (`--jobserver-auth=fifo:PATH`): make ≥ 4.4's
    /// default, and the only form ninja 1.13 reads.
    Fifo,
    /// An anonymous pipe whose descriptors the command inherits (`--jobserver-auth=R,W`): what
    /// make ≤ 4.3 reads.
    Pipe,
    /// Two anonymous pipes (`--jobserver-auth=R,W`, `R` the read end of one, `W` the write end
    /// of the other): clients read tokens from the first and write them back into the second,
    /// which only the server reads, so **every returned token passes through the server** —
    /// which passes it on, or, for an owner past its deadline or limit
    /// ([`set_grant_deadline`](Server::set_grant_deadline),
    /// [`set_token_limit`](Server::set_token_limit)), keeps it out of circulation. Read by GNU
    /// make 4.3 and 4.4, the `jobserver` crate (cargo, rustc, cc) and throttle (which takes two
    /// pipes only when [`ID_ENV`](super::ID_ENV) and [`RETURN_ID_ENV`](super::RETURN_ID_ENV)
    /// name them); not by upstream ninja 1.13 (fifo only). `throttle run --budget` uses it.
    TwoPipes,
}

/// A running jobserver; dropping it takes back every socket client's tokens and removes its
/// directory.
///
/// # Examples
/// ```
/// let server = throttle_jobserver::Server::new(3, throttle_jobserver::Style::Fifo).unwrap();
/// assert!(server.makeflags().contains("--jobserver-auth=fifo:"));
/// assert_eq!(server.tokens_in_pool().unwrap(), 2); // N - 1: the command holds one
/// ```
#[derive(Debug)]
pub struct Server {
    inner: Arc<Inner>,
    dir: PathBuf,
    socket: PathBuf,
    auth: String,
    /// `DEV:INODE` of the token fifo or pipe ([`ID_ENV`](super::ID_ENV)).
    id: String,
    /// [`Style::TwoPipes`]: `DEV:INODE` of the return pipe ([`RETURN_ID_ENV`](super::RETURN_ID_ENV)).
    return_id: Option<String>,
    /// Pipe styles: the descriptors the command inherits (read end, write end).
    child_fds: Option<(OwnedFd, OwnedFd)>,
    acceptor: Option<JoinHandle<()>>,
    /// [`Style::TwoPipes`]: the thread that reads returned tokens.
    returns: Option<JoinHandle<()>>,
}

/// What `start` makes for one style: the server's read end, its write end, the return pipe's
/// read end, the auth value and the command's descriptors.
type Made = (
    OwnedFd,
    OwnedFd,
    Option<OwnedFd>,
    String,
    Option<(OwnedFd, OwnedFd)>,
);

/// Makes the fifo or pipes of `style` in `dir`.
fn make_style(style: Style, dir: &Path) -> io::Result<Made> {
    Ok(match style {
        Style::Fifo => {
            let path = dir.join("fifo");
            sys::mkfifo(&path)?;
            let read = sys::open_fifo(&path)?;
            let write = read.try_clone()?;
            // Escaped as make 4.4 writes it: a TMPDIR with a space stays one word.
            let auth = format!("fifo:{}", super::env::escape(&path.to_string_lossy()));
            (read, write, None, auth, None)
        }
        Style::Pipe => {
            let (r, w) = sys::pipe()?;
            let (read, write) = sys::open_inherited_pipe(r.as_raw_fd(), w.as_raw_fd())?;
            let auth = format!("{},{}", r.as_raw_fd(), w.as_raw_fd());
            (read, write, None, auth, Some((r, w)))
        }
        Style::TwoPipes => {
            // Tokens go out through `out`: clients get its read end, only the server writes.
            // They come back through `back`: clients get its write end, only the server reads.
            let (out_r, out_w) = sys::pipe()?;
            let (back_r, back_w) = sys::pipe()?;
            let id = sys::pipe_info(out_r.as_raw_fd())?.id;
            let read = sys::reopen_read_end(out_r.as_raw_fd(), id)?;
            sys::set_nonblocking(&back_r)?;
            let auth = format!("{},{}", out_r.as_raw_fd(), back_w.as_raw_fd());
            (read, out_w, Some(back_r), auth, Some((out_r, back_w)))
        }
    })
}

impl Server {
    /// A jobserver with `slots` slots: `slots − 1` tokens, the command holding the implicit one.
    ///
    /// # Errors
    /// `slots` is 0, or the fifo, pipe, directory or socket cannot be made.
    pub fn new(slots: usize, style: Style) -> io::Result<Server> {
        Server::start(slots, style, false)
    }

    /// A jobserver of `slots` slots (`-jN` in `MAKEFLAGS`) that starts with **no** token: its
    /// owner puts each token in with [`add_token`](Server::add_token) when it has the right to
    /// (`throttle run --budget` backs each one with a slot of a cluster budget) and takes idle
    /// ones out with [`take_idle_token`](Server::take_idle_token). Such a server refuses
    /// `--resize` (its owner decides how many tokens exist).
    ///
    /// # Errors
    /// `slots` is 0, or the fifo, pipe, directory or socket cannot be made.
    ///
    /// # Examples
    /// ```
    /// let server = throttle_jobserver::Server::new_empty(3, throttle_jobserver::Style::Fifo).unwrap();
    /// assert_eq!(server.tokens_in_pool().unwrap(), 0);
    /// server.add_token().unwrap();
    /// assert_eq!((server.tokens_in_pool().unwrap(), server.tokens_expected()), (1, 1));
    /// assert!(server.take_idle_token().unwrap());
    /// assert!(!server.take_idle_token().unwrap()); // none left in the pipe
    /// assert_eq!(server.tokens_expected(), 0);
    /// ```
    pub fn new_empty(slots: usize, style: Style) -> io::Result<Server> {
        Server::start(slots, style, true)
    }

    fn start(slots: usize, style: Style, empty: bool) -> io::Result<Server> {
        if slots == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a jobserver needs at least 1 slot",
            ));
        }
        let dir = private_dir()?;
        let made = (|| {
            let (read, write, back, auth, child_fds) = make_style(style, &dir)?;
            let tokens = if empty { 0 } else { slots - 1 };
            for _ in 0..tokens {
                sys::write_token(write.as_raw_fd(), TOKEN)?;
            }
            let socket = dir.join("socket");
            let listener = UnixListener::bind(&socket)?;
            Ok::<_, io::Error>((read, write, back, auth, child_fds, socket, listener))
        })();
        let (read, write, back, auth, child_fds, socket, listener) = match made {
            Ok(m) => m,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let return_id = back.as_ref().and_then(|b| sys::fd_id(b.as_raw_fd()));
        let inner = Arc::new(Inner {
            read,
            write,
            back,
            returning: Mutex::new(()),
            stop: AtomicBool::new(false),
            clients: Mutex::new(Vec::new()),
            live: AtomicUsize::new(0),
            slots: AtomicUsize::new(slots),
            tokens: AtomicUsize::new(if empty { 0 } else { slots - 1 }),
            debt: AtomicUsize::new(0),
            resizing: Mutex::new(()),
            owned_tokens: empty,
            grant_until: Mutex::new(None),
            limit: AtomicUsize::new(usize::MAX),
            kept_out: AtomicUsize::new(0),
        });
        let id = sys::fd_id(inner.read.as_raw_fd()).unwrap_or_default();
        let i2 = inner.clone();
        let acceptor = std::thread::Builder::new()
            .name("throttle-jobserver-accept".into())
            .spawn(move || accept_loop(&listener, &i2))?;
        let mut server = Server {
            inner,
            dir,
            socket,
            auth,
            id,
            return_id,
            child_fds,
            acceptor: Some(acceptor),
            returns: None,
        };
        if server.inner.back.is_some() {
            let i2 = server.inner.clone();
            // On error the server is dropped: its Drop stops the acceptor and removes the dir.
            server.returns = Some(
                std::thread::Builder::new()
                    .name("throttle-jobserver-returns".into())
                    .spawn(move || tokens::forward_returns(&i2))?,
            );
        }
        Ok(server)
    }

    /// The slots N (tokens + the implicit one).
    pub fn slots(&self) -> usize {
        self.inner.slots.load(Ordering::Relaxed)
    }

    /// Tokens that should be back once every client is done: N − 1, plus any tokens a shrink
    /// has not collected yet.
    pub fn tokens_expected(&self) -> usize {
        self.inner.tokens.load(Ordering::Relaxed)
    }

    /// Changes N while the command runs. Growing writes the new tokens at once; shrinking takes
    /// tokens out of circulation as clients give them back (running jobs are never interrupted),
    /// so the new N is in force once that many tokens have come back. `MAKEFLAGS`'s `-jN` as
    /// already exported does not change (clients only use the tokens).
    ///
    /// # Errors
    /// `slots` is 0, or a token cannot be written.
    pub fn resize(&self, slots: usize) -> io::Result<()> {
        resize(&self.inner, slots)
    }

    /// The `MAKEFLAGS` value that names this server: ` -jN --jobserver-auth=...`.
    pub fn makeflags(&self) -> String {
        format!(" -j{} --jobserver-auth={}", self.slots(), self.auth)
    }

    /// The value after `--jobserver-auth=`: `fifo:PATH` (whitespace and backslashes in the path
    /// escaped with a backslash, as make 4.4 writes it) or `R,W`, as
    /// [`Jobserver::from_auth`](super::Jobserver::from_auth) takes it.
    pub fn auth(&self) -> &str {
        &self.auth
    }

    /// `DEV:INODE` of the token fifo or pipe, as exported in [`ID_ENV`](super::ID_ENV).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// [`Style::TwoPipes`]: `DEV:INODE` of the pipe clients write tokens back into, as exported
    /// in [`RETURN_ID_ENV`](super::RETURN_ID_ENV); None for the other styles.
    pub fn return_id(&self) -> Option<&str> {
        self.return_id.as_deref()
    }

    /// The socket throttle clients connect to ([`SOCKET_ENV`](super::SOCKET_ENV)).
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// Prepares `cmd` to run under this server: `MAKEFLAGS`, [`SOCKET_ENV`](super::SOCKET_ENV),
    /// [`ID_ENV`](super::ID_ENV), [`RETURN_ID_ENV`](super::RETURN_ID_ENV) (set for
    /// [`Style::TwoPipes`], removed otherwise, so a server inside the tree never inherits an
    /// outer one's), and, for the pipe styles, the inherited descriptors.
    /// `CARGO_MAKEFLAGS` and `MFLAGS` are removed, not set: clients read `CARGO_MAKEFLAGS` first
    /// and make never rewrites it, so a make inside the tree that starts its own jobserver would
    /// leave its jobs drawing on this one (cargo sets `CARGO_MAKEFLAGS` itself for its children).
    pub fn configure(&self, cmd: &mut Command) {
        let flags = self.makeflags();
        cmd.env("MAKEFLAGS", &flags)
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove("MFLAGS")
            .env(super::SOCKET_ENV, &self.socket)
            .env(super::ID_ENV, &self.id);
        match &self.return_id {
            Some(id) => cmd.env(super::RETURN_ID_ENV, id),
            None => cmd.env_remove(super::RETURN_ID_ENV),
        };
        if let Some((r, w)) = &self.child_fds {
            let fds = [r.as_raw_fd(), w.as_raw_fd()];
            use std::os::unix::process::CommandExt;
            // SAFETY: the closure runs in the child between fork and exec and only calls
            // fcntl(2), which is async-signal-safe; it touches no memory shared with the parent.
            unsafe {
                cmd.pre_exec(move || {
                    for fd in fds {
                        let flags = libc::fcntl(fd, libc::F_GETFD);
                        if flags < 0
                            || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0
                        {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    Ok(())
                });
            }
        }
    }

    /// Puts one more token into the fifo or pipe ([`tokens_expected`](Server::tokens_expected)
    /// grows by one). For a server made by [`new_empty`](Server::new_empty), whose owner
    /// decides how many tokens exist; nothing stops more than N − 1, so the owner keeps count.
    ///
    /// # Errors
    /// The server was made by [`new`](Server::new) (use [`resize`](Server::resize)), or the
    /// token cannot be written.
    pub fn add_token(&self) -> io::Result<()> {
        self.owned_only("add_token")?;
        tokens::add_token(&self.inner)
    }

    /// Takes one idle token out of circulation: reads one byte from the fifo or pipe without
    /// blocking. Returns false if none was waiting (every token is held, or another reader was
    /// faster); on true, [`tokens_expected`](Server::tokens_expected) shrank by one and the token
    /// can no longer reach any client. A token a client holds cannot be taken back: it is
    /// taken (by a later call) only once its holder has written it back.
    ///
    /// # Errors
    /// The server was made by [`new`](Server::new), or the read fails.
    pub fn take_idle_token(&self) -> io::Result<bool> {
        self.owned_only("take_idle_token")?;
        tokens::take_idle_token(&self.inner)
    }

    /// Throttle clients on the socket are handed tokens only before `until` (None: always, the
    /// default), and for a server made by [`new_empty`](Server::new_empty) a token that comes
    /// back (a socket release, or any client's write into the return pipe of
    /// [`Style::TwoPipes`]) goes back into circulation only before `until`: after it, it is
    /// taken out ([`tokens_expected`](Server::tokens_expected) − 1). Each decision reads the
    /// clock, so a server that was stopped (SIGSTOP) past `until` passes nothing on when it
    /// resumes, even before its owner's next look. Tokens idle in the fifo or pipe stay readable
    /// by foreign clients until their owner takes them out
    /// ([`take_idle_token`](Server::take_idle_token)), and with a single fifo or pipe a foreign
    /// client's returned token is not seen at all. `throttle run --budget` sets it to the end of
    /// its cluster lease's trust window.
    pub fn set_grant_deadline(&self, until: Option<Instant>) {
        *crate::lock(&self.inner.grant_until) = until;
    }

    /// For a server made by [`new_empty`](Server::new_empty): a token that comes back while
    /// more than `limit` tokens are in circulation (that one included) is taken out of
    /// circulation instead of being passed on (None: no limit, the default). Its owner sets it
    /// to the tokens it can back, so surplus tokens leave as soon as their holders give them
    /// up. Ignored by a server made by [`new`](Server::new).
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// let server = throttle_jobserver::Server::new_empty(3, throttle_jobserver::Style::TwoPipes).unwrap();
    /// server.add_token().unwrap();
    /// let mut js = throttle_jobserver::Jobserver::connect(server.socket_path()).unwrap();
    /// let t = js.acquire_timeout(Duration::from_secs(5)).unwrap().unwrap();
    /// // The owner can back no token any more: the one held leaves when it comes back.
    /// server.set_token_limit(Some(0));
    /// js.release(t).unwrap();
    /// drop(js);
    /// server.settle(Duration::from_secs(5)).unwrap();
    /// assert_eq!(server.tokens_expected(), 0);
    /// ```
    pub fn set_token_limit(&self, limit: Option<usize>) {
        self.inner
            .limit
            .store(limit.unwrap_or(usize::MAX), Ordering::Relaxed);
    }

    fn owned_only(&self, what: &str) -> io::Result<()> {
        if self.inner.owned_tokens {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("Server::{what} is for a server made by Server::new_empty"),
            ))
        }
    }

    /// Tokens waiting in the fifo or pipe now.
    ///
    /// # Errors
    /// The FIONREAD query fails.
    pub fn tokens_in_pool(&self) -> io::Result<usize> {
        sys::bytes_waiting(self.inner.read.as_raw_fd())
    }

    /// One line per throttle client holding tokens (`throttle client 3: 2 tokens`) and a total.
    pub fn status(&self) -> String {
        status(&self.inner)
    }

    /// Waits (up to `timeout`) until no throttle client is connected, so their tokens are back,
    /// and passes on every token waiting in the return pipe ([`Style::TwoPipes`]); returns the
    /// tokens then waiting in the pool. Call after the command exited: with make's own check, a
    /// count below [`tokens_expected`](Server::tokens_expected) means a foreign client lost
    /// tokens.
    ///
    /// # Errors
    /// The FIONREAD query fails.
    pub fn settle(&self, timeout: Duration) -> io::Result<usize> {
        let start = Instant::now();
        while self.inner.live.load(Ordering::Acquire) > 0 && start.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(2));
        }
        tokens::drain_returns(&self.inner);
        self.tokens_in_pool()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Relaxed);
        // Wake the acceptor out of accept(2).
        let _ = UnixStream::connect(&self.socket);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
        if let Some(t) = self.returns.take() {
            let _ = t.join();
        }
        let _ = self.settle(Duration::from_secs(2));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
