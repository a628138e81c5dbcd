//! Student's t distribution at any confidence level: its quantile (`quantile`), found by bisection
//! on a distribution function integrated numerically, and the normal quantile as its limit. Used
//! where a level is not the fixed 95% that `paired::t_over_z` tabulates, such as the per-look
//! level of a stopping rule that spends its error rate over several looks. Each quantile found
//! is kept (per thread) and returned as found when asked again. No I/O.

use std::cell::RefCell;
use std::collections::HashMap;
use std::f64::consts::PI;

/// ln Γ(x) for x > 0 (Lanczos, g = 7; relative error below 1e-13 in this range).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// ln of the t density's normalising constant for `df` degrees of freedom.
fn ln_norm(df: f64) -> f64 {
    ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0) - 0.5 * (df * PI).ln()
}

/// P(0 ≤ T ≤ x) for x ≥ 0, by Simpson's rule on the substitution x = tan θ, which maps the
/// heavy tail onto a finite interval where the integrand stays smooth.
fn mass_from_zero(df: f64, x: f64) -> f64 {
    const STEPS: usize = 2000;
    let end = x.atan();
    let (h, norm) = (end / STEPS as f64, ln_norm(df));
    let f = |theta: f64| {
        let (c, x) = (theta.cos(), theta.tan());
        (norm - (df + 1.0) / 2.0 * (1.0 + x * x / df).ln()).exp() / (c * c)
    };
    let inner: f64 = (1..STEPS)
        .map(|i| f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 })
        .sum();
    (f(0.0) + inner + f(end)) * h / 3.0
}

/// The most quantiles a thread keeps; past it they are dropped and found again as asked.
const KEPT_MAX: usize = 1024;

thread_local! {
    /// Quantiles already found on this thread, by degrees of freedom and the bits of `p`.
    static KEPT: RefCell<HashMap<(usize, u64), f64>> = RefCell::new(HashMap::new());
}

/// The `p` quantile (0.5 < p < 1) of Student's t with `df` ≥ 1 degrees of freedom; the normal
/// quantile for `df` 0 (no variance estimate to correct for). Accurate to about 1e-6.
///
/// The bisection integrates the density some 65 times, 2000 steps each (milliseconds), and
/// callers ask for the same few levels over and over (every paired interval over processes, every look of the
/// precision rule): a quantile found before is returned from `KEPT`, the same bits, as the
/// search is a pure function of `df` and `p`.
pub fn quantile(df: usize, p: f64) -> f64 {
    if df == 0 {
        return normal_quantile(p);
    }
    let key = (df, p.to_bits());
    if let Some(q) = KEPT.with(|kept| kept.borrow().get(&key).copied()) {
        return q;
    }
    let q = bisect(df, p);
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() >= KEPT_MAX {
            kept.clear();
        }
        kept.insert(key, q);
    });
    q
}

/// The `p` quantile for `df` ≥ 1 by bisection on `mass_from_zero`.
fn bisect(df: usize, p: f64) -> f64 {
    let (df, want) = (df as f64, p - 0.5);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while mass_from_zero(df, hi) < want {
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mass_from_zero(df, mid) < want {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The `p` quantile (0.5 < p < 1) of the standard normal, t's limit (Acklam's rational
/// approximation, relative error below 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p > 0.975_75 {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        let num = ((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5];
        let den = (((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0;
        return -num / den;
    }
    let q = p - 0.5;
    let r = q * q;
    let num = (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q;
    let den = ((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0;
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_t_quantiles() {
        // Two-sided 95% and 99% quantiles from standard tables.
        for (df, p, t) in [
            (1, 0.975, 12.706),
            (2, 0.975, 4.303),
            (5, 0.975, 2.571),
            (30, 0.975, 2.042),
            (2, 0.995, 9.925),
            (4, 0.995, 4.604),
            (10, 0.995, 3.169),
        ] {
            let q = quantile(df, p);
            assert!((q - t).abs() < 2e-3, "t({df}, {p}) = {q}, tables say {t}");
        }
    }

    #[test]
    fn normal_quantile_matches_tables_and_is_t_s_limit() {
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_quantile(0.995) - 2.575_829).abs() < 1e-5);
        assert!((quantile(0, 0.975) - 1.959_964).abs() < 1e-5);
        assert!((quantile(2000, 0.975) - 1.959_964).abs() < 2e-3);
    }

    #[test]
    fn a_kept_quantile_is_the_one_the_search_finds() {
        for (df, p) in [(2, 0.975), (5, 0.99), (2, 0.975)] {
            let (first, again) = (quantile(df, p), quantile(df, p));
            assert_eq!(first.to_bits(), bisect(df, p).to_bits());
            assert_eq!(again.to_bits(), first.to_bits());
        }
    }

    #[test]
    fn agrees_with_the_95_percent_table() {
        for df in 1..=30 {
            let q = quantile(df, 0.975) / 1.96;
            let t = super::super::paired::t_over_z(df);
            assert!((q - t).abs() < 1e-3, "df {df}: {q} vs table {t}");
        }
    }
}
