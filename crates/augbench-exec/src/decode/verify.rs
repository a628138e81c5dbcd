//! The frame check of a decode run, outside timing: the synthetic videos carry each frame's index
//! in a marker (`media::synth_video`), so the region a decoder wrote per clip must read back as
//! exactly the indices the sampling rule picked, in order.

use std::path::Path;

use image::RgbImage;

use augbench_media::synth_video::{MARKER_REGION, read_marker};
use augbench_protocol::protocol::{DecodeItem, VerifyRegion};

/// The region the decode worker writes for each clip into `dir`.
pub fn region(dir: &Path) -> VerifyRegion {
    VerifyRegion {
        dir: dir.display().to_string(),
        width: MARKER_REGION.0,
        height: MARKER_REGION.1,
    }
}

/// Checks every frame of every clip; returns the number of frames checked, or what was wrong
/// (naming the video, the position in the clip, the frame it holds and the one it should).
pub fn check(dir: &Path, items: &[DecodeItem]) -> Result<u64, String> {
    let (w, h) = MARKER_REGION;
    let frame_bytes = (w * h * 3) as usize;
    let mut checked = 0;
    for (k, item) in items.iter().enumerate() {
        let file = dir.join(format!("{k:06}.u8"));
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        if bytes.len() != frame_bytes * item.indices.len() {
            return Err(format!(
                "{}: the decoder's frames are smaller than the {w}×{h} marker region",
                item.source
            ));
        }
        for (t, (chunk, want)) in bytes
            .chunks_exact(frame_bytes)
            .zip(&item.indices)
            .enumerate()
        {
            let got = RgbImage::from_raw(w, h, chunk.to_vec()).and_then(|img| read_marker(&img));
            if got != Some(*want) {
                let got = got.map_or("no marker".to_string(), |g| format!("frame {g}"));
                return Err(format!(
                    "{}: clip position {t} holds {got}, the sampling rule picked frame {want}",
                    item.source
                ));
            }
            checked += 1;
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use augbench_media::synth_video;

    /// Writes the marker regions of frames `shown` of synthetic video 0 as clip 0's dump.
    fn dump(dir: &Path, shown: &[u64]) {
        let frames = synth_video::frames(9, 0);
        let (w, h) = MARKER_REGION;
        let mut bytes = Vec::new();
        for &i in shown {
            let crop = image::imageops::crop_imm(&frames[i as usize], 0, 0, w, h).to_image();
            bytes.extend_from_slice(crop.as_raw());
        }
        std::fs::write(dir.join("000000.u8"), bytes).unwrap();
    }

    fn item(indices: &[u64]) -> Vec<DecodeItem> {
        vec![DecodeItem {
            source: "v.avi".into(),
            indices: indices.to_vec(),
        }]
    }

    #[test]
    fn the_sampled_frames_pass() {
        let dir = tempfile::tempdir().unwrap();
        dump(dir.path(), &[0, 13, 26, 39]);
        assert_eq!(check(dir.path(), &item(&[0, 13, 26, 39])), Ok(4));
    }

    #[test]
    fn a_neighbouring_frame_fails_and_names_the_position() {
        let dir = tempfile::tempdir().unwrap();
        dump(dir.path(), &[0, 14, 26, 39]);
        let e = check(dir.path(), &item(&[0, 13, 26, 39])).unwrap_err();
        assert!(
            e.contains("v.avi: clip position 1 holds frame 14, the sampling rule picked frame 13"),
            "{e}"
        );
    }

    #[test]
    fn a_short_dump_fails() {
        let dir = tempfile::tempdir().unwrap();
        dump(dir.path(), &[0, 13]);
        let e = check(dir.path(), &item(&[0, 13, 26])).unwrap_err();
        assert!(e.contains("smaller than"), "{e}");
    }
}
