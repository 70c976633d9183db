//! A real etcd cluster for the cluster-budget tests: three members on 127.0.0.1 with ports held
//! for them and temporary data directories, started with a bounded wait for health, members
//! killed, stopped and restarted one at a time, and everything stopped and removed on drop (also
//! when a test panics, since drop runs while unwinding).
//!
//! The harness needs only the `etcd` binary: it checks health (`GET /health`) and reads and
//! writes keys through etcd's JSON gateway (`POST /v3/kv/range`, `/v3/kv/put`,
//! `/v3/lease/grant`) with a few lines of HTTP/1.1 over `TcpStream`, so neither `etcdctl` nor a
//! client crate is needed to check what the product wrote.
//!
//! Also here: the process-tree signals the tests use to kill or freeze a simulated host, the
//! monotonic clock every task log uses, and the sweep that checks a log of task intervals.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a member or the whole cluster may take to report healthy before the harness gives
/// up: a guard against a hang (etcd 3.4 elects a leader within about two election timeouts, 2 s
/// here; a loaded machine may be slow, not this slow).
pub const STARTUP_TIMEOUT: Duration = super::HANG_GUARD;

/// The etcd binary: `THROTTLE_ETCD_BIN`, else `etcd` on PATH. `None` when neither exists.
pub fn etcd_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("THROTTLE_ETCD_BIN") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("etcd"))
            .find(|p| p.is_file())
    })
}

/// The etcd binary, or `None` after printing "skipped: etcd not on PATH". Fails instead of
/// skipping when `THROTTLE_REQUIRE_ETCD=1` (CI sets it, so a missing etcd cannot pass quietly).
pub fn etcd_or_skip(test: &str) -> Option<PathBuf> {
    match etcd_bin() {
        Some(p) => Some(p),
        None if std::env::var("THROTTLE_REQUIRE_ETCD").as_deref() == Ok("1") => panic!(
            "{test}: THROTTLE_REQUIRE_ETCD=1 but etcd was not found (THROTTLE_ETCD_BIN unset or \
             not a file, no `etcd` on PATH): install it with `apt-get install -y etcd-server`"
        ),
        None => {
            eprintln!("{test}: skipped: etcd not on PATH");
            None
        }
    }
}

/// One clock tick of /proc's process start times, in nanoseconds (10 ms at the usual
/// `CLK_TCK` of 100).
pub fn tick_ns() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1_000_000_000 / u64::try_from(hz).ok().filter(|&h| h > 0).unwrap_or(100)
}

/// A CLOCK_MONOTONIC instant by which process `pid` had been created: its start time in
/// /proc/PID/stat (clock ticks of CLOCK_BOOTTIME since boot) rounded up to the next tick and
/// moved to CLOCK_MONOTONIC (the two differ by the time the machine was suspended, read now).
pub fn created_by(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name's closing parenthesis: state is field 3, starttime 22.
    let ticks: u64 = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let boot_ns = (ticks + 1) * tick_ns();
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    let boot_now = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    let suspended = boot_now.saturating_sub(mono_ns());
    Some(boot_ns.saturating_sub(suspended))
}

/// The process make started for the recipe that runs the calling process: this process or
/// the closest ancestor whose parent is `make` (a recipe with shell syntax runs under
/// `/bin/sh -c`, which may fork). `None` when no make is among the first few ancestors.
pub fn make_job() -> Option<u32> {
    let parent = |pid: u32| -> Option<(u32, String)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, tail) = stat.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        let ppid = tail.split_whitespace().nth(1)?.parse().ok()?;
        Some((ppid, comm))
    };
    let mut pid = std::process::id();
    for _ in 0..4 {
        let (ppid, _) = parent(pid)?;
        let (_, parent_comm) = parent(ppid)?;
        if parent_comm == "make" {
            return Some(pid);
        }
        pid = ppid;
    }
    None
}

/// CLOCK_MONOTONIC in nanoseconds: one clock machine-wide, so times stamped by different
/// processes compare.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Has the child started by `cmd` killed when the thread that spawned it ends (prctl
/// PR_SET_PDEATHSIG), so a test binary stopped by a timeout leaves no etcd or host behind.
/// Every spawn of the tests happens on the test's own thread, which outlives the cluster.
pub fn die_with_parent(cmd: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec and calls only prctl(2),
    // which is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

/// A loopback port held for the cluster's lifetime: a socket bound to it with SO_REUSEADDR that
/// never listens. The kernel hands the port to no one else (not to a `bind` to port 0, nor as
/// the local port of a connection), while etcd, whose listeners set SO_REUSEADDR too, can bind
/// and listen on it, and again after a restart. So a member's ports are its own from the moment
/// they are picked, also while the member is down.
struct HeldPort {
    _socket: OwnedFd,
    port: u16,
}

/// A port of 127.0.0.1 picked by the kernel and held (see [`HeldPort`]).
fn hold_port() -> HeldPort {
    let err = || std::io::Error::last_os_error();
    // SAFETY: socket(2) has no memory effects; the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0, "socket: {}", err());
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    let one: libc::c_int = 1;
    // SAFETY: `one` is a valid c_int for the option's value, of the length given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_REUSEADDR: {}", err());
    // SAFETY: a zeroed sockaddr_in is valid; the fields set make it 127.0.0.1, port 0.
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `addr` is a valid sockaddr_in of length `len`, for bind to read and getsockname
    // to write.
    let rc = unsafe {
        libc::bind(
            socket.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            len,
        )
    };
    assert_eq!(rc, 0, "binding 127.0.0.1:0: {}", err());
    // SAFETY: as above.
    let rc = unsafe {
        libc::getsockname(
            socket.as_raw_fd(),
            (&mut addr as *mut libc::sockaddr_in).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockname: {}", err());
    HeldPort {
        _socket: socket,
        port: u16::from_be(addr.sin_port),
    }
}

/// One member: its name, ports, data directory, log file and process (None while down).
struct Member {
    name: String,
    client: u16,
    peer: u16,
    child: Option<Child>,
}

/// A 3-member etcd cluster on 127.0.0.1, stopped and removed when dropped.
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    members: Vec<Member>,
    initial: String,
    token: String,
    /// Every member's client and peer port, held as long as the cluster exists.
    _ports: Vec<HeldPort>,
}

impl Cluster {
    /// Starts `size` members (3 in the tests) under a fresh directory named after `tag` and
    /// waits, at most [`STARTUP_TIMEOUT`], until every member is healthy.
    pub fn start(bin: &Path, tag: &str, size: usize) -> Cluster {
        let dir = std::env::temp_dir().join(format!(
            "throttle-etcd-{}-{}-{tag}",
            std::process::id(),
            mono_ns() % 1_000_000
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating the cluster's temp dir");
        let ports: Vec<HeldPort> = (0..2 * size).map(|_| hold_port()).collect();
        let members: Vec<Member> = (0..size)
            .map(|i| Member {
                name: format!("m{i}"),
                client: ports[2 * i].port,
                peer: ports[2 * i + 1].port,
                child: None,
            })
            .collect();
        let initial = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect::<Vec<_>>()
            .join(",");
        let mut c = Cluster {
            bin: bin.to_path_buf(),
            token: format!("throttle-test-{}-{tag}", std::process::id()),
            dir,
            members,
            initial,
            _ports: ports,
        };
        for i in 0..size {
            c.spawn(i);
        }
        c.wait_healthy(&(0..size).collect::<Vec<_>>(), STARTUP_TIMEOUT);
        c
    }

    fn spawn(&mut self, i: usize) {
        assert!(self.members[i].child.is_none(), "member {i} is running");
        let m = &self.members[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{}.log", m.name)))
            .expect("member log");
        let client = format!("http://127.0.0.1:{}", m.client);
        let peer = format!("http://127.0.0.1:{}", m.peer);
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--name")
            .arg(&m.name)
            .arg("--data-dir")
            .arg(self.dir.join(&m.name))
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial])
            .args(["--initial-cluster-token", &self.token])
            .args(["--initial-cluster-state", "new"])
            .args(["--logger", "zap", "--log-outputs", "stderr"])
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log fd"))
            .stderr(log)
            // Its own process group: a test's signals to a host's group never reach etcd.
            .process_group(0);
        die_with_parent(&mut cmd);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", self.bin.display()));
        self.members[i].child = Some(child);
    }

    /// The number of members.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// `127.0.0.1:P,127.0.0.1:Q,...`: every member's client address, for an `etcd://` URL.
    pub fn endpoints(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `etcd://<every member>/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!("etcd://{}/{name}", self.endpoints())
    }

    /// The client port of member `i`.
    pub fn client_port(&self, i: usize) -> u16 {
        self.members[i].client
    }

    /// Whether member `i`'s process runs (it may still be starting).
    pub fn is_running(&self, i: usize) -> bool {
        self.members[i].child.is_some()
    }

    /// Whether member `i` answers `GET /health` with `"health":"true"` within `timeout`.
    pub fn healthy(&self, i: usize, timeout: Duration) -> bool {
        matches!(
            http(self.members[i].client, "GET", "/health", "", timeout),
            Ok((200, body)) if body.contains("\"health\":\"true\"")
        )
    }

    /// Waits until every member of `which` is healthy, at most `timeout`; panics otherwise
    /// with the tail of each member's log.
    pub fn wait_healthy(&self, which: &[usize], timeout: Duration) {
        let t = Instant::now();
        loop {
            if which
                .iter()
                .all(|&i| self.healthy(i, Duration::from_millis(500)))
            {
                return;
            }
            if t.elapsed() > timeout {
                panic!(
                    "etcd members {which:?} not healthy after {timeout:?}\n{}",
                    self.log_tails()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The member that is the leader now, as the running members report it (None: no member
    /// answers, or they name no running member).
    pub fn leader(&self) -> Option<usize> {
        for (i, m) in self.members.iter().enumerate() {
            if m.child.is_none() {
                continue;
            }
            let Ok((200, body)) = http(
                m.client,
                "POST",
                "/v3/maintenance/status",
                "{}",
                Duration::from_millis(500),
            ) else {
                continue;
            };
            // {"header":{..."member_id":"A",...},..."leader":"B",...}: the member whose id is
            // the leader's.
            let field = |name: &str| {
                body.split(&format!("\"{name}\":\""))
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .map(str::to_string)
            };
            if field("member_id").is_some() && field("member_id") == field("leader") {
                return Some(i);
            }
        }
        None
    }

    /// The last lines of every member's log, for failure messages.
    pub fn log_tails(&self) -> String {
        let mut s = String::new();
        for m in &self.members {
            let body = std::fs::read_to_string(self.dir.join(format!("{}.log", m.name)))
                .unwrap_or_default();
            let lines: Vec<&str> = body.lines().collect();
            s.push_str(&format!("--- {} (client {}) ---\n", m.name, m.client));
            for l in &lines[lines.len().saturating_sub(8)..] {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }

    /// SIGKILL member `i` and reap it (a crash: no goodbye to its peers).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM member `i` and wait for it, at most 10 s (then SIGKILL).
    pub fn stop(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            // SAFETY: kill(2) on the pid of our own unreaped child, which cannot have been
            // reused.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `i` again on its data directory and ports; does not wait (see
    /// [`Cluster::wait_healthy`]).
    pub fn restart(&mut self, i: usize) {
        self.spawn(i);
    }

    /// A running, healthy member's client port, trying them in order for at most
    /// [`STARTUP_TIMEOUT`] (a member reports unhealthy while the cluster elects a new leader).
    fn any_port(&self) -> u16 {
        let t = Instant::now();
        while t.elapsed() < STARTUP_TIMEOUT {
            for (i, m) in self.members.iter().enumerate() {
                if m.child.is_some() && self.healthy(i, Duration::from_millis(500)) {
                    return m.client;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "no healthy etcd member for {STARTUP_TIMEOUT:?}\n{}",
            self.log_tails()
        );
    }

    /// Puts `key = value` through any healthy member (optionally on `lease`).
    pub fn put(&self, key: &str, value: &str, lease: Option<i64>) -> Result<(), String> {
        let mut body =
            serde_json::json!({"key": b64(key.as_bytes()), "value": b64(value.as_bytes())});
        if let Some(l) = lease {
            body["lease"] = serde_json::json!(l.to_string());
        }
        put_via(self.any_port(), &body.to_string(), Duration::from_secs(5))
    }

    /// Puts through member `i` only, with `timeout` (fails without quorum).
    pub fn put_via(
        &self,
        i: usize,
        key: &str,
        value: &str,
        timeout: Duration,
    ) -> Result<(), String> {
        let body = serde_json::json!({"key": b64(key.as_bytes()), "value": b64(value.as_bytes())});
        put_via(self.members[i].client, &body.to_string(), timeout)
    }

    /// Grants a lease of `ttl` seconds; its id.
    pub fn lease_grant(&self, ttl: i64) -> Result<i64, String> {
        let (code, body) = http(
            self.any_port(),
            "POST",
            "/v3/lease/grant",
            &serde_json::json!({"TTL": ttl.to_string()}).to_string(),
            Duration::from_secs(5),
        )?;
        let v: serde_json::Value =
            serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        if code != 200 {
            return Err(format!("lease grant: HTTP {code}: {body}"));
        }
        v["ID"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("lease grant: no ID in {body}"))
    }

    /// The keys under `prefix`, in creation order (linearizable read through any healthy
    /// member).
    pub fn range_prefix(&self, prefix: &str) -> Result<Vec<Kv>, String> {
        range_prefix_via(self.any_port(), prefix, Duration::from_secs(5))
    }

    /// As [`Cluster::range_prefix`], through member `i` with `timeout`.
    pub fn range_prefix_via(
        &self,
        i: usize,
        prefix: &str,
        timeout: Duration,
    ) -> Result<Vec<Kv>, String> {
        range_prefix_via(self.members[i].client, prefix, timeout)
    }

    /// The cluster's directory (member data and logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
        if std::thread::panicking() {
            eprintln!(
                "etcd cluster logs (removed with {}):\n{}",
                self.dir.display(),
                self.log_tails()
            );
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One key as the gateway returns it.
#[derive(Debug, Clone)]
pub struct Kv {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
    /// The revision that created it.
    pub create_revision: i64,
    /// Its lease (0: none).
    pub lease: i64,
}

fn put_via(port: u16, body: &str, timeout: Duration) -> Result<(), String> {
    let (code, resp) = http(port, "POST", "/v3/kv/put", body, timeout)?;
    if code == 200 {
        Ok(())
    } else {
        Err(format!("put: HTTP {code}: {resp}"))
    }
}

fn range_prefix_via(port: u16, prefix: &str, timeout: Duration) -> Result<Vec<Kv>, String> {
    let body = serde_json::json!({
        "key": b64(prefix.as_bytes()),
        "range_end": b64(&prefix_end(prefix.as_bytes())),
        "sort_order": "ASCEND",
        "sort_target": "CREATE",
    });
    let (code, resp) = http(port, "POST", "/v3/kv/range", &body.to_string(), timeout)?;
    if code != 200 {
        return Err(format!("range: HTTP {code}: {resp}"));
    }
    let v: serde_json::Value = serde_json::from_str(&resp).map_err(|e| format!("{e}: {resp}"))?;
    let num = |x: &serde_json::Value| -> i64 {
        x.as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| x.as_i64())
            .unwrap_or(0)
    };
    let text = |x: &serde_json::Value| -> String {
        String::from_utf8_lossy(&unb64(x.as_str().unwrap_or(""))).into_owned()
    };
    Ok(v["kvs"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|kv| Kv {
                    key: text(&kv["key"]),
                    value: text(&kv["value"]),
                    create_revision: num(&kv["create_revision"]),
                    lease: num(&kv["lease"]),
                })
                .collect()
        })
        .unwrap_or_default())
}

/// The end of the key range with `prefix` (the prefix with its last byte below 0xff raised).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// One HTTP/1.1 request to 127.0.0.1:`port` with `Connection: close`; the status and body.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
    timeout: Duration,
) -> Result<(u16, String), String> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connect {port}: {e}"))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes())
        .map_err(|e| format!("write {port}: {e}"))?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp)
        .map_err(|e| format!("read {port}{path}: {e}"))?;
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let (head, rest) = resp
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP header end in {resp:?}"))?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("no status in {head:?}"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Ok((code, body))
}

/// The body of a chunked transfer encoding.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (what the gateway's JSON uses for bytes).
fn b64(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unb64(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let Some(v) = B64.iter().position(|&x| x == c) else {
            continue;
        };
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits & 0xff) as u8);
        }
    }
    out
}

/// The pids of `root` and all its descendants (from /proc), parents before children.
pub fn tree(root: i32) -> Vec<i32> {
    let mut parent: HashMap<i32, Vec<i32>> = HashMap::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // The command name in parentheses may hold spaces: fields after the last ')'.
            let Some(after) = stat.rsplit_once(')').map(|x| x.1) else {
                continue;
            };
            if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
                parent.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = parent.get(&out[i]) {
            out.extend(kids);
        }
        i += 1;
    }
    out
}

/// The processes of `root`'s tree that are not stopped (state other than `T`/`t`, read from
/// /proc/PID/stat; a process frozen by the cgroup v2 freezer shows its own state, `T` if it
/// was stopped before the freeze).
pub fn unstopped(root: i32) -> std::collections::HashSet<i32> {
    tree(root)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let state = stat
                    .rsplit_once(')')
                    .and_then(|x| x.1.split_whitespace().next())
                    .unwrap_or("");
                !matches!(state, "T" | "t")
            })
        })
        .collect()
}

/// Sends `sig` to `root` and every descendant, parents first, re-reading /proc until no new
/// descendant shows up (a process forked between two reads is caught by the next one).
pub fn signal_tree(root: i32, sig: i32) {
    let mut done = std::collections::HashSet::new();
    for _ in 0..5 {
        let mut new = false;
        for pid in tree(root) {
            if done.insert(pid) {
                new = true;
                // SAFETY: kill(2) has no memory effects; a pid already gone gives ESRCH.
                unsafe { libc::kill(pid, sig) };
            }
        }
        if !new {
            break;
        }
    }
}

/// One task as the logs show it: the host it ran on, an id unique in the run, and its begin
/// and end (CLOCK_MONOTONIC ns; `None`: no end line, e.g. its host was killed).
#[derive(Debug, Clone)]
pub struct Task {
    /// The simulated host (`THROTTLE_HOST`).
    pub host: String,
    /// The logging process and, for throttle-pool tasks, the task's number in that process.
    pub id: String,
    /// When it began.
    pub begin: u64,
    /// When it ended, if it logged its end.
    pub end: Option<u64>,
    /// For the tests' own logger: a CLOCK_MONOTONIC instant by which the job that runs it (the
    /// process make started for the recipe) had been created, from its start time in
    /// /proc (clock ticks, so up to one tick late). `None` for throttle-pool tasks.
    pub job_by: Option<u64>,
    /// For the tests' own logger: that job's pid.
    pub job_pid: Option<i32>,
}

/// Reads a task log. Two line formats: `begin HOST PID T` / `end HOST PID T` (the tests' own
/// logger, T in seconds with 9 decimals), and `S NS PID` / `E NS PID` (`throttle __tasks`,
/// whose host is `default_host`; a process's starts and ends are paired in order).
pub fn read_tasks(path: &Path, default_host: &str) -> Vec<Task> {
    let mut body = std::fs::read_to_string(path).unwrap_or_default();
    // A line still being appended while we read is left for the next read.
    body.truncate(body.rfind('\n').map_or(0, |i| i + 1));
    let mut open: HashMap<(String, String), Vec<usize>> = HashMap::new();
    let mut tasks: Vec<Task> = Vec::new();
    let mut serial = 0usize;
    for line in body.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (kind, host, pid, t) = match f.as_slice() {
            [k @ ("begin" | "end"), h, p, t, ..] if f.len() <= 6 => {
                let secs: f64 = t.parse().unwrap_or_else(|_| panic!("bad time in {line:?}"));
                (
                    *k == "begin",
                    h.to_string(),
                    p.to_string(),
                    (secs * 1e9) as u64,
                )
            }
            [k @ ("S" | "E"), ns, p] => (
                *k == "S",
                default_host.to_string(),
                p.to_string(),
                ns.parse()
                    .unwrap_or_else(|_| panic!("bad time in {line:?}")),
            ),
            _ => panic!("bad task log line {line:?} in {}", path.display()),
        };
        let key = (host.clone(), pid.clone());
        // `begin HOST PID T JOB_BY JOB_PID`: the last two fields as the tests' logger writes
        // them.
        let (job_by, job_pid) = match f.as_slice() {
            ["begin", _, _, _, j, jp] => (
                Some(
                    (j.parse::<f64>()
                        .unwrap_or_else(|_| panic!("bad job time in {line:?}"))
                        * 1e9) as u64,
                ),
                Some(
                    jp.parse::<i32>()
                        .unwrap_or_else(|_| panic!("bad job pid in {line:?}")),
                ),
            ),
            _ => (None, None),
        };
        if kind {
            serial += 1;
            open.entry(key).or_default().push(tasks.len());
            tasks.push(Task {
                host,
                id: format!("{pid}#{serial}"),
                begin: t,
                end: None,
                job_by,
                job_pid,
            });
        } else {
            let q = open
                .get_mut(&key)
                .unwrap_or_else(|| panic!("end without begin: {line:?}"));
            assert!(!q.is_empty(), "end without begin: {line:?}");
            let i = q.remove(0);
            tasks[i].end = Some(t);
        }
    }
    tasks
}

/// The most tasks running at once among `tasks`, and when (ns) that peak began. A task with
/// no end runs until `open_until` (the caller's kill time for its host, or the end of the run).
/// Ends sort before begins at the same instant (a slot handed on is not two slots).
pub fn max_concurrency(tasks: &[&Task], open_until: &dyn Fn(&Task) -> u64) -> (usize, u64) {
    let mut ev: Vec<(u64, i32)> = Vec::with_capacity(tasks.len() * 2);
    for t in tasks {
        let end = t.end.unwrap_or_else(|| open_until(t));
        ev.push((t.begin, 1));
        ev.push((end.max(t.begin), -1));
    }
    ev.sort();
    let (mut now, mut max, mut at) = (0i32, 0i32, 0u64);
    for (t, d) in ev {
        now += d;
        if now > max {
            max = now;
            at = t;
        }
    }
    (max as usize, at)
}

/// The tasks running at instant `at` (for a failure message).
pub fn running_at<'a>(
    tasks: &[&'a Task],
    at: u64,
    open_until: &dyn Fn(&Task) -> u64,
) -> Vec<&'a Task> {
    tasks
        .iter()
        .copied()
        .filter(|t| t.begin <= at && t.end.unwrap_or_else(|| open_until(t)) > at)
        .collect()
}

/// A simulated host frozen as a whole, like a paused VM or `docker pause`: the cgroup v2
/// freezer (`cgroup.freeze`). Unlike a SIGSTOP and SIGCONT to every process of the tree, a
/// freeze and a thaw leave each process's own stopped state alone: a command that
/// `throttle run` holds stopped is still stopped after the thaw, as after a real host's resume,
/// and nobody continued it from outside. Fatal signals still kill frozen processes (cgroup v2),
/// so a test that ends early leaves nothing frozen behind.
pub struct Freezer {
    dir: PathBuf,
    /// `<dir>/cgroup.procs` as a C string, for the child to join between fork and exec.
    procs: std::ffi::CString,
}

impl Freezer {
    /// A new, empty freezer group for `name` below this process's own cgroup v2 directory;
    /// `None` when there is no cgroup v2 hierarchy with a freezer this process may write to
    /// (then the tests freeze with signals).
    pub fn new(name: &str) -> Option<Freezer> {
        let mount = std::fs::read_to_string("/proc/self/mountinfo")
            .ok()?
            .lines()
            .find_map(|l| {
                let (pre, post) = l.split_once(" - ")?;
                (post.split_whitespace().next() == Some("cgroup2"))
                    .then(|| pre.split_whitespace().nth(4).map(PathBuf::from))?
            })?;
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("0::").map(str::to_string))?;
        let parent = mount.join(own.trim_start_matches('/'));
        // Once per test binary: the groups of dead test binaries do not come back.
        static STALE: std::sync::Once = std::sync::Once::new();
        STALE.call_once(|| Freezer::remove_stale(&parent));
        let dir = parent.join(format!("throttle-test-{}-{name}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let f = Freezer {
            procs: std::ffi::CString::new(dir.join("cgroup.procs").as_os_str().as_encoded_bytes())
                .ok()?,
            dir,
        };
        // A freezer this process can write, and a group a new process can join (cgroup v2
        // refuses that in some layouts, e.g. with controllers enabled below a cgroup that has
        // processes): tried with a child that exits at once. Otherwise `None` (dropping `f`
        // removes the group), and the tests freeze with signals.
        std::fs::write(f.dir.join("cgroup.freeze"), "0").ok()?;
        let mut probe = Command::new("true");
        probe.stdout(Stdio::null()).stderr(Stdio::null());
        f.join_in_child(&mut probe);
        probe.status().ok()?.success().then_some(f)
    }

    /// Removes the groups of test processes that died without dropping theirs (a test binary
    /// killed by a timeout): what is left in them is killed (`cgroup.kill`, which reaches
    /// frozen processes) and the groups removed.
    fn remove_stale(parent: &Path) {
        let Ok(entries) = std::fs::read_dir(parent) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix("throttle-test-")
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let _ = std::fs::write(e.path().join("cgroup.kill"), "1");
            for _ in 0..50 {
                if std::fs::remove_dir(e.path()).is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    /// Has the child started by `cmd` join this group before it execs (so everything it
    /// starts is in the group too).
    pub fn join_in_child(&self, cmd: &mut Command) {
        let procs = self.procs.clone();
        // SAFETY: the closure runs in the child between fork and exec and calls only open(2),
        // write(2) and close(2), which are async-signal-safe, on a path allocated before the
        // fork; "0" moves the writing process.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                if n != 1 {
                    return Err(err);
                }
                Ok(())
            });
        }
    }

    /// Freezes every process of the group and waits (at most 5 s) until the kernel reports
    /// them all frozen; false if it did not within that time.
    pub fn freeze(&self) -> bool {
        self.set(true)
    }

    /// Thaws the group and waits until the kernel reports it thawed.
    pub fn thaw(&self) -> bool {
        self.set(false)
    }

    fn set(&self, frozen: bool) -> bool {
        let want = if frozen { "frozen 1" } else { "frozen 0" };
        std::fs::write(
            self.dir.join("cgroup.freeze"),
            if frozen { "1" } else { "0" },
        )
        .expect("writing cgroup.freeze");
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            let events =
                std::fs::read_to_string(self.dir.join("cgroup.events")).unwrap_or_default();
            if events.lines().any(|l| l == want) {
                return true;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        false
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        // The host was killed and reaped before this runs, but processes its `throttle run`
        // left (make, reparented when it died) are not its descendants any more: kill what is
        // left in the group (`cgroup.kill` reaches frozen processes too), then remove it.
        let _ = std::fs::write(self.dir.join("cgroup.kill"), "1");
        let _ = std::fs::write(self.dir.join("cgroup.freeze"), "0");
        // The group can be removed once its processes are gone (they may take a moment).
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
