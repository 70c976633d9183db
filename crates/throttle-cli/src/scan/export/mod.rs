//! `throttle scan`'s output files, one format per module: JSON (hyperfine's field names plus
//! ours), CSV, Markdown, an SVG plot and a self-contained HTML report.
//!
//! Paths are checked before anything is measured ([`check_writable`]), so a typo in `--report`
//! does not throw away a long scan. Path checks and writing (`-` = standard output) are the
//! experiments' own, from [`crate::export`].

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod svg;

pub use crate::export::{check_output as check_writable, write_output as write};
