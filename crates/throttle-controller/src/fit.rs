//! The Universal Scalability Law fitted to the scan's points by weighted least squares.

/// A fitted USL curve: `X(k) = k / (a + b·k + c·k²)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Constant term.
    pub a: f64,
    /// Linear term.
    pub b: f64,
    /// Quadratic term (the USL's coherency cost, over λ).
    pub c: f64,
}

impl Fit {
    /// Predicted throughput at `k`; `None` where the model is not positive.
    pub fn predict(&self, k: usize) -> Option<f64> {
        let k = k as f64;
        let d = self.a + self.b * k + self.c * k * k;
        (d > 0.0).then(|| k / d)
    }

    /// Weighted least squares of `k / X` on `(1, k, k²)`, with weights `(X / k)²` so that every
    /// point counts by its *relative* error (noise on throughput is relative). `None` with fewer
    /// than three distinct `k` or a singular system.
    pub fn of(points: &[(usize, f64)]) -> Option<Fit> {
        let mut ks: Vec<usize> = points.iter().map(|p| p.0).collect();
        ks.sort_unstable();
        ks.dedup();
        if ks.len() < 3 {
            return None;
        }
        // Normal equations M·[a b c] = v, M = Σ w·φφᵀ, v = Σ w·φ·y, φ = (1, k, k²). The columns
        // are scaled by the largest k so that k² does not swamp the system at 256 cores.
        let s = *ks.last()? as f64;
        let mut m = [[0.0f64; 3]; 3];
        let mut v = [0.0f64; 3];
        for &(k, x) in points {
            if x <= 0.0 {
                continue;
            }
            let kf = k as f64 / s;
            let y = k as f64 / x;
            let w = 1.0 / (y * y);
            let phi = [1.0, kf, kf * kf];
            for i in 0..3 {
                for j in 0..3 {
                    m[i][j] += w * phi[i] * phi[j];
                }
                v[i] += w * phi[i] * y;
            }
        }
        let [a, b, c] = solve3(m, v)?;
        Some(Fit {
            a,
            b: b / s,
            c: c / (s * s),
        })
    }
}

/// Solves a 3×3 linear system by Gaussian elimination with partial pivoting.
// Row operations read two rows of `m` at once: indices say it plainer than iterators.
#[allow(clippy::needless_range_loop)]
pub(crate) fn solve3(mut m: [[f64; 3]; 3], mut v: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        for row in col + 1..3 {
            let f = m[row][col] / m[col][col];
            for j in col..3 {
                m[row][j] -= f * m[col][j];
            }
            v[row] -= f * v[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let mut s = v[row];
        for j in row + 1..3 {
            s -= m[row][j] * x[j];
        }
        x[row] = s / m[row][row];
        if !x[row].is_finite() {
            return None;
        }
    }
    Some(x)
}
