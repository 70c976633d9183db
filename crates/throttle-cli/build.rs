//! Finds the optional programs some tests drive (xz, zstd, pigz, chromium, hyperfine) and sets
//! `has_<name>` for each one on PATH. A test that needs one is ignored only when it is missing,
//! and its reason says so (`#[cfg_attr(not(has_xz), ignore = "...")]`): an ignored test never
//! claims a program is missing while it is installed.

/// The optional programs, as the cfg names spell them.
const PROGRAMS: [&str; 5] = ["xz", "zstd", "pigz", "chromium", "hyperfine"];

fn main() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(&path).collect();
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
}
