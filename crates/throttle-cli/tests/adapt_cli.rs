//! `throttle adapt` driven as a user would: the simulated table, a short real run of the steady
//! workload, and a bad flag value rejected with exit status 2. No timing is asserted.

mod common;

use common::{assert_success, assert_usage_error, throttle, workdir};

#[test]
fn sim_prints_every_plant_and_no_change_after_settling() {
    let out = throttle().args(["adapt", "--sim"]).output().unwrap();
    let text = assert_success(&out);
    for cores in ["8 cores", "64 cores", "256 cores"] {
        let plants = format!("{cores}, noise");
        assert_eq!(text.matches(&plants).count(), 3, "{text}");
    }
    assert_eq!(
        text.matches("k changes after settling: 0").count(),
        9,
        "{text}"
    );
    // The blind-spot plant: flat work, then scalable work; where k stopped moving.
    let blind = text
        .lines()
        .find(|l| l.starts_with("8 cores, flat from k = 1"))
        .unwrap_or_else(|| panic!("no blind-spot line: {text}"));
    assert_eq!(blind.matches("k still from").count(), 2, "{blind}");
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
    let text = assert_success(&out);
    assert!(text.contains("== steady"), "{text}");
    assert!(text.contains("changes of k after settling"), "{text}");
}

#[test]
fn zero_threads_is_a_usage_error() {
    let out = throttle()
        .args(["adapt", "--threads", "0"])
        .output()
        .unwrap();
    assert_usage_error(&out, &["--threads"]);
}

#[test]
fn plot_writes_k_and_throughput_figures_with_labelled_axes() {
    let dir = workdir("plot");
    let svg = dir.join("adapt.svg");
    let out = throttle()
        .args([
            "adapt",
            "--quick",
            "--workloads",
            "steady",
            "--threads",
            "2",
        ])
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert_success(&out);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{text}");
    assert!(text.contains("steady: the concurrency limit k auto mode chose, over time"));
    assert!(text.contains("steady: throughput of the auto pool, over time"));
    assert!(text.contains("concurrency limit k (threads)"));
    assert!(text.contains("throughput (tasks/s)"));
    assert!(text.contains("time since the auto pool"));
    assert!(text.contains("k chosen by auto mode"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_plot_path_is_a_usage_error_before_any_run() {
    let out = throttle()
        .args(["adapt", "--plot", "/nonexistent-dir/x.svg"])
        .output()
        .unwrap();
    assert_usage_error(&out, &["--plot"]);
}
