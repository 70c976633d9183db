//! `--instructions`: what one fork costs, in instructions, on one thread.
//!
//! Wall time on a shared 2-CPU VM moves by ±20–40 % between runs and with the binary's layout,
//! which hides the 5–10 % steps in which a fork path gets cheaper. Instructions do not move:
//! callgrind counts them exactly. This mode re-runs the binary under
//! `valgrind --tool=callgrind` once per workload and system (the child side is
//! [`child_main`]), counts only the instructions executed inside the workload's root call
//! (`--toggle-collect` on a root function per system, so pool start-up, sleeping workers and
//! chili's heartbeat thread are left out), and divides by the number of joins. `serial` is the
//! same recursion without a join, so a system's figure minus `serial`'s is what its fork adds.
//!
//! Instructions are not time (on this host throttle's fork takes about 1.5 × the floor's
//! instructions and 1.6–2 × its time), but they are the one measure of the fork path that is
//! the same on every run. Every system runs on a pool of one thread, where nothing is stolen,
//! so each join takes the owner's fast path. chili's count is the exception: its heartbeat is a
//! timer, which fires far more often per join under callgrind's slowdown than natively, so its
//! figure is an upper bound (49 instructions per join at fib(22), 55 at fib(18)).

use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use throttle_workloads::fib::fib_serial;
use throttle_workloads::tree::{sum_serial, Node};

use super::fib::{fib_chili, fib_rayon, fib_throttle, fib_throttle_cx};
use super::floor::{fib_floor, sum_floor, Floor};
use super::peers;
use super::tree_sum::{sum_chili, sum_rayon, sum_throttle, sum_throttle_cx, FLOOR};
use crate::harness::check;

/// Set (to `NAME WORKLOAD SIZE`, `NAME` the second field of [`SYSTEMS`]) when this binary runs
/// as the counted child.
const CHILD_ENV: &str = "THROTTLE_BENCH_INSTRUCTIONS_CHILD";

/// The systems, in the table's order (`serial` first: the work without a fork), each with the
/// name its counted entry points end in (`counted_fib_<name>`, `counted_sum_<name>`).
const SYSTEMS: [(&str, &str); 6] = [
    ("serial", "serial"),
    (FLOOR, "floor"),
    ("throttle", "throttle"),
    ("throttle cx", "throttle_cx"),
    ("chili", "chili"),
    ("rayon", "rayon"),
];

/// `fib(n)` and the tree's depth: 28 656 and 32 767 joins, a few seconds under callgrind.
const FIB_N: u32 = 22;
const TREE_DEPTH: u32 = 15;
/// Under `--quick`: 4 180 and 4 095 joins.
const QUICK_FIB_N: u32 = 18;
const QUICK_TREE_DEPTH: u32 = 12;

/// One workload's counted entry points, one per system.
struct Workload<T> {
    /// What their names start with after `counted_`.
    prefix: &'static str,
    serial: fn(T) -> u64,
    floor: fn(&Floor, T) -> u64,
    throttle: fn(T) -> u64,
    throttle_cx: fn(&throttle::Context, T) -> u64,
    chili: fn(&mut chili::Scope<'_>, T) -> u64,
    rayon: fn(T) -> u64,
}

const FIB: Workload<u32> = Workload {
    prefix: "fib",
    serial: counted_fib_serial,
    floor: counted_fib_floor,
    throttle: counted_fib_throttle,
    throttle_cx: counted_fib_throttle_cx,
    chili: counted_fib_chili,
    rayon: counted_fib_rayon,
};

/// The tree's entry points, for a tree that lives `'a`.
fn tree_sum<'a>() -> Workload<&'a Node> {
    Workload {
        prefix: "sum",
        serial: counted_sum_serial,
        floor: counted_sum_floor,
        throttle: counted_sum_throttle,
        throttle_cx: counted_sum_throttle_cx,
        chili: counted_sum_chili,
        rayon: counted_sum_rayon,
    }
}

impl<T: Copy + Send + Sync> Workload<T> {
    /// Builds the pool of the system named `name` (not counted: callgrind counts only inside
    /// the entry point) and runs the workload on `input` through its entry point.
    fn run(&self, name: &str, input: T) -> Result<u64> {
        Ok(match name {
            "serial" => (self.serial)(input),
            "floor" => (self.floor)(&Floor::new(), input),
            "throttle" => peers::throttle_pool(1)?.install(|| (self.throttle)(input)),
            "throttle_cx" => {
                peers::throttle_pool(1)?.install_cx(|cx| (self.throttle_cx)(cx, input))
            }
            "chili" => (self.chili)(&mut peers::chili_pool(1)?.scope(), input),
            "rayon" => peers::rayon_pool(1)?.install(|| (self.rayon)(input)),
            other => bail!("unknown system {other}"),
        })
    }

    /// callgrind's `--toggle-collect` pattern for the entry point of the system named `name`:
    /// anchored at both ends, so `throttle`'s does not also match `throttle_cx`'s.
    fn toggle(&self, name: &str) -> String {
        format!("*::counted_{}_{name}", self.prefix)
    }
}

// One counted entry point per system and workload, never inlined and not recursive (callgrind
// toggles collection on each entry and exit of a toggled function, so a recursive one would
// switch it off again one level down): the pool is built outside it, the work runs inside it,
// on whichever thread runs it.
macro_rules! counted {
    ($($name:ident($($arg:ident: $ty:ty),*) => $body:expr;)*) => {
        $(
            #[inline(never)]
            fn $name($($arg: $ty),*) -> u64 {
                // Through `black_box`, so the call below is a call, not a tail jump that
                // would leave this frame (and callgrind's toggle) before the work runs.
                std::hint::black_box($body)
            }
        )*
    };
}

counted! {
    counted_fib_serial(n: u32) => fib_serial(n);
    counted_fib_floor(f: &Floor, n: u32) => fib_floor(f, n);
    counted_fib_throttle(n: u32) => fib_throttle(n);
    counted_fib_throttle_cx(cx: &throttle::Context, n: u32) => fib_throttle_cx(cx, n);
    counted_fib_chili(s: &mut chili::Scope<'_>, n: u32) => fib_chili(n, s);
    counted_fib_rayon(n: u32) => fib_rayon(n);
    counted_sum_serial(tree: &Node) => sum_serial(tree);
    counted_sum_floor(f: &Floor, tree: &Node) => sum_floor(f, tree);
    counted_sum_throttle(tree: &Node) => sum_throttle(tree);
    counted_sum_throttle_cx(cx: &throttle::Context, tree: &Node) => sum_throttle_cx(cx, tree);
    counted_sum_chili(s: &mut chili::Scope<'_>, tree: &Node) => sum_chili(tree, s);
    counted_sum_rayon(tree: &Node) => sum_rayon(tree);
}

/// Runs the counted child if this process is one: the workload once, its answer checked.
pub fn child_main() -> Option<ExitCode> {
    let spec = std::env::var(CHILD_ENV).ok()?;
    Some(match child(&spec) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: instruction-count child: {e:#}");
            ExitCode::FAILURE
        }
    })
}

fn child(spec: &str) -> Result<()> {
    let mut words = spec.split(' ');
    let (Some(name), Some(workload), Some(size), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        bail!("malformed spec {spec:?}");
    };
    let size: u32 = size.parse().context("size")?;
    match workload {
        "fib" => check(name, FIB.run(name, size)?, fib_serial(size)),
        "tree_sum" => {
            let tree = Node::tree(size);
            check(name, tree_sum().run(name, &tree)?, Node::expected_sum(size))
        }
        other => bail!("unknown workload {other}"),
    }
}

/// Joins in `fib(n)` (one per call with `n ≥ 2`) and in a tree of `depth` levels (one per node).
fn joins(workload: &str, size: u32) -> u64 {
    match workload {
        "fib" => fib_serial(size + 1) - 1,
        _ => (1u64 << size) - 1,
    }
}

/// Counts the instructions of the system whose entry points end in `name` on `workload` under
/// callgrind, inside the entry point that `toggle` matches.
fn count(
    exe: &std::path::Path,
    workload: &str,
    name: &str,
    toggle: &str,
    size: u32,
) -> Result<u64> {
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--callgrind-out-file=/dev/null")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={toggle}"))
        .arg(exe)
        .env(CHILD_ENV, format!("{name} {workload} {size}"))
        .output()
        .context("running valgrind")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("valgrind on {name} {workload} failed: {}", stderr.trim());
    }
    let collected = stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected :")
                .map(|(_, n)| n.trim().to_string())
        })
        .with_context(|| format!("no count in callgrind's output: {}", stderr.trim()))?;
    let n: u64 = collected.parse().context("callgrind's count")?;
    if n == 0 {
        bail!("callgrind counted nothing for {name} {workload} (a toggle pattern that matches no function)");
    }
    Ok(n)
}

/// One row of the table.
struct Row {
    system: &'static str,
    per_join: f64,
}

/// Runs the mode: prints, per workload, instructions per join of each system, what its fork
/// adds to serial's, and the ratios to the floor and to chili. `Ok(false)` when valgrind is
/// missing (said on one line; nothing else is measured).
pub fn run(quick: bool) -> Result<bool> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!(
            "instructions: valgrind not found on PATH; install it (Debian: apt-get install valgrind) to count instructions"
        );
        return Ok(false);
    }
    let exe = std::env::current_exe().context("finding this binary")?;
    let (n, depth) = if quick {
        (QUICK_FIB_N, QUICK_TREE_DEPTH)
    } else {
        (FIB_N, TREE_DEPTH)
    };
    for (workload, size, what) in [
        ("fib", n, format!("fib({n})")),
        ("tree_sum", depth, format!("tree_sum, depth {depth}")),
    ] {
        let joins = joins(workload, size);
        let mut rows = Vec::new();
        for (system, name) in SYSTEMS {
            let toggle = match workload {
                "fib" => FIB.toggle(name),
                _ => tree_sum().toggle(name),
            };
            let total = count(&exe, workload, name, &toggle, size)?;
            rows.push(Row {
                system,
                per_join: total as f64 / joins as f64,
            });
        }
        print!("{}", render(&what, joins, &rows));
    }
    Ok(true)
}

fn render(what: &str, joins: u64, rows: &[Row]) -> String {
    use std::fmt::Write as _;
    let of = |name: &str| rows.iter().find(|r| r.system == name).map(|r| r.per_join);
    let serial = of("serial").unwrap_or(0.0);
    let floor = of(FLOOR);
    let chili = of("chili");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== instructions — {what}, {joins} joins, 1 thread, callgrind"
    );
    let _ = writeln!(
        out,
        "{:<28} {:>12} {:>14} {:>10} {:>10}",
        "system", "per join", "fork adds", "÷ floor", "÷ chili"
    );
    for r in rows {
        let ratio =
            |base: Option<f64>| base.map_or("-".into(), |b| format!("{:.2}", r.per_join / b));
        let _ = writeln!(
            out,
            "{:<28} {:>12.1} {:>14} {:>10} {:>10}",
            r.system,
            r.per_join,
            if r.system == "serial" {
                "-".to_string()
            } else {
                format!("{:.1}", r.per_join - serial)
            },
            ratio(floor),
            ratio(chili)
        );
    }
    let _ = writeln!(
        out,
        "note: exact and the same on every run, but for chili: its heartbeat is a timer, and \
         callgrind's slowdown makes it fire far more often per join than natively, so chili's \
         figure is an upper bound of its native one"
    );
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_counts_match_the_recursions() {
        // fib(n) joins once per call with n ≥ 2.
        fn calls(n: u32) -> u64 {
            if n < 2 {
                0
            } else {
                1 + calls(n - 1) + calls(n - 2)
            }
        }
        for n in [2, 5, 18, 22] {
            assert_eq!(joins("fib", n), calls(n), "fib({n})");
        }
        assert_eq!(joins("tree_sum", 3), 7);
    }
}
