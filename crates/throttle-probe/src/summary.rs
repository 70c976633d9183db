//! Order statistics of repeated measurements: never quote one run.

use std::time::Duration;

/// Count, median, min, max, mean and sample standard deviation of a set of values.
///
/// # Examples
///
/// ```
/// use throttle_probe::Summary;
///
/// let s = Summary::of(&[3.0, 1.0, 2.0, 10.0]).unwrap();
/// assert_eq!(s.count, 4);
/// assert_eq!(s.median, 2.5);
/// assert_eq!((s.min, s.max), (1.0, 10.0));
/// assert!(Summary::of(&[]).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    /// How many values were summarised (non-finite inputs are left out).
    pub count: usize,
    /// The middle value; the mean of the two middle values for an even count.
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The sample standard deviation (divisor `count - 1`); 0 for a single value.
    pub stddev: f64,
}

impl Summary {
    /// Summarises the finite values in `values`; `None` when there are none.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = throttle_probe::Summary::of(&[5.0, f64::NAN]).unwrap();
    /// assert_eq!((s.count, s.median, s.stddev), (1, 5.0, 0.0));
    /// ```
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            let ss: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            count: n,
            median,
            min: v[0],
            max: v[n - 1],
            mean,
            stddev,
        })
    }

    /// Summarises durations, in seconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = throttle_probe::Summary::of_durations(&[Duration::from_millis(500)]).unwrap();
    /// assert_eq!(s.median, 0.5);
    /// ```
    pub fn of_durations(values: &[Duration]) -> Option<Summary> {
        let secs: Vec<f64> = values.iter().map(Duration::as_secs_f64).collect();
        Summary::of(&secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_count_median_is_middle() {
        let s = Summary::of(&[9.0, 1.0, 5.0]).unwrap();
        assert_eq!(s.median, 5.0);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.stddev, 4.0);
    }

    #[test]
    fn only_non_finite_is_none() {
        assert!(Summary::of(&[f64::NAN, f64::INFINITY]).is_none());
    }
}
