//! The library against ONE real etcd on loopback (temporary data directory, ports held for it,
//! killed at the end): acquire and release, N mismatch, status, FIFO order across "hosts" (separate
//! leases), and a lease lost while etcd is stopped. The 3-member cluster and the fault runs are
//! `crates/throttle-cli/tests/cluster_budget.rs`.
//!
//! etcd is `THROTTLE_ETCD_BIN` or `etcd` on PATH; without it each test prints "skipped" and
//! passes, unless `THROTTLE_REQUIRE_ETCD=1`, where it fails.
#![cfg(feature = "etcd")]

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use throttle_budget::{BudgetUrl, ErrorKind, EtcdBudget, Options};

/// How long a test waits for a condition before it gives up: a guard against a hang, never a
/// bound on how fast anything must be (a loaded machine may be slow, not this slow).
const HANG_GUARD: Duration = Duration::from_secs(120);

/// One etcd member on two loopback ports held for it; killed and its directory removed on drop.
struct Etcd {
    child: Child,
    dir: std::path::PathBuf,
    client_port: u16,
    _ports: [HeldPort; 2],
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port held as long as the value lives: a socket bound to it with SO_REUSEADDR that
/// never listens. The kernel hands the port to no one else (not to a `bind` to port 0, nor as
/// the local port of a connection), while etcd, whose listeners set SO_REUSEADDR too, can bind
/// and listen on it; a connection to it is refused while nothing listens.
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

fn etcd_bin() -> Option<String> {
    if let Ok(b) = std::env::var("THROTTLE_ETCD_BIN") {
        return Some(b);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("etcd"))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
}

/// Starts etcd, or None (test skipped) when it is not installed and not required.
fn start_etcd(tag: &str) -> Option<Etcd> {
    let Some(bin) = etcd_bin() else {
        assert!(
            std::env::var("THROTTLE_REQUIRE_ETCD").as_deref() != Ok("1"),
            "THROTTLE_REQUIRE_ETCD=1 but etcd is not on PATH (set THROTTLE_ETCD_BIN)"
        );
        eprintln!("skipped: etcd not on PATH");
        return None;
    };
    let ports = [hold_port(), hold_port()];
    let (cp, pp) = (ports[0].port, ports[1].port);
    let dir = std::env::temp_dir().join(format!(
        "throttle-budget-test-{}-{tag}-{cp}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let client = format!("http://127.0.0.1:{cp}");
    let peer = format!("http://127.0.0.1:{pp}");
    let log = std::fs::File::create(dir.join("etcd.log")).unwrap();
    let child = Command::new(bin)
        .args(["--name", "m0", "--data-dir"])
        .arg(dir.join("data"))
        .args([
            "--listen-client-urls",
            &client,
            "--advertise-client-urls",
            &client,
        ])
        .args([
            "--listen-peer-urls",
            &peer,
            "--initial-advertise-peer-urls",
            &peer,
        ])
        .args(["--initial-cluster", &format!("m0={peer}")])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("starting etcd");
    let etcd = Etcd {
        child,
        dir,
        client_port: cp,
        _ports: ports,
    };
    // Ready when a status read answers; bounded.
    let start = Instant::now();
    loop {
        if throttle_budget::status(&etcd.url("ready")).is_ok() {
            return Some(etcd);
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "etcd did not answer within {HANG_GUARD:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Etcd {
    fn url(&self, name: &str) -> BudgetUrl {
        format!("etcd://127.0.0.1:{}/{name}", self.client_port)
            .parse()
            .unwrap()
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own child's pid; it cannot affect this process's memory.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }
}

fn opts(host: &str) -> Options {
    Options::default()
        .with_host(host)
        .with_ttl(Duration::from_secs(3))
}

/// Waits until `f` holds; panics naming `what` after [`HANG_GUARD`].
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < HANG_GUARD,
            "not within {HANG_GUARD:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn acquire_release_mismatch_and_status() {
    let Some(etcd) = start_etcd("basic") else {
        return;
    };
    let url = etcd.url("basic");
    let budget = EtcdBudget::connect(&url, 2, opts("h1")).unwrap();
    let a = budget.acquire().unwrap();
    let b = budget.acquire().unwrap();
    assert!(a.is_valid() && b.is_valid());
    assert!(a.valid_until().unwrap() > Instant::now());
    let st = budget.status().unwrap();
    assert_eq!((st.slots, st.in_use, st.waiters.len()), (2, 2, 0));
    assert_eq!(st.holders[0].host, "h1");
    assert_eq!(st.holders[0].pid, std::process::id());
    assert_eq!(st.holders[0].key, a.key());
    assert_eq!(st.holders[1].key, b.key());

    // Full: a bounded wait gives up, and its waiting key goes.
    assert!(budget
        .try_acquire_for(Duration::from_millis(300))
        .unwrap()
        .is_none());
    eventually("the timed-out waiter's key is deleted", || {
        budget.status().unwrap().waiters.is_empty()
    });

    // Another N for the same budget: refused, one line.
    let e = EtcdBudget::connect(&url, 3, opts("h2")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Mismatch);
    assert_eq!(e.to_string(), "budget basic has N=2 slots in etcd, not 3");

    // A waiter on another lease is served when a slot is released.
    let other = EtcdBudget::connect(&url, 2, opts("h2")).unwrap();
    let t = std::thread::spawn(move || {
        let s = other.acquire().unwrap();
        let host = other
            .status()
            .unwrap()
            .holders
            .iter()
            .any(|h| h.host == "h2");
        (s.is_valid(), host)
    });
    eventually("h2 waits", || budget.status().unwrap().waiters.len() == 1);
    drop(a);
    let (valid, seen) = t.join().unwrap();
    assert!(valid && seen);
    drop(b);
    eventually("all keys gone", || budget.status().unwrap().in_use == 0);
    // The status read without joining.
    let st = throttle_budget::status(&url).unwrap();
    assert_eq!((st.name.as_str(), st.slots, st.in_use), ("basic", 2, 0));
}

#[test]
fn unreachable_and_bad_options_are_one_line_errors() {
    // Held and never listened on: every connection to it is refused.
    let nobody = hold_port();
    let url: BudgetUrl = format!("etcd://127.0.0.1:{}/x", nobody.port)
        .parse()
        .unwrap();
    let mut o = opts("h");
    o.connect_timeout = Duration::from_secs(1);
    // Gives up after its 1 s connect timeout: in its own thread, so that a connect that never
    // gave up would fail the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let (u, opt) = (url.clone(), o.clone());
    std::thread::spawn(move || {
        let _ = tx.send(EtcdBudget::connect(&u, 2, opt).map(drop));
    });
    let e = rx
        .recv_timeout(HANG_GUARD)
        .expect("connect with a 1 s timeout returns")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(
        e.to_string().contains("cannot reach the etcd cluster"),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
    let e = EtcdBudget::connect(&url, 0, o.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadOptions);
    let e = EtcdBudget::connect(&url, 1, o.clone().with_ttl(Duration::from_secs(1))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadOptions);
    // 2 s is refused: its renewal slack would be 0.67 s.
    let e = EtcdBudget::connect(&url, 1, o.with_ttl(Duration::from_secs(2))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadOptions);
    assert!(e.to_string().contains("at least 3 s"), "{e}");
}

#[test]
fn waiters_on_many_leases_are_served_in_arrival_order() {
    let Some(etcd) = start_etcd("fifo") else {
        return;
    };
    let url = etcd.url("fifo");
    let first = EtcdBudget::connect(&url, 1, opts("h0")).unwrap();
    let held = first.acquire().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let mut threads = Vec::new();
    for i in 0..5 {
        let (url, order, running, peak) =
            (url.clone(), order.clone(), running.clone(), peak.clone());
        threads.push(std::thread::spawn(move || {
            let b = EtcdBudget::connect(&url, 1, opts(&format!("h{}", i + 1))).unwrap();
            let slot = b.acquire().unwrap();
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            order.lock().unwrap().push(i);
            std::thread::sleep(Duration::from_millis(30));
            running.fetch_sub(1, Ordering::SeqCst);
            drop(slot);
            // Keep the lease until the slot's delete went out (dropping `b` revokes it anyway).
        }));
        // The next one arrives only after this one queues.
        eventually("the waiter queues", || {
            first.status().unwrap().waiters.len() == i + 1
        });
    }
    let st = first.status().unwrap();
    let hosts: Vec<&str> = st.waiters.iter().map(|w| w.host.as_str()).collect();
    assert_eq!(hosts, ["h1", "h2", "h3", "h4", "h5"]);
    drop(held);
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
    assert_eq!(peak.load(Ordering::SeqCst), 1);
}

#[test]
fn a_lease_that_cannot_be_renewed_stops_being_trusted_and_is_replaced() {
    let Some(etcd) = start_etcd("lost") else {
        return;
    };
    let url = etcd.url("lost");
    let budget = EtcdBudget::connect(&url, 1, opts("h1")).unwrap();
    let slot = budget.acquire().unwrap();
    let epoch = budget.lease().epoch;
    etcd.signal(libc::SIGSTOP);
    let mut last_trusted_until = None;
    eventually("the slot stops being valid", || {
        let valid = slot.is_valid();
        if valid {
            last_trusted_until = slot.valid_until();
        }
        !valid
    });
    // It turned invalid no later than its last published trust end (never after it).
    if let Some(until) = last_trusted_until {
        assert!(Instant::now() >= until || budget.lease().epoch != epoch);
    }
    eventually("the lease is given up", || budget.lease().lost.is_some());
    assert!(!budget.lease().trusted);
    etcd.signal(libc::SIGCONT);
    eventually("a new lease", || budget.lease().trusted);
    assert!(budget.lease().epoch > epoch);
    assert!(!slot.is_valid(), "a slot of a lost lease never comes back");
    drop(slot);
    let again = budget.try_acquire_for(HANG_GUARD).unwrap();
    assert!(again.is_some_and(|s| s.is_valid()));
}
