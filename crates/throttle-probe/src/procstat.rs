//! The kernel's tick-based CPU accounting in `/proc/<pid>/stat` (fields 14 and 15, `utime` and
//! `stime`), used to cross-check the probe against a second kernel accounting of the same work.

use std::fs;
use std::time::Duration;

use crate::ProbeError;

/// User and system CPU time of a process as `/proc/<pid>/stat` reports them (in clock ticks,
/// converted to time with `sysconf(_SC_CLK_TCK)`; resolution one tick, usually 10 ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ProcStatTimes {
    /// `utime` (field 14).
    #[serde(serialize_with = "crate::serde_helpers::duration_secs")]
    pub user: Duration,
    /// `stime` (field 15).
    #[serde(serialize_with = "crate::serde_helpers::duration_secs")]
    pub system: Duration,
}

impl ProcStatTimes {
    /// `user + system`.
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }

    /// Parses the text of `/proc/<pid>/stat` with the given clock-tick rate.
    ///
    /// The command name (field 2) may contain spaces and parentheses, so fields are counted from
    /// the last `)`.
    ///
    /// # Errors
    ///
    /// [`ProbeError::Parse`] when the text is not a stat line.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use throttle_probe::procstat::ProcStatTimes;
    ///
    /// let line = "42 (a b) R 1 42 42 0 -1 4194304 100 0 0 0 250 30 0 0 20 0 1 0 5 1 1";
    /// let t = ProcStatTimes::parse(line, 100).unwrap();
    /// assert_eq!(t.user, Duration::from_millis(2500));
    /// assert_eq!(t.system, Duration::from_millis(300));
    /// ```
    pub fn parse(text: &str, ticks_per_second: u64) -> Result<ProcStatTimes, ProbeError> {
        let what = "/proc/<pid>/stat";
        if ticks_per_second == 0 {
            return Err(ProbeError::parse(what, "clock tick rate is zero"));
        }
        let close = text
            .rfind(')')
            .ok_or_else(|| ProbeError::parse(what, "no `)` after the command name"))?;
        // After ")" the first field is field 3 (state); utime is field 14, stime field 15.
        let mut rest = text[close + 1..].split_whitespace().skip(14 - 3);
        let mut ticks = |name: &str| -> Result<u64, ProbeError> {
            rest.next()
                .ok_or_else(|| ProbeError::parse(what, format!("field {name} missing")))?
                .parse::<u64>()
                .map_err(|e| ProbeError::parse(what, format!("field {name}: {e}")))
        };
        let user = ticks("utime")?;
        let system = ticks("stime")?;
        let to_time = |t: u64| {
            Duration::from_secs(t / ticks_per_second)
                + Duration::from_nanos((t % ticks_per_second) * 1_000_000_000 / ticks_per_second)
        };
        Ok(ProcStatTimes {
            user: to_time(user),
            system: to_time(system),
        })
    }

    /// Reads `/proc/<pid>/stat` (use `"self"` for the calling process).
    ///
    /// # Errors
    ///
    /// [`ProbeError::Io`] naming the path, or [`ProbeError::Parse`].
    ///
    /// # Examples
    ///
    /// ```
    /// let t = throttle_probe::procstat::ProcStatTimes::read("self").unwrap();
    /// println!("user {:?} system {:?}", t.user, t.system);
    /// ```
    pub fn read(pid: &str) -> Result<ProcStatTimes, ProbeError> {
        let path = format!("/proc/{pid}/stat");
        let text = fs::read_to_string(&path).map_err(|e| ProbeError::io(&path, e))?;
        let ticks = crate::sys::clock_ticks_per_second()
            .ok_or_else(|| ProbeError::parse("sysconf(_SC_CLK_TCK)", "no clock tick rate"))?;
        ProcStatTimes::parse(&text, ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_with_parens_and_spaces() {
        let line = "7 (we (ird) name) S 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1";
        let t = ProcStatTimes::parse(line, 100).unwrap();
        assert_eq!(t.user, Duration::from_millis(30));
        assert_eq!(t.system, Duration::from_millis(40));
        assert_eq!(t.cpu(), Duration::from_millis(70));
    }

    #[test]
    fn truncated_line_is_an_error() {
        assert!(ProcStatTimes::parse("7 (x) S 1 2", 100).is_err());
        assert!(ProcStatTimes::parse("no paren", 100).is_err());
        assert!(ProcStatTimes::parse("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1", 0).is_err());
    }
}
