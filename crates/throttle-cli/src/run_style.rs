//! Which jobserver style the command of `throttle run` reads, and the one warning for a make
//! given its own `-j`.
//!
//! GNU make up to 4.3 reads only inherited pipe descriptors (`--jobserver-auth=R,W`) and stops
//! with "invalid --jobserver-auth string" on a fifo; make 4.4 reads both and ninja 1.13 only the
//! fifo (`fifo:PATH`). `MAKEFLAGS` can name one jobserver only (the last option wins), so the
//! style is picked from the command: make's version from `make --version`, ninja → fifo, and for
//! anything else (a script, cargo) the version of the `make` on `PATH`, since that is the make a
//! script would start. cargo and rustc read both.
//!
//! Under `--budget` ([`under_budget`]) the pipe becomes two pipes (`Style::TwoPipes`: tokens out
//! through one, back through the other, which only `throttle run` reads), and so does the fifo
//! a make ≥ 4.4 would get: every GNU make 4.x and the `jobserver` crate read `R,W` of two
//! pipes, and only then does every token a tool gives back pass through `throttle run`, which
//! keeps it out once its lease's trust has ended. ninja 1.13 reads only a fifo, so it keeps it.

use std::path::Path;
use std::process::{Command, Stdio};
use throttle::Style;

/// The command's file name, if it names GNU make (`make`, `gmake`, a path to one).
fn is_make(program: &str) -> bool {
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    matches!(name.as_str(), "make" | "gmake")
}

fn is_ninja(program: &str) -> bool {
    Path::new(program)
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("ninja"))
}

/// `(major, minor)` from `GNU Make 4.3` (the first line of `make --version`).
pub(crate) fn parse_make_version(first_line: &str) -> Option<(u32, u32)> {
    let v = first_line.trim().strip_prefix("GNU Make ")?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

/// The version of GNU make `program` (`None`: not runnable, or not GNU make).
fn make_version(program: &str) -> Option<(u32, u32)> {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("MAKEFLAGS")
        .output()
        .ok()?;
    parse_make_version(String::from_utf8_lossy(&out.stdout).lines().next()?)
}

/// The style for `program` (see the module docs).
pub(crate) fn detect(program: &str) -> Style {
    if is_ninja(program) {
        return Style::Fifo;
    }
    let make = if is_make(program) { program } else { "make" };
    match make_version(make) {
        Some(v) if v >= (4, 4) => Style::Fifo,
        Some(_) => Style::Pipe,
        // Not GNU make, or no make on PATH: a make command that is not GNU make reads no fifo
        // either; for anything else the fifo is the form every current client reads.
        None if is_make(program) => Style::Pipe,
        None => Style::Fifo,
    }
}

/// The style under `--budget`: [`Style::TwoPipes`] for every command that reads `R,W` (what
/// would be a pipe, and make ≥ 4.4 when the style was picked automatically), else the fifo.
/// `auto`: the style was picked by [`detect`], not given with `--jobserver-style`.
pub(crate) fn under_budget(style: Style, program: &str, auto: bool) -> Style {
    match style {
        Style::Pipe | Style::TwoPipes => Style::TwoPipes,
        // `detect` picks the fifo for a make only when it is GNU make >= 4.4.
        Style::Fifo if auto && is_make(program) => Style::TwoPipes,
        Style::Fifo => Style::Fifo,
    }
}

/// Make's short options that take an argument: in a cluster like `-Cj`, what follows is that
/// argument, not `-j`.
const TAKES_ARG: &str = "CfIoWlOE";

/// The explicit `-j`/`--jobs` among make's arguments, as written.
fn explicit_jobs(args: &[String]) -> Option<String> {
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
            continue;
        }
        if a == "--" {
            break;
        }
        if a == "--jobs" || a.starts_with("--jobs=") {
            return Some(a.clone());
        }
        if a.starts_with("--") || !a.starts_with('-') {
            continue;
        }
        let letters = &a[1..];
        for (i, c) in letters.char_indices() {
            if c == 'j' {
                return Some(a.clone());
            }
            if TAKES_ARG.contains(c) {
                skip_next = i + c.len_utf8() == letters.len();
                break;
            }
        }
    }
    None
}

/// One warning line when `program` is make and `args` give it its own `-j`: make then starts a
/// jobserver of its own ("-jN forced in submake") and ignores the budget.
pub(crate) fn explicit_jobs_warning(
    program: &str,
    args: &[String],
    slots: usize,
) -> Option<String> {
    if !is_make(program) {
        return None;
    }
    let j = explicit_jobs(args)?;
    let rest: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != j)
        .collect();
    let suggested = if rest.is_empty() {
        String::new()
    } else {
        format!(" {}", rest.join(" "))
    };
    Some(format!(
        "throttle run: warning: '{j}' makes {program} start its own jobserver and ignore the budget of {slots} jobs; leave it out: throttle run -j {slots} -- {program}{suggested}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_an_explicit_jobs_option_and_nothing_else() {
        for args in [
            &["-j"][..],
            &["-j8"],
            &["-s", "-j", "4"],
            &["--jobs=3"],
            &["--jobs"],
            &["-kj4"],
            &["all", "-sj"],
        ] {
            assert!(explicit_jobs(&v(args)).is_some(), "{args:?}");
        }
        for args in [
            &[][..],
            &["-s", "all"],
            &["-C", "-j"],
            &["-Cj"],
            &["-f", "-j.mk"],
            &["--", "-j"],
            &["--keep-going"],
            &["J=4"],
        ] {
            assert!(explicit_jobs(&v(args)).is_none(), "{args:?}");
        }
    }

    #[test]
    fn warns_in_one_line_for_make_only() {
        let w = explicit_jobs_warning("make", &v(&["-j8", "all"]), 2).unwrap();
        assert!(!w.contains('\n'));
        assert!(
            w.contains("'-j8'") && w.ends_with("throttle run -j 2 -- make all"),
            "{w}"
        );
        assert!(explicit_jobs_warning("ninja", &v(&["-j8"]), 2).is_none());
        assert!(explicit_jobs_warning("/usr/bin/make", &v(&["all"]), 2).is_none());
    }

    #[test]
    fn a_budget_gives_two_pipes_to_whoever_reads_them() {
        assert_eq!(under_budget(Style::Pipe, "sh", false), Style::TwoPipes);
        assert_eq!(under_budget(Style::Pipe, "make", true), Style::TwoPipes);
        assert_eq!(under_budget(Style::Fifo, "ninja", true), Style::Fifo);
        assert_eq!(under_budget(Style::Fifo, "make", false), Style::Fifo);
        assert_eq!(
            under_budget(Style::Fifo, "/opt/make", true),
            Style::TwoPipes
        );
        assert_eq!(under_budget(Style::Fifo, "sh", true), Style::Fifo);
    }

    #[test]
    fn reads_make_versions() {
        assert_eq!(parse_make_version("GNU Make 4.3"), Some((4, 3)));
        assert_eq!(parse_make_version("GNU Make 4.4.1"), Some((4, 4)));
        assert_eq!(parse_make_version("GNU Make 3.81"), Some((3, 81)));
        assert_eq!(parse_make_version("bmake 2023"), None);
    }
}
