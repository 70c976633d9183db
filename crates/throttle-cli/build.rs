//! Finds the optional programs some tests drive and sets a cfg for each one found: `has_<name>`
//! for xz, zstd, pigz, chromium and hyperfine on PATH, `has_gcc` for gcc, and for the build
//! tools whose jobserver protocol the tests need, a version check: `has_make_4_3` for GNU Make
//! 4.3 or later, `has_ninja_1_13` for ninja 1.13 or later. A test that needs one is ignored only
//! when it is missing, and its reason says so (`#[cfg_attr(not(has_xz), ignore = "...")]`): an
//! ignored test never claims a program is missing while it is installed.

use std::path::PathBuf;
use std::process::Command;

/// The optional programs, as the cfg names spell them.
const PROGRAMS: [&str; 6] = ["xz", "zstd", "pigz", "chromium", "hyperfine", "gcc"];

fn main() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    println!("cargo::rerun-if-env-changed=PATH");
    // Installing a program changes its directory: check again then.
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    for program in PROGRAMS {
        println!("cargo::rustc-check-cfg=cfg(has_{program})");
        if dirs.iter().any(|d| d.join(program).is_file()) {
            println!("cargo::rustc-cfg=has_{program}");
        }
    }
    // `make --version` begins "GNU Make 4.3"; `ninja --version` prints "1.13.2" (a fork may
    // append ".git.…").
    let versioned = [
        ("make", "GNU Make ", (4, 3), "make_4_3"),
        ("ninja", "", (1, 13), "ninja_1_13"),
    ];
    for (program, prefix, least, cfg) in versioned {
        println!("cargo::rustc-check-cfg=cfg(has_{cfg})");
        if version_of(program, prefix).is_some_and(|v| v >= least) {
            println!("cargo::rustc-cfg=has_{cfg}");
        }
    }
}

/// The major and minor version `program --version` prints after `prefix` on its first line.
fn version_of(program: &str, prefix: &str) -> Option<(u32, u32)> {
    let out = Command::new(program).arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let rest = text.lines().next()?.trim().strip_prefix(prefix)?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}
