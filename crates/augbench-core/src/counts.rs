//! Instruction counts (`execution.measure: instructions`): the record a counted micro row carries
//! (tool, method, raw counts per worker process, the hash of the counted item set), its summary
//! (instructions per item and their repeatability between processes) and the count verdict of a
//! baseline against a current row, which first checks that both counted the same items. Pure:
//! the coordinator's `counts` module runs the workers under Valgrind, reads the counted files
//! and fills the record.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::policy;

/// How the counts are taken, as recorded in every counted row.
pub const COUNT_METHOD: &str = "callgrind --zero-before=getpgrp --dump-before=getppid: the worker calls getpgrp() right before and getppid() right after each counted loop, so each dump holds exactly one loop's instructions (the loop, the transform, forcing its output)";

/// Hex digits kept of the item-set hash (64 bits: a name to compare, not a security claim).
pub const ITEMS_HASH_DIGITS: usize = 16;

/// What one counted row recorded (results' `instructions`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionRecord {
    /// `valgrind-3.19.0 callgrind`.
    pub tool: String,
    pub method: String,
    /// Items per counted loop (the first loaded items, wrapping around).
    pub items: u64,
    /// Instructions of each counted loop, every process's in order (`process_loops` splits them).
    pub counts: Vec<u64>,
    pub process_loops: Vec<u64>,
    /// Instructions per item: the median over processes of each process's median loop ÷ items.
    pub per_item: f64,
    /// (max − min) ÷ median of the processes' instructions per item; 0 with one process.
    pub repeatability: f64,
    /// Wall seconds of each counted loop under Valgrind (its cost, never a speed).
    pub wall_seconds: Vec<f64>,
    /// Said when the worker under Valgrind sees fewer SIMD features than the machine has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The counted items' identity (`ItemsHasher`): two runs over other data with the same
    /// number of items differ here. Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_hash: Option<String>,
}

/// The hash of a counted item set: SHA-256 over each item's files (their byte lengths and
/// bytes) in counted order, as `ITEMS_HASH_DIGITS` hex digits. Paths and names are left out, so
/// the same data in another folder hashes the same.
#[derive(Default)]
pub struct ItemsHasher {
    sha: Sha256,
}

impl ItemsHasher {
    /// Adds one counted item: its files' bytes (one file, or a frame folder's files in name order).
    pub fn item<'a>(&mut self, files: impl IntoIterator<Item = &'a [u8]>) {
        self.sha.update(b"\0item");
        for bytes in files {
            self.sha.update((bytes.len() as u64).to_le_bytes());
            self.sha.update(bytes);
        }
    }

    pub fn finish(self) -> String {
        let digest = self.sha.finalize();
        let bytes = digest.iter().take(ITEMS_HASH_DIGITS / 2);
        bytes.map(|b| format!("{b:02x}")).collect()
    }
}

impl InstructionRecord {
    /// Adds one process's counted loops and recomputes the summary.
    pub fn add_process(&mut self, counts: &[u64], wall_seconds: &[f64]) {
        self.counts.extend_from_slice(counts);
        self.process_loops.push(counts.len() as u64);
        self.wall_seconds.extend_from_slice(wall_seconds);
        let per_process = self.per_process();
        self.per_item = median(&per_process).unwrap_or(0.0);
        self.repeatability = spread(&per_process);
    }

    /// Each process's instructions per item (median of its loops ÷ items).
    pub fn per_process(&self) -> Vec<f64> {
        let items = self.items.max(1) as f64;
        let mut at = 0usize;
        let mut out = Vec::new();
        for n in &self.process_loops {
            let end = (at + *n as usize).min(self.counts.len());
            let loops: Vec<f64> = self.counts[at..end].iter().map(|c| *c as f64).collect();
            if let Some(m) = median(&loops) {
                out.push(m / items);
            }
            at = end;
        }
        out
    }

    pub fn processes(&self) -> usize {
        self.process_loops.len()
    }
}

fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

/// (max − min) ÷ median; 0 for fewer than two values.
fn spread(values: &[f64]) -> f64 {
    let (Some(m), true) = (median(values), values.len() >= 2) else {
        return 0.0;
    };
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    if m > 0.0 { (max - min) / m } else { 0.0 }
}

/// What a count comparison found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CountChange {
    /// More instructions per item than the threshold allows.
    More,
    Fewer,
    Same,
    /// One side has fewer than `policy::COUNT_PROCESSES` processes: its repeatability is unknown.
    Undecided,
    /// Counted over other items (`ItemCheck`), or a side has no instructions per item.
    NotComparable,
}

/// Whether both sides counted the same items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemCheck {
    /// The same number of items and the same item-set hash.
    Same,
    /// The same number of items; a side recorded no hash (an older file), so which items is
    /// not known.
    Unchecked,
    /// A different number of items: not the same work.
    OtherCount,
    /// The same number of items with different hashes: other data.
    OtherItems,
}

impl ItemCheck {
    /// Compares the item counts, then the hashes where both sides recorded one.
    pub fn of(base: &InstructionRecord, cur: &InstructionRecord) -> ItemCheck {
        if base.items != cur.items {
            return ItemCheck::OtherCount;
        }
        match (&base.items_hash, &cur.items_hash) {
            (Some(b), Some(c)) if b == c => ItemCheck::Same,
            (Some(_), Some(_)) => ItemCheck::OtherItems,
            _ => ItemCheck::Unchecked,
        }
    }

    /// Whether the two sides may be compared at all.
    pub fn comparable(self) -> bool {
        matches!(self, ItemCheck::Same | ItemCheck::Unchecked)
    }
}

/// Current against baseline instructions per item.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CountComparison {
    /// current ÷ baseline instructions per item (above 1: more work).
    pub ratio: f64,
    /// The smallest relative change that counts: max(minimum effect, factor × repeatability).
    pub threshold: f64,
    pub change: CountChange,
    pub items: ItemCheck,
}

/// The count verdict: not comparable over other items (`ItemCheck`); else a change counts when
/// |ratio − 1| exceeds the larger of `min_effect` (the count threshold, never the time one) and
/// `policy::COUNT_REPEATABILITY_FACTOR` × the larger side's repeatability.
pub fn compare(
    base: &InstructionRecord,
    cur: &InstructionRecord,
    min_effect: f64,
) -> CountComparison {
    let ratio = if base.per_item > 0.0 {
        cur.per_item / base.per_item
    } else {
        f64::NAN
    };
    let repeat = base.repeatability.max(cur.repeatability);
    let threshold = min_effect.max(policy::COUNT_REPEATABILITY_FACTOR * repeat);
    let few = policy::COUNT_PROCESSES as usize;
    let items = ItemCheck::of(base, cur);
    let change = if !items.comparable() || !ratio.is_finite() {
        CountChange::NotComparable
    } else if base.processes() < few || cur.processes() < few {
        CountChange::Undecided
    } else if (ratio - 1.0).abs() <= threshold {
        CountChange::Same
    } else if ratio > 1.0 {
        CountChange::More
    } else {
        CountChange::Fewer
    };
    CountComparison {
        ratio,
        threshold,
        change,
        items,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record(items: u64, processes: &[&[u64]]) -> InstructionRecord {
        let mut r = InstructionRecord {
            items,
            ..Default::default()
        };
        for p in processes {
            r.add_process(p, &vec![1.0; p.len()]);
        }
        r
    }

    #[test]
    fn per_item_is_the_median_over_processes_and_repeatability_their_spread() {
        let r = record(10, &[&[1_000_000, 1_000_200], &[1_000_100], &[1_001_000]]);
        assert_eq!(r.processes(), 3);
        assert!((r.per_item - 100_010.0).abs() < 1e-9, "{}", r.per_item);
        let want = (100_100.0 - 100_010.0) / 100_010.0;
        assert!((r.repeatability - want).abs() < 1e-12);
    }

    #[test]
    fn two_percent_more_work_is_more_and_a_tiny_wobble_is_same() {
        let base = record(10, &[&[1_000_000], &[1_000_150]]);
        let slow = record(10, &[&[1_020_000], &[1_020_100]]);
        let same = record(10, &[&[1_000_300], &[1_000_100]]);
        assert_eq!(compare(&base, &slow, 0.01).change, CountChange::More);
        assert_eq!(compare(&slow, &base, 0.01).change, CountChange::Fewer);
        assert_eq!(compare(&base, &same, 0.01).change, CountChange::Same);
    }

    #[test]
    fn a_noisy_side_raises_the_threshold_and_one_process_or_other_items_cannot_decide() {
        let noisy = record(10, &[&[1_000_000], &[1_005_000]]);
        let slow = record(10, &[&[1_030_000], &[1_030_000]]);
        let c = compare(&noisy, &slow, 0.01);
        assert!((c.threshold - 0.05).abs() < 1e-3, "{c:?}");
        assert_eq!(c.change, CountChange::Same);
        let one = record(10, &[&[1_030_000]]);
        let base = record(10, &[&[1_000_000], &[1_000_000]]);
        assert_eq!(compare(&base, &one, 0.01).change, CountChange::Undecided);
        let other = record(5, &[&[1_000_000], &[1_000_000]]);
        assert_eq!(
            compare(&base, &other, 0.01).change,
            CountChange::NotComparable
        );
    }

    fn hashed(r: &InstructionRecord, hash: &str) -> InstructionRecord {
        InstructionRecord {
            items_hash: Some(hash.into()),
            ..r.clone()
        }
    }

    #[test]
    fn the_same_count_over_other_items_is_not_comparable() {
        let base = record(10, &[&[1_000_000], &[1_000_000]]);
        let same = record(10, &[&[1_000_000], &[1_000_000]]);
        let (a, b) = (hashed(&base, "aaaa"), hashed(&same, "bbbb"));
        let c = compare(&a, &b, 0.01);
        assert_eq!(
            (c.change, c.items),
            (CountChange::NotComparable, ItemCheck::OtherItems)
        );
        let c = compare(&a, &hashed(&same, "aaaa"), 0.01);
        assert_eq!((c.change, c.items), (CountChange::Same, ItemCheck::Same));
    }

    #[test]
    fn a_side_without_a_hash_compares_as_before_but_unchecked() {
        let base = hashed(&record(10, &[&[1_000_000], &[1_000_000]]), "aaaa");
        let slow = record(10, &[&[1_020_000], &[1_020_000]]);
        let c = compare(&base, &slow, 0.01);
        assert_eq!(
            (c.change, c.items),
            (CountChange::More, ItemCheck::Unchecked)
        );
        let other = record(5, &[&[1_000_000], &[1_000_000]]);
        assert_eq!(ItemCheck::of(&base, &other), ItemCheck::OtherCount);
    }

    #[test]
    fn the_count_threshold_is_the_one_given_however_small() {
        let base = record(10, &[&[1_000_000], &[1_000_000]]);
        let slow = record(10, &[&[1_020_000], &[1_020_000]]);
        let c = compare(&base, &slow, policy::COUNT_MIN_EFFECT);
        assert_eq!(c.change, CountChange::More, "{c:?}");
        assert!((c.threshold - policy::COUNT_MIN_EFFECT).abs() < 1e-12);
        assert_eq!(compare(&base, &slow, 0.05).change, CountChange::Same);
    }

    #[test]
    fn the_item_hash_follows_the_bytes_their_order_and_item_bounds() {
        let hash = |items: &[&[&[u8]]]| {
            let mut h = ItemsHasher::default();
            for files in items {
                h.item(files.iter().copied());
            }
            h.finish()
        };
        let ab = hash(&[&[b"a"], &[b"b"]]);
        assert_eq!(ab.len(), ITEMS_HASH_DIGITS);
        assert!(ab.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(ab, hash(&[&[b"a"], &[b"b"]]));
        assert_ne!(ab, hash(&[&[b"b"], &[b"a"]]));
        assert_ne!(ab, hash(&[&[b"a", b"b"]]));
        assert_ne!(hash(&[&[b"ab"]]), hash(&[&[b"a", b"b"]]));
        assert_ne!(ab, hash(&[&[b"a"], &[b"c"]]));
    }

    #[test]
    fn a_record_written_before_the_item_hash_reads_and_an_unknown_field_does_not() {
        let old = r#"{"tool":"valgrind-3.19.0 callgrind","method":"m","items":10,
            "counts":[100,101],"process_loops":[1,1],"per_item":10.05,"repeatability":0.01,
            "wall_seconds":[1.0,1.0]}"#;
        let r: InstructionRecord = serde_json::from_str(old).unwrap();
        assert_eq!((r.items, r.items_hash.as_deref()), (10, None));
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("items_hash"), "{text}");
        let new = hashed(&r, "0123456789abcdef");
        let back: InstructionRecord =
            serde_json::from_str(&serde_json::to_string(&new).unwrap()).unwrap();
        assert_eq!(back, new);
        let unknown = old.replace("\"items\":10", "\"items\":10,\"item_hash\":\"x\"");
        assert!(serde_json::from_str::<InstructionRecord>(&unknown).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: proptest::test_runner::RngSeed::Fixed(41), ..ProptestConfig::default() })]
        /// Within the threshold nothing is called; beyond it the sign of the change is right.
        #[test]
        fn the_verdict_follows_the_ratio_and_the_threshold(
            base in 1_000_000u64..1_000_000_000,
            change in -0.2f64..0.2,
            wobble in 0u64..50,
        ) {
            let b = record(4, &[&[base], &[base + wobble]]);
            let c_count = (base as f64 * (1.0 + change)) as u64;
            let c = record(4, &[&[c_count], &[c_count + wobble]]);
            let got = compare(&b, &c, 0.01);
            if (got.ratio - 1.0).abs() <= got.threshold {
                prop_assert_eq!(got.change, CountChange::Same);
            } else if got.ratio > 1.0 {
                prop_assert_eq!(got.change, CountChange::More);
            } else {
                prop_assert_eq!(got.change, CountChange::Fewer);
            }
            prop_assert!(got.threshold >= 0.01);
        }
    }
}
