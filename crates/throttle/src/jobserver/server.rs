//! The crash-safe jobserver behind `throttle run`: N slots (the command holds the implicit one,
//! N − 1 tokens wait in a fifo or pipe), plus a unix socket through which throttle clients hold
//! their tokens. README.md has the protocol and its proof sketch.

use super::ledger::ClientLedger;
use super::sys;
use crate::sync::lock;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How tokens are passed to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A named fifo in a private 0700 directory (`--jobserver-auth=fifo:PATH`): make ≥ 4.4's
    /// default, and the only form ninja 1.13 reads.
    Fifo,
    /// An anonymous pipe whose descriptors the command inherits (`--jobserver-auth=R,W`): what
    /// make ≤ 4.3 reads.
    Pipe,
}

/// The token byte the server fills its fifo with (make uses `+` too).
const TOKEN: u8 = b'+';
/// How often a client thread looks at the stop flag while idle.
const POLL: Duration = Duration::from_millis(50);

/// A running jobserver; dropping it takes back every socket client's tokens and removes its
/// directory.
///
/// # Examples
/// ```
/// let server = throttle::Server::new(3, throttle::Style::Fifo).unwrap();
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
    /// Pipe style: the descriptors the command inherits.
    child_fds: Option<(OwnedFd, OwnedFd)>,
    acceptor: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Inner {
    /// This server's own non-blocking description of the read end.
    read: OwnedFd,
    write: OwnedFd,
    stop: AtomicBool,
    /// Connected throttle clients and the tokens each holds (for status and exit).
    clients: Mutex<Vec<(u64, Arc<AtomicUsize>)>>,
    live: AtomicUsize,
    /// The slots N now (changed by [`Server::resize`]).
    slots: AtomicUsize,
    /// Tokens that exist now: N − 1 once a shrink has collected its tokens.
    tokens: AtomicUsize,
    /// Tokens a shrink still has to take out of circulation (as they come back).
    debt: AtomicUsize,
    /// Serializes resizes (and, for [`Server::new_empty`], token additions and removals).
    resizing: Mutex<()>,
    /// Made by [`Server::new_empty`]: the owner adds and takes tokens; no resize.
    owned_tokens: bool,
    /// Socket clients are granted tokens only before this instant (None: always); set by the
    /// owner with [`Server::set_grant_deadline`].
    grant_until: Mutex<Option<Instant>>,
}

impl Inner {
    /// May a socket client be handed a token now?
    fn may_grant(&self) -> bool {
        match *lock(&self.grant_until) {
            Some(until) => Instant::now() < until,
            None => true,
        }
    }
}

/// Where the private directory goes: `TMPDIR`, unless its path has whitespace or a backslash and
/// `/tmp` is there instead. make 4.4 reads the escaped path (`fifo:/a\ b/...`), but ninja 1.13
/// does not unescape it and runs without the jobserver.
fn temp_base() -> PathBuf {
    let base = std::env::temp_dir();
    let awkward = base
        .to_string_lossy()
        .chars()
        .any(|c| c.is_ascii_whitespace() || c == '\\');
    if awkward && Path::new("/tmp").is_dir() {
        PathBuf::from("/tmp")
    } else {
        base
    }
}

/// Removes the private directories of servers that no longer run (a `throttle run` killed with
/// SIGKILL cannot remove its own): `throttle-js-PID-…` owned by this user whose PID is gone and
/// whose socket nobody listens on.
/// Returns how many it removed. A pid reused since only keeps a stale directory a while longer.
pub(crate) fn remove_stale_dirs(base: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    // SAFETY: getuid(2) cannot fail and has no side effects.
    let uid = unsafe { libc::getuid() };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("throttle-js-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || pid <= 0 {
            continue;
        }
        // SAFETY: kill(2) with signal 0 only checks whether the process exists.
        let pid_gone = unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        // A live server always listens on its socket; a pid can be "gone" only because it lives
        // in another pid namespace sharing this TMPDIR, so the socket has the last word.
        let gone = pid_gone
            && match UnixStream::connect(e.path().join("socket")) {
                Ok(_) => false,
                Err(e) => matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
                ),
            };
        if gone && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn private_dir() -> io::Result<PathBuf> {
    let base = temp_base();
    remove_stale_dirs(&base);
    let pid = std::process::id();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for i in 0..100u32 {
        let dir = base.join(format!("throttle-js-{pid}-{nanos:x}-{i}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("creating {}: {e}", dir.display()),
                ))
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not create a private directory for the jobserver",
    ))
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
    /// let server = throttle::Server::new_empty(3, throttle::Style::Fifo).unwrap();
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
            let (read, write, auth, child_fds) = match style {
                Style::Fifo => {
                    let path = dir.join("fifo");
                    sys::mkfifo(&path)?;
                    let read = sys::open_fifo(&path)?;
                    let write = read.try_clone()?;
                    // Escaped as make 4.4 writes it: a TMPDIR with a space stays one word.
                    let auth = format!("fifo:{}", super::env::escape(&path.to_string_lossy()));
                    (read, write, auth, None)
                }
                Style::Pipe => {
                    let (r, w) = sys::pipe()?;
                    let (read, write) = sys::open_inherited_pipe(r.as_raw_fd(), w.as_raw_fd())?;
                    let auth = format!("{},{}", r.as_raw_fd(), w.as_raw_fd());
                    (read, write, auth, Some((r, w)))
                }
            };
            let tokens = if empty { 0 } else { slots - 1 };
            for _ in 0..tokens {
                sys::write_token(write.as_raw_fd(), TOKEN)?;
            }
            let socket = dir.join("socket");
            let listener = UnixListener::bind(&socket)?;
            Ok::<_, io::Error>((read, write, auth, child_fds, socket, listener))
        })();
        let (read, write, auth, child_fds, socket, listener) = match made {
            Ok(m) => m,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let inner = Arc::new(Inner {
            read,
            write,
            stop: AtomicBool::new(false),
            clients: Mutex::new(Vec::new()),
            live: AtomicUsize::new(0),
            slots: AtomicUsize::new(slots),
            tokens: AtomicUsize::new(if empty { 0 } else { slots - 1 }),
            debt: AtomicUsize::new(0),
            resizing: Mutex::new(()),
            owned_tokens: empty,
            grant_until: Mutex::new(None),
        });
        let id = sys::fd_id(inner.read.as_raw_fd()).unwrap_or_default();
        let i2 = inner.clone();
        let acceptor = std::thread::Builder::new()
            .name("throttle-jobserver-accept".into())
            .spawn(move || accept_loop(&listener, &i2))?;
        Ok(Server {
            inner,
            dir,
            socket,
            auth,
            id,
            child_fds,
            acceptor: Some(acceptor),
        })
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

    /// The socket throttle clients connect to ([`SOCKET_ENV`](super::SOCKET_ENV)).
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// Prepares `cmd` to run under this server: `MAKEFLAGS`, [`SOCKET_ENV`](super::SOCKET_ENV),
    /// [`ID_ENV`](super::ID_ENV), and, for the pipe style, the inherited descriptors.
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
        let _g = lock(&self.inner.resizing);
        sys::write_token(self.inner.write.as_raw_fd(), TOKEN)?;
        self.inner.tokens.fetch_add(1, Ordering::Relaxed);
        Ok(())
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
        let _g = lock(&self.inner.resizing);
        match sys::try_read_token(&self.inner.read)? {
            Some(_) => {
                self.inner.tokens.fetch_sub(1, Ordering::Relaxed);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Throttle clients on the socket are handed tokens only before `until` (None: always, the
    /// default). Each grant reads the clock, so a server that was stopped (SIGSTOP) past `until`
    /// hands out nothing when it resumes, even before its owner's next look. Tokens in the fifo
    /// or pipe stay readable by foreign clients (make, ninja): only their owner taking them out
    /// ([`take_idle_token`](Server::take_idle_token)) stops those. `throttle run --budget` sets
    /// it to the end of its cluster lease's trust window.
    pub fn set_grant_deadline(&self, until: Option<Instant>) {
        *lock(&self.inner.grant_until) = until;
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

    /// Waits (up to `timeout`) until no throttle client is connected, so their tokens are back;
    /// returns the tokens then waiting in the pool. Call after the command exited: with make's
    /// own check, a count below N − 1 means a foreign client lost tokens.
    ///
    /// # Errors
    /// The FIONREAD query fails.
    pub fn settle(&self, timeout: Duration) -> io::Result<usize> {
        let start = Instant::now();
        while self.inner.live.load(Ordering::Acquire) > 0 && start.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(2));
        }
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
        let _ = self.settle(Duration::from_secs(2));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn status(inner: &Inner) -> String {
    let clients = lock(&inner.clients);
    let mut s = String::new();
    let mut held = 0;
    for (id, n) in clients.iter() {
        let n = n.load(Ordering::Relaxed);
        held += n;
        if n > 0 {
            s.push_str(&format!("throttle client {id}: {n} tokens\n"));
        }
    }
    let free = sys::bytes_waiting(inner.read.as_raw_fd()).unwrap_or(0);
    let tokens = inner.tokens.load(Ordering::Relaxed);
    let debt = inner.debt.load(Ordering::Relaxed);
    s.push_str(&format!(
        "{} slots: {free} tokens free, {held} held by throttle clients, {} by other clients (the implicit slot not counted){}\n",
        inner.slots.load(Ordering::Relaxed),
        tokens.saturating_sub(free + held),
        if debt > 0 {
            format!("; shrinking: {debt} tokens still to collect")
        } else {
            String::new()
        }
    ));
    s
}

fn resize(inner: &Arc<Inner>, slots: usize) -> io::Result<()> {
    if inner.owned_tokens {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this server's tokens come from a cluster budget (throttle run --budget): its N is the budget's",
        ));
    }
    if slots == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a jobserver needs at least 1 slot",
        ));
    }
    let _g = lock(&inner.resizing);
    let old = inner.slots.swap(slots, Ordering::Relaxed);
    if slots > old {
        let mut grow = slots - old;
        // Cancel an unpaid shrink first.
        let debt = inner.debt.load(Ordering::Relaxed);
        let cancel = debt.min(grow);
        inner.debt.fetch_sub(cancel, Ordering::Relaxed);
        grow -= cancel;
        for _ in 0..grow {
            sys::write_token(inner.write.as_raw_fd(), TOKEN)?;
            inner.tokens.fetch_add(1, Ordering::Relaxed);
        }
    } else if slots < old {
        let before = inner.debt.fetch_add(old - slots, Ordering::Relaxed);
        if before == 0 {
            let i2 = inner.clone();
            std::thread::Builder::new()
                .name("throttle-jobserver-shrink".into())
                .spawn(move || collect_debt(&i2))?;
        }
    }
    Ok(())
}

/// Takes tokens out of the fifo as they come back until the shrink is paid.
fn collect_debt(inner: &Inner) {
    while inner.debt.load(Ordering::Relaxed) > 0 && !inner.stop.load(Ordering::Relaxed) {
        if !sys::poll_readable(inner.read.as_raw_fd(), POLL) {
            continue;
        }
        let _g = lock(&inner.resizing);
        if inner.debt.load(Ordering::Relaxed) == 0 {
            break;
        }
        if let Ok(Some(_)) = sys::try_read_token(&inner.read) {
            inner.debt.fetch_sub(1, Ordering::Relaxed);
            inner.tokens.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A control request on the socket (`C` + a line): `status` or `resize N`. Returns the reply.
fn control(inner: &Arc<Inner>, line: &str) -> String {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("status"), None) => status(inner),
        (Some("resize"), Some(n)) => match n.parse::<usize>() {
            Ok(n) if n >= 1 => match resize(inner, n) {
                Ok(()) => format!("resized to {n} slots\n"),
                Err(e) => format!("error: {e}\n"),
            },
            _ => format!("error: invalid slot count '{n}'\n"),
        },
        _ => format!("error: unknown control request '{line}'\n"),
    }
}

fn accept_loop(listener: &UnixListener, inner: &Arc<Inner>) {
    let mut next_id = 0u64;
    for conn in listener.incoming() {
        if inner.stop.load(Ordering::Relaxed) {
            break;
        }
        let Ok(conn) = conn else { continue };
        next_id += 1;
        let id = next_id;
        let held = Arc::new(AtomicUsize::new(0));
        lock(&inner.clients).push((id, held.clone()));
        // Release: pairs with the Acquire load in `settle`.
        inner.live.fetch_add(1, Ordering::Release);
        let i2 = inner.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("throttle-jobserver-client-{id}"))
            .spawn(move || {
                serve_client(conn, &i2, &held);
                lock(&i2.clients).retain(|(c, _)| *c != id);
                i2.live.fetch_sub(1, Ordering::Release);
            });
        if spawned.is_err() {
            lock(&inner.clients).retain(|(c, _)| *c != id);
            inner.live.fetch_sub(1, Ordering::Release);
        }
    }
}

/// One throttle client: requests in, grants out, releases back to the fifo, and on EOF (the
/// client exited or was killed) everything it still held back to the fifo.
fn serve_client(mut conn: UnixStream, inner: &Arc<Inner>, held: &AtomicUsize) {
    let mut ledger = ClientLedger::default();
    let mut inbox: Vec<u8> = Vec::new();
    let write_back = |b: u8| {
        if let Err(e) = sys::write_token(inner.write.as_raw_fd(), b) {
            eprintln!("throttle run: could not return a token to the jobserver: {e}");
        }
    };
    'conn: while !inner.stop.load(Ordering::Relaxed) {
        let mut fds = [
            libc::pollfd {
                fd: conn.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: inner.read.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // Past the owner's grant deadline the fifo is not watched (no busy loop on a readable
        // fifo); the request waits, and is looked at again every POLL.
        let n = if ledger.wants_token() && inner.may_grant() {
            2
        } else {
            1
        };
        // SAFETY: `fds` holds `n` ≤ 2 valid pollfds.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), n as libc::nfds_t, POLL.as_millis() as i32) };
        if r <= 0 {
            continue;
        }
        if fds[0].revents != 0 {
            let mut buf = [0u8; 64];
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => break 'conn,
                Ok(k) => inbox.extend_from_slice(&buf[..k]),
            }
            if inbox.first() == Some(&b'C') {
                // A control connection (`throttle run --status` / `--resize`): one line, one
                // reply, then closed. It holds no tokens.
                if let Some(end) = inbox.iter().position(|&b| b == b'\n') {
                    let line = String::from_utf8_lossy(&inbox[1..end]).into_owned();
                    let _ = conn.write_all(control(inner, &line).as_bytes());
                    break 'conn;
                }
                continue;
            }
            while inbox.len() >= 2 {
                match inbox[0] {
                    b'A' => ledger.request(),
                    b'R' => {
                        if ledger.release(inbox[1]) {
                            write_back(inbox[1]);
                        }
                    }
                    _ => break 'conn, // not our protocol: drop the client, return its tokens
                }
                inbox.drain(..2);
                held.store(ledger.held(), Ordering::Relaxed);
            }
        }
        if ledger.wants_token() && n == 2 && fds[1].revents != 0 && inner.may_grant() {
            match sys::try_read_token(&inner.read) {
                Ok(Some(b)) => {
                    // In the ledger before it is sent: from here until written back, it is ours.
                    ledger.granted(b);
                    held.store(ledger.held(), Ordering::Relaxed);
                    if conn.write_all(&[b'T', b]).is_err() {
                        break 'conn;
                    }
                }
                Ok(None) => {} // another client was faster
                Err(_) => break 'conn,
            }
        }
    }
    for b in ledger.close() {
        write_back(b);
    }
    held.store(0, Ordering::Relaxed);
}
