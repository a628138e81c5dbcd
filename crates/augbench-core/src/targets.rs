//! Detection and segmentation targets as a selection axis: the target kinds (`mask`, `boxes`,
//! `keypoints`), the target sets a config lists (`boxes`, `mask+boxes+keypoints`), the column
//! label of a library's rows with a set (`albumentationsx+boxes`), and the rules a run with
//! targets must follow (docs/targets.md).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use augbench_catalog::config_error::{ConfigError, Source};
use augbench_catalog::matrix::{Media, Mode};

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

/// The target sets a resolved config measures (none: image-only rows alone).
pub fn sets(cfg: &RunConfig) -> &[TargetSet] {
    cfg.selection.targets.as_deref().unwrap_or_default()
}

type Check = Result<(), ConfigError>;

/// What a run with targets can measure today: micro rows on RGB images, per image, with the
/// registry's transforms, no A/B variants; each set listed once.
pub fn check(cfg: &RunConfig, src: &Source) -> Check {
    annotations(cfg, src)?;
    let Some(sets) = &cfg.selection.targets else {
        return Ok(());
    };
    let key: &[&str] = &["selection", "targets"];
    if sets.is_empty() {
        let hint = "list target sets (`mask`, `boxes`, `keypoints`, `mask+boxes+keypoints`), or remove the key for image-only rows";
        return Err(src.error(key, "`targets` is empty".into(), hint));
    }
    if let Some(dup) = sets
        .iter()
        .enumerate()
        .find(|(i, s)| sets[..*i].contains(s))
    {
        let msg = format!("target set `{}` is listed twice", dup.1);
        return Err(src.error(key, msg, "list each target set once"));
    }
    if let Some((what, hint)) = refusal(cfg) {
        let msg = format!("targets are not measured {what} yet");
        return Err(src.error(key, msg, hint));
    }
    Ok(())
}

/// Why this config cannot carry targets (what, hint), if it cannot.
fn refusal(cfg: &RunConfig) -> Option<(&'static str, &'static str)> {
    let sel = &cfg.selection;
    let micro = sel.mode.unwrap_or(Mode::Micro) == Mode::Micro;
    let drop = "remove `targets` for image-only rows";
    if !micro {
        return Some((
            "in pipeline or decode mode (micro rows only)",
            "use `mode: micro`, or remove `targets`",
        ));
    }
    if sel.media.unwrap_or(Media::Image) != Media::Image {
        return Some(("on video", "use an image scenario, or remove `targets`"));
    }
    if sel.multichannel == Some(true) || cfg.data.num_channels.is_some_and(|c| c != 3) {
        return Some(("on multichannel images", "use scenario `image-rgb`"));
    }
    if sel.spec.is_some() {
        return Some(("with a spec file", drop));
    }
    if sel.variants.is_some() {
        return Some(("in A/B runs (`variants`)", drop));
    }
    if cfg.execution.micro_batch.is_some_and(|b| b > 1) {
        return Some((
            "in the batched regime (targets are per image)",
            "remove `micro_batch`",
        ));
    }
    if cfg.is_cloud() {
        return Some(("on Batch or Slurm", "run it locally"));
    }
    if cfg.execution.check_equivalence == Some(true) {
        return Some((
            "with `check_equivalence`",
            "run `augbench check equivalence` apart",
        ));
    }
    None
}

/// `data.annotations` belongs to a `data_dir` and is read for target rows only;
/// `annotation_errors` belongs to `annotations`.
fn annotations(cfg: &RunConfig, src: &Source) -> Check {
    let data = &cfg.data;
    if data.annotations.is_some() && cfg.selection.targets.is_none() {
        return Err(src.error(
            &["data", "annotations"],
            "`annotations` is read only by runs with `selection.targets`".into(),
            "add `targets: [boxes]` (or mask, keypoints) under `selection`, or remove `annotations`",
        ));
    }
    if data.annotations.is_some() && data.data_dir.is_none() {
        return Err(src.error(
            &["data", "annotations"],
            "`annotations` describes the images of a `data_dir`, and this config has none".into(),
            "set `data_dir` to the folder the annotations name, or remove `annotations` to use the built-in annotated synthetic dataset",
        ));
    }
    if cfg.selection.targets.is_some() && data.data_dir.is_some() && data.annotations.is_none() {
        return Err(src.error(
            &["selection", "targets"],
            "target rows over a `data_dir` need that folder's annotations".into(),
            "set `data.annotations` to its COCO instances file, or remove `data_dir` to use the built-in annotated synthetic dataset",
        ));
    }
    if data.annotations.is_none() && data.annotation_errors.is_some() {
        return Err(src.error(
            &["data", "annotation_errors"],
            "`annotation_errors` applies to `annotations`, which this config does not set".into(),
            "remove `annotation_errors`",
        ));
    }
    Ok(())
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
    }

    #[test]
    fn unknown_and_repeated_kinds_are_refused_with_the_expected_names() {
        let err = "boxes+polygons".parse::<TargetSet>().unwrap_err();
        assert!(err.contains("`polygons`") && err.contains("mask, boxes or keypoints"));
        let err = "boxes+boxes".parse::<TargetSet>().unwrap_err();
        assert!(err.contains("twice"), "{err}");
    }
}
