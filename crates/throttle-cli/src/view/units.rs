//! Human formatting of durations, counts and ratios for tables and sentences.

/// A time unit chosen so that a value prints with three or four significant digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
}

/// The unit every duration is printed in, when the user chose one (`scan --time-unit`); set
/// once at start-up, before anything is printed.
static FORCED: std::sync::OnceLock<Unit> = std::sync::OnceLock::new();

/// Prints every later duration in `unit` instead of the one that suits each value (hyperfine's
/// `--time-unit`). Only the first call counts.
pub fn force_unit(unit: Unit) {
    let _ = FORCED.set(unit);
}

impl Unit {
    /// The unit that suits `seconds` (or the one forced by [`force_unit`]).
    pub fn for_secs(seconds: f64) -> Unit {
        if let Some(&unit) = FORCED.get() {
            return unit;
        }
        let a = seconds.abs();
        if a >= 1.0 {
            Unit::S
        } else if a >= 1e-3 {
            Unit::Ms
        } else {
            Unit::Us
        }
    }

    fn scale(self) -> f64 {
        match self {
            Unit::S => 1.0,
            Unit::Ms => 1e3,
            Unit::Us => 1e6,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Unit::S => "s",
            Unit::Ms => "ms",
            Unit::Us => "µs",
        }
    }

    /// `seconds` in this unit, without the suffix.
    pub fn number(self, seconds: f64) -> String {
        let v = seconds * self.scale();
        if v.abs() >= 100.0 {
            format!("{v:.1}")
        } else if v.abs() >= 10.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.3}")
        }
    }
}

/// `seconds` with a suitable unit: `1.234 s`, `12.35 ms`, `4.120 µs`.
pub fn secs(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "–".to_string();
    }
    if seconds == 0.0 && FORCED.get().is_none() {
        return "0 s".to_string();
    }
    let unit = Unit::for_secs(seconds);
    format!("{} {}", unit.number(seconds), unit.suffix())
}

/// A median with its range in the median's unit: `1.234 s (1.201–1.300)`.
pub fn secs_range(median: f64, min: f64, max: f64) -> String {
    let unit = Unit::for_secs(median);
    format!(
        "{} {} ({}–{})",
        unit.number(median),
        unit.suffix(),
        unit.number(min),
        unit.number(max)
    )
}

/// A count or rate with thousands abbreviated: `812`, `12.3k`, `4.56M`.
pub fn count(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_string();
    }
    let a = value.abs();
    if a >= 1e9 {
        format!("{:.2}G", value / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", value / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", value / 1e3)
    } else if a >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// A count of events (context switches, wake-ups) as a whole number, even when it is a median
/// of an even number of runs (`6.5` → `6`, rounded half to even), abbreviated as [`count`] from
/// 10 000 on: a switch is never a fraction.
pub fn events(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e4 {
        format!("{value:.0}")
    } else {
        count(value)
    }
}

/// `1 wake-up`, `2 wake-ups`: a count and its noun, singular for exactly one.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A ratio with two decimals: `1.97`.
pub fn ratio(value: f64) -> String {
    format!("{value:.2}")
}

/// A fraction as a percentage: `0.934` → `93 %`.
pub fn percent(value: f64) -> String {
    format!("{:.0} %", value * 100.0)
}

/// Formats a number with about three significant digits, trailing zeros dropped
/// (`0.0812`, `12.3`, `4`, `1.00e-5`).
pub fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-3..6).contains(&mag) {
        return format!("{v:.2e}");
    }
    let decimals = (2 - mag).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_whole_and_plurals_agree() {
        assert_eq!(events(6.5), "6");
        assert_eq!(events(7.0), "7");
        assert_eq!(events(12_345.0), "12.3k");
        assert_eq!(plural(1, "wake-up"), "1 wake-up");
        assert_eq!(plural(0, "wake-up"), "0 wake-ups");
        assert_eq!(plural(49, "wake-up"), "49 wake-ups");
    }

    #[test]
    fn picks_units() {
        assert_eq!(secs(1.23456), "1.235 s");
        assert_eq!(secs(0.01234), "12.34 ms");
        assert_eq!(secs(0.000_004_12), "4.120 µs");
        assert_eq!(secs_range(0.5, 0.25, 0.75), "500.0 ms (250.0–750.0)");
    }

    #[test]
    fn counts() {
        assert_eq!(count(812.0), "812");
        assert_eq!(count(12_345.0), "12.3k");
        assert_eq!(count(4_560_000.0), "4.56M");
        assert_eq!(count(2.5), "2.50");
    }

    #[test]
    fn sig3_formats() {
        assert_eq!(sig3(0.08123), "0.0812");
        assert_eq!(sig3(12.345), "12.3");
        assert_eq!(sig3(1234.5), "1234");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(4.0), "4");
        assert_eq!(sig3(0.08), "0.08");
        assert_eq!(sig3(1e-5), "1.00e-5");
    }
}
