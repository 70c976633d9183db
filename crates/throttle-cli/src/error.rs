//! The CLI's error convention: bad usage exits 2, a failed run exits 1.
//!
//! Subcommands return `anyhow::Result<()>`. An error whose root is a [`UsageError`] is bad input
//! (a flag with an impossible value, a missing placeholder, an unwritable output path): `main`
//! prints its one line and exits with status 2. An [`Interrupted`] error means Ctrl-C stopped the
//! experiment after its partial results were printed and saved: exit status 130. Anything else is
//! a failed run: exit status 1.

use std::fmt;

/// Bad input from the user: printed as one line, exit status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Builds an `anyhow::Error` for bad input, naming the flag and its value:
/// `usage("--levels", "2,x", "expected a comma-separated list of integers")` renders as
/// `invalid value '2,x' for '--levels': expected a comma-separated list of integers`.
pub fn usage(flag: &str, value: &str, why: &str) -> anyhow::Error {
    anyhow::Error::new(UsageError(format!(
        "invalid value '{value}' for '{flag}': {why}"
    )))
}

/// Why a command's program cannot be started when no executable of that name is found: the one
/// wording of `scan` and `procs`.
pub const MISSING_PROGRAM: &str =
    "cannot be started: no executable of that name on PATH (check the spelling, or that it is installed)";

/// The usage error for a command whose program is not found: names the command and the
/// program, in the one wording [`MISSING_PROGRAM`].
pub fn missing_program(program: &str) -> anyhow::Error {
    usage("CMD", program, MISSING_PROGRAM)
}

/// True when `err` (or any error in its chain) is a [`UsageError`].
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<UsageError>().is_some())
}

/// The experiment was interrupted (Ctrl-C); its partial results were already printed and saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted: the partial results above were printed and saved")
    }
}

impl std::error::Error for Interrupted {}

/// True when `err` (or any error in its chain) is [`Interrupted`].
pub fn is_interrupted(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<Interrupted>().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_names_flag_and_value() {
        let e = usage("--levels", "2,x", "expected integers");
        assert_eq!(
            e.to_string(),
            "invalid value '2,x' for '--levels': expected integers"
        );
        assert!(is_usage(&e));
        assert!(is_usage(&e.context("while parsing")));
        assert!(!is_usage(&anyhow::anyhow!("disk full")));
    }
}
