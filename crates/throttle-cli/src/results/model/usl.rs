//! The Universal Scalability Law and its fit: pure math, no I/O.
//!
//! Gunther's Universal Scalability Law models throughput at concurrency `N` as
//!
//! ```text
//! X(N) = λ N / (1 + σ (N − 1) + κ N (N − 1))
//! ```
//!
//! where `λ` is the throughput of one unit of concurrency, `σ` the contention (the serial
//! fraction, as in Amdahl's law) and `κ` the coherency cost (pairwise crosstalk, which makes
//! throughput *fall* past the peak `N* = √((1 − σ) / κ)`). Amdahl's law is the special case
//! `κ = 0`.
//!
//! [`fit_usl`] and [`fit_amdahl`] estimate the parameters by nonlinear least squares with a
//! Levenberg–Marquardt iteration written here (three parameters need no linear-algebra crate).
//! The bounds `0 ≤ σ ≤ 1`, `0 ≤ κ ≤ 1` and `λ > 0` are kept by projecting every trial step onto
//! the box. The residuals are *relative*, `(X(N) − y) / y`, because timing noise is
//! multiplicative: a 5 % jitter at 16 threads should weigh as much as a 5 % jitter at 1 thread.
//! Standard errors come from the Jacobian at the optimum: `cov = s² (JᵀJ)⁻¹` with
//! `s² = Σr² / (n − p)`.

use serde::Serialize;

/// One fitted model: USL (three free parameters) or Amdahl (κ fixed at zero).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Throughput of one unit of concurrency (λ), in the unit of the data.
    pub lambda: f64,
    /// Contention, the serial fraction (σ), in `[0, 1]`.
    pub sigma: f64,
    /// Coherency cost (κ), in `[0, 1]`; exactly zero for the Amdahl fit.
    pub kappa: f64,
    /// Standard errors of `(λ, σ, κ)`; `None` when there are too few points for them or the
    /// problem is degenerate there. κ's error is zero for the Amdahl fit (it is not estimated).
    pub std_errors: Option<[f64; 3]>,
    /// Coefficient of determination on the (unweighted) throughput; `None` when the data have
    /// no spread at all, so that R² is undefined.
    pub r_squared: Option<f64>,
    /// Root mean square of the relative residuals (0.05 means the model misses by about 5 %).
    pub rms_relative_error: f64,
    /// Number of data points used.
    pub points: usize,
    /// Levenberg–Marquardt iterations taken by the best start.
    pub iterations: usize,
}

impl Fit {
    /// The modelled throughput at concurrency `n`.
    pub fn predict(&self, n: f64) -> f64 {
        usl(self.lambda, self.sigma, self.kappa, n)
    }

    /// The concurrency of peak throughput, `√((1 − σ) / κ)`; `None` when κ = 0 (throughput
    /// rises for ever, towards the Amdahl ceiling λ/σ).
    pub fn peak(&self) -> Option<f64> {
        if self.kappa > 0.0 {
            Some(((1.0 - self.sigma).max(0.0) / self.kappa).sqrt())
        } else {
            None
        }
    }

    /// The limit of throughput as `N → ∞` when κ = 0: `λ / σ`; `None` when σ = 0 or κ > 0.
    pub fn ceiling(&self) -> Option<f64> {
        (self.kappa == 0.0 && self.sigma > 0.0).then(|| self.lambda / self.sigma)
    }
}

/// Why a fit could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FitError {
    /// Fewer distinct concurrency levels than free parameters.
    TooFewPoints {
        /// Distinct concurrency levels in the data.
        distinct: usize,
        /// Levels needed.
        needed: usize,
    },
    /// A concurrency level or throughput that is not a positive finite number.
    BadPoint {
        /// Index of the offending point.
        index: usize,
    },
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::TooFewPoints { distinct, needed } => write!(
                f,
                "{distinct} distinct concurrency level(s); the fit needs at least {needed}"
            ),
            FitError::BadPoint { index } => write!(
                f,
                "point {index} has a concurrency or throughput that is not a positive number"
            ),
        }
    }
}

impl std::error::Error for FitError {}

/// The USL curve `λN / (1 + σ(N − 1) + κN(N − 1))`.
pub fn usl(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Fits the full USL (λ, σ, κ) to `(n, throughput)` points. Needs three distinct `n`.
pub fn fit_usl(points: &[(f64, f64)]) -> Result<Fit, FitError> {
    fit(points, [true, true, true])
}

/// Fits Amdahl's law (the USL with κ = 0). Needs two distinct `n`.
pub fn fit_amdahl(points: &[(f64, f64)]) -> Result<Fit, FitError> {
    fit(points, [true, true, false])
}

/// Lower and upper bounds of (λ, σ, κ). λ only needs to stay positive; its upper bound is
/// effectively open.
const LOWER: [f64; 3] = [1e-300, 0.0, 0.0];
const UPPER: [f64; 3] = [f64::MAX, 1.0, 1.0];

/// Iteration cap per start. Each iteration costs O(points); 500 is far more than the ~10–40
/// a well-posed USL problem takes, and keeps a pathological one bounded.
const MAX_ITERATIONS: usize = 500;

fn fit(points: &[(f64, f64)], free: [bool; 3]) -> Result<Fit, FitError> {
    for (index, &(n, y)) in points.iter().enumerate() {
        if !(n.is_finite() && n > 0.0 && y.is_finite() && y > 0.0) {
            return Err(FitError::BadPoint { index });
        }
    }
    let needed = free.iter().filter(|f| **f).count();
    let mut levels: Vec<f64> = points.iter().map(|p| p.0).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    if levels.len() < needed {
        return Err(FitError::TooFewPoints {
            distinct: levels.len(),
            needed,
        });
    }

    let mut best: Option<(f64, [f64; 3], usize)> = None;
    for start in starts(points, free) {
        let (p, cost, iterations) = levenberg_marquardt(points, start, free);
        let better = match &best {
            Some(b) => cost < b.0,
            None => true,
        };
        if better {
            best = Some((cost, p, iterations));
        }
    }
    // `starts` always yields at least one start.
    let (cost, p, iterations) = best.unwrap_or((f64::INFINITY, [1.0, 0.0, 0.0], 0));

    let n = points.len();
    let std_errors = standard_errors(points, p, free, cost);
    let mean = points.iter().map(|q| q.1).sum::<f64>() / n as f64;
    let ss_tot: f64 = points.iter().map(|q| (q.1 - mean).powi(2)).sum();
    let ss_res: f64 = points
        .iter()
        .map(|q| (q.1 - usl(p[0], p[1], p[2], q.0)).powi(2))
        .sum();
    let r_squared = (ss_tot > 0.0).then(|| 1.0 - ss_res / ss_tot);
    Ok(Fit {
        lambda: p[0],
        sigma: p[1],
        kappa: p[2],
        std_errors,
        r_squared,
        rms_relative_error: (2.0 * cost / n as f64).sqrt(),
        points: n,
        iterations,
    })
}

/// Starting points: one from Gunther's linearisation plus a small grid, so a local minimum of
/// one start does not decide the answer.
fn starts(points: &[(f64, f64)], free: [bool; 3]) -> Vec<[f64; 3]> {
    // λ ≈ the best per-unit throughput at the smallest level (exact when σ = κ = 0 at N = 1).
    let n_min = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let at_min: Vec<f64> = points
        .iter()
        .filter(|p| p.0 == n_min)
        .map(|p| p.1 / p.0)
        .collect();
    let lambda0 = at_min.iter().sum::<f64>() / at_min.len().max(1) as f64;

    // With C(N) = X(N)/λ, N/C − 1 = σ(N − 1) + κN(N − 1): linear in σ and κ.
    let (mut s0, mut k0) = linearised(points, lambda0, free[2]);
    s0 = s0.clamp(0.0, 1.0);
    k0 = if free[2] { k0.clamp(0.0, 1.0) } else { 0.0 };
    let mut out = vec![[lambda0, s0, k0]];
    for s in [0.0, 0.05, 0.3] {
        for k in [0.0, 1e-3, 0.03] {
            if free[2] || k == 0.0 {
                out.push([lambda0, s, k]);
            }
        }
    }
    out
}

/// Least squares of `N/C − 1 = σ(N − 1) + κN(N − 1)` (no intercept); κ = 0 unless `with_kappa`.
fn linearised(points: &[(f64, f64)], lambda: f64, with_kappa: bool) -> (f64, f64) {
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, y) in points {
        let t = n * lambda / y - 1.0;
        let u = n - 1.0;
        let v = n * (n - 1.0);
        a11 += u * u;
        a12 += u * v;
        a22 += v * v;
        b1 += u * t;
        b2 += v * t;
    }
    if with_kappa {
        let det = a11 * a22 - a12 * a12;
        if det.abs() > 1e-12 * (a11 * a22).max(1e-300) {
            return ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det);
        }
    }
    if a11 > 0.0 {
        (b1 / a11, 0.0)
    } else {
        (0.0, 0.0)
    }
}

/// Relative residuals and their Jacobian (rows: points; columns: λ, σ, κ).
fn residuals(points: &[(f64, f64)], p: [f64; 3]) -> (Vec<f64>, Vec<[f64; 3]>) {
    let [lambda, sigma, kappa] = p;
    let mut r = Vec::with_capacity(points.len());
    let mut jac = Vec::with_capacity(points.len());
    for &(n, y) in points {
        let d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
        let x = lambda * n / d;
        r.push((x - y) / y);
        let dx_dd = -lambda * n / (d * d);
        jac.push([n / d / y, dx_dd * (n - 1.0) / y, dx_dd * n * (n - 1.0) / y]);
    }
    (r, jac)
}

fn cost_of(points: &[(f64, f64)], p: [f64; 3]) -> f64 {
    0.5 * residuals(points, p).0.iter().map(|r| r * r).sum::<f64>()
}

fn project(mut p: [f64; 3]) -> [f64; 3] {
    for i in 0..3 {
        p[i] = p[i].clamp(LOWER[i], UPPER[i]);
    }
    p
}

/// The normal equations `JᵀJ` and `Jᵀr` restricted to the free parameters.
fn normal_equations(jac: &[[f64; 3]], r: &[f64], idx: &[usize]) -> (Vec<Vec<f64>>, Vec<f64>) {
    let k = idx.len();
    let mut a = vec![vec![0.0; k]; k];
    let mut g = vec![0.0; k];
    for (row, &ri) in jac.iter().zip(r) {
        for (i, &pi) in idx.iter().enumerate() {
            g[i] += row[pi] * ri;
            for (j, &pj) in idx.iter().enumerate() {
                a[i][j] += row[pi] * row[pj];
            }
        }
    }
    (a, g)
}

/// Projected Levenberg–Marquardt from `start`. Returns the parameters, the cost ½Σr² and the
/// iterations taken.
fn levenberg_marquardt(
    points: &[(f64, f64)],
    start: [f64; 3],
    free: [bool; 3],
) -> ([f64; 3], f64, usize) {
    let idx: Vec<usize> = (0..3).filter(|&i| free[i]).collect();
    let mut p = project(start);
    let mut cost = cost_of(points, p);
    let mut mu = 1e-3;
    let mut iterations = 0;
    while iterations < MAX_ITERATIONS {
        iterations += 1;
        let (r, jac) = residuals(points, p);
        let (a, g) = normal_equations(&jac, &r, &idx);
        let grad_norm = g.iter().map(|v| v.abs()).fold(0.0, f64::max);
        if grad_norm < 1e-15 || cost < 1e-30 {
            break;
        }
        let mut improved = false;
        // Try increasingly damped steps until one lowers the cost.
        while mu < 1e16 {
            let mut damped = a.clone();
            for (i, row) in damped.iter_mut().enumerate() {
                // Marquardt's scaling by the diagonal makes the damping unit-free (λ may be
                // 1e4 while κ is 1e-4); the small floor keeps a zero column solvable.
                row[i] += mu * a[i][i].max(1e-12);
            }
            let minus_g: Vec<f64> = g.iter().map(|v| -v).collect();
            let Some(step) = solve(damped, minus_g) else {
                mu *= 10.0;
                continue;
            };
            let mut trial = p;
            for (i, &pi) in idx.iter().enumerate() {
                trial[pi] += step[i];
            }
            let trial = project(trial);
            let trial_cost = cost_of(points, trial);
            if trial_cost < cost {
                let moved = (0..3)
                    .map(|i| (trial[i] - p[i]).abs() / p[i].abs().max(1e-12))
                    .fold(0.0, f64::max);
                let gain = (cost - trial_cost) / cost.max(1e-300);
                p = trial;
                cost = trial_cost;
                mu = (mu / 3.0).max(1e-12);
                improved = true;
                if moved < 1e-14 || gain < 1e-15 {
                    return (p, cost, iterations);
                }
                break;
            }
            mu *= 4.0;
        }
        if !improved {
            break;
        }
    }
    (p, cost, iterations)
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` if singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let k = b.len();
    for col in 0..k {
        let pivot = (col..k).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col] == 0.0 || !a[pivot][col].is_finite() {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..k {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col].clone();
            for (cell, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *cell -= factor * p;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; k];
    for row in (0..k).rev() {
        let s: f64 = (row + 1..k).map(|c| a[row][c] * x[c]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

fn standard_errors(
    points: &[(f64, f64)],
    p: [f64; 3],
    free: [bool; 3],
    cost: f64,
) -> Option<[f64; 3]> {
    let idx: Vec<usize> = (0..3).filter(|&i| free[i]).collect();
    let dof = points.len().checked_sub(idx.len()).filter(|d| *d > 0)?;
    let s2 = 2.0 * cost / dof as f64;
    let (r, jac) = residuals(points, p);
    let (a, _) = normal_equations(&jac, &r, &idx);
    let mut out = [0.0; 3];
    for (i, &pi) in idx.iter().enumerate() {
        let mut e = vec![0.0; idx.len()];
        e[i] = 1.0;
        let column = solve(a.clone(), e)?;
        let var = s2 * column[i];
        if var.is_nan() || var < 0.0 || !var.is_finite() {
            return None;
        }
        out[pi] = var.sqrt();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: a tiny seeded generator, enough for test noise.
    struct XorShift(u64);

    impl XorShift {
        fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        /// Uniform in [-1, 1).
        fn symmetric(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    fn synthetic(lambda: f64, sigma: f64, kappa: f64, ns: &[f64]) -> Vec<(f64, f64)> {
        ns.iter()
            .map(|&n| (n, usl(lambda, sigma, kappa, n)))
            .collect()
    }

    fn rel(a: f64, b: f64) -> f64 {
        if b == 0.0 {
            a.abs()
        } else {
            ((a - b) / b).abs()
        }
    }

    const NS: [f64; 8] = [1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0];

    #[test]
    fn recovers_noise_free_parameters_exactly() {
        for &(lambda, sigma, kappa) in &[
            (100.0, 0.05, 0.002),
            (2.5, 0.2, 0.0001),
            (1234.0, 0.01, 0.02),
            (0.7, 0.5, 0.1),
        ] {
            let fit = fit_usl(&synthetic(lambda, sigma, kappa, &NS)).unwrap();
            assert!(rel(fit.lambda, lambda) < 1e-6, "λ {fit:?}");
            assert!(rel(fit.sigma, sigma) < 1e-6, "σ {fit:?}");
            assert!(rel(fit.kappa, kappa) < 1e-6, "κ {fit:?}");
            assert!(fit.r_squared.unwrap() > 1.0 - 1e-9);
        }
    }

    #[test]
    fn recovers_noise_free_from_few_levels_not_starting_at_one() {
        let ns = [2.0, 3.0, 5.0, 9.0];
        let fit = fit_usl(&synthetic(40.0, 0.1, 0.005, &ns)).unwrap();
        assert!(rel(fit.lambda, 40.0) < 1e-6, "{fit:?}");
        assert!(rel(fit.sigma, 0.1) < 1e-6, "{fit:?}");
        assert!(rel(fit.kappa, 0.005) < 1e-6, "{fit:?}");
    }

    #[test]
    fn amdahl_data_gives_zero_kappa() {
        let data = synthetic(10.0, 0.08, 0.0, &NS);
        let usl_fit = fit_usl(&data).unwrap();
        assert!(rel(usl_fit.sigma, 0.08) < 1e-6, "{usl_fit:?}");
        assert!(usl_fit.kappa < 1e-9, "{usl_fit:?}");
        let amdahl = fit_amdahl(&data).unwrap();
        assert!(rel(amdahl.sigma, 0.08) < 1e-6, "{amdahl:?}");
        assert_eq!(amdahl.kappa, 0.0);
        assert!(rel(amdahl.ceiling().unwrap(), 125.0) < 1e-6);
        assert_eq!(amdahl.peak(), None);
    }

    /// Tolerance with 5 % multiplicative noise, 5 runs at each of 8 levels (40 points):
    /// λ within 5 %, σ within ±0.02 absolute, κ within ±0.001 absolute, and the peak N* within
    /// 20 %. The true values lie within 4 standard errors. Checked over 20 seeds.
    #[test]
    fn recovers_parameters_within_tolerance_under_five_percent_noise() {
        let (lambda, sigma, kappa): (f64, f64, f64) = (50.0, 0.05, 0.003);
        let true_peak = ((1.0 - sigma) / kappa).sqrt();
        for seed in 1..=20u64 {
            let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ seed);
            let mut data = Vec::new();
            for _ in 0..5 {
                for &n in &NS {
                    let noise = 1.0 + 0.05 * rng.symmetric();
                    data.push((n, usl(lambda, sigma, kappa, n) * noise));
                }
            }
            let fit = fit_usl(&data).unwrap();
            assert!(rel(fit.lambda, lambda) < 0.05, "seed {seed}: {fit:?}");
            assert!((fit.sigma - sigma).abs() < 0.02, "seed {seed}: {fit:?}");
            assert!((fit.kappa - kappa).abs() < 0.001, "seed {seed}: {fit:?}");
            assert!(
                rel(fit.peak().unwrap(), true_peak) < 0.2,
                "seed {seed}: {fit:?}"
            );
            let se = fit.std_errors.unwrap();
            assert!(
                (fit.lambda - lambda).abs() < 4.0 * se[0],
                "seed {seed}: {fit:?}"
            );
            assert!(
                (fit.sigma - sigma).abs() < 4.0 * se[1],
                "seed {seed}: {fit:?}"
            );
            assert!(
                (fit.kappa - kappa).abs() < 4.0 * se[2],
                "seed {seed}: {fit:?}"
            );
        }
    }

    fn sane(fit: &Fit) {
        for v in [fit.lambda, fit.sigma, fit.kappa, fit.rms_relative_error] {
            assert!(v.is_finite(), "{fit:?}");
        }
        assert!((0.0..=1.0).contains(&fit.sigma), "{fit:?}");
        assert!((0.0..=1.0).contains(&fit.kappa), "{fit:?}");
        assert!(fit.lambda > 0.0);
        if let Some(se) = fit.std_errors {
            assert!(se.iter().all(|v| v.is_finite() && *v >= 0.0), "{fit:?}");
        }
    }

    #[test]
    fn flat_curve_is_bounded_and_serial() {
        // A program that ignores its thread knob: same throughput at every level.
        let data: Vec<(f64, f64)> = NS.iter().map(|&n| (n, 3.0)).collect();
        let fit = fit_usl(&data).unwrap();
        sane(&fit);
        assert!(fit.sigma > 0.99, "{fit:?}");
        assert!(rel(fit.lambda, 3.0) < 1e-6, "{fit:?}");
        assert_eq!(fit.r_squared, None, "no spread: R² undefined");
        let amdahl = fit_amdahl(&data).unwrap();
        sane(&amdahl);
        assert!(amdahl.sigma > 0.99);
    }

    #[test]
    fn noisy_flat_curve_is_bounded() {
        let mut rng = XorShift(42);
        let data: Vec<(f64, f64)> = NS
            .iter()
            .map(|&n| (n, 3.0 * (1.0 + 0.05 * rng.symmetric())))
            .collect();
        let fit = fit_usl(&data).unwrap();
        sane(&fit);
        assert!(fit.r_squared.unwrap().is_finite());
    }

    #[test]
    fn linear_curve_has_no_contention() {
        let data: Vec<(f64, f64)> = NS.iter().map(|&n| (n, 7.0 * n)).collect();
        for fit in [fit_usl(&data).unwrap(), fit_amdahl(&data).unwrap()] {
            sane(&fit);
            assert!(fit.sigma < 1e-9 && fit.kappa < 1e-9, "{fit:?}");
            assert!(rel(fit.lambda, 7.0) < 1e-6);
            assert_eq!(fit.peak(), None);
            assert_eq!(fit.ceiling(), None);
        }
    }

    #[test]
    fn superlinear_curve_is_clamped_to_the_bounds() {
        // Caches can make throughput grow faster than N; the USL cannot express that, so the
        // fit must stay at σ = κ = 0 instead of going negative.
        let data: Vec<(f64, f64)> = NS.iter().map(|&n| (n, n.powf(1.2))).collect();
        let fit = fit_usl(&data).unwrap();
        sane(&fit);
        assert_eq!(fit.sigma, 0.0);
        assert_eq!(fit.kappa, 0.0);
    }

    #[test]
    fn too_few_levels_and_bad_points_are_errors() {
        let two = [(1.0, 1.0), (2.0, 1.8), (2.0, 1.9)];
        assert_eq!(
            fit_usl(&two),
            Err(FitError::TooFewPoints {
                distinct: 2,
                needed: 3
            })
        );
        assert!(fit_amdahl(&two).is_ok());
        assert_eq!(
            fit_usl(&[(1.0, 1.0), (2.0, 0.0), (3.0, 1.0)]),
            Err(FitError::BadPoint { index: 1 })
        );
        assert!(fit_amdahl(&[(1.0, f64::NAN), (2.0, 1.0)]).is_err());
    }

    #[test]
    fn exact_fit_with_three_points_has_no_standard_errors() {
        let fit = fit_usl(&synthetic(5.0, 0.1, 0.01, &[1.0, 2.0, 4.0])).unwrap();
        assert!(rel(fit.sigma, 0.1) < 1e-6, "{fit:?}");
        assert_eq!(fit.std_errors, None);
    }
}
