//! What a short `for_range` call costs in auto mode, against the same loop written plainly: the
//! per-call price of the call-site memory ("if any at all", `controller/README.md`).
//!
//! ```sh
//! cargo run --release -p throttle --example auto_call_cost -- 5000000 auto 1
//! cargo run --release -p throttle --example auto_call_cost -- 5000000 plain 1
//! ```
//!
//! Arguments: calls to time, `auto` or `plain`, and `L`, the spin iterations of each of the 16
//! jobs of a call. Prints nanoseconds per call. An auto pool of 2 threads learns the site
//! first (200 000 calls, not timed), so the timed calls are the site's settled choice:
//! serial, with an exploration now and then.
//!
//! Instructions per call, which do not move with the host's load: run it under callgrind with
//! two call counts and take the difference of the calling thread's totals, divided by the
//! difference of the counts (the learning calls and the start-up cancel out):
//!
//! ```sh
//! valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=a \
//!     target/release/examples/auto_call_cost 100000 auto 1
//! valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=b \
//!     target/release/examples/auto_call_cost 300000 auto 1
//! # (totals of b-01 − totals of a-01) ÷ 200 000
//! ```

use std::process::ExitCode;
use std::time::Instant;

/// `n` dependent steps that the compiler cannot fold.
fn spin(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        x = std::hint::black_box(x.wrapping_add(i));
    }
    x
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: auto_call_cost CALLS auto|plain [L]";
    let Some(calls) = args.first().and_then(|s| s.parse::<u64>().ok()) else {
        eprintln!("{usage}: CALLS must be a whole number");
        return ExitCode::from(2);
    };
    let auto = match args.get(1).map(String::as_str) {
        Some("auto") => true,
        Some("plain") => false,
        _ => {
            eprintln!("{usage}: the second argument must be auto or plain");
            return ExitCode::from(2);
        }
    };
    let Some(len) = args.get(2).map_or(Some(1), |s| s.parse::<u64>().ok()) else {
        eprintln!("{usage}: L must be a whole number");
        return ExitCode::from(2);
    };
    let pool = match throttle::Pool::builder()
        .threads(2)
        .auto_concurrency()
        .build()
    {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("auto_call_cost: {e}");
            return ExitCode::FAILURE;
        }
    };
    let body = |_: usize| {
        std::hint::black_box(spin(len));
    };
    for _ in 0..200_000 {
        pool.for_range(0..16, body);
    }
    let t = Instant::now();
    if auto {
        for _ in 0..calls {
            pool.for_range(0..16, body);
        }
    } else {
        for _ in 0..calls {
            (0..16).for_each(body);
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / calls.max(1) as f64;
    println!(
        "{} L={len}: {ns:.1} ns per call ({} serial calls of the site so far)",
        if auto { "auto" } else { "plain" },
        pool.stats().serial_calls
    );
    ExitCode::SUCCESS
}
