//! `THROTTLE_THREADS` sizes the global pool; a bad value is a clear error, not a silent default.
//! The global pool is created once per process, so each case re-runs this test binary with the
//! variable set and checks from inside the child.

use std::process::Command;

const CHILD: &str = "THROTTLE_TEST_CHILD";

fn run_child(test: &str, threads: &str) {
    let out = Command::new(std::env::current_exe().expect("the test binary's path"))
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("THROTTLE_THREADS", threads)
        .output()
        .expect("re-running the test binary");
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_value_is_a_clear_error() {
    if std::env::var_os(CHILD).is_none() {
        return run_child("bad_value_is_a_clear_error", "abc");
    }
    let err = throttle::global_pool().unwrap_err().to_string();
    assert!(
        err.contains("THROTTLE_THREADS") && err.contains("'abc'"),
        "{err}"
    );
    std::panic::set_hook(Box::new(|_| {}));
    let payload = std::panic::catch_unwind(|| throttle::join(|| 1, || 2)).unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        msg.contains("THROTTLE_THREADS") && msg.contains("'abc'"),
        "{msg}"
    );
}

#[test]
fn good_value_sizes_the_global_pool() {
    if std::env::var_os(CHILD).is_none() {
        return run_child("good_value_sizes_the_global_pool", "3");
    }
    assert_eq!(throttle::global_pool().unwrap().threads(), 3);
    assert_eq!(throttle::join(|| 1, || 2), (1, 2));
}
