//! Output files, one format per module, each a view of the one [`Report`]: `--json` (and
//! scan's hyperfine layout), `--csv` (likewise), `--markdown`, `--plot` (SVG) and the HTML
//! pages. `scan`'s options write through the same modules.
//!
//! Every path is checked before anything is measured ([`OutputArgs::prepare`]), so a typo in an
//! output path costs a second, not a minute of measurement. The checks open the file for
//! appending (without truncating it) and remove it again if it did not exist before.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod svg;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::error::usage;
use crate::results::Report;

/// The output options every experiment accepts.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write the results as JSON to FILE (`-` for standard output; the table then goes to
    /// standard error). Layout: docs/json.md.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the results as CSV to FILE, one line per measured row.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Draw the experiment's figures as one SVG image in FILE (the same figures as its section
    /// of `throttle report`'s page: sweep and procs draw time against the level, overhead draws
    /// jobs per second and the user:system ratio, frames draws bars per scheduler).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Write the tables and findings as Markdown to FILE (`-` for standard output), to paste
    /// into a README or a bug report.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// Where a document goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard output.
    Stdout,
    /// A file.
    File(PathBuf),
}

/// Checked output destinations, ready to receive a report.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    json: Option<Target>,
    csv: Option<PathBuf>,
    plot: Option<PathBuf>,
    markdown: Option<PathBuf>,
}

impl OutputArgs {
    /// Checks that every requested output can be written, before anything is measured.
    /// An unwritable path is a usage error naming the flag and the path (exit status 2).
    pub fn prepare(&self) -> anyhow::Result<Outputs> {
        let json = match &self.json {
            Some(p) if p.as_os_str() == "-" => Some(Target::Stdout),
            Some(p) => {
                check_writable("--json", p)?;
                Some(Target::File(p.clone()))
            }
            None => None,
        };
        if let Some(p) = &self.csv {
            check_writable("--csv", p)?;
        }
        if let Some(p) = &self.plot {
            check_writable("--plot", p)?;
        }
        if let Some(p) = &self.markdown {
            if is_stdout(p) && json.as_ref() == Some(&Target::Stdout) {
                return Err(usage(
                    "--markdown",
                    "-",
                    "--json already writes to standard output",
                ));
            }
            check_output("--markdown", p)?;
        }
        Ok(Outputs {
            json,
            csv: self.csv.clone(),
            plot: self.plot.clone(),
            markdown: self.markdown.clone(),
        })
    }
}

impl Outputs {
    /// True when the JSON or the Markdown goes to standard output, so people-facing text must
    /// go to stderr.
    pub fn json_on_stdout(&self) -> bool {
        self.json == Some(Target::Stdout) || self.markdown.as_deref().is_some_and(is_stdout)
    }

    /// Writes every requested output of `report`.
    pub fn write(&self, report: &Report) -> anyhow::Result<()> {
        match &self.json {
            Some(Target::Stdout) => {
                let text = json::to_string(report)?;
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .context("writing JSON to standard output")?;
            }
            Some(Target::File(path)) => write_file(path, &json::to_string(report)?)?,
            None => {}
        }
        if let Some(path) = &self.csv {
            write_file(path, &csv::to_string(report))?;
        }
        if let Some(path) = &self.plot {
            write_file(path, &svg::to_string(report)?)?;
        }
        if let Some(path) = &self.markdown {
            write_output(path, &markdown::to_string(report))?;
        }
        Ok(())
    }
}

/// Fails with a usage error (exit status 2) naming `flag` and `path` unless `path` can be opened
/// for writing. Does not truncate an existing file; removes the file again if the check created
/// it.
pub fn check_writable(flag: &str, path: &Path) -> anyhow::Result<()> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(usage(flag, &shown, "is a directory, expected a file path"));
    }
    let existed = path.exists();
    match OpenOptions::new().append(true).create(true).open(path) {
        Ok(_) => {
            if !existed {
                // The file only existed for the check; a failed run should not leave it behind.
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => Err(usage(flag, &shown, &format!("cannot write there ({e})"))),
    }
}

/// True when `path` is `-`, which every output flag reads as standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// [`check_writable`], except that `-` (standard output) is always fine.
pub fn check_output(flag: &str, path: &Path) -> anyhow::Result<()> {
    if is_stdout(path) {
        Ok(())
    } else {
        check_writable(flag, path)
    }
}

/// Writes `text` to `path`, or to standard output when `path` is `-`.
pub fn write_output(path: &Path, text: &str) -> anyhow::Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .context("writing to standard output")
    } else {
        write_file(path, text)
    }
}

/// Writes `text` to `path`, naming the path in the error.
pub fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::is_usage;

    #[test]
    fn unwritable_paths_are_usage_errors() {
        let e = check_writable("--json", Path::new("/nonexistent-dir/x.json")).unwrap_err();
        assert!(is_usage(&e));
        let text = e.to_string();
        assert!(
            text.contains("--json") && text.contains("/nonexistent-dir/x.json"),
            "{text}"
        );
        let e = check_writable("--csv", Path::new("/tmp")).unwrap_err();
        assert!(e.to_string().contains("is a directory"));
    }

    #[test]
    fn check_leaves_no_file_behind() {
        let path = std::env::temp_dir().join(format!("throttle-check-{}.json", std::process::id()));
        check_writable("--json", &path).expect("temp dir is writable");
        assert!(!path.exists());
    }
}
