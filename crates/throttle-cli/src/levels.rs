//! Comma-separated lists of levels (`--levels 1,2,4,0`), parsed once with messages that name the
//! bad item.

use std::str::FromStr;

/// A non-empty list of distinct non-negative integers, with the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelList {
    raw: String,
    values: Vec<usize>,
}

impl LevelList {
    /// The levels in the order given.
    pub fn values(&self) -> Vec<usize> {
        self.values.clone()
    }

    /// The text the list was parsed from.
    pub fn raw(&self) -> &str {
        &self.raw
    }
}

impl FromStr for LevelList {
    type Err = String;

    fn from_str(text: &str) -> Result<LevelList, String> {
        let mut values = Vec::new();
        for item in text.split(',') {
            let item = item.trim();
            let value: usize = item.parse().map_err(|e: std::num::ParseIntError| {
                match e.kind() {
                    // All digits, but more than a level can be: say so, not "not a number".
                    std::num::IntErrorKind::PosOverflow => {
                        format!("'{item}' is too large for a level (at most {})", usize::MAX)
                    }
                    _ => format!(
                        "'{item}' is not a whole number; expected a comma-separated list like 1,2,4,0"
                    ),
                }
            })?;
            if values.contains(&value) {
                return Err(format!("level {value} appears twice"));
            }
            values.push(value);
        }
        Ok(LevelList {
            raw: text.to_string(),
            values,
        })
    }
}

impl std::fmt::Display for LevelList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let l: LevelList = "1, 2,0".parse().expect("valid");
        assert_eq!(l.values(), vec![1, 2, 0]);
        assert_eq!(l.raw(), "1, 2,0");
        assert!("2,x".parse::<LevelList>().unwrap_err().contains("'x'"));
        assert!("".parse::<LevelList>().is_err());
        assert!("1,,2".parse::<LevelList>().is_err());
        assert!("-1".parse::<LevelList>().is_err());
        assert!("2,2".parse::<LevelList>().unwrap_err().contains("twice"));
        let big = "99999999999999999999".parse::<LevelList>().unwrap_err();
        assert!(
            big.contains("too large") && !big.contains("not a whole number"),
            "{big}"
        );
    }
}
