//! The running side of the targets check: writes the check's input images with the synthetic
//! shapes painted over them and their targets file (masks, boxes and keypoints from
//! `synth_targets`, inside every image), starts each library's worker with all three kinds
//! loaded, emits each transform once (every transform the check covers is deterministic) and
//! reads the emitted targets back ([`Emitted`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::Registry;
use augbench_core::targets::TargetKind;
use augbench_media::synth_targets;
use augbench_media::targets::{ItemTargets, write_targets_file};
use augbench_protocol::client::Worker;
use augbench_protocol::protocol::{EmitOutput, TargetsRequest};
use indicatif::MultiProgress;
use serde::Deserialize;

use super::super::produced::Produced;
use super::super::running::{
    INPUT_SEED, SEEDS, input_images, per_library, prepare_and_emit, save_input, start,
};

/// The check's inputs: image paths, their targets (same order) and the targets file.
pub struct Inputs {
    pub paths: Vec<PathBuf>,
    pub targets: Vec<ItemTargets>,
    pub file: PathBuf,
}

/// One emitted output, read back: the image's height and width and the moved targets.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    pub image_hw: [usize; 2],
    pub boxes: Vec<[f64; 4]>,
    pub labels: Vec<i64>,
    pub keypoints: Vec<[f64; 2]>,
    /// Absent: the worker wrote no mask.
    pub mask: Option<EmittedMask>,
}

/// An emitted mask: `[height, width]` and its row-major values.
#[derive(Debug, Clone, PartialEq)]
pub struct EmittedMask {
    pub hw: [usize; 2],
    pub data: Vec<u8>,
}

/// What one library gave for one transform.
#[derive(Debug, Clone)]
pub enum Collected {
    Emitted(Vec<Emitted>),
    Unsupported(String),
    Failed(String),
}

/// Writes the annotated inputs and their targets file into `dir`.
pub fn write_inputs(dir: &Path) -> anyhow::Result<Inputs> {
    let mut inputs = Inputs {
        paths: Vec::new(),
        targets: Vec::new(),
        file: dir.join("targets.json"),
    };
    for (i, mut img) in input_images().into_iter().enumerate() {
        let t = synth_targets::drawn_targets_sized(INPUT_SEED, i as u64, img.width(), img.height());
        synth_targets::paint(&mut img, &t.mask);
        inputs.paths.push(save_input(dir, i, &img)?);
        inputs.targets.push(t);
    }
    let items: Vec<(String, &ItemTargets)> = inputs
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .zip(&inputs.targets)
        .collect();
    write_targets_file(&inputs.file, &items)?;
    Ok(inputs)
}

/// Every library's emitted targets for every transform: `library → transform → Collected`.
pub fn collect(
    libraries: &[String],
    transforms: &[String],
    inputs: &Inputs,
    scratch: &Path,
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<BTreeMap<String, BTreeMap<String, Collected>>> {
    let request = TargetsRequest {
        file: inputs.file.display().to_string(),
        kinds: TargetKind::ALL
            .iter()
            .map(|k| k.name().to_string())
            .collect(),
    };
    per_library(
        (libraries, transforms),
        scratch,
        mp,
        "Equivalence on targets",
        &|library| start(library, &inputs.paths, Some(request.clone()), refresh, mp),
        &|worker, t, dir| {
            let sub = dir.join(t);
            std::fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
            Ok(emit(worker, t, &sub))
        },
        Collected::Failed,
    )
}

/// `transform` once, with the registry's parameters, on every loaded item.
fn emit(worker: &mut Worker, transform: &str, dir: &Path) -> Collected {
    let Some(spec) = Registry::get().spec(transform) else {
        return Collected::Failed(format!("`{transform}` is not in the transform registry"));
    };
    let params = serde_json::to_value(&spec.params).unwrap_or_default();
    let emitted = match prepare_and_emit(worker, transform, &params, SEEDS[0], dir) {
        Ok(e) => e,
        Err(Produced::Unsupported(why)) => return Collected::Unsupported(why),
        Err(Produced::Failed(why)) => return Collected::Failed(why),
        Err(Produced::Outputs(_)) => return Collected::Failed("no outputs".into()),
    };
    match emitted.outputs.iter().map(read).collect() {
        Ok(all) => Collected::Emitted(all),
        Err(why) => Collected::Failed(why),
    }
}

/// `<i>.targets.json` as the worker writes it (the loaded kinds only).
#[derive(Deserialize)]
struct TargetsJson {
    #[serde(default)]
    boxes: Vec<[f64; 4]>,
    #[serde(default)]
    labels: Vec<i64>,
    #[serde(default)]
    keypoints: Vec<[f64; 2]>,
}

fn read(o: &EmitOutput) -> Result<Emitted, String> {
    let image_hw = match o.shape.as_slice() {
        [h, w, _] => [*h as usize, *w as usize],
        other => return Err(format!("output shape {other:?} is not H×W×C")),
    };
    let file = o
        .targets_file
        .as_deref()
        .ok_or_else(|| format!("{}: the worker listed no targets_file", o.file))?;
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let t: TargetsJson =
        serde_json::from_str(&text).map_err(|e| format!("{file} is not a targets output: {e}"))?;
    Ok(Emitted {
        image_hw,
        boxes: t.boxes,
        labels: t.labels,
        keypoints: t.keypoints,
        mask: read_mask(o)?,
    })
}

fn read_mask(o: &EmitOutput) -> Result<Option<EmittedMask>, String> {
    let (Some(file), Some(shape)) = (&o.mask_file, &o.mask_shape) else {
        return Ok(None);
    };
    let hw = match shape.as_slice() {
        [h, w] => [*h as usize, *w as usize],
        other => return Err(format!("mask shape {other:?} is not H×W")),
    };
    let data = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    if data.len() != hw[0] * hw[1] {
        return Err(format!(
            "{file}: {} bytes for a {}×{} mask",
            data.len(),
            hw[0],
            hw[1]
        ));
    }
    Ok(Some(EmittedMask { hw, data }))
}
