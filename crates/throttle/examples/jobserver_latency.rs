//! Token acquire + release between two processes, p50 and p99: this process runs a throttle
//! jobserver (`Server`, 2 slots: one token) and a child process takes and gives back the token
//! `ROUNDS` times, first through the fifo (what make, ninja and rustc do), then through the
//! server's crash-safe socket (what throttle programs under `throttle run` do: one round trip to
//! the server process per acquire). Timings are wall-clock and machine-dependent: on a shared
//! machine run it a few times.
//!
//! ```sh
//! cargo run --release -p throttle --example jobserver_latency
//! ```

use std::time::{Duration, Instant};
use throttle::{Jobserver, Server, Style};

const ROUNDS: usize = 20_000;

fn child(mut js: Jobserver, label: &str) {
    let mut ns = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let tok = js
            .acquire_timeout(Duration::from_secs(5))
            .expect("jobserver works")
            .expect("the one token is free");
        js.release(tok).expect("release");
        ns.push(t.elapsed().as_nanos() as u64);
    }
    ns.sort_unstable();
    let p = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
    println!(
        "{label:<28} p50 {:>7.2} µs   p99 {:>7.2} µs   max {:>8.1} µs   ({ROUNDS} acquire+release)",
        p(0.5),
        p(0.99),
        p(1.0)
    );
}

fn main() {
    if let Ok(auth) = std::env::var("LATENCY_CHILD_AUTH") {
        child(
            Jobserver::from_auth(&auth).expect("fifo"),
            "fifo (make protocol)",
        );
        return;
    }
    if let Ok(sock) = std::env::var("LATENCY_CHILD_SOCKET") {
        let js = Jobserver::connect(std::path::Path::new(&sock)).expect("socket");
        child(js, "socket (crash-safe)");
        return;
    }
    let server = Server::new(2, Style::Fifo).expect("server");
    let flags = server.makeflags();
    let auth = flags
        .split("--jobserver-auth=")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    let exe = std::env::current_exe().unwrap();
    for (k, v) in [
        ("LATENCY_CHILD_AUTH", auth),
        (
            "LATENCY_CHILD_SOCKET",
            server.socket_path().display().to_string(),
        ),
    ] {
        let st = std::process::Command::new(&exe).env(k, v).status().unwrap();
        assert!(st.success());
    }
    let back = server.settle(Duration::from_secs(2)).unwrap();
    println!("tokens back at the end: {back} of 1");
}
