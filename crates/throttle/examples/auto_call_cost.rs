//! What a short data-parallel call costs in auto mode, against the same loop written plainly:
//! the per-call price of the call-site memory ("if any at all", `throttle-controller/src/README.md`).
//!
//! ```sh
//! cargo run --release -p throttle --example auto_call_cost -- 5000000 auto 1
//! cargo run --release -p throttle --example auto_call_cost -- 5000000 iter 1
//! cargo run --release -p throttle --example auto_call_cost -- 5000000 plain 1
//! ```
//!
//! Arguments: calls to time, the way to call, and `L`, the spin iterations of each of the 16
//! jobs of a call. The ways: `auto`, `Pool::for_range(0..16, ..)` on an auto pool of 2 threads;
//! `iter`, `(0..16).into_par_iter().for_each(..)` from the main thread with the global pool
//! built in auto mode with 2 threads (what `THROTTLE_AUTO=1` gives a rayon program); `plain`,
//! `(0..16).for_each(..)`. Prints nanoseconds per call. The site is learnt first (200 000
//! calls, not timed), so the timed calls are the site's settled choice: serial, with an
//! exploration now and then.
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
use throttle::prelude::*;

/// `n` dependent steps that the compiler cannot fold.
fn spin(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        x = std::hint::black_box(x.wrapping_add(i));
    }
    x
}

/// How a call is made (the example's second argument).
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// `Pool::for_range` on an auto pool.
    Auto,
    /// A parallel iterator from outside any pool, the global pool in auto mode.
    Iter,
    /// A plain loop.
    Plain,
}

/// Makes 200 000 calls of `call` to learn its site, then `calls` timed ones; the time per
/// timed call in ns. Each way's call is one closure, so the learning and the timed calls are
/// the same call site.
fn per_call(calls: u64, call: impl Fn()) -> f64 {
    for _ in 0..200_000 {
        call();
    }
    let t = Instant::now();
    for _ in 0..calls {
        call();
    }
    t.elapsed().as_nanos() as f64 / calls.max(1) as f64
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: auto_call_cost CALLS auto|iter|plain [L]";
    let Some(calls) = args.first().and_then(|s| s.parse::<u64>().ok()) else {
        eprintln!("{usage}: CALLS must be a whole number");
        return ExitCode::from(2);
    };
    let (way, name) = match args.get(1).map(String::as_str) {
        Some(n @ "auto") => (Way::Auto, n),
        Some(n @ "iter") => (Way::Iter, n),
        Some(n @ "plain") => (Way::Plain, n),
        _ => {
            eprintln!("{usage}: the second argument must be auto, iter or plain");
            return ExitCode::from(2);
        }
    };
    let Some(len) = args.get(2).map_or(Some(1), |s| s.parse::<u64>().ok()) else {
        eprintln!("{usage}: L must be a whole number");
        return ExitCode::from(2);
    };
    let builder = throttle::Pool::builder().threads(2).auto_concurrency();
    let local = if way == Way::Iter {
        builder.build_global().map(|()| None)
    } else {
        builder.build().map(Some)
    };
    let pool = match local {
        Ok(Some(ref pool)) => Ok(pool),
        Ok(None) => throttle::global_pool(),
        Err(e) => Err(e),
    };
    let pool = match pool {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("auto_call_cost: {e}");
            return ExitCode::FAILURE;
        }
    };
    let body = |_: usize| {
        std::hint::black_box(spin(len));
    };
    let ns = match way {
        Way::Auto => per_call(calls, || pool.for_range(0..16, body)),
        Way::Iter => per_call(calls, || (0..16usize).into_par_iter().for_each(body)),
        Way::Plain => per_call(calls, || (0..16).for_each(body)),
    };
    println!(
        "{name} L={len}: {ns:.1} ns per call ({} serial calls of the pool so far)",
        pool.stats().serial_calls
    );
    ExitCode::SUCCESS
}
