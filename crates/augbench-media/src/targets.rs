//! The targets measured with an image (mask, boxes, keypoints; their kinds are
//! `augbench_core::targets::TargetKind`): the targets of one item, and the targets file the Python worker reads, written atomically:
//!
//! ```json
//! {"version": 1, "items": {"<path>": {"width": 640, "height": 480,
//!    "boxes": [[x_min, y_min, x_max, y_max]], "labels": [1],
//!    "keypoints": [[x, y]],
//!    "mask": {"values": [0, 3, 0], "runs": [1200, 40, 98000]}}}}
//! ```
//!
//! The mask is run-length encoded row-major over `width * height`: `values[i]` repeated
//! `runs[i]` times, consecutive values different, runs summing to `width * height`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use augbench_host::fsutil::write_streamed_with;
use serde::{Deserialize, Serialize};

/// The version of the targets file format.
pub const TARGETS_FILE_VERSION: u32 = 1;

/// The targets of one image. Boxes are `[x_min, y_min, x_max, y_max]` in pixels, one label per
/// box; keypoints are `[x, y]` in pixels; the mask is `width * height` class values, row-major
/// (0 is background).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemTargets {
    pub width: u32,
    pub height: u32,
    pub boxes: Vec<[f64; 4]>,
    pub labels: Vec<u32>,
    pub keypoints: Vec<[f64; 2]>,
    pub mask: Vec<u8>,
}

impl ItemTargets {
    /// Empty targets (no boxes, no keypoints, an all-background mask) of a `width`×`height` image.
    pub fn empty(width: u32, height: u32) -> Self {
        ItemTargets {
            width,
            height,
            mask: vec![0; width as usize * height as usize],
            ..ItemTargets::default()
        }
    }

    /// Whether the targets hang together: one label per box, a mask of `width * height`.
    fn check(&self) -> Result<(), String> {
        if self.labels.len() != self.boxes.len() {
            return Err(format!(
                "{} labels for {} boxes",
                self.labels.len(),
                self.boxes.len()
            ));
        }
        let pixels = self.width as usize * self.height as usize;
        if self.mask.len() != pixels {
            return Err(format!(
                "a mask of {} values for a {}x{} image",
                self.mask.len(),
                self.width,
                self.height
            ));
        }
        Ok(())
    }
}

/// A run-length encoded mask: `values[i]` repeated `runs[i]` times.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MaskRle {
    pub values: Vec<u8>,
    pub runs: Vec<u64>,
}

/// Encodes a row-major mask (consecutive values always differ; no zero runs).
pub fn encode_mask(mask: &[u8]) -> MaskRle {
    let mut rle = MaskRle::default();
    for &v in mask {
        match (rle.values.last(), rle.runs.last_mut()) {
            (Some(&last), Some(run)) if last == v => *run += 1,
            _ => {
                rle.values.push(v);
                rle.runs.push(1);
            }
        }
    }
    rle
}

/// Decodes a mask of `len` values; an error when the lists differ in length or the runs do not
/// sum to `len`.
pub fn decode_mask(rle: &MaskRle, len: usize) -> anyhow::Result<Vec<u8>> {
    if rle.values.len() != rle.runs.len() {
        bail!(
            "mask has {} values but {} runs",
            rle.values.len(),
            rle.runs.len()
        );
    }
    let total = rle.runs.iter().fold(0u64, |a, &r| a.saturating_add(r));
    if total != len as u64 {
        bail!("mask runs sum to {total}, expected {len}");
    }
    let mut mask = Vec::with_capacity(len);
    for (&v, &run) in rle.values.iter().zip(&rle.runs) {
        mask.resize(mask.len() + run as usize, v);
    }
    Ok(mask)
}

/// One item of the targets file.
#[derive(Debug, Serialize, Deserialize)]
struct FileItem {
    width: u32,
    height: u32,
    boxes: Vec<[f64; 4]>,
    labels: Vec<u32>,
    keypoints: Vec<[f64; 2]>,
    mask: MaskRle,
}

/// The targets file: `items` keyed by the path string the worker loads.
#[derive(Debug, Serialize, Deserialize)]
struct TargetsFile {
    version: u32,
    items: BTreeMap<String, FileItem>,
}

fn file_item(t: &ItemTargets) -> FileItem {
    FileItem {
        width: t.width,
        height: t.height,
        boxes: t.boxes.clone(),
        labels: t.labels.clone(),
        keypoints: t.keypoints.clone(),
        mask: encode_mask(&t.mask),
    }
}

/// Writes the worker's targets file at `path` atomically; `items` pairs the exact path string
/// the worker loads with that item's targets. Inconsistent targets or a repeated path are errors.
pub fn write_targets_file(path: &Path, items: &[(String, &ItemTargets)]) -> anyhow::Result<()> {
    let mut file = TargetsFile {
        version: TARGETS_FILE_VERSION,
        items: BTreeMap::new(),
    };
    for (name, targets) in items {
        targets
            .check()
            .map_err(|e| anyhow::anyhow!("targets of {name}: {e}"))?;
        if file
            .items
            .insert(name.clone(), file_item(targets))
            .is_some()
        {
            bail!("{name} appears twice among the items of a targets file");
        }
    }
    write_streamed_with(path, |w| {
        serde_json::to_writer(w, &file).context("encoding the targets file")
    })
}

/// Reads a targets file back (tests and tools): path string → targets, masks decoded.
pub fn read_targets_file(path: &Path) -> anyhow::Result<BTreeMap<String, ItemTargets>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file: TargetsFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a targets file", path.display()))?;
    if file.version != TARGETS_FILE_VERSION {
        bail!(
            "{}: unknown targets file version {}",
            path.display(),
            file.version
        );
    }
    let mut out = BTreeMap::new();
    for (name, item) in file.items {
        let len = item.width as usize * item.height as usize;
        let mask = decode_mask(&item.mask, len).with_context(|| format!("targets of {name}"))?;
        let targets = ItemTargets {
            width: item.width,
            height: item.height,
            boxes: item.boxes,
            labels: item.labels,
            keypoints: item.keypoints,
            mask,
        };
        out.insert(name, targets);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_known_mask_encodes_to_its_runs() {
        let rle = encode_mask(&[0, 0, 3, 3, 3, 0]);
        assert_eq!(rle.values, vec![0, 3, 0]);
        assert_eq!(rle.runs, vec![2, 3, 1]);
        assert_eq!(encode_mask(&[]), MaskRle::default());
    }

    #[test]
    fn bad_runs_do_not_decode() {
        let rle = MaskRle {
            values: vec![0, 1],
            runs: vec![2, 2],
        };
        assert!(decode_mask(&rle, 5).is_err());
        let uneven = MaskRle {
            values: vec![0],
            runs: vec![2, 2],
        };
        assert!(decode_mask(&uneven, 4).is_err());
    }

    #[test]
    fn the_file_round_trips_and_rejects_bad_targets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("targets.json");
        let mut t = ItemTargets::empty(3, 2);
        t.boxes.push([0.5, 0.0, 2.0, 1.5]);
        t.labels.push(4);
        t.keypoints.push([1.0, 1.0]);
        t.mask[4] = 4;
        write_targets_file(&path, &[("a/b.jpg".to_string(), &t)]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(r#"{"version":1,"items":{"a/b.jpg":{"width":3"#),
            "{text}"
        );
        assert!(
            text.contains(r#""mask":{"values":[0,4,0],"runs":[4,1,1]}"#),
            "{text}"
        );
        let back = read_targets_file(&path).unwrap();
        assert_eq!(back.get("a/b.jpg"), Some(&t));
        t.labels.clear();
        assert!(write_targets_file(&path, &[("x".to_string(), &t)]).is_err());
        let ok = ItemTargets::empty(1, 1);
        let twice = [("x".to_string(), &ok), ("x".to_string(), &ok)];
        assert!(write_targets_file(&path, &twice).is_err());
    }

    proptest! {
        #[test]
        fn masks_round_trip(mask in prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 255]), 0..500)) {
            let rle = encode_mask(&mask);
            prop_assert!(rle.values.windows(2).all(|w| w[0] != w[1]));
            prop_assert!(rle.runs.iter().all(|&r| r > 0));
            prop_assert_eq!(decode_mask(&rle, mask.len()).unwrap(), mask);
        }
    }
}
