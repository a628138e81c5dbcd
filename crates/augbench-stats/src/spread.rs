//! How far worker processes spread, learned from every pair of a run at once: each pair's
//! spread between its processes (the variance of the processes' median ln ratios, G − 1 degrees
//! of freedom) is a noisy read of one quantity that most pairs of a run share (the machine's
//! process-to-process levels), so the run's pairs together (`paired::process_spreads`) give a
//! prior (`Spread::fit`: an empirical-Bayes scaled inverse-χ² fitted by moments of ln s², as limma
//! moderates gene-wise variances) and each pair's own read is shrunk towards it (`Spread::moderate`), with the
//! prior's degrees of freedom added to its own. Three processes then no longer carry Student's t
//! at 2 degrees of freedom (×4.3) when the run's other pairs show how far processes spread; a
//! pair whose processes spread far wider than the run's still reads wide, as far as the prior's
//! degrees of freedom (which fall as the pairs disagree) let it. Pure.

use crate::policy;

/// The prior: a typical between-process variance of a pair's median ln ratio (`var`) and how
/// many degrees of freedom it is worth (`df`: at most the rows' own, pooled, reached when they
/// agree as well as their own degrees of freedom allow; fewer as they disagree).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub var: f64,
    pub df: f64,
}

/// Degrees of freedom counted as the normal limit (Student's t differs by < 0.1% beyond).
pub const DF_CAP: f64 = 10_000.0;

impl Spread {
    /// The prior fitted to `rows` (each a pair's between-process variance and its degrees of
    /// freedom): the mean of ln s² less its expectation under χ² gives the prior's scale, the
    /// variance of ln s² beyond what the rows' own degrees of freedom explain its degrees of
    /// freedom (trigamma inverted), never more than the rows' own pooled. `None` with fewer than
    /// `policy::SPREAD_PRIOR_MIN_ROWS` usable rows (finite, positive variance, at least one
    /// degree of freedom).
    pub fn fit(rows: &[(f64, usize)]) -> Option<Spread> {
        let usable: Vec<(f64, f64)> = rows
            .iter()
            .filter(|(v, df)| v.is_finite() && *v > 0.0 && *df >= 1)
            .map(|&(v, df)| (v, df as f64))
            .collect();
        if usable.len() < policy::SPREAD_PRIOR_MIN_ROWS {
            return None;
        }
        let n = usable.len() as f64;
        let e: Vec<f64> = usable
            .iter()
            .map(|(v, d)| v.ln() - digamma(d / 2.0) + (d / 2.0).ln())
            .collect();
        let mean = e.iter().sum::<f64>() / n;
        let spread = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let own = usable.iter().map(|(_, d)| trigamma(d / 2.0)).sum::<f64>() / n;
        let excess = spread - own;
        // Never worth more than the rows' own degrees of freedom pooled: what their common
        // variance would be worth if they shared one exactly (the moment estimate reads
        // "infinite" whenever a few rows happen to agree).
        let pooled: f64 = usable.iter().map(|(_, d)| d).sum();
        let df = if excess > 0.0 {
            (2.0 * trigamma_inverse(excess)).min(pooled)
        } else {
            pooled
        };
        let var = (mean + digamma(df / 2.0) - (df / 2.0).ln()).exp();
        Some(Spread { var, df })
    }

    /// A pair's own variance `var` over `df` degrees of freedom, shrunk towards the prior: the
    /// weighted mean (df·var + d₀·s₀²) / (df + d₀), worth df + d₀ degrees of freedom (capped at
    /// `DF_CAP`).
    pub fn moderate(&self, var: f64, df: usize) -> (f64, f64) {
        let d = df as f64;
        let total = d + self.df;
        ((d * var + self.df * self.var) / total, total.min(DF_CAP))
    }
}

/// The sample variance of `xs` (n − 1 in the denominator) and its degrees of freedom; `None`
/// for fewer than two values.
pub fn variance(xs: &[f64]) -> Option<(f64, usize)> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let m = xs.iter().sum::<f64>() / n as f64;
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((v, n - 1))
}

/// ψ(x) for x > 0: the recurrence up to 10, then the asymptotic series.
fn digamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 10.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    r + x.ln() - 0.5 / x - f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0)))
}

/// ψ′(x) for x > 0: the recurrence up to 10, then the asymptotic series.
fn trigamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 10.0 {
        r += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    r + 1.0 / x + f / 2.0 + f / x * (1.0 / 6.0 - f * (1.0 / 30.0 - f / 42.0))
}

/// The x > 0 with ψ′(x) = y (y > 0; ψ′ falls from ∞ to 0): bisection on ln x.
fn trigamma_inverse(y: f64) -> f64 {
    let (mut lo, mut hi) = (-30.0_f64, 30.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if trigamma(mid.exp()) > y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ((lo + hi) / 2.0).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn special_functions_match_known_values() {
        let euler = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + euler).abs() < 1e-9);
        assert!((digamma(0.5) + euler + 2.0 * 2f64.ln()).abs() < 1e-9);
        let pi2_6 = std::f64::consts::PI.powi(2) / 6.0;
        assert!((trigamma(1.0) - pi2_6).abs() < 1e-9);
        assert!((trigamma(0.5) - 3.0 * pi2_6).abs() < 1e-9);
        for x in [0.05, 0.7, 3.0, 40.0] {
            assert!(
                (trigamma_inverse(trigamma(x)) / x - 1.0).abs() < 1e-9,
                "{x}"
            );
        }
    }

    fn chi2(rng: &mut ChaCha8Rng, df: usize) -> f64 {
        (0..df)
            .map(|_| {
                let u: f64 = 1.0 - rng.random::<f64>();
                let v: f64 = rng.random();
                ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()).powi(2)
            })
            .sum()
    }

    #[test]
    fn pairs_that_share_one_variance_give_it_back_with_many_degrees_of_freedom() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let rows: Vec<(f64, usize)> = (0..400)
            .map(|_| (0.0004 * chi2(&mut rng, 2) / 2.0, 2))
            .collect();
        let s = Spread::fit(&rows).expect("fits");
        assert!((s.var / 0.0004 - 1.0).abs() < 0.15, "{s:?}");
        assert!(s.df > 30.0 && s.df <= 800.0, "{s:?}");
    }

    #[test]
    fn pairs_whose_variances_differ_give_fewer_degrees_of_freedom() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let rows: Vec<(f64, usize)> = (0..400)
            .map(|k| {
                let truth = if k % 2 == 0 { 0.0001 } else { 0.0025 };
                (truth * chi2(&mut rng, 2) / 2.0, 2)
            })
            .collect();
        let s = Spread::fit(&rows).expect("fits");
        assert!(s.df < 10.0, "{s:?}");
        let (own_wide, df) = s.moderate(0.01, 2);
        assert!(
            own_wide > s.var && df > 2.0,
            "a wide pair stays wider than the prior"
        );
    }

    #[test]
    fn too_few_or_unusable_rows_fit_nothing() {
        assert_eq!(Spread::fit(&[(0.01, 2), (0.02, 2)]), None);
        assert_eq!(
            Spread::fit(&[(0.01, 2), (0.0, 2), (f64::NAN, 2), (0.3, 0)]),
            None
        );
        assert_eq!(variance(&[1.0]), None);
        assert_eq!(variance(&[1.0, 3.0]), Some((2.0, 1)));
    }
}
