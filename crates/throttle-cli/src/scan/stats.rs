//! Descriptive statistics of repeated runs: location and spread, outliers, the stability of a
//! median, and the scaling metrics derived from a speedup (efficiency, Karp–Flatt).
//!
//! Location and spread are the probe's [`Summary`], the statistics type of every experiment
//! (same median — the mean of the two middle values —, sample standard deviation); what is
//! here is only what scan adds to it.

use throttle_probe::Summary;

/// The sample standard deviation of `s`, `None` for a single value: hyperfine writes `null`
/// there, and so do scan's exports (the common [`Summary`] says 0).
pub fn stddev(s: &Summary) -> Option<f64> {
    (s.count > 1).then_some(s.stddev)
}

/// The `q` quantile (0 ≤ q ≤ 1) of sorted values, interpolating linearly between order
/// statistics (type 7 in Hyndman & Fan, the default of R and NumPy). `sorted` must be non-empty.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The median of `values`; `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|d| d.median)
}

/// Iglewicz and Hoaglin's threshold for the modified z-score: values beyond 3.5 are "potential
/// outliers" (Iglewicz & Hoaglin, *How to Detect and Handle Outliers*, 1993).
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// Modified z-scores `0.6745 (x − median) / MAD`. When the MAD is zero (more than half the
/// values are equal) every score is zero, not infinity: with that little spread nothing is
/// called an outlier.
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    let Some(med) = median(values) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    values
        .iter()
        .map(|v| {
            if mad > 0.0 {
                // 0.6745 is the 0.75 quantile of the standard normal: it makes the MAD a
                // consistent estimator of σ for normal data.
                0.6745 * (v - med) / mad
            } else {
                0.0
            }
        })
        .collect()
}

/// The fewest runs from which one run can be called an outlier: with 3 or 4 the median and the
/// MAD rest on one or two values, and a score says nothing (Iglewicz & Hoaglin use the score on
/// samples, not on triples).
pub const MIN_RUNS_FOR_OUTLIERS: usize = 5;

/// An outlier must also be far from the median in relative terms: 5 %. Below that a run is
/// noise that does not change what a reader concludes, however tight the other runs are.
pub const MIN_OUTLIER_DEVIATION: f64 = 0.05;

/// Spread (max − min) / median above which a value with too few runs for outliers gets a
/// warning instead: 10 %, twice the outlier deviation.
pub const WIDE_SPREAD: f64 = 0.10;

/// How many of `values` are outliers: at least [`MIN_RUNS_FOR_OUTLIERS`] values, a modified
/// z-score beyond [`OUTLIER_THRESHOLD`] (or any deviation when the MAD is zero), and a distance
/// from the median above [`MIN_OUTLIER_DEVIATION`] of it.
pub fn count_outliers(values: &[f64]) -> usize {
    if values.len() < MIN_RUNS_FOR_OUTLIERS {
        return 0;
    }
    let Some(med) = median(values) else {
        return 0;
    };
    let deviations: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad_is_zero = median(&deviations).unwrap_or(0.0) == 0.0;
    values
        .iter()
        .zip(modified_z_scores(values))
        .filter(|(v, z)| {
            let far = (*v - med).abs() > MIN_OUTLIER_DEVIATION * med.abs();
            far && (mad_is_zero || z.abs() > OUTLIER_THRESHOLD)
        })
        .count()
}

/// (max − min) / median of `values`; `None` when empty or the median is not positive.
pub fn relative_spread(values: &[f64]) -> Option<f64> {
    let d = Summary::of(values)?;
    (d.median > 0.0).then(|| (d.max - d.min) / d.median)
}

/// Relative half-width of the approximate 95 % confidence interval of the median,
/// `1.57 · IQR / √n / median` (McGill, Tukey & Larsen's notch, 1978). `None` when empty or the
/// median is not positive.
pub fn median_relative_uncertainty(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let med = quantile_sorted(&sorted, 0.5);
    if med <= 0.0 {
        return None;
    }
    let iqr = quantile_sorted(&sorted, 0.75) - quantile_sorted(&sorted, 0.25);
    Some(1.57 * iqr / (sorted.len() as f64).sqrt() / med)
}

/// Parallel efficiency: speedup divided by the growth of concurrency (`n / n0`).
pub fn efficiency(speedup: f64, relative_concurrency: f64) -> f64 {
    speedup / relative_concurrency
}

/// The Karp–Flatt experimentally determined serial fraction
/// `e = (1/S − 1/p) / (1 − 1/p)` for speedup `S` at `p` times the base concurrency.
/// `None` at `p ≤ 1`, where it is undefined. A serial fraction that grows with `p` points at
/// parallel overhead (synchronisation, coherency); a constant one at plain serial work.
pub fn karp_flatt(speedup: f64, p: f64) -> Option<f64> {
    (p > 1.0 && speedup > 0.0 && speedup.is_finite())
        .then(|| (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_values_have_no_stddev() {
        let d = Summary::of(&[3.0, 1.0, 2.0, 4.0]).unwrap();
        assert!((stddev(&d).unwrap() - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(stddev(&Summary::of(&[2.0]).unwrap()), None);
    }

    #[test]
    fn outliers_by_modified_z_score() {
        let values = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 5.0];
        assert_eq!(count_outliers(&values), 1);
        assert_eq!(
            count_outliers(&[1.0, 1.0, 1.0, 1.0, 9.0]),
            1,
            "MAD 0: a far value is an outlier"
        );
        assert_eq!(count_outliers(&[]), 0);
    }

    #[test]
    fn small_deviations_and_few_runs_are_not_outliers() {
        // A 0.6 % deviation is not worth a warning, whatever its z-score.
        let tight = [1.0, 1.0001, 0.9999, 1.0002, 1.006];
        assert!(modified_z_scores(&tight)[4] > OUTLIER_THRESHOLD);
        assert_eq!(count_outliers(&tight), 0);
        // Three runs are too few to single one out, even at 21 %; the spread says so instead.
        assert_eq!(count_outliers(&[1.0, 1.0, 1.21]), 0);
        assert!(relative_spread(&[1.0, 1.0, 1.21]).unwrap() > WIDE_SPREAD);
    }

    #[test]
    fn median_uncertainty_shrinks_with_agreement() {
        let tight = median_relative_uncertainty(&[1.0, 1.001, 0.999]).unwrap();
        let loose = median_relative_uncertainty(&[1.0, 1.3, 0.7]).unwrap();
        assert!(tight < 0.01 && loose > 0.1, "{tight} {loose}");
        assert_eq!(median_relative_uncertainty(&[]), None);
    }

    #[test]
    fn karp_flatt_of_amdahl_speedup_is_the_serial_fraction() {
        // Amdahl with serial fraction 0.1 at p = 4: S = 1 / (0.1 + 0.9/4).
        let s = 1.0 / (0.1 + 0.9 / 4.0);
        assert!((karp_flatt(s, 4.0).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(karp_flatt(s, 1.0), None);
        assert!((karp_flatt(4.0, 4.0).unwrap()).abs() < 1e-12);
        assert!((efficiency(3.0, 4.0) - 0.75).abs() < 1e-12);
    }
}
