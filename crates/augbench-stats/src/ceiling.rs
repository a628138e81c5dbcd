//! A pipeline row against its own decode ceiling (the recipe without T, `DecodeOnly`): a row does
//! at least the ceiling's work, so a row whose figure's interval lies wholly above the ceiling's
//! cannot be the library's speed; the measurement order, its windows or the machine between the
//! two rows made it so. The tests and the words their `unstable` mark carries: rows paired with
//! the ceiling's windows of their own rounds (the interleaved schedule), and rows compared with the
//! ceiling row measured at another time (the sequential schedule, older files). Pure.

use super::{Headline, PairedSummary};

/// Why a row is above the ceiling timed in its own rounds beyond the paired rerun interval (its
/// low end above 1), or `None`.
pub fn above_paired_ceiling(share: &PairedSummary) -> Option<String> {
    (share.rerun_low > 1.0).then(|| {
        format!(
            "above its ceiling in the same rounds: {:.3}× {}'s windows (interval from {:.3}, over {} rounds); a row that does more work than its ceiling cannot be faster",
            share.ratio, share.partner, share.rerun_low, share.rounds
        )
    })
}

/// Why `row` is above `ceiling` beyond both intervals (the row's low end above the ceiling's high
/// end), or `None`. A figure without an interval counts as its value alone.
pub fn above_ceiling(row: &Headline, ceiling: &Headline, ceiling_name: &str) -> Option<String> {
    let row_low = row.low.unwrap_or(row.value);
    let ceiling_high = ceiling.high.unwrap_or(ceiling.value);
    (row_low > ceiling_high).then(|| {
        format!(
            "above its ceiling: {:.0} img/s (interval from {:.0}) against {ceiling_name}'s {:.0} (up to {:.0}), {:.0}% above; a row that does more work than its ceiling cannot be faster (the two rows were measured at different times: the machine or the loader's state changed between them)",
            row.value,
            row_low,
            ceiling.value,
            ceiling_high,
            (row.value / ceiling.value - 1.0) * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_above_the_ceiling_of_its_own_rounds_is_named_only_beyond_the_interval() {
        // Rounds where the row read 3% above its ceiling, consistently, over 3 processes.
        let ceiling = [
            700.0, 690.0, 710.0, 500.0, 505.0, 495.0, 800.0, 790.0, 810.0,
        ];
        let above: Vec<f64> = ceiling.iter().map(|c| c * 1.03).collect();
        let share = crate::paired("DecodeOnly", &above, &ceiling, &[3, 3, 3]).unwrap();
        let why = above_paired_ceiling(&share).unwrap();
        assert!(
            why.starts_with("above its ceiling in the same rounds: 1.030×"),
            "{why}"
        );
        assert!(
            why.contains("DecodeOnly's windows") && why.contains("9 rounds"),
            "{why}"
        );
        // A cheap transform at its ceiling, round by round within the noise: not named.
        let at: Vec<f64> = ceiling
            .iter()
            .zip([1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.0, 1.01, 0.99])
            .map(|(c, k)| c * k)
            .collect();
        let share = crate::paired("DecodeOnly", &at, &ceiling, &[3, 3, 3]).unwrap();
        assert_eq!(above_paired_ceiling(&share), None, "{share:?}");
    }

    fn fig(value: f64, low: f64, high: f64) -> Headline {
        Headline {
            value,
            estimator: "process_max_median".into(),
            low: Some(low),
            high: Some(high),
            from_median: false,
        }
    }

    #[test]
    fn only_a_row_above_beyond_both_intervals_is_marked() {
        let ceiling = fig(730.0, 691.0, 769.0);
        let why = above_ceiling(&fig(838.0, 800.0, 870.0), &ceiling, "DecodeOnly").unwrap();
        assert!(why.starts_with("above its ceiling: 838 img/s"), "{why}");
        assert!(
            why.contains("DecodeOnly's 730 (up to 769), 15% above"),
            "{why}"
        );
        // Overlapping intervals: noise, not a bias the data can show.
        assert_eq!(
            above_ceiling(&fig(780.0, 760.0, 800.0), &ceiling, "DecodeOnly"),
            None
        );
        // Below the ceiling, however far: the row's own cost.
        assert_eq!(
            above_ceiling(&fig(300.0, 290.0, 310.0), &ceiling, "DecodeOnly"),
            None
        );
        // Without intervals the values alone decide.
        let bare = |v| Headline {
            low: None,
            high: None,
            ..fig(v, v, v)
        };
        assert!(above_ceiling(&bare(731.0), &bare(730.0), "DecodeOnly").is_some());
        assert_eq!(
            above_ceiling(&bare(730.0), &bare(730.0), "DecodeOnly"),
            None
        );
    }
}
