//! `throttle report`, the main job, driven as a real binary: the page and the JSON it writes, a
//! run interrupted by `timeout`, and the page loaded in headless Chromium.
//!
//! The Chromium test needs the Debian package `chromium`: it is ignored only when the build
//! script found no `chromium` on PATH, with a reason that says so (`.ci/run` installs it). No
//! test asserts anything about timing.

mod common;

use std::path::Path;

use serde_json::Value;

use common::{
    assert_success, assert_usage_error, bin, chromium, png_size, read_json, require, text,
    throttle, workdir,
};

const SEEDS: [&str; 5] = ["seed-000", "seed-001", "seed-002", "seed-003", "seed-004"];

/// The part of `page` inside `<section id="ID">`.
fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &page[start..];
    &rest[..rest.find("</section>").expect("section closed")]
}

/// Runs a small report (the shortest budget) into `dir`; returns the page and the JSON.
fn small_report(dir: &Path) -> (String, Value) {
    let (html, json) = (dir.join("page.html"), dir.join("page.json"));
    let out = throttle()
        .args(["report", "--budget", "5", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("runs");
    let stdout = assert_success(&out);
    assert!(stdout.contains("Recommendation:"), "{stdout}");
    assert!(stdout.contains("page.html"), "{stdout}");
    assert!(text(&out.stderr).contains("[4/4]"), "progress is shown");
    let page = std::fs::read_to_string(&html).expect("page written");
    (page, read_json(&json))
}

#[test]
fn report_writes_a_self_contained_page_and_json() {
    let dir = workdir("page");
    let (page, doc) = small_report(&dir);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(!page.contains("<script"), "no scripts");
    assert!(
        !page.contains("<link") && !page.contains("src=\"http"),
        "no network"
    );
    assert!(
        !page.contains("<?xml"),
        "inline SVG without XML declarations"
    );
    assert!(
        !page.contains("NaN") && !page.contains("inf "),
        "no broken numbers"
    );
    let rec = section(&page, "recommendation");
    assert!(rec.contains("Recommendation: run "), "{rec}");
    for id in SEEDS {
        let s = section(&page, id);
        assert!(s.contains("<svg"), "{id} has no figure");
        assert!(s.contains("<details>"), "{id} has no folded table");
        assert!(s.contains("<li>"), "{id} has no findings");
    }
    // Concurrency axes mark the cores; the sweep labels `no limit` on its own.
    assert!(section(&page, "seed-000").contains("no limit"));
    assert!(section(&page, "seed-004").contains("cores"));

    assert_eq!(doc["experiment"], "report");
    assert_eq!(doc["partial"], false);
    assert!(doc["schema_version"].as_u64().is_some());
    let names: Vec<&str> = doc["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .map(|e| e["experiment"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["overhead", "frames", "procs", "sweep"]);
    let rec = doc["recommendation"].as_array().expect("recommendation");
    assert!(!rec.is_empty());
    // Every number in the recommendation's first sentence is on the page outside it.
    let first = rec[0].as_str().expect("text");
    let body = &page[page.find("id=\"machine\"").expect("machine section")..];
    for word in first.split_whitespace() {
        let number = word.trim_end_matches([',', '.', ';', ')']);
        // A duration ("127.0 ms" splits into "127.0" and "ms") or a decimal; words such as
        // "programs" end in "ms" too, so only what parses as a number counts.
        let digits = number.trim_end_matches("ms").trim_end_matches('%');
        if digits.parse::<f64>().is_ok() && number.contains('.') {
            assert!(
                body.contains(number),
                "{number} of {first:?} is not on the page"
            );
        }
    }
}

/// `timeout -s INT` stops the report once its first experiment has begun (its `[1/4]` line,
/// printed after the handlers are installed): the signal goes to `timeout`, which passes it on
/// to the report and its process group exactly as when its own time (an hour, never up here)
/// runs out.
#[test]
fn report_interrupted_by_timeout_writes_partial_page() {
    use std::io::BufRead;
    let dir = workdir("partial");
    let (html, json) = (dir.join("p.html"), dir.join("p.json"));
    let mut timeout = std::process::Command::new("timeout")
        .args(["--preserve-status", "-s", "INT", "3600"])
        .arg(bin())
        .args(["report", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("timeout runs");
    // `timeout` leads a process group of its own, with the report in it.
    let _guard = common::KillOnPanic(-(timeout.id() as i32));
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = timeout.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("[1/4]") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    rx.recv_timeout(common::HANG_GUARD)
        .unwrap_or_else(|_| panic!("no [1/4] line from the report in {:?}", common::HANG_GUARD));
    // `timeout` learns its child's pid only when its `fork` call returns; until then a signal
    // makes it exit alone. In `rt_sigsuspend` it has stored it (see tests/interrupt.rs).
    common::wait_until("timeout waits for the report", || {
        common::in_syscall(timeout.id(), libc::SYS_rt_sigsuspend)
    });
    common::signal(timeout.id() as i32, libc::SIGINT);
    let out = timeout.wait_with_output().expect("timeout exits");
    let err = reader.join().expect("stderr read");
    assert_eq!(out.status.code(), Some(130), "{err}");
    let page = std::fs::read_to_string(&html).expect("page written");
    assert!(page.contains("PARTIAL"));
    for id in SEEDS {
        section(&page, id);
    }
    assert_eq!(read_json(&json)["partial"], true);
}

#[test]
fn report_bad_budget_is_a_usage_error() {
    for bad in ["0", "-1", "1e300", "x"] {
        let out = throttle()
            .args(["report", "--budget", bad])
            .output()
            .expect("runs");
        assert_usage_error(&out, &["--budget", bad]);
    }
}

#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "chromium was not on PATH when the tests were built: apt-get install -y chromium"
)]
fn report_page_in_headless_chromium() {
    require("chromium", "chromium");
    let dir = workdir("chromium");
    let (page, _) = small_report(&dir);

    // A copy of the page with a probe script appended (the page itself has none): it records
    // the layout width and every seed's figures into the DOM, which --dump-dom prints.
    let probe = r#"<script>
window.addEventListener('load', () => {
  const b = document.body;
  b.setAttribute('data-overflow', String(document.documentElement.scrollWidth > window.innerWidth));
  b.setAttribute('data-width', String(document.documentElement.scrollWidth));
  for (const s of document.querySelectorAll('section[id^="seed-"]')) {
    const sizes = [...s.querySelectorAll('svg')].map(g => {
      const r = g.getBoundingClientRect();
      return g.querySelectorAll('circle,rect,polyline').length > 0 && r.width > 100 && r.height > 50;
    });
    b.setAttribute('data-' + s.id, sizes.length + ':' + sizes.every(x => x));
  }
});
</script>"#;
    let probed = dir.join("probed.html");
    std::fs::write(&probed, page.replace("</body>", &format!("{probe}</body>"))).expect("write");
    let out = chromium(&dir.join("profile-dom"))
        .arg("--window-size=1280,1000")
        .arg("--virtual-time-budget=3000")
        .arg("--dump-dom")
        .arg(format!("file://{}", probed.display()))
        .output()
        .expect("chromium runs");
    let dom = text(&out.stdout);
    assert!(
        dom.contains("data-overflow=\"false\""),
        "horizontal overflow at 1280 px: {}",
        dom.split("data-width=\"")
            .nth(1)
            .unwrap_or("?")
            .split('"')
            .next()
            .unwrap_or("?")
    );
    for id in SEEDS {
        let needle = format!("data-{id}=\"");
        let value = dom
            .split(&needle)
            .nth(1)
            .and_then(|v| v.split('"').next())
            .unwrap_or_else(|| panic!("{id} not probed:\n{dom}"));
        let (count, ok) = value.split_once(':').expect("count:ok");
        assert!(count.parse::<usize>().expect("count") >= 1, "{id}: {value}");
        assert_eq!(ok, "true", "{id}: an empty or collapsed figure");
    }

    // The page as shipped (no probe): no console errors, and a full-page screenshot that is
    // not blank. The PNG is kept in the temp dir for a person to look at.
    let html = dir.join("page.html");
    let shot = dir.join("report.png");
    let out = chromium(&dir.join("profile-shot"))
        .arg("--window-size=1280,7000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    let log = text(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let bytes = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(png_size(&bytes), (1280, 7000));
    assert!(
        bytes.len() > 100_000,
        "the screenshot looks blank ({} bytes)",
        bytes.len()
    );
    eprintln!("screenshot: {}", shot.display());
}
