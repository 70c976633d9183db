//! The one rule by which every verdict of the CLI (sweep, report, scan, adapt) calls a
//! difference in time real: a two-sided Mann–Whitney U test on the repetitions of the two
//! configurations, with at least [`MIN_REPS`] repetitions of each and a p-value at most
//! [`ALPHA`].
//!
//! Why this test: it compares the runs themselves, not one summary of each, so one disturbed
//! run moves it by one rank, never by its size (the old margin, a row's own max − min, made a
//! single 193 ms outlier into a "92 %" tolerance that hid a 1.9× difference). It assumes no
//! distribution of the times, which on a shared machine have long right tails. With 3 runs
//! against 3 it says "real" exactly when the two min–max ranges do not overlap; with more runs
//! it tolerates some overlap, as much as chance alone would rarely produce.
//!
//! The margin a difference must pass never comes from one row's own spread, and the verdict
//! of two configurations is the same wherever it is printed: the terminal summary, the page's
//! summary and its sections all call [`compare`].

/// The fewest repetitions of each side from which the test can call a difference real: with 3
/// against 3 the smallest two-sided p-value is 2 / C(6, 3) = 0.1 (every run of one side
/// faster than every run of the other); with 2 against 2 it is 1/3, which can never pass.
pub const MIN_REPS: usize = 3;

/// The largest two-sided p-value called real: 0.10, the smallest that 3 runs against 3 can
/// reach (see [`MIN_REPS`]), so the default 3 repetitions can show a difference at all. A
/// stricter level needs more repetitions: 4 against 4 already reaches 0.03.
pub const ALPHA: f64 = 0.10;

/// Sizes up to which the p-value is computed exactly (the null distribution of U by
/// recurrence); above it the normal approximation with a tie correction is accurate.
const EXACT_LIMIT: usize = 40;

/// What the test says about `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `a`'s times are lower: a real difference.
    Faster,
    /// `a`'s times are higher: a real difference.
    Slower,
    /// Both sides have enough runs, and the test cannot tell them apart.
    Indistinct,
    /// One side has fewer than [`MIN_REPS`] runs: nothing can be called real.
    TooFewRuns,
}

/// The comparison of two configurations' repetitions (times in seconds, lower is better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// The verdict.
    pub verdict: Verdict,
    /// Median of `a` over median of `b`.
    pub ratio: f64,
    /// The two-sided p-value of the Mann–Whitney U test, when both sides have runs.
    pub p: Option<f64>,
    /// Runs of `a` and of `b`.
    pub runs: (usize, usize),
}

impl Comparison {
    /// True when the test calls the difference real.
    pub fn is_real(&self) -> bool {
        matches!(self.verdict, Verdict::Faster | Verdict::Slower)
    }

    /// The difference in percent, `(ratio − 1) · 100`.
    pub fn percent(&self) -> f64 {
        (self.ratio - 1.0) * 100.0
    }

    /// Why the verdict is what it is, as a phrase that can stand in parentheses:
    /// `Mann–Whitney p = 0.10 over 3 and 3 runs` or `1 and 3 runs: the test needs 3 of each`.
    pub fn reason(&self) -> String {
        let (a, b) = self.runs;
        match (self.verdict, self.p) {
            (Verdict::TooFewRuns, _) => format!(
                "only {a} and {b} run{}; the test needs at least {MIN_REPS} of each",
                if a == 1 && b == 1 { "" } else { "s" }
            ),
            (_, Some(p)) => format!("Mann–Whitney p = {p:.2} over {a} and {b} runs"),
            (_, None) => "no runs".to_string(),
        }
    }

    /// A short clause for a sentence: `a real difference (…)`, `within the noise (…)` or
    /// `too few runs to tell (…)`.
    pub fn clause(&self) -> String {
        match self.verdict {
            Verdict::Faster | Verdict::Slower => format!("a real difference ({})", self.reason()),
            Verdict::Indistinct => format!("not told apart from noise ({})", self.reason()),
            Verdict::TooFewRuns => format!("too few runs to tell ({})", self.reason()),
        }
    }
}

/// Why none of `ties` (comparisons the test did not call real) is real, in one phrase: the
/// closest call (smallest p) among those with enough runs, and the first with too few runs.
pub fn reasons(ties: &[Comparison]) -> String {
    let closest = ties
        .iter()
        .filter(|c| c.verdict == Verdict::Indistinct)
        .min_by(|a, b| a.p.unwrap_or(1.0).total_cmp(&b.p.unwrap_or(1.0)));
    let few = ties.iter().find(|c| c.verdict == Verdict::TooFewRuns);
    match (closest, few) {
        (Some(c), Some(f)) => format!("closest {}; {}", c.reason(), f.reason()),
        (Some(c), None) if ties.len() > 1 => format!("closest {}", c.reason()),
        (Some(c), None) => c.reason(),
        (None, Some(f)) => f.reason(),
        (None, None) => String::new(),
    }
}

/// One sentence that states the rule, for a page or a help text.
pub const RULE: &str = "A difference is called real only when a Mann–Whitney U test on the \
repetitions of both sides gives p ≤ 0.10, with at least 3 repetitions of each (for 3 against 3: \
every run of one side faster than every run of the other).";

/// The rule in a phrase that can stand in parentheses.
pub const RULE_SHORT: &str = "Mann–Whitney p ≤ 0.10 over at least 3 runs of each";

/// Compares the repetitions `a` with `b` by the rule of this module: `compare(&[0.199, 0.2,
/// 0.201], &[0.104, 0.105, 0.106])` is [`Verdict::Slower`] (a binary crate has no doctests;
/// the unit tests below run this case).
pub fn compare(a: &[f64], b: &[f64]) -> Comparison {
    let ratio = median(a) / median(b);
    let runs = (a.len(), b.len());
    if a.is_empty() || b.is_empty() {
        return Comparison {
            verdict: Verdict::TooFewRuns,
            ratio,
            p: None,
            runs,
        };
    }
    let p = mann_whitney_p(a, b);
    let verdict = if a.len() < MIN_REPS || b.len() < MIN_REPS {
        Verdict::TooFewRuns
    } else if p <= ALPHA + 1e-12 {
        if median(a) < median(b) {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else {
        Verdict::Indistinct
    };
    Comparison {
        verdict,
        ratio,
        p: Some(p),
        runs,
    }
}

/// The median (mean of the two middle values); NaN when empty.
fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// U of `a`: the pairs `(x in a, y in b)` with `x > y`, a tie counting one half.
fn u_statistic(a: &[f64], b: &[f64]) -> f64 {
    let mut u = 0.0;
    for &x in a {
        for &y in b {
            if x > y {
                u += 1.0;
            } else if x == y {
                u += 0.5;
            }
        }
    }
    u
}

/// The two-sided p-value of the Mann–Whitney U test; `a` and `b` non-empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n, m) = (a.len(), b.len());
    let u = u_statistic(a, b);
    let nm = (n * m) as f64;
    // The smaller tail: U and nm − U are symmetric under the null.
    let tail_u = u.min(nm - u);
    let p = if n + m <= EXACT_LIMIT {
        let dist = null_distribution(n, m);
        // P(U ≤ tail_u); a half from a tie rounds down, which keeps the test conservative.
        let k = tail_u.floor() as usize;
        2.0 * dist.iter().take(k + 1).sum::<f64>()
    } else {
        normal_p(a, b, u)
    };
    p.min(1.0)
}

/// P(U = u) for u = 0 ..= n·m when the n + m runs are exchangeable (no ties): the largest of
/// them belongs to `a` with probability n / (n + m) and then exceeds all m of `b`.
fn null_distribution(n: usize, m: usize) -> Vec<f64> {
    // prev[j] = distribution for (i − 1, j); cur[j] for (i, j).
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        cur.push(vec![1.0]);
        for j in 1..=m {
            let mut d = vec![0.0; i * j + 1];
            let (pi, pj) = (i as f64 / (i + j) as f64, j as f64 / (i + j) as f64);
            for (u, &q) in prev[j].iter().enumerate() {
                d[u + j] += pi * q;
            }
            for (u, &q) in cur[j - 1].iter().enumerate() {
                d[u] += pj * q;
            }
            cur.push(d);
        }
        prev = cur;
    }
    prev.pop().unwrap_or_else(|| vec![1.0])
}

/// The normal approximation with the tie-corrected variance and a continuity correction.
fn normal_p(a: &[f64], b: &[f64], u: f64) -> f64 {
    let (n, m) = (a.len() as f64, b.len() as f64);
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1] == all[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let total = n + m;
    let var = n * m / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - n * m / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    2.0 * (1.0 - std_normal_cdf(z))
}

/// Φ(z) by the Abramowitz–Stegun 7.1.26 approximation of erf (error below 1.5e-7).
fn std_normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    let erf = if x >= 0.0 { erf } else { -erf };
    0.5 * (1.0 + erf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outlier_does_not_hide_a_1_9x_difference() {
        // A measured sweep: level 2 took 105 ms twice and 193 ms once (one disturbed run),
        // level 1 took 199.5 ms. A margin of level 2's own spread (92 %) would call level 1
        // "within 92 %" of it; the runs themselves separate cleanly.
        let level_2 = [0.1040, 0.1050, 0.1930];
        let level_1 = [0.1990, 0.1995, 0.2010];
        let c = compare(&level_1, &level_2);
        assert_eq!(c.verdict, Verdict::Slower, "{}", c.reason());
        assert!((c.ratio - 0.1995 / 0.105).abs() < 1e-9);
        assert!(
            c.clause().starts_with("a real difference"),
            "{}",
            c.clause()
        );
        assert_eq!(compare(&level_2, &level_1).verdict, Verdict::Faster);
    }

    #[test]
    fn a_clean_1_9x_difference_is_real_and_noise_is_not() {
        let slow = [0.199, 0.2, 0.201];
        let fast = [0.104, 0.105, 0.106];
        let c = compare(&slow, &fast);
        assert_eq!(c.verdict, Verdict::Slower);
        assert!((c.p.unwrap() - 0.1).abs() < 1e-12, "{:?}", c.p);
        // Interleaved runs of equal work: no verdict.
        let a = [1.00, 1.03, 1.01];
        let b = [1.02, 0.99, 1.04];
        assert_eq!(compare(&a, &b).verdict, Verdict::Indistinct);
        // An outlier beyond the other side's range costs one rank, not a margin: with 6 runs
        // of each, the difference stays real.
        let c = compare(
            &[0.199, 0.2, 0.201, 0.2, 0.202, 0.198],
            &[0.104, 0.105, 0.106, 0.205, 0.105, 0.104],
        );
        assert_eq!(c.verdict, Verdict::Slower, "{}", c.reason());
    }

    #[test]
    fn too_few_runs_are_never_real() {
        let c = compare(&[0.2, 0.2], &[0.1, 0.1]);
        assert_eq!(c.verdict, Verdict::TooFewRuns);
        assert!(!c.is_real());
        assert!(c.reason().contains("needs at least 3"), "{}", c.reason());
        assert!(compare(&[0.2], &[0.1])
            .reason()
            .contains("only 1 and 1 run;"));
        assert_eq!(compare(&[], &[0.1]).verdict, Verdict::TooFewRuns);
    }

    #[test]
    fn exact_p_values_match_the_tables() {
        // 3 vs 3, complete separation: 2 / 20.
        assert!((mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 0.1).abs() < 1e-12);
        // 4 vs 4: 2 / 70.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]);
        assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
        // 5 vs 5 with U = 6: P(U ≤ 6) = 28 / 252; and P(U ≤ 2) = 4 / 252.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 6.5, 7.5], &[4.0, 5.0, 6.0, 8.0, 9.0]);
        let u = u_statistic(&[1.0, 2.0, 3.0, 6.5, 7.5], &[4.0, 5.0, 6.0, 8.0, 9.0]);
        assert_eq!(u, 6.0);
        assert!(p > 0.1, "{p}");
        let d = null_distribution(5, 5);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((d[0] + d[1] + d[2] - 4.0 / 252.0).abs() < 1e-12);
        // Identical samples.
        assert!((mann_whitney_p(&[1.0; 4], &[1.0; 4]) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_test() {
        let a: Vec<f64> = (0..25).map(|i| i as f64 * 2.0).collect();
        let b: Vec<f64> = (0..25).map(|i| i as f64 * 2.0 + 9.0).collect();
        let u = u_statistic(&a, &b);
        let exact = {
            let d = null_distribution(25, 25);
            2.0 * d.iter().take(u.min(625.0 - u) as usize + 1).sum::<f64>()
        };
        let approx = normal_p(&a, &b, u);
        assert!((exact - approx).abs() < 0.01, "{exact} {approx}");
        assert!((std_normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }
}
