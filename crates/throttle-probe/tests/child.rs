//! Child-process accounting against real children.

use std::process::{Command, Stdio};
use std::time::Duration;

use throttle_probe::{child, ProbeError};

const LOOP: &str = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";

#[test]
fn busy_shell_child_is_accounted() {
    let u = child::run(Command::new("sh").args(["-c", LOOP])).unwrap();
    eprintln!("{u:?}");
    assert_eq!(u.exit_code, Some(0));
    assert!(u.success());
    assert!(u.cpu() > Duration::ZERO);
    assert!(u.max_rss_kib > 0);
    assert!(u.wall > Duration::ZERO);
    if let (Ok(on_cpu), Ok(_wait)) = (&u.on_cpu, &u.run_queue_wait) {
        // A single-threaded shell running builtins: its main thread is the whole child, so the
        // zombie's schedstat covers nearly all of the CPU time wait4 reports.
        assert_eq!(u.threads_seen, 1);
        assert!(
            *on_cpu > u.cpu() / 2,
            "on-CPU {on_cpu:?} vs cpu {:?}",
            u.cpu()
        );
    }
}

#[test]
fn missing_program_is_a_spawn_error_naming_it() {
    let err = child::run(&mut Command::new("throttle-no-such-program")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ProbeError::Spawn { .. }), "{err:?}");
    assert!(msg.contains("throttle-no-such-program"), "{msg}");
    assert!(msg.contains("not found"), "{msg}");
    let spawn_err = child::spawn(&mut Command::new("/nonexistent/dir/prog")).unwrap_err();
    assert!(spawn_err.to_string().contains("/nonexistent/dir/prog"));
}

#[test]
fn concurrent_children_and_exit_codes() {
    let running: Vec<_> = (0..3)
        .map(|k| child::spawn(Command::new("sh").args(["-c", &format!("{LOOP}; exit {k}")])))
        .collect::<Result<_, _>>()
        .unwrap();
    let pids: Vec<u32> = running.iter().map(child::RunningChild::pid).collect();
    for (k, c) in running.into_iter().enumerate() {
        let u = c.wait().unwrap();
        assert_eq!(u.pid, pids[k]);
        assert_eq!(u.exit_code, Some(k as i32));
        assert!(u.cpu() > Duration::ZERO);
    }
}

#[test]
fn killed_child_reports_the_signal() {
    let mut c = child::spawn(Command::new("sleep").arg("30")).unwrap();
    c.kill().unwrap();
    let u = c.wait().unwrap();
    assert_eq!(u.signal, Some(libc_sigkill()));
    assert_eq!(u.exit_code, None);
}

#[test]
fn piped_output_can_be_read() {
    use std::io::Read;
    let mut c = child::spawn(
        Command::new("sh")
            .args(["-c", "echo hello"])
            .stdout(Stdio::piped()),
    )
    .unwrap();
    let mut out = String::new();
    c.take_stdout().unwrap().read_to_string(&mut out).unwrap();
    assert!(c.wait().unwrap().success());
    assert_eq!(out, "hello\n");
}

#[test]
fn sampling_a_multithreaded_child_counts_its_threads() {
    // A shell pipeline: the shell is the child; the pipeline's programs are its descendants, which
    // the schedstat fields do not count (wait4's user/system do, once the shell has reaped them).
    let mut c = child::spawn(Command::new("sh").args(["-c", &format!("{LOOP} | cat")])).unwrap();
    let _ = c.sample();
    let u = c.wait().unwrap();
    assert!(u.success());
    if u.run_queue_wait.is_ok() {
        assert!(u.threads_seen >= 1);
    }
}

/// SIGKILL is 9 on every Linux architecture.
fn libc_sigkill() -> i32 {
    9
}
