//! Verdicts on instruction counts (rows measured with `measure: instructions`): the count rule of
//! `augbench_core::counts::compare` (rows counted over other items are not comparable; else a
//! change counts beyond the larger of the count minimum effect, `--count-min-effect`, and 10×
//! the measured repeatability) mapped onto the verdict words every view prints, with the ratio
//! read the way time ratios are (current ÷ baseline of items per instruction: below 1 is
//! slower), and the notes saying what was compared. A count verdict guards against extra work;
//! it is not a time verdict. Pure.

use augbench_core::counts::{self, CountChange, CountComparison, InstructionRecord, ItemCheck};
use augbench_core::policy;

use crate::judge::verdict::Verdict;
use crate::model::Row;

/// How count rows were judged, for summary lines (policy's defaults, never restated).
pub fn rule() -> String {
    format!(
        "; instruction-count rows: a change counts beyond the larger of the count minimum effect ({}% unless --count-min-effect) and {}× the measured repeatability between worker processes, with no interval; rows counted over other items (item-set hash) are not comparable; counts guard against extra work and are not a time verdict",
        policy::COUNT_MIN_EFFECT * 100.0,
        policy::COUNT_REPEATABILITY_FACTOR
    )
}

/// A count comparison as the views show it.
#[derive(Debug, Clone, PartialEq)]
pub struct CountVerdict {
    /// Baseline ÷ current instructions per item (below 1: the current side does more work).
    pub ratio: f64,
    pub verdict: Verdict,
    /// What the verdict read: the change in instructions and the threshold it was held to.
    pub note: String,
}

/// The minimum effect counts are judged at: the user's `--count-min-effect` when given, else the
/// count default (never the time minimum effect).
pub fn min_effect(given: Option<f64>) -> f64 {
    given.unwrap_or(policy::COUNT_MIN_EFFECT)
}

/// The count verdict of two rows, `None` unless both carry instruction counts.
pub fn verdict(base: &Row, cur: &Row, min_effect: f64) -> Option<CountVerdict> {
    let (b, c) = (base.instructions.as_ref()?, cur.instructions.as_ref()?);
    let cmp = counts::compare(b, c, min_effect);
    let verdict = match cmp.change {
        CountChange::More => Verdict::Regression,
        CountChange::Fewer => Verdict::Faster,
        CountChange::Same => Verdict::Same,
        CountChange::Undecided => Verdict::Undecided,
        CountChange::NotComparable => Verdict::NotComparable,
    };
    let note = note(b, c, &cmp);
    Some(CountVerdict {
        ratio: 1.0 / cmp.ratio,
        verdict,
        note,
    })
}

/// What the verdict read, with a word on the item set where it could not be checked.
fn note(b: &InstructionRecord, c: &InstructionRecord, cmp: &CountComparison) -> String {
    let read = match (cmp.change, cmp.items) {
        (CountChange::NotComparable, ItemCheck::OtherCount) => format!(
            "counted over {} items in the baseline and {} in the current run",
            b.items, c.items
        ),
        (CountChange::NotComparable, ItemCheck::OtherItems) => format!(
            "counted over different items: baseline {}, current {}",
            b.items_hash.as_deref().unwrap_or_default(),
            c.items_hash.as_deref().unwrap_or_default()
        ),
        (CountChange::NotComparable, _) => "a side has no instructions per item".to_string(),
        (CountChange::Undecided, _) => format!(
            "instructions {:+.2}%, but a side has fewer than {} worker processes, so the count's repeatability is unknown",
            (cmp.ratio - 1.0) * 100.0,
            policy::COUNT_PROCESSES
        ),
        _ => format!(
            "instructions {:+.2}% per item (threshold ±{:.2}%: the larger of the count minimum effect and {}× the repeatability {:.3}%)",
            (cmp.ratio - 1.0) * 100.0,
            cmp.threshold * 100.0,
            policy::COUNT_REPEATABILITY_FACTOR,
            b.repeatability.max(c.repeatability) * 100.0
        ),
    };
    match cmp.items {
        ItemCheck::Unchecked => {
            format!("{read}; the item set was not checked (a side recorded no item-set hash)")
        }
        _ => read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_core::counts::InstructionRecord;

    fn row(per_process: &[u64]) -> Row {
        hashed_row(per_process, None)
    }

    fn hashed_row(per_process: &[u64], hash: Option<&str>) -> Row {
        let mut rec = InstructionRecord {
            items: 8,
            items_hash: hash.map(str::to_string),
            ..Default::default()
        };
        for c in per_process {
            rec.add_process(&[*c], &[1.0]);
        }
        let mut r = timed();
        r.instructions = Some(rec);
        r
    }

    fn timed() -> Row {
        Row {
            scenario: "image-rgb".into(),
            mode: "micro".into(),
            media: augbench_core::Media::Image,
            clip_length: None,
            library: "pillow".into(),
            library_version: "13.0.0".into(),
            device: "cpu".into(),
            variant: String::new(),
            transform: "GaussianBlur".into(),
            status: augbench_core::results::Status::Ok,
            median: Some(100.0),
            figure: None,
            figure_estimator: None,
            figure_interval: None,
            std: None,
            ci_low: None,
            ci_high: None,
            rerun: None,
            throughputs: Vec::new(),
            cpu_throughputs: Vec::new(),
            process_runs: Vec::new(),
            paired: Vec::new(),
            pairing: None,
            slow_threshold: 0.1,
            reason: None,
            output_contiguous: None,
            force_share: None,
            ceiling_share: None,
            first_batch_s: None,
            instructions: None,
            params: None,
            source: std::path::PathBuf::new(),
        }
    }

    #[test]
    fn two_percent_more_instructions_is_slower_and_the_same_count_is_same() {
        let base = row(&[800_000_000, 800_000_100]);
        let slow = row(&[816_000_000, 816_000_300]);
        let v = verdict(&base, &slow, min_effect(None)).unwrap();
        assert_eq!(v.verdict, Verdict::Regression, "{v:?}");
        assert!((v.ratio - 1.0 / 1.02).abs() < 1e-3, "{v:?}");
        assert!(v.note.contains("+2.00%"), "{}", v.note);
        let same = row(&[800_000_050, 800_000_000]);
        assert_eq!(verdict(&base, &same, 0.01).unwrap().verdict, Verdict::Same);
        let timed = timed();
        assert!(verdict(&base, &timed, 0.01).is_none());
    }

    #[test]
    fn a_two_percent_count_change_is_a_regression_whatever_the_time_minimum_effect() {
        let base = hashed_row(&[800_000_000, 800_000_100], Some("0123456789abcdef"));
        let slow = hashed_row(&[816_000_000, 816_000_300], Some("0123456789abcdef"));
        // `--min-effect 0.05` sets the time threshold alone: the count one stays the default.
        let time_min_effect = Some(0.05);
        let count = min_effect(None);
        assert_ne!(Some(count), time_min_effect);
        let v = verdict(&base, &slow, count).unwrap();
        assert_eq!(v.verdict, Verdict::Regression, "{v:?}");
        assert!(!v.note.contains("not checked"), "{}", v.note);
        assert_eq!(
            verdict(&base, &slow, min_effect(Some(0.05)))
                .unwrap()
                .verdict,
            Verdict::Same,
            "a count threshold given as 5% hides 2%"
        );
    }

    #[test]
    fn other_items_of_the_same_count_are_not_comparable_and_named() {
        let base = hashed_row(&[800_000_000, 800_000_100], Some("aaaaaaaaaaaaaaaa"));
        let cur = hashed_row(&[800_000_000, 800_000_100], Some("bbbbbbbbbbbbbbbb"));
        let v = verdict(&base, &cur, 0.01).unwrap();
        assert_eq!(v.verdict, Verdict::NotComparable, "{v:?}");
        assert_eq!(
            v.note,
            "counted over different items: baseline aaaaaaaaaaaaaaaa, current bbbbbbbbbbbbbbbb"
        );
    }

    #[test]
    fn a_side_without_an_item_hash_is_judged_and_says_the_items_were_not_checked() {
        let base = row(&[800_000_000, 800_000_100]);
        let slow = hashed_row(&[816_000_000, 816_000_300], Some("aaaaaaaaaaaaaaaa"));
        let v = verdict(&base, &slow, 0.01).unwrap();
        assert_eq!(v.verdict, Verdict::Regression, "{v:?}");
        assert!(
            v.note
                .ends_with("the item set was not checked (a side recorded no item-set hash)"),
            "{}",
            v.note
        );
    }

    #[test]
    fn the_rule_names_its_own_flag_and_says_counts_are_not_time() {
        let r = rule();
        assert!(r.contains("--count-min-effect"), "{r}");
        assert!(!r.contains("unless --min-effect"), "{r}");
        assert!(r.contains("not a time verdict"), "{r}");
        assert!(
            r.contains(&format!("{}%", policy::COUNT_MIN_EFFECT * 100.0)),
            "{r}"
        );
    }
}
