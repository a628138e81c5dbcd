//! The equivalence spec (embedded `specs/equivalence.yaml`: tolerance classes, which transforms
//! are deterministic, the reference library order) and the pure pixel comparison behind
//! `augbench check equivalence`: per pair of HWC uint8 outputs the max and mean absolute
//! difference and the PSNR, and the verdict against a tolerance class. Also the verdict words
//! and the per-library summary a run's result files carry (`metadata.equivalence`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub use crate::equivalence_targets::{TargetKnownDifference, TargetTolerance, TargetsSpec};

/// The scenario the check's images stand for (RGB images, one item per call).
pub const SCENARIO: &str = "image-rgb";

const EQUIVALENCE_YAML: &str = include_str!("../../../specs/equivalence.yaml");

/// How far two outputs of a deterministic transform may differ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// Largest absolute difference of any one value.
    pub max_abs: u8,
    /// Largest mean absolute difference over all values.
    pub mean_abs: f64,
    /// Smallest PSNR in dB (absent: not checked).
    pub min_psnr: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EquivalenceSpec {
    #[allow(dead_code)]
    version: u32,
    /// The reference library of a transform: the first of these that supports it.
    pub reference_order: Vec<String>,
    pub tolerances: BTreeMap<String, Tolerance>,
    /// Deterministic transforms and their tolerance class.
    pub transforms: BTreeMap<String, String>,
    /// Explained conventions of a library: reported, never counted as a mismatch.
    #[serde(default)]
    pub known_differences: Vec<KnownDifference>,
    /// The targets check (`--targets`): its transforms, tolerances and known differences.
    #[serde(default)]
    pub targets: TargetsSpec,
}

/// A difference the check finds that is the library's convention, with the explanation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownDifference {
    pub transform: String,
    pub library: String,
    pub why: String,
}

impl EquivalenceSpec {
    /// The embedded spec, parsed once. Its validity is a build-time fact checked by tests.
    pub fn get() -> &'static EquivalenceSpec {
        static SPEC: OnceLock<EquivalenceSpec> = OnceLock::new();
        SPEC.get_or_init(|| crate::embedded::parse("specs/equivalence.yaml", EQUIVALENCE_YAML))
    }

    /// The tolerance class of a deterministic transform (None: random, checked by statistics).
    pub fn class_of(&self, transform: &str) -> Option<(&str, Tolerance)> {
        let class = self.transforms.get(transform)?;
        Some((class.as_str(), *self.tolerances.get(class)?))
    }

    /// Why `library`'s output of `transform` is known to differ, if it is.
    pub fn known(&self, transform: &str, library: &str) -> Option<&str> {
        self.known_differences
            .iter()
            .find(|k| k.transform == transform && k.library == library)
            .map(|k| k.why.as_str())
    }

    /// The library the others are compared with, among those that produced an output.
    pub fn reference<'a>(&self, produced: &[&'a str]) -> Option<&'a str> {
        let ranked = |lib: &&str| {
            self.reference_order
                .iter()
                .position(|r| r == lib)
                .unwrap_or(usize::MAX)
        };
        produced.iter().copied().min_by_key(ranked)
    }
}

/// What the check concluded, per library pair or per transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within tolerance (deterministic), or statistics as expected (random).
    Ok,
    /// Outside tolerance, or a shape that breaks the registry's rule.
    Mismatch,
    /// Outside tolerance, but explained in the spec's `known_differences` (reported, not failed).
    KnownDifference,
    /// A random transform gave the same outputs under two seeds (reported, not failed).
    SameForSeeds,
    /// Only one library produced an output: nothing to compare with.
    Alone,
    Unsupported,
    Error,
}

impl Verdict {
    /// The word tables and reports print.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Mismatch => "MISMATCH",
            Verdict::SameForSeeds => "same for two seeds",
            Verdict::KnownDifference => "known difference",
            Verdict::Alone => "one library only",
            Verdict::Unsupported => "unsupported",
            Verdict::Error => "error",
        }
    }
}

/// One library's view of a run's equivalence check (`metadata.equivalence` of its result file):
/// per transform, the transform's verdict and this library's line. The whole check (every
/// library's lines) is `naming::EQUIVALENCE_FILE` in the run's output folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EquivalenceSummary {
    /// The whole check, relative to the run's output folder.
    pub file: String,
    /// The check's input images (width × height): lossless RGB PNG written by the check itself,
    /// not the run's dataset; every library applied each transform on the CPU.
    pub inputs: Vec<[u32; 2]>,
    /// Libraries the check ran (the run's libraries).
    pub libraries: Vec<String>,
    pub transforms: BTreeMap<String, TransformEquivalence>,
}

/// One transform in one library's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformEquivalence {
    /// The tolerance class (deterministic transforms), or `random`.
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The transform's verdict over every library.
    pub verdict: Verdict,
    /// This library's verdict.
    pub library_verdict: Verdict,
    /// This library's output against the reference's (deterministic transforms, not the reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<Diff>,
    /// Why (a known difference's explanation, an error, `reference`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// One output: `[height, width, channels]` and its row-major bytes.
#[derive(Debug, Clone, Copy)]
pub struct Pixels<'a> {
    pub shape: [usize; 3],
    pub data: &'a [u8],
}

/// How two outputs differ. `psnr` is None when they are identical (infinite PSNR).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub max_abs: u8,
    pub mean_abs: f64,
    pub psnr: Option<f64>,
}

impl Diff {
    pub const IDENTICAL: Diff = Diff {
        max_abs: 0,
        mean_abs: 0.0,
        psnr: None,
    };

    pub fn within(&self, t: &Tolerance) -> bool {
        let psnr_ok = match (self.psnr, t.min_psnr) {
            (Some(p), Some(min)) => p >= min,
            _ => true,
        };
        self.max_abs <= t.max_abs && self.mean_abs <= t.mean_abs + 1e-9 && psnr_ok
    }

    /// The worst of several diffs (one per input image): max of max, max of mean, min PSNR.
    pub fn worst(diffs: &[Diff]) -> Diff {
        diffs.iter().fold(Diff::IDENTICAL, |acc, d| Diff {
            max_abs: acc.max_abs.max(d.max_abs),
            mean_abs: acc.mean_abs.max(d.mean_abs),
            psnr: match (acc.psnr, d.psnr) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        })
    }
}

/// Why two outputs cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    #[error("shape {a:?} vs {b:?}")]
    Shape { a: [usize; 3], b: [usize; 3] },
    #[error("{len} bytes for shape {shape:?}")]
    Size { shape: [usize; 3], len: usize },
}

/// Compares two HWC uint8 outputs of the same height and width; a one-channel output is
/// compared as if its channel were repeated (a grayscale kept as one band).
pub fn compare(a: Pixels<'_>, b: Pixels<'_>) -> Result<Diff, CompareError> {
    for p in [a, b] {
        if p.shape.iter().product::<usize>() != p.data.len() {
            return Err(CompareError::Size {
                shape: p.shape,
                len: p.data.len(),
            });
        }
    }
    let [ha, wa, ca] = a.shape;
    let [hb, wb, cb] = b.shape;
    let channels = ca.max(cb);
    if (ha, wa) != (hb, wb) || !(ca == cb || ca == 1 || cb == 1) {
        return Err(CompareError::Shape {
            a: a.shape,
            b: b.shape,
        });
    }
    let (mut max_abs, mut sum, mut sq) = (0u8, 0u64, 0u64);
    for px in 0..ha * wa {
        for c in 0..channels {
            let x = a.data[px * ca + if ca == 1 { 0 } else { c }];
            let y = b.data[px * cb + if cb == 1 { 0 } else { c }];
            let d = x.abs_diff(y);
            max_abs = max_abs.max(d);
            sum += u64::from(d);
            sq += u64::from(d) * u64::from(d);
        }
    }
    let n = (ha * wa * channels).max(1) as f64;
    let mse = sq as f64 / n;
    let psnr = (mse > 0.0).then(|| 10.0 * (255.0f64 * 255.0 / mse).log10());
    Ok(Diff {
        max_abs,
        mean_abs: sum as f64 / n,
        psnr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn px(shape: [usize; 3], data: &[u8]) -> Pixels<'_> {
        Pixels { shape, data }
    }

    #[test]
    fn the_embedded_spec_names_registry_transforms_and_known_classes() {
        let spec = EquivalenceSpec::get();
        let reg = crate::Registry::get();
        for (name, class) in &spec.transforms {
            assert!(reg.spec(name).is_some(), "{name} is not in the registry");
            assert!(spec.tolerances.contains_key(class), "{name}: class {class}");
        }
        let (class, t) = spec.class_of("HorizontalFlip").unwrap();
        assert_eq!((class, t.max_abs), ("exact", 0));
        assert!(spec.class_of("Rotate").is_none(), "Rotate draws an angle");
        for k in &spec.known_differences {
            assert!(
                spec.class_of(&k.transform).is_some(),
                "{}: not deterministic",
                k.transform
            );
            assert!(
                crate::Matrix::get().library(&k.library).is_some(),
                "{}",
                k.library
            );
            assert!(
                !k.why.trim().is_empty(),
                "{} {}: explain it",
                k.transform,
                k.library
            );
        }
    }

    #[test]
    fn the_reference_is_the_first_in_order_among_those_that_produced() {
        let spec = EquivalenceSpec::get();
        assert_eq!(
            spec.reference(&["kornia-rs", "torchvision", "image"]),
            Some("torchvision")
        );
        assert_eq!(spec.reference(&[]), None);
    }

    #[test]
    fn differences_psnr_and_tolerance() {
        let a = [10u8, 20, 30, 40, 50, 60];
        let b = [10u8, 20, 33, 40, 50, 57];
        let d = compare(px([1, 2, 3], &a), px([1, 2, 3], &b)).unwrap();
        assert_eq!(d.max_abs, 3);
        assert!((d.mean_abs - 1.0).abs() < 1e-12);
        let expected = 10.0 * (255.0f64 * 255.0 / 3.0).log10();
        assert!((d.psnr.unwrap() - expected).abs() < 1e-9);
        let exact = EquivalenceSpec::get().class_of("Invert").unwrap().1;
        assert!(!d.within(&exact));
        assert!(Diff::IDENTICAL.within(&exact));
    }

    #[test]
    fn one_band_is_compared_as_three_and_shapes_must_agree() {
        let gray = [7u8, 9];
        let rgb = [7u8, 7, 7, 9, 9, 9];
        assert_eq!(
            compare(px([1, 2, 1], &gray), px([1, 2, 3], &rgb)).unwrap(),
            Diff::IDENTICAL
        );
        let e = compare(px([2, 1, 1], &gray), px([1, 2, 3], &rgb)).unwrap_err();
        assert!(matches!(e, CompareError::Shape { .. }));
        let e = compare(px([1, 3, 3], &rgb), px([1, 2, 3], &rgb)).unwrap_err();
        assert!(matches!(e, CompareError::Size { .. }));
    }

    #[test]
    fn worst_takes_the_largest_differences_and_smallest_psnr() {
        let a = Diff {
            max_abs: 4,
            mean_abs: 0.5,
            psnr: Some(45.0),
        };
        let b = Diff {
            max_abs: 2,
            mean_abs: 0.9,
            psnr: None,
        };
        let w = Diff::worst(&[a, b, Diff::IDENTICAL]);
        assert_eq!((w.max_abs, w.mean_abs, w.psnr), (4, 0.9, Some(45.0)));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]
        #[test]
        fn compare_is_symmetric_and_zero_on_itself(data in proptest::collection::vec(any::<u8>(), 12), other in proptest::collection::vec(any::<u8>(), 12)) {
            let a = px([2, 2, 3], &data);
            let b = px([2, 2, 3], &other);
            prop_assert_eq!(compare(a, a).unwrap(), Diff::IDENTICAL);
            prop_assert_eq!(compare(a, b).unwrap(), compare(b, a).unwrap());
        }
    }
}
