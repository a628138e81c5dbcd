//! Process spreads pooled over a run's rows (empirical Bayes): how far a pair of libraries'
//! worker processes disagree is mostly a property of the two libraries on this machine, so the
//! spread one transform's 3 processes show (2 degrees of freedom) is read beside the spreads the
//! run's other transforms showed for the same pair. The prior is fitted to those spreads as a
//! scaled inverse χ² (Smyth's moderated variances, 2004: the method of moments on ln s²), and a
//! row's variance is the df-weighted mean of the prior's and its own, with their degrees of
//! freedom added. Rows whose spreads differ widely give a prior of few degrees of freedom, which
//! moves a row's own variance little; rows that agree give many. Pure.

use serde::{Deserialize, Serialize};

/// A fitted prior of process variances: `var` (s₀², on ln ratios) with `df` (d₀) degrees of
/// freedom (infinite when the rows' spreads are no wider than sampling alone would make them),
/// and the number of rows it was fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prior {
    pub var: f64,
    pub df: f64,
    pub rows: usize,
}

/// The fewest rows a prior is fitted to.
pub const MIN_ROWS: usize = 3;

/// The variance of per-process medians of `logs` (`groups` runs per consecutive process), with
/// its degrees of freedom (processes − 1); `None` below two processes or when the groups do not
/// split the values.
pub fn spread(logs: &[f64], groups: &[usize]) -> Option<(f64, usize)> {
    let g = groups.len();
    if g < 2 || groups.contains(&0) || groups.iter().sum::<usize>() != logs.len() {
        return None;
    }
    let mut rest = logs;
    let medians: Vec<f64> = groups
        .iter()
        .map(|&n| {
            let (head, tail) = rest.split_at(n);
            rest = tail;
            crate::logscale::median_log(head)
        })
        .collect();
    let mean = medians.iter().sum::<f64>() / g as f64;
    let var = medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (g - 1) as f64;
    var.is_finite().then_some((var, g - 1))
}

/// The prior fitted to rows' `(variance, degrees of freedom)`; rows with a zero or non-finite
/// variance are left out (ln of it is not defined), and so are outliers (`without_outliers`).
/// `None` below `MIN_ROWS` usable rows. `rows` counts the rows it was fitted to.
pub fn fit(spreads: &[(f64, usize)]) -> Option<Prior> {
    let rows: Vec<(f64, f64)> = spreads
        .iter()
        .filter(|(v, d)| *v > 0.0 && v.is_finite() && *d > 0)
        .map(|(v, d)| (*v, *d as f64))
        .collect();
    // e = ln s² − ψ(d/2) + ln(d/2) has mean ln s₀² − ψ(d₀/2) + ln(d₀/2) and variance
    // ψ′(d/2) + ψ′(d₀/2).
    let e: Vec<(f64, f64)> = rows
        .iter()
        .map(|(v, d)| (v.ln() - digamma(d / 2.0) + (d / 2.0).ln(), *d))
        .collect();
    let (e, d): (Vec<f64>, Vec<f64>) = without_outliers(e).into_iter().unzip();
    let n = e.len();
    if n < MIN_ROWS {
        return None;
    }
    let mean = e.iter().sum::<f64>() / n as f64;
    let sampling = d.iter().map(|d| trigamma(d / 2.0)).sum::<f64>() / n as f64;
    let excess = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 - sampling;
    if excess <= 0.0 {
        return Some(Prior {
            var: mean.exp(),
            df: f64::INFINITY,
            rows: n,
        });
    }
    let df = 2.0 * trigamma_inverse(excess);
    let var = (mean + digamma(df / 2.0) - (df / 2.0).ln()).exp();
    Some(Prior { var, df, rows: n })
}

/// Rows whose ln variance lies above Tukey's outer fence (the upper quartile plus 3 × the
/// interquartile range) left out: a row with a slow worker process reads a variance hundreds of
/// times the others', which says nothing of how far the run's processes spread otherwise (that
/// row's own interval answers for it), while ln s² of the others has a light upper tail (for
/// 2 degrees of freedom, none of them lies past the fence one time in a million).
fn without_outliers(mut e: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    e.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sorted: Vec<f64> = e.iter().map(|x| x.0).collect();
    let (q1, q3) = (
        crate::percentile_sorted(&sorted, 25.0),
        crate::percentile_sorted(&sorted, 75.0),
    );
    let fence = q3 + 3.0 * (q3 - q1);
    e.retain(|x| x.0 <= fence);
    e
}

/// A row's variance `var` over `df` degrees of freedom read with `prior`: the df-weighted mean
/// of the two, over their degrees of freedom added (the prior's alone when it has infinitely
/// many); the row's own without a prior.
pub fn moderated(var: f64, df: usize, prior: Option<Prior>) -> (f64, f64) {
    let d = df as f64;
    match prior {
        Some(p) if p.df.is_infinite() => (p.var, f64::INFINITY),
        Some(p) => ((p.df * p.var + d * var) / (p.df + d), p.df + d),
        None => (var, d),
    }
}

/// ψ(x), x > 0: the recurrence up to 10, then the asymptotic series.
fn digamma(x: f64) -> f64 {
    let (mut x, mut acc) = (x, 0.0);
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    acc + x.ln() - 0.5 / x - r * (1.0 / 12.0 - r * (1.0 / 120.0 - r / 252.0))
}

/// ψ′(x), x > 0.
fn trigamma(x: f64) -> f64 {
    let (mut x, mut acc) = (x, 0.0);
    while x < 10.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    acc + 1.0 / x + r / 2.0 + r / x * (1.0 / 6.0 - r * (1.0 / 30.0 - r * (1.0 / 42.0 - r / 30.0)))
}

/// ψ″(x), x > 0.
fn tetragamma(x: f64) -> f64 {
    let (mut x, mut acc) = (x, 0.0);
    while x < 10.0 {
        acc -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let r = 1.0 / (x * x);
    acc - r / x - r * (1.0 + r * (0.5 - r * (1.0 / 6.0 - r / 6.0)))
}

/// The x > 0 with ψ′(x) = y (Newton's method on 1/ψ′, as Smyth's `trigammaInverse`).
fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..50 {
        let tri = trigamma(x);
        let step = tri * (1.0 - tri / y) / tetragamma(x);
        x += step;
        if -step / x < 1e-8 {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn special_functions_match_known_values() {
        // ψ(1) = −γ, ψ′(1) = π²/6, ψ″(1) = −2ζ(3).
        assert!((digamma(1.0) + 0.577_215_664_901_532_9).abs() < 1e-10);
        assert!((trigamma(1.0) - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-10);
        assert!((tetragamma(1.0) + 2.0 * 1.202_056_903_159_594).abs() < 1e-9);
        assert!((digamma(0.5) + 1.963_510_026_021_423).abs() < 1e-10);
        for x in [0.3, 1.0, 2.5, 7.0, 40.0] {
            assert!((trigamma_inverse(trigamma(x)) - x).abs() < 1e-6 * x, "{x}");
        }
    }

    #[test]
    fn a_row_without_prior_keeps_its_own_and_an_infinite_prior_replaces_it() {
        assert_eq!(moderated(0.04, 2, None), (0.04, 2.0));
        let flat = Prior {
            var: 0.01,
            df: f64::INFINITY,
            rows: 9,
        };
        assert_eq!(moderated(0.04, 2, Some(flat)), (0.01, f64::INFINITY));
        let p = Prior {
            var: 0.01,
            df: 6.0,
            rows: 9,
        };
        let (v, d) = moderated(0.05, 2, Some(p));
        assert!((v - 0.02).abs() < 1e-12 && d == 8.0);
        assert!(fit(&[(0.01, 2), (0.02, 2)]).is_none(), "too few rows");
        assert!(spread(&[0.1, 0.2], &[2]).is_none(), "one process");
        let (v, d) = spread(&[0.0, 0.1, 0.2, 0.2, 0.4, 0.4], &[2, 2, 2]).unwrap();
        assert!((v - 0.185f64 / 6.0).abs() < 1e-12 && d == 2, "{v}");
    }

    /// Variances drawn as σ² χ²_d / d, σ² itself from a scaled inverse χ² with d₀ degrees of
    /// freedom: the fit finds s₀² and d₀ near the truth, and an infinite d₀ when every row shares
    /// one σ².
    #[test]
    fn the_fit_recovers_a_known_prior() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let chi2 = |d: usize, rng: &mut ChaCha8Rng| -> f64 {
            (0..d).map(|_| normal(rng).powi(2)).sum::<f64>()
        };
        let (s0, d0) = (0.02f64.powi(2), 8usize);
        let rows: Vec<(f64, usize)> = (0..4000)
            .map(|_| {
                let sigma2 = s0 * d0 as f64 / chi2(d0, &mut rng);
                (sigma2 * chi2(2, &mut rng) / 2.0, 2)
            })
            .collect();
        let p = fit(&rows).unwrap();
        assert!((p.var / s0 - 1.0).abs() < 0.1, "{p:?}");
        assert!((5.0..13.0).contains(&p.df), "{p:?}");
        let same: Vec<(f64, usize)> = (0..4000)
            .map(|_| (s0 * chi2(2, &mut rng) / 2.0, 2))
            .collect();
        let p = fit(&same).unwrap();
        assert!(p.df > 50.0, "{p:?}");
        assert!((p.var / s0 - 1.0).abs() < 0.1, "{p:?}");
    }

    fn normal(rng: &mut ChaCha8Rng) -> f64 {
        let u: f64 = 1.0 - rng.random::<f64>();
        let v: f64 = rng.random();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(31), ..ProptestConfig::default() })]
        #[test]
        fn a_moderated_variance_lies_between_the_prior_and_the_row(
            rows in proptest::collection::vec((1e-6f64..1.0, 1usize..6), 3..30),
            own in 1e-6f64..1.0,
            d in 1usize..6,
        ) {
            let p = fit(&rows).unwrap();
            prop_assert!(p.var > 0.0 && p.var.is_finite() && p.df > 0.0, "{:?}", p);
            let (v, df) = moderated(own, d, Some(p));
            let (lo, hi) = (own.min(p.var), own.max(p.var));
            prop_assert!(v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9));
            prop_assert!(df >= d as f64);
        }
    }
}
