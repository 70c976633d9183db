//! `throttle adapt` driven as a user would: the simulated table, a short real run of the steady
//! workload, and a bad flag value rejected with exit status 2. No timing is asserted.

use assert_cmd::Command;

fn throttle() -> Command {
    let mut cmd = Command::cargo_bin("throttle").expect("the throttle binary is built");
    cmd.env("NO_COLOR", "1");
    cmd
}

#[test]
fn sim_prints_every_plant_and_no_change_after_settling() {
    let out = throttle().args(["adapt", "--sim"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for cores in ["8 cores", "64 cores", "256 cores"] {
        assert_eq!(text.matches(cores).count(), 3, "{text}");
    }
    assert_eq!(
        text.matches("k changes after settling: 0").count(),
        9,
        "{text}"
    );
}

#[test]
fn a_quick_steady_run_reports_what_it_chose() {
    let out = throttle()
        .args([
            "adapt",
            "--quick",
            "--workloads",
            "steady",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("== steady"), "{text}");
    assert!(text.contains("changes of k after settling"), "{text}");
}

#[test]
fn zero_threads_is_a_usage_error() {
    let out = throttle()
        .args(["adapt", "--threads", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--threads"), "{err}");
}
