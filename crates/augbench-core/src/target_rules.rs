//! The rules a run with target rows follows (docs/targets.md): what it can measure today (micro
//! and pipeline rows on RGB images, per image, no variants, locally), each set listed once, and
//! the annotations keys that belong to it.

use crate::config::RunConfig;
use augbench_catalog::config_error::{ConfigError, Source};
use augbench_catalog::matrix::{Device, Media, Mode};

type Check = Result<(), ConfigError>;

/// What a run with targets can measure today: micro and pipeline rows on RGB images, per image,
/// with the registry's transforms, no A/B variants; each set listed once.
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
    if cfg.selection.mode == Some(Mode::Decode) {
        let msg = "decode mode times decoders alone: no transform moves targets there".into();
        return Err(src.error(
            key,
            msg,
            "use `mode: micro` or `mode: pipeline`, or remove `targets`",
        ));
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
    let drop = "remove `targets` for image-only rows";
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
    if sel.mode == Some(Mode::Pipeline) && cfg.execution.device == Some(Device::Cuda) {
        return Some((
            "on the GPU in pipeline mode (targets run in the loader workers, no GPU split)",
            "use `device: cpu`, or remove `targets`",
        ));
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
