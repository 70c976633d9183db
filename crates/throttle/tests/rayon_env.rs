//! `RAYON_NUM_THREADS` sizes the global pool and count-less builders as in rayon (a number
//! above 0 counts, anything else is ignored), after `THROTTLE_THREADS`; `THROTTLE_AUTO` starts
//! the global pool and rayon-built pools in auto mode. The global pool is created once per
//! process, so each case re-runs this test binary with the variables set.

use std::process::Command;

const CHILD: &str = "THROTTLE_TEST_CHILD";

fn run_child(test: &str, throttle: Option<&str>, rayon: &str) {
    run_child_with(test, throttle, rayon, None);
}

fn run_child_with(test: &str, throttle: Option<&str>, rayon: &str, auto: Option<&str>) {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary's path"));
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("RAYON_NUM_THREADS", rayon)
        .env_remove("THROTTLE_THREADS")
        .env_remove("THROTTLE_AUTO");
    if let Some(t) = throttle {
        cmd.env("THROTTLE_THREADS", t);
    }
    if let Some(a) = auto {
        cmd.env("THROTTLE_AUTO", a);
    }
    let out = cmd.output().expect("re-running the test binary");
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rayon_num_threads_sizes_the_global_pool_and_builders() {
    if std::env::var_os(CHILD).is_none() {
        return run_child(
            "rayon_num_threads_sizes_the_global_pool_and_builders",
            None,
            "3",
        );
    }
    assert_eq!(throttle::global_threads().unwrap(), 3);
    let local = throttle::ThreadPoolBuilder::new().build().unwrap();
    assert_eq!(local.current_num_threads(), 3);
    assert_eq!(throttle::current_num_threads(), 3);
}

#[test]
fn a_bad_rayon_num_threads_is_ignored() {
    if std::env::var_os(CHILD).is_none() {
        run_child("a_bad_rayon_num_threads_is_ignored", None, "0");
        return run_child("a_bad_rayon_num_threads_is_ignored", None, "lots");
    }
    assert_eq!(throttle::current_num_threads(), throttle::default_threads());
}

#[test]
fn throttle_threads_wins() {
    if std::env::var_os(CHILD).is_none() {
        return run_child("throttle_threads_wins", Some("2"), "3");
    }
    assert_eq!(throttle::current_num_threads(), 2);
    throttle::ThreadPoolBuilder::new()
        .build_global()
        .unwrap_err();
}

#[test]
fn throttle_auto_starts_the_global_pool_and_rayon_pools_in_auto_mode() {
    if std::env::var_os(CHILD).is_none() {
        return run_child_with(
            "throttle_auto_starts_the_global_pool_and_rayon_pools_in_auto_mode",
            None,
            "2",
            Some("on"),
        );
    }
    assert!(throttle::global_pool().unwrap().is_concurrency_auto());
    let rayon_built = throttle::ThreadPoolBuilder::new().build().unwrap();
    assert!(rayon_built.is_concurrency_auto());
    // throttle's own builder does not read it.
    assert!(!throttle::Pool::new(2).unwrap().is_concurrency_auto());
}

#[test]
fn auto_is_off_by_default_and_a_bad_value_is_a_clear_error() {
    if std::env::var_os(CHILD).is_none() {
        let test = "auto_is_off_by_default_and_a_bad_value_is_a_clear_error";
        run_child_with(test, None, "2", None);
        return run_child_with(test, None, "2", Some("sometimes"));
    }
    match std::env::var("THROTTLE_AUTO") {
        Err(_) => {
            assert!(!throttle::global_pool().unwrap().is_concurrency_auto());
            let p = throttle::ThreadPoolBuilder::new().build().unwrap();
            assert!(!p.is_concurrency_auto());
        }
        Ok(_) => {
            let err = throttle::global_pool().unwrap_err().to_string();
            assert!(
                err.contains("THROTTLE_AUTO") && err.contains("'sometimes'"),
                "{err}"
            );
            let err = throttle::ThreadPoolBuilder::new().build().unwrap_err();
            assert!(err.to_string().contains("THROTTLE_AUTO"), "{err}");
        }
    }
}
