//! cargo as the jobserver: `cargo build -j2` of a small workspace whose two build scripts each run
//! 4-thread throttle pools (the global pool, which joins `CARGO_MAKEFLAGS` by default). Every task
//! logs its start and stop; at no instant may more than 2 tasks run, machine-wide. Builds the
//! runtime once more in a temporary target directory, so it takes a while: ignored by default,
//! run by `.ci/run`.

use std::path::Path;
use std::process::Command;

const BUILD_RS: &str = r#"
use std::io::Write;
fn now() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let log = std::env::var("THROTTLE_INTEROP_LOG").unwrap();
    let log = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    let pool = throttle::global_pool().unwrap();
    assert!(pool.jobserver_tokens().is_some(), "the global pool joined cargo's jobserver");
    let pid = std::process::id();
    pool.for_range_grain(0..40, 1, |_| {
        let _ = (&log).write_all(format!("S {} {pid}\n", now()).as_bytes());
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(3) {
            std::hint::spin_loop();
        }
        let _ = (&log).write_all(format!("E {} {pid}\n", now()).as_bytes());
    });
}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
#[ignore = "builds a small workspace with cargo (slow); .ci/run runs it"]
fn cargo_build_j2_build_scripts_share_cargos_budget() {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("throttle-cargo-interop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nresolver = \"2\"\nmembers = [\"a\", \"b\"]\n",
    );
    for name in ["a", "b"] {
        write(
            &dir.join(name).join("Cargo.toml"),
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[build-dependencies]\nthrottle = {{ path = {:?} }}\n",
                runtime.display().to_string()
            ),
        );
        write(&dir.join(name).join("src/lib.rs"), "");
        write(&dir.join(name).join("build.rs"), BUILD_RS);
    }
    let log = dir.join("log");
    // Reuse the workspace's lockfile so the build resolves offline to the same versions.
    std::fs::copy(runtime.join("../../Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let out = Command::new(env!("CARGO"))
        .current_dir(&dir)
        .args(["build", "-j2", "--offline", "--quiet"])
        .env("THROTTLE_INTEROP_LOG", &log)
        .env_remove("MAKEFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("THROTTLE_JOBSERVER")
        .env_remove("THROTTLE_JOBSERVER_SOCKET")
        .env_remove("THROTTLE_THREADS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let mut ev: Vec<(u128, i64, &str)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[1].parse().unwrap(),
                if f[0] == "S" { 1 } else { -1 },
                f[2],
            )
        })
        .collect();
    ev.sort_by_key(|e| (e.0, e.1));
    let (mut now, mut max) = (0, 0);
    for e in &ev {
        now += e.1;
        max = max.max(now);
    }
    let mut pids: Vec<&str> = ev.iter().map(|e| e.2).collect();
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(pids.len(), 2, "both build scripts ran tasks");
    assert_eq!(ev.len(), 160);
    eprintln!("cargo -j2: at most {max} tasks ran at once, machine-wide");
    assert!(max <= 2, "{max} tasks ran at once under cargo -j2");
    std::fs::remove_dir_all(&dir).unwrap();
}
