//! `Throttle` backed by a jobserver, against real jobservers made in the test: the `jobserver`
//! crate's pipe server (an independent implementation of make's protocol) and throttle's own
//! server through its crash-safe socket. Permits beyond the implicit slot are tokens: read when
//! taken, written back when dropped (also on panic), never the implicit slot.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use throttle::{Jobserver, Server, Style, Throttle};

/// The `--jobserver-auth` value a `jobserver` crate server gives its children.
fn crate_auth(client: &jobserver::Client) -> String {
    let mut cmd = std::process::Command::new("true");
    client.configure_make(&mut cmd);
    let flags = cmd
        .get_envs()
        .find(|(k, _)| *k == "MAKEFLAGS")
        .and_then(|(_, v)| v)
        .expect("configure_make sets MAKEFLAGS")
        .to_string_lossy()
        .into_owned();
    flags
        .split("--jobserver-auth=")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .expect("an auth value")
        .to_string()
}

/// `threads` threads take a permit `rounds` times each and spin briefly inside; returns the
/// most holders seen at once.
fn max_holders(gate: &Throttle, threads: usize, rounds: usize) -> usize {
    let inside = AtomicUsize::new(0);
    let max = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..rounds {
                    let _p = gate.acquire();
                    let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    max.fetch_max(n, Ordering::SeqCst);
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_micros(200) {
                        std::hint::spin_loop();
                    }
                    inside.fetch_sub(1, Ordering::SeqCst);
                }
            });
        }
    });
    max.load(Ordering::SeqCst)
}

#[test]
fn permits_beyond_the_implicit_slot_are_tokens_of_a_make_style_pipe_jobserver() {
    // 2 tokens: at most 1 + 2 = 3 permits, although the throttle's own limit is 8.
    let server = jobserver::Client::new(2).unwrap();
    let gate = Throttle::with_jobserver(8, Jobserver::from_auth(&crate_auth(&server)).unwrap());
    let max = max_holders(&gate, 6, 30);
    assert!(max <= 3, "{max} holders under 1 + 2 tokens");
    // Every token is back and nothing more: the implicit slot is never written.
    assert_eq!(gate.jobserver_tokens(), Some(0));
    assert_eq!(server.available().unwrap(), 2);
    // A token another client holds is not the throttle's to use.
    let held = server.acquire().unwrap();
    let max = max_holders(&gate, 6, 10);
    assert!(max <= 2, "{max} holders with one of the two tokens taken");
    drop(held);
    assert_eq!(server.available().unwrap(), 2);
}

#[test]
fn the_throttles_own_limit_caps_the_tokens_it_reads() {
    let server = jobserver::Client::new(4).unwrap();
    let gate = Throttle::with_jobserver(2, Jobserver::from_auth(&crate_auth(&server)).unwrap());
    let a = gate.acquire();
    let b = gate.acquire();
    assert!(gate.try_acquire().is_none(), "limit 2");
    assert_eq!(
        gate.jobserver_tokens(),
        Some(1),
        "one token, one implicit slot"
    );
    assert_eq!(server.available().unwrap(), 3);
    drop((a, b));
    assert_eq!(server.available().unwrap(), 4);
}

#[test]
fn a_panicking_holder_gives_its_token_back() {
    let server = jobserver::Client::new(1).unwrap();
    let gate = Throttle::with_jobserver(4, Jobserver::from_auth(&crate_auth(&server)).unwrap());
    let implicit = gate.acquire();
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            let _token = gate.acquire();
            assert_eq!(gate.jobserver_tokens(), Some(1));
            panic!("a task fails while holding a token");
        })
        .join()
    });
    assert!(r.is_err(), "the thread panicked");
    assert_eq!(gate.jobserver_tokens(), Some(0));
    assert_eq!(
        server.available().unwrap(),
        1,
        "the token went back on unwind"
    );
    drop(implicit);
    assert_eq!(
        server.available().unwrap(),
        1,
        "the implicit slot is not written"
    );
}

#[test]
fn a_waiter_takes_a_released_implicit_slot_or_a_token_whichever_comes_first() {
    let server = jobserver::Client::new(1).unwrap();
    let gate = Throttle::with_jobserver(4, Jobserver::from_auth(&crate_auth(&server)).unwrap());
    let other = server.acquire().unwrap(); // another process holds the only token
    let implicit = gate.acquire();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let _p = gate.acquire();
            gate.jobserver_tokens()
        });
        while gate.waiting() == 0 {
            std::thread::yield_now();
        }
        drop(implicit); // handed over: the waiter runs on the implicit slot, no token read
        assert_eq!(waiter.join().unwrap(), Some(0));
    });
    drop(other);
    assert_eq!(server.available().unwrap(), 1);
}

#[test]
fn through_a_throttle_servers_socket_tokens_are_held_crash_safe() {
    let server = Server::new(3, Style::Pipe).unwrap();
    let gate = Throttle::with_jobserver(8, Jobserver::connect(server.socket_path()).unwrap());
    let max = max_holders(&gate, 5, 20);
    assert!(max <= 3, "{max}");
    assert_eq!(gate.jobserver_tokens(), Some(0));
    drop(gate);
    // Waits (a hang guard) until the server has seen the connection close.
    assert_eq!(server.settle(Duration::from_secs(120)).unwrap(), 2);
}

#[test]
fn a_fifo_nobody_serves_leaves_the_implicit_slot_and_never_hangs() {
    let dir = std::env::temp_dir().join(format!("throttle-gate-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let gate = Throttle::with_jobserver(
        4,
        Jobserver::from_auth(&format!("fifo:{}", fifo.display())).unwrap(),
    );
    let a = gate.acquire();
    assert!(gate.acquire_timeout(Duration::from_millis(20)).is_none());
    assert_eq!(gate.waiting(), 0);
    drop(a);
    drop(gate.acquire());
    std::fs::remove_dir_all(&dir).unwrap();
}
