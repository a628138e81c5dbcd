//! A plotters axis with explicit tick positions, linear or logarithmic. plotters' own
//! `with_key_points` wrapper loses the value formatter, so charts use this instead.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};

#[derive(Debug, Clone)]
pub struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Axis {
    /// Linear axis over `lo..hi` with ticks at `ticks`.
    pub fn linear(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Axis {
            lo,
            hi,
            log: false,
            ticks,
        }
    }

    /// Linear axis over `0..n` with one tick at the middle of each slot (categories).
    pub fn slots(n: usize) -> Self {
        Axis::linear(0.0, n as f64, (0..n).map(|i| i as f64 + 0.5).collect())
    }

    /// Logarithmic axis over `lo..hi` (both > 0).
    pub fn log(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Axis {
            lo,
            hi,
            log: true,
            ticks,
        }
    }

    fn scaled(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).ln()
        } else {
            v
        }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (a, b) = (self.scaled(self.lo), self.scaled(self.hi));
        if b == a {
            return (limit.0 + limit.1) / 2;
        }
        let t = (self.scaled(*value) - a) / (b - a);
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_puts_the_geometric_middle_in_the_middle() {
        let a = Axis::log(1.0, 100.0, vec![]);
        assert_eq!(a.map(&10.0, (0, 200)), 100);
        assert_eq!(Axis::slots(4).map(&2.0, (0, 100)), 50);
    }
}
