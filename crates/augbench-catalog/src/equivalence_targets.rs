//! The `targets:` section of the equivalence spec (`specs/equivalence.yaml`): which transforms
//! `augbench check equivalence --targets` compares with its Rust reference, their tolerance
//! classes (coordinates in pixels, the share of mask pixels that may differ), and the libraries'
//! explained conventions per target kind (reported as `known difference`, never a mismatch).

use std::collections::BTreeMap;

use serde::Deserialize;

/// How far a library's targets may be from the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetTolerance {
    /// Largest |Δ| of any box edge or keypoint coordinate, in pixels.
    pub coord_px: f64,
    /// Largest share (0–1) of mask pixels that may differ from the reference mask.
    pub mask_share: f64,
}

/// A library's convention for one kind of target under one transform, with the explanation and,
/// where the convention has a size, the largest difference it explains (a larger one is still a
/// mismatch).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetKnownDifference {
    pub transform: String,
    pub library: String,
    /// A target kind's name (`mask`, `boxes`, `keypoints`: `augbench_core::targets::TargetKind`,
    /// which this crate cannot name; exec's targets check tests that each one parses).
    pub kind: String,
    /// Boxes and keypoints: the largest |Δ| in pixels the convention explains, beyond the
    /// class's `coord_px` (absent: any).
    #[serde(default)]
    pub max_px: Option<f64>,
    /// Masks: the largest share (0–1) of differing pixels it explains, beyond the class's
    /// `mask_share` (absent: any).
    #[serde(default)]
    pub max_mask_share: Option<f64>,
    pub why: String,
}

impl TargetKnownDifference {
    /// Whether it explains a difference of `value` (pixels for boxes and keypoints, a share for
    /// masks; None: nothing measured) under a class tolerance of `tol`.
    pub fn explains(&self, value: Option<f64>, tol: &TargetTolerance) -> bool {
        let (bound, slack) = if self.kind == "mask" {
            (self.max_mask_share, tol.mask_share)
        } else {
            (self.max_px, tol.coord_px)
        };
        match (bound, value) {
            (Some(b), Some(v)) => v <= b + slack + 1e-12,
            _ => true,
        }
    }
}

/// The `targets:` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetsSpec {
    pub tolerances: BTreeMap<String, TargetTolerance>,
    /// The transforms the reference covers and their tolerance class.
    pub transforms: BTreeMap<String, String>,
    #[serde(default)]
    pub known_differences: Vec<TargetKnownDifference>,
}

impl TargetsSpec {
    /// The tolerance class of a transform the reference covers.
    pub fn class_of(&self, transform: &str) -> Option<(&str, TargetTolerance)> {
        let class = self.transforms.get(transform)?;
        Some((class.as_str(), *self.tolerances.get(class)?))
    }

    /// Why `library` moves `kind` differently under `transform`, if it is a known convention.
    pub fn known(
        &self,
        transform: &str,
        library: &str,
        kind: &str,
    ) -> Option<&TargetKnownDifference> {
        self.known_differences
            .iter()
            .find(|k| k.transform == transform && k.library == library && k.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use crate::equivalence::EquivalenceSpec;

    #[test]
    fn every_target_transform_class_and_known_difference_is_real() {
        let spec = &EquivalenceSpec::get().targets;
        let reg = crate::Registry::get();
        assert!(!spec.transforms.is_empty());
        for (name, class) in &spec.transforms {
            assert!(reg.spec(name).is_some(), "{name} is not in the registry");
            assert!(spec.tolerances.contains_key(class), "{name}: class {class}");
        }
        for t in spec.tolerances.values() {
            assert!(
                t.coord_px >= 0.0 && (0.0..=1.0).contains(&t.mask_share),
                "{t:?}"
            );
        }
        let matrix = crate::Matrix::get();
        for k in &spec.known_differences {
            assert!(spec.class_of(&k.transform).is_some(), "{}", k.transform);
            let lib = matrix.library(&k.library);
            assert!(lib.is_some_and(|l| l.targets), "{}: no targets", k.library);
            assert!(
                !k.why.trim().is_empty(),
                "{} {}: explain it",
                k.transform,
                k.library
            );
            let bound_fits = match k.kind.as_str() {
                "mask" => k.max_px.is_none(),
                _ => k.max_mask_share.is_none(),
            };
            assert!(
                bound_fits,
                "{} {} {}: a bound of another kind",
                k.transform, k.library, k.kind
            );
        }
        let (class, t) = spec.class_of("HorizontalFlip").unwrap();
        assert_eq!(class, "exact");
        assert!(t.mask_share == 0.0, "a flip moves whole pixels");
    }
}
