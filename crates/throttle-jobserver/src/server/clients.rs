//! The socket side of the server: one thread accepts connections, one thread per connection
//! serves a throttle client (requests, grants, releases, and on EOF everything it still held
//! back) or answers one control line (`status`, `resize N`). The ledger that makes a client's
//! tokens come back however it dies: `../ledger.rs`; the proof: `../README.md`.

use super::tokens::{give_back, resize, status, Inner, POLL};
use crate::ledger::ClientLedger;
use crate::lock;
use crate::sys;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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

pub(super) fn accept_loop(listener: &UnixListener, inner: &Arc<Inner>) {
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

/// One throttle client: requests in, grants out, releases given back (`tokens::give_back`: into
/// the fifo or pipe, or out of circulation past the owner's deadline or limit), and on EOF (the
/// client exited or was killed) everything it still held given back the same way.
fn serve_client(mut conn: UnixStream, inner: &Arc<Inner>, held: &AtomicUsize) {
    let mut ledger = ClientLedger::default();
    let mut inbox: Vec<u8> = Vec::new();
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
                            give_back(inner, inbox[1]);
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
        give_back(inner, b);
    }
    held.store(0, Ordering::Relaxed);
}
