//! `throttle scan`'s output files, one format per module: JSON (hyperfine's field names plus
//! ours), CSV, Markdown, an SVG plot and a self-contained HTML report.
//!
//! Paths are checked before anything is measured ([`check_writable`]), so a typo in `--report`
//! does not throw away a long scan.

use std::path::Path;

use anyhow::Context;

use crate::error::usage;

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod svg;

/// Fails with a usage error (naming `flag`) when `path` cannot be created or written.
pub fn check_writable(flag: &str, path: &Path) -> anyhow::Result<()> {
    let existed = path.exists();
    let opened = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path);
    match opened {
        Ok(_) => {
            if !existed {
                // Leave no empty file behind if the scan is interrupted before export.
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => Err(usage(
            flag,
            &path.display().to_string(),
            &format!("cannot write there: {e}"),
        )),
    }
}

/// Writes `text` to `path`, naming the path in the error.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
