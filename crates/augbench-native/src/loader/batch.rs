//! The native loader's batch: one preallocated `B×3×H×W` float32 buffer (clips: `B×T×3×H×W`)
//! that items are normalized into in place (collation is the write itself), and the output
//! contract the first batch must meet, the same contract the Python workers check on a
//! `DataLoader` batch.

use serde_json::json;

/// The recipe's output channels.
pub const CHANNELS: usize = 3;
/// A normalized batch has per-channel means near 0 and negative values (ImageNet statistics map
/// pixel 0 to about -2); un-normalized data never goes below 0. The Python worker's loader checks
/// the same band (`MEAN_BAND` in `python/augbench_worker/pipeline_common.py`; a test keeps them equal).
const MEAN_BAND: f64 = 1.5;

/// Pixels of one item, row-major HWC with no row padding.
#[derive(Debug, Clone, Copy)]
pub struct Pixels<'a> {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub data: &'a [u8],
}

/// Per-channel `x/255 → (x − mean)/std` as one multiply-add: `x·scale + bias`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normalize {
    scale: [f32; CHANNELS],
    bias: [f32; CHANNELS],
}

impl Normalize {
    pub fn new(mean: [f64; 3], std: [f64; 3]) -> Normalize {
        let scale = std::array::from_fn(|c| (1.0 / (255.0 * std[c])) as f32);
        let bias = std::array::from_fn(|c| (-mean[c] / std[c]) as f32);
        Normalize { scale, bias }
    }

    /// Pixel values as they are (0–255 as float32): a batch to be normalized later, whole.
    pub fn identity() -> Normalize {
        Normalize {
            scale: [1.0; CHANNELS],
            bias: [0.0; CHANNELS],
        }
    }

    /// Normalizes a batch filled with [`Normalize::identity`] in place, plane by plane (`plane`
    /// values per channel of an item).
    pub fn apply(&self, data: &mut [f32], plane: usize) {
        for (k, values) in data.chunks_exact_mut(plane.max(1)).enumerate() {
            let c = k % CHANNELS;
            let (scale, bias) = (self.scale[c], self.bias[c]);
            values.iter_mut().for_each(|v| *v = *v * scale + bias);
        }
    }
}

/// A batch buffer, reused from batch to batch: its size is set by the first item written.
#[derive(Debug, Default)]
pub struct Batch {
    pub data: Vec<f32>,
    /// `[slots, 3, H, W]`, one slot per image (per frame for clips); `H`, `W` are 0 until the
    /// first item arrives.
    pub shape: [usize; 4],
    /// Clips: frames per item (slots `i·T .. (i+1)·T` hold item `i`); `None` for images.
    pub frames: Option<usize>,
    /// The loader worker that filled it (its buffer goes back there).
    pub(super) origin: usize,
}

impl Batch {
    pub fn new(batch_size: usize) -> Batch {
        Batch::with_frames(batch_size, None)
    }

    /// A batch of `batch_size` items; with `frames`, each item is a clip of that many frames.
    pub fn with_frames(batch_size: usize, frames: Option<usize>) -> Batch {
        Batch {
            data: Vec::new(),
            shape: [batch_size * frames.unwrap_or(1), CHANNELS, 0, 0],
            frames,
            origin: 0,
        }
    }

    /// The batch as the training step sees it: `[B, 3, H, W]`, or `[B, T, 3, H, W]` for clips.
    pub fn dims(&self) -> Vec<u64> {
        let [n, c, h, w] = self.shape.map(|d| d as u64);
        match self.frames {
            None => vec![n, c, h, w],
            Some(t) => vec![n / (t.max(1) as u64), t as u64, c, h, w],
        }
    }

    /// Normalizes frame `t` of clip `i` into its slot (see [`Batch::put`]).
    pub fn put_frame(
        &mut self,
        i: usize,
        t: usize,
        px: Pixels<'_>,
        norm: &Normalize,
    ) -> Result<(), String> {
        let frames = self.frames.unwrap_or(1);
        if t >= frames {
            return Err(format!("frame {t} is outside a clip of {frames}"));
        }
        self.put(i * frames + t, px, norm)
    }

    /// Normalizes `px` into slot `i` as CHW float32. The first item of a buffer fixes its
    /// spatial size; an item of another size is an error (the loader's batches stack items).
    pub fn put(&mut self, i: usize, px: Pixels<'_>, norm: &Normalize) -> Result<(), String> {
        if px.channels != CHANNELS {
            return Err(format!(
                "the recipe's output has {} channels, not {CHANNELS}",
                px.channels
            ));
        }
        let plane = px.width * px.height;
        if px.data.len() != plane * CHANNELS {
            return Err(format!(
                "a {}×{} item holds {} bytes, not {}",
                px.width,
                px.height,
                px.data.len(),
                plane * CHANNELS
            ));
        }
        self.fit(i, px.height, px.width)?;
        let slot = &mut self.data[i * CHANNELS * plane..(i + 1) * CHANNELS * plane];
        let (r, rest) = slot.split_at_mut(plane);
        let (g, b) = rest.split_at_mut(plane);
        for (k, rgb) in px.data.chunks_exact(CHANNELS).enumerate() {
            r[k] = f32::from(rgb[0]) * norm.scale[0] + norm.bias[0];
            g[k] = f32::from(rgb[1]) * norm.scale[1] + norm.bias[1];
            b[k] = f32::from(rgb[2]) * norm.scale[2] + norm.bias[2];
        }
        Ok(())
    }

    fn fit(&mut self, i: usize, h: usize, w: usize) -> Result<(), String> {
        let [n, c, bh, bw] = self.shape;
        if i >= n {
            return Err(format!("slot {i} is outside a batch of {n}"));
        }
        if i == 0 && (bh, bw) != (h, w) {
            self.shape = [n, c, h, w];
            self.data.resize(n * c * h * w, 0.0);
        } else if (bh, bw) != (h, w) {
            return Err(format!(
                "items differ in size within a batch: {h}×{w} after {bh}×{bw} (a loader stacks items of one size)"
            ));
        }
        Ok(())
    }

    /// Per-channel means over the whole batch.
    pub fn channel_means(&self) -> [f64; CHANNELS] {
        let [n, c, h, w] = self.shape;
        let plane = h * w;
        let mut sums = [0.0f64; CHANNELS];
        for item in 0..n {
            for (ch, sum) in sums.iter_mut().enumerate() {
                let start = (item * c + ch) * plane;
                *sum += self.data[start..start + plane]
                    .iter()
                    .map(|&x| f64::from(x))
                    .sum::<f64>();
            }
        }
        let count = (n * plane).max(1) as f64;
        sums.map(|s| s / count)
    }
}

/// The output contract on the first batch: `B×3×H×W` float32 (clips of `frames` frames:
/// `B×T×3×H×W`; `H×W` = `size` when the recipe fixes it), normalized. Returns what the contract
/// saw, for the results.
pub fn check(
    batch: &Batch,
    size: Option<[u64; 2]>,
    frames: Option<u64>,
) -> Result<serde_json::Value, String> {
    let [_, _, h, w] = batch.shape;
    let shape = batch.dims();
    if batch.frames.map(|t| t as u64) != frames {
        let want = frames.map_or("images".to_string(), |t| format!("clips of {t} frames"));
        return Err(format!(
            "a tensor {shape:?} float32, where the recipe makes {want}"
        ));
    }
    if let Some([eh, ew]) = size
        && (h as u64, w as u64) != (eh, ew)
    {
        return Err(format!(
            "a tensor {shape:?} float32, where the recipe makes {eh}×{ew} items"
        ));
    }
    let means = batch.channel_means();
    let min = batch.data.iter().copied().fold(f32::INFINITY, f32::min);
    if means.iter().any(|m| m.abs() > MEAN_BAND) || min >= 0.0 {
        return Err(format!(
            "not normalized: channel means {means:.3?}, minimum {min:.3} (expected means within ±{MEAN_BAND} and negative values)"
        ));
    }
    Ok(json!({ "shape": shape, "dtype": "float32", "channel_mean": means }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGENET: ([f64; 3], [f64; 3]) = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);

    fn px(w: usize, h: usize, data: &[u8]) -> Pixels<'_> {
        Pixels {
            width: w,
            height: h,
            channels: 3,
            data,
        }
    }

    #[test]
    fn put_writes_planes_in_chw_order() {
        let norm = Normalize::new([0.0; 3], [1.0; 3]);
        let mut b = Batch::new(2);
        b.put(0, px(2, 1, &[255, 0, 51, 0, 255, 102]), &norm)
            .unwrap();
        assert_eq!(b.shape, [2, 3, 1, 2]);
        let want = [1.0, 0.0, 0.0, 1.0, 0.2, 0.4];
        assert!(
            b.data[..6]
                .iter()
                .zip(want)
                .all(|(a, w)| (a - w).abs() < 1e-6)
        );
        assert!(b.put(1, px(1, 1, &[0, 0, 0]), &norm).is_err());
        assert!(b.put(2, px(2, 1, &[0; 6]), &norm).is_err());
    }

    #[test]
    fn a_batch_of_raw_values_normalized_whole_equals_one_normalized_item_by_item() {
        let (mean, std) = IMAGENET;
        let norm = Normalize::new(mean, std);
        let items: [Vec<u8>; 2] = [vec![0, 128, 255, 7, 9, 200], vec![50, 60, 70, 80, 90, 100]];
        let (mut each, mut whole) = (Batch::new(2), Batch::new(2));
        for (i, item) in items.iter().enumerate() {
            each.put(i, px(2, 1, item), &norm).unwrap();
            whole
                .put(i, px(2, 1, item), &Normalize::identity())
                .unwrap();
        }
        assert_eq!(whole.data[..6], [0.0, 7.0, 128.0, 9.0, 255.0, 200.0]);
        norm.apply(&mut whole.data, 2);
        for (a, b) in each.data.iter().zip(&whole.data) {
            assert!((a - b).abs() < 1e-5, "{:?} / {:?}", each.data, whole.data);
        }
    }

    #[test]
    fn normalize_matches_the_recipe_formula() {
        let (mean, std) = IMAGENET;
        let norm = Normalize::new(mean, std);
        let mut b = Batch::new(1);
        b.put(0, px(1, 1, &[0, 128, 255]), &norm).unwrap();
        for (c, v) in [0.0, 128.0, 255.0].iter().enumerate() {
            let want = (v / 255.0 - mean[c]) / std[c];
            assert!((f64::from(b.data[c]) - want).abs() < 1e-5);
        }
    }

    #[test]
    fn the_contract_wants_normalized_items_of_the_recipe_size() {
        let (mean, std) = IMAGENET;
        let mut b = Batch::new(1);
        let gray = vec![100u8; 4 * 4 * 3];
        b.put(0, px(4, 4, &gray), &Normalize::new(mean, std))
            .unwrap();
        assert!(check(&b, Some([4, 4]), None).is_ok());
        assert!(
            check(&b, Some([224, 224]), None)
                .unwrap_err()
                .contains("224×224")
        );
        assert!(check(&b, None, Some(2)).unwrap_err().contains("clips of 2"));
        b.put(0, px(4, 4, &gray), &Normalize::new([0.0; 3], [1.0; 3]))
            .unwrap();
        assert!(
            check(&b, None, None)
                .unwrap_err()
                .starts_with("not normalized")
        );
    }

    #[test]
    fn a_clip_batch_holds_each_clip_s_frames_in_order() {
        let (mean, std) = IMAGENET;
        let norm = Normalize::new(mean, std);
        let mut b = Batch::with_frames(2, Some(3));
        for i in 0..2 {
            for t in 0..3 {
                let v = (40 * (i * 3 + t)) as u8;
                b.put_frame(i, t, px(2, 2, &[v; 12]), &norm).unwrap();
            }
        }
        assert_eq!(b.dims(), vec![2, 3, 3, 2, 2]);
        assert!(b.put_frame(0, 3, px(2, 2, &[0; 12]), &norm).is_err());
        assert!(b.put_frame(2, 0, px(2, 2, &[0; 12]), &norm).is_err());
        // Clip 1, frame 2 is slot 5: its red plane holds pixel value 200.
        let want = (200.0 / 255.0 - mean[0]) / std[0];
        let start = 5 * 3 * 4;
        assert!((f64::from(b.data[start]) - want).abs() < 1e-5);
        let seen = check(&b, Some([2, 2]), Some(3)).unwrap();
        assert_eq!(seen["shape"], serde_json::json!([2, 3, 3, 2, 2]));
        assert!(
            check(&b, Some([2, 2]), None)
                .unwrap_err()
                .contains("images")
        );
    }

    #[test]
    fn the_python_worker_checks_the_same_band() {
        let python = include_str!("../../../../python/augbench_worker/pipeline_common.py");
        let values: Vec<f64> = python
            .lines()
            .filter_map(|l| l.strip_prefix("MEAN_BAND = "))
            .map(|v| v.trim().parse().unwrap())
            .collect();
        assert_eq!(values, vec![MEAN_BAND], "MEAN_BAND in pipeline_common.py");
    }
}
