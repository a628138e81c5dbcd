//! Detection and segmentation targets as a selection axis: the target kinds (`mask`, `boxes`,
//! `keypoints`), the target sets a config lists (`boxes`, `mask+boxes+keypoints`), and the column
//! label of a library's rows with a set (`albumentationsx+boxes`) (docs/targets.md). The rules a
//! run with targets follows are `target_rules`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One kind of target moved with the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// A semantic mask, one class id per pixel.
    Mask,
    /// Bounding boxes with a label each.
    Boxes,
    /// Points.
    Keypoints,
}

impl TargetKind {
    /// Every kind, in the canonical order labels and requests use.
    pub const ALL: [TargetKind; 3] = [TargetKind::Mask, TargetKind::Boxes, TargetKind::Keypoints];

    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Mask => "mask",
            TargetKind::Boxes => "boxes",
            TargetKind::Keypoints => "keypoints",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TargetKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TargetKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown target `{s}`: expected mask, boxes or keypoints, joined with `+`")
            })
    }
}

/// The targets one row set carries with the image: one or more kinds, each once, in canonical
/// order. Written as the kinds joined with `+` (`mask+boxes`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TargetSet(Vec<TargetKind>);

impl TargetSet {
    pub fn kinds(&self) -> &[TargetKind] {
        &self.0
    }

    /// The kinds' names, in canonical order (what a worker's `load` request carries).
    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(|k| k.name().to_string()).collect()
    }
}

impl fmt::Display for TargetSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join("+"))
    }
}

impl FromStr for TargetSet {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut kinds = Vec::new();
        for part in s.split('+').map(str::trim) {
            let kind: TargetKind = part.parse()?;
            if kinds.contains(&kind) {
                return Err(format!("target set `{s}` names `{kind}` twice"));
            }
            kinds.push(kind);
        }
        kinds.sort();
        Ok(TargetSet(kinds))
    }
}

impl TryFrom<String> for TargetSet {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<TargetSet> for String {
    fn from(set: TargetSet) -> String {
        set.to_string()
    }
}

/// The column label of `library`'s rows with `set`: `albumentationsx+boxes`.
pub fn label(library: &str, set: &TargetSet) -> String {
    format!("{library}+{set}")
}

/// The library and target set of a column label made by [`label`] (`None` for any other label:
/// an image-only column, an A/B variant such as `pillow@11.3.0`).
pub fn split_label(column: &str) -> Option<(&str, TargetSet)> {
    let (library, set) = column.split_once('+')?;
    augbench_catalog::matrix::Matrix::get().library(library)?;
    Some((library, set.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_in_canonical_order_and_print_back() {
        let set: TargetSet = "keypoints+mask".parse().unwrap();
        assert_eq!(set.to_string(), "mask+keypoints");
        assert_eq!(set.kinds(), &[TargetKind::Mask, TargetKind::Keypoints]);
        assert_eq!(label("kornia", &set), "kornia+mask+keypoints");
        let (library, back) = split_label("kornia+mask+keypoints").unwrap();
        assert_eq!((library, back), ("kornia", set));
        assert!(split_label("kornia").is_none());
        assert!(
            split_label("pillow@1.0+local").is_none(),
            "an A/B label is not a target column"
        );
    }

    #[test]
    fn unknown_and_repeated_kinds_are_refused_with_the_expected_names() {
        let err = "boxes+polygons".parse::<TargetSet>().unwrap_err();
        assert!(err.contains("`polygons`") && err.contains("mask, boxes or keypoints"));
        let err = "boxes+boxes".parse::<TargetSet>().unwrap_err();
        assert!(err.contains("twice"), "{err}");
    }
}
