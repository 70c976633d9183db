//! Does `k` matter at all? The test the controller asks of its scan before it fits a curve.
//!
//! On work that does not scale (a lock held for the whole task, a loop bound by one resource),
//! every `k` delivers the same throughput, and the USL fit of a few noisy points on that flat
//! line puts its peak anywhere: 20 simulated seeds at ±5 % noise settled on `k` = 1 to 8 of 8
//! at random, 8 the most often. Fewer threads are as fast there, and cost a fraction of the
//! CPU. So the scan's points are first tested against the hypothesis "the throughput is the
//! same at every `k`", with the noise of one interval as the yardstick; only a gain the noise
//! cannot explain sends them on to the fit. The design is in `README.md`
//! ("Does `k` matter?").

use crate::judge::{best_mean, PRIOR_NOISE, PRIOR_WEIGHT};

/// Significance level of both tests in [`k_matters`]: 5 %. A false "`k` matters" on flat work
/// only falls back to the fit (what the controller did before this test existed); a false
/// "flat" costs throughput, so the level is the usual one, not a laxer one.
const ALPHA: f64 = 0.05;

/// Samples at the smallest and at the best `k` before "`k` does not matter" is believed: 3,
/// as a small pool measures every scan point (the median of 3 drops one outlier, and the
/// spread of 3 samples at each of two `k`s is 4 degrees of freedom of measured noise).
const REPEATS: usize = 3;

/// Whether the measured throughput depends on `k`, beyond the noise. Two tests at level
/// [`ALPHA`], on `y = ln X` (the noise is relative, so it is additive on logarithms); `k`
/// matters if either finds a difference:
///
/// 1. **Any difference** (one-way analysis of variance with the error variance taken as
///    known): under "flat", `Σ n_k (ȳ_k − ȳ)² / σ²` is χ² with (number of `k`s − 1) degrees of
///    freedom. It uses every point, so a curve whose shape shows across the scan (every
///    standard plant of the simulator) is called at once.
/// 2. **The smallest `k` against the best** (one-sided difference of two means): a gain
///    between the two ends of the scan is what the choice is about, and the first test spreads
///    it over the points in between. The best is picked from the other `m − 1` `k`s after
///    looking, so its level is `ALPHA / (m − 1)` (Bonferroni): without that, flat work at ±10 %
///    noise ended above `k = 2` in 6 to 11 of 20 simulated seeds (8, 64 and 256 threads: the
///    largest of several noisy means looked like a gain), with it in 2 to 3.
///
/// `σ²` is the scatter of repeated samples about their own `k`'s mean (pure error: no model
/// in it), pooled with the prior [`PRIOR_NOISE`] worth [`PRIOR_WEIGHT`] samples exactly as the
/// settled noise starts. A scan of single samples has only the prior; [`undecided_repeat`]
/// measures the two ends again so that the noise is measured where it decides something.
///
/// With fewer than two distinct `k`s there is nothing to test: `true` (the usual choice
/// stands).
pub(super) fn k_matters(points: &[(usize, f64)]) -> bool {
    let mut ks: Vec<usize> = points.iter().filter(|p| p.1 > 0.0).map(|p| p.0).collect();
    ks.sort_unstable();
    ks.dedup();
    if ks.len() < 2 {
        return true;
    }
    // Per k, ascending: samples and mean of ln X.
    let groups: Vec<(f64, f64)> = ks
        .iter()
        .map(|&k| {
            let ys: Vec<f64> = points
                .iter()
                .filter(|p| p.0 == k && p.1 > 0.0)
                .map(|p| p.1.ln())
                .collect();
            (ys.len() as f64, ys.iter().sum::<f64>() / ys.len() as f64)
        })
        .collect();
    let n: f64 = groups.iter().map(|g| g.0).sum();
    let grand = groups.iter().map(|g| g.0 * g.1).sum::<f64>() / n;
    let between: f64 = groups.iter().map(|g| g.0 * (g.1 - grand).powi(2)).sum();
    let within: f64 = points
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|&(k, x)| {
            let i = ks.binary_search(&k).expect("k is in ks");
            (x.ln() - groups[i].1).powi(2)
        })
        .sum();
    let within_dof = n - ks.len() as f64;
    let var = (within + PRIOR_WEIGHT * PRIOR_NOISE * PRIOR_NOISE) / (within_dof + PRIOR_WEIGHT);
    let m = ks.len() as f64;
    if between / var > chi2_upper(m - 1.0, normal_upper(ALPHA)) {
        return true;
    }
    let (n_small, y_small) = groups[0];
    let (n_best, y_best) = groups
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("two groups or more");
    let se = (var * (1.0 / n_small + 1.0 / n_best)).sqrt();
    y_best - y_small > normal_upper(ALPHA / (m - 1.0)) * se
}

/// While [`k_matters`] says no, the next `k` to measure again: the smallest measured `k`, then
/// the best, until each has [`REPEATS`] samples. `None` once `k` matters, or once both have
/// them (then the work is taken not to scale).
///
/// A scan of single samples (a pool of more than 3 threads) knows its noise only from the
/// prior (6 %); on a quiet host that hid real gains of 10–20 % (in the simulator at ±2 %
/// noise, a 10 % gain over 8 threads was taken for flat in 50 of 50 seeds). The repeats
/// measure the noise where it decides something. They cost nothing on curves whose gain is
/// plain from the scan (none of the standard plants' segments takes one), and at most four
/// intervals, at `k`s that are as fast as any as far as anything measured shows.
pub(super) fn undecided_repeat(points: &[(usize, f64)]) -> Option<usize> {
    if k_matters(points) {
        return None;
    }
    let smallest = points.iter().map(|p| p.0).min()?;
    let best = best_mean(points).0;
    [smallest, best]
        .into_iter()
        .find(|&k| points.iter().filter(|p| p.0 == k).count() < REPEATS)
}

/// `z` with `P(Z > z) = p` for a standard normal `Z`, `0 < p ≤ 0.5` (Abramowitz and Stegun
/// 26.2.23, a rational approximation with error below 4.5e-4).
fn normal_upper(p: f64) -> f64 {
    let t = (-2.0 * p.ln()).sqrt();
    t - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
        / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t)
}

/// The upper quantile of χ² with `dof` degrees of freedom at the standard normal quantile `z`
/// (Wilson and Hilferty: `(χ²/ν)^(1/3)` is nearly normal; within 3 % of the exact value at
/// 95 % from one degree of freedom up).
fn chi2_upper(dof: f64, z: f64) -> f64 {
    let h = 2.0 / (9.0 * dof);
    dof * (1.0 - h + z * h.sqrt()).powi(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative deviations in ±5 %, fixed, as a scan on a ±5 % host might see them.
    const WOBBLE: [f64; 6] = [0.04, -0.03, 0.05, -0.05, 0.01, -0.02];

    fn scan(ks: &[usize], x: impl Fn(usize) -> f64) -> Vec<(usize, f64)> {
        ks.iter()
            .zip(WOBBLE.iter().cycle())
            .map(|(&k, &w)| (k, x(k) * (1.0 + w)))
            .collect()
    }

    #[test]
    fn the_quantiles_are_close_to_the_tables() {
        // Tables: z(0.05) = 1.6449, z(0.05/3) = 2.1280; χ²(0.95) = 3.841, 7.815, 15.507.
        assert!((normal_upper(0.05) - 1.6449).abs() < 1e-3);
        assert!((normal_upper(0.05 / 3.0) - 2.1280).abs() < 1e-3);
        let z = normal_upper(0.05);
        for (dof, table) in [(1.0, 3.841), (3.0, 7.815), (8.0, 15.507)] {
            let q = chi2_upper(dof, z);
            assert!((q / table - 1.0).abs() < 0.03, "dof {dof}: {q} vs {table}");
        }
    }

    #[test]
    fn flat_points_within_the_noise_do_not_make_k_matter() {
        let pts = scan(&[8, 4, 2, 1], |_| 1000.0);
        assert!(!k_matters(&pts));
        // The same with three samples at each end.
        let mut more = pts.clone();
        more.extend(scan(&[1, 1, 8, 8], |_| 1000.0));
        assert!(!k_matters(&more));
    }

    #[test]
    fn a_gain_plain_from_the_scan_makes_k_matter_at_once() {
        // Each standard curve of the simulator shows its shape over the scan: the memory-bound
        // one gains 1.8× from 1 to 8 threads, the one that peaks at 2 of 8 has 2.4× between
        // its best and worst points.
        assert!(k_matters(&scan(&[8, 4, 2, 1], |k| {
            let k = k as f64;
            3000.0 * k / (1.0 + 0.5 * (k - 1.0))
        })));
        assert!(k_matters(&scan(&[8, 4, 2, 1], |k| {
            let k = k as f64;
            2000.0 * k / (1.0 + 0.05 * (k - 1.0) + 0.2375 * k * (k - 1.0))
        })));
        assert_eq!(undecided_repeat(&scan(&[8, 4, 2, 1], |k| k as f64)), None);
    }

    #[test]
    fn one_k_has_nothing_to_test() {
        assert!(k_matters(&[(4, 100.0), (4, 130.0)]));
        assert!(k_matters(&[]));
    }

    /// A 10 % gain from 1 to 8 threads on a quiet host. Single samples cannot show it against
    /// the prior noise (6 %); three quiet samples at each end can. Three samples that scatter
    /// by ±15 % cannot, and the work is then taken not to scale.
    #[test]
    fn repeats_at_the_ends_decide_a_gain_the_prior_hides() {
        let x = |k: usize| 1000.0 * (1.0 + 0.1 * (k as f64 - 1.0) / 7.0);
        let single = vec![(8, x(8)), (4, x(4)), (2, x(2)), (1, x(1))];
        assert!(!k_matters(&single));
        assert_eq!(undecided_repeat(&single), Some(1));
        let mut quiet = single.clone();
        quiet.extend([(1, x(1) * 1.01), (1, x(1) * 0.99)]);
        assert_eq!(undecided_repeat(&quiet), Some(8));
        quiet.extend([(8, x(8) * 0.99), (8, x(8) * 1.01)]);
        assert!(k_matters(&quiet));
        assert_eq!(undecided_repeat(&quiet), None);
        let mut noisy = single;
        noisy.extend([
            (1, x(1) * 1.15),
            (1, x(1) * 0.85),
            (8, x(8) * 0.85),
            (8, x(8) * 1.15),
        ]);
        assert!(!k_matters(&noisy));
        assert_eq!(undecided_repeat(&noisy), None);
    }

    /// The largest of several noisy means is not a gain: 8 points on a flat line with one of
    /// them 8 % high (a ±10 % host), and three samples at each end, do not make `k` matter.
    /// A real gain at that point, 12 % in three quiet samples, does. (Between the two lies the
    /// limit of this scan: the gain must exceed z(0.05 / 7) = 2.45 standard errors of the
    /// difference, 8.7 % here, where the prior still weighs as much as the measured noise.)
    #[test]
    fn the_best_of_many_is_judged_as_chosen_after_looking() {
        let mut flat: Vec<(usize, f64)> = [128, 64, 32, 16, 8, 4, 2, 1]
            .iter()
            .zip(WOBBLE.iter().cycle())
            .map(|(&k, &w)| (k, 1000.0 * (1.0 + w)))
            .collect();
        flat[3].1 = 1080.0;
        let ends = [(1, 990.0), (1, 1010.0), (16, 1000.0), (16, 1020.0)];
        flat.extend(ends);
        assert!(!k_matters(&flat));
        // The best mean is now k = 32's single 1 050: that is measured again next.
        assert_eq!(undecided_repeat(&flat), Some(32));
        let mut gain: Vec<(usize, f64)> = flat.into_iter().filter(|p| p.0 != 16).collect();
        gain.extend([(16, 1118.0), (16, 1122.0), (16, 1120.0)]);
        assert!(k_matters(&gain));
    }
}
