//! Value parsers for numeric options, so every bad number gets one line that names the flag, the
//! value and the accepted range (`invalid value '-5' for '--tasks <TASKS>': must be a whole
//! number from 1 to 4096`), never clap's `unexpected argument` or Rust's `invalid digit`.
//!
//! Options using them also set `allow_negative_numbers`, so `-5` reaches the parser instead of
//! being read as an unknown flag.

/// A parser for whole numbers in `min..=max`, converted to `T`.
pub fn whole<T>(min: u64, max: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: TryFrom<u64>,
{
    move |text: &str| {
        let range = if max == u64::MAX {
            format!("must be a whole number, at least {min}")
        } else {
            format!("must be a whole number from {min} to {max}")
        };
        let value: u64 = text.trim().parse().map_err(|_| range.clone())?;
        if value < min || value > max {
            return Err(range);
        }
        T::try_from(value).map_err(|_| range)
    }
}

/// A parser for a duration in seconds: a finite number above 0 and at most `max`.
pub fn seconds(max: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |text: &str| {
        let why = format!("must be a number of seconds above 0 and at most {max}");
        let value: f64 = text.trim().parse().map_err(|_| why.clone())?;
        if value.is_finite() && value > 0.0 && value <= max {
            Ok(value)
        } else {
            Err(why)
        }
    }
}

/// One day in seconds: the longest run any time option accepts (a longer one is surely a typo,
/// and larger values overflow the durations built from them).
pub const MAX_SECONDS: f64 = 86_400.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_name_their_range() {
        let p = whole::<u32>(1, 1000);
        assert_eq!(p("7"), Ok(7));
        assert_eq!(
            p("-1").unwrap_err(),
            "must be a whole number from 1 to 1000"
        );
        assert!(p("0").is_err() && p("1001").is_err() && p("x").is_err());
        assert_eq!(
            whole::<usize>(0, u64::MAX)("abc").unwrap_err(),
            "must be a whole number, at least 0"
        );
        assert!(whole::<u8>(0, u64::MAX)("300").is_err());
    }

    #[test]
    fn seconds_reject_huge_and_negative() {
        let p = seconds(MAX_SECONDS);
        assert_eq!(p("2.5"), Ok(2.5));
        for bad in ["1e300", "1e20", "-3", "0", "nan", "inf", "x"] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }
}
