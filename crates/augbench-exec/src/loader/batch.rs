//! The native loader's batch: one preallocated `B×3×H×W` float32 buffer that items are
//! normalized into in place (collation is the write itself), and the output contract the first
//! batch must meet, the same contract the Python workers check on a `DataLoader` batch.

use serde_json::json;

/// The recipe's output channels.
pub const CHANNELS: usize = 3;
/// A normalized batch has per-channel means near 0 and negative values (ImageNet statistics map
/// pixel 0 to about -2); un-normalized data never goes below 0.
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
}

/// A batch buffer, reused from batch to batch: its size is set by the first item written.
#[derive(Debug, Default)]
pub struct Batch {
    pub data: Vec<f32>,
    /// `[B, 3, H, W]`; `H`, `W` are 0 until the first item arrives.
    pub shape: [usize; 4],
    /// The loader worker that filled it (its buffer goes back there).
    pub(super) origin: usize,
}

impl Batch {
    pub fn new(batch_size: usize) -> Batch {
        Batch {
            data: Vec::new(),
            shape: [batch_size, CHANNELS, 0, 0],
            origin: 0,
        }
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

/// The output contract on the first batch: `B×3×H×W` float32 (`H×W` = `size` when the recipe
/// fixes it), normalized. Returns what the contract saw, for the results.
pub fn check(batch: &Batch, size: Option<[u64; 2]>) -> Result<serde_json::Value, String> {
    let [n, c, h, w] = batch.shape;
    let shape = [n, c, h, w].map(|d| d as u64);
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
        assert!(check(&b, Some([4, 4])).is_ok());
        assert!(check(&b, Some([224, 224])).unwrap_err().contains("224×224"));
        b.put(0, px(4, 4, &gray), &Normalize::new([0.0; 3], [1.0; 3]))
            .unwrap();
        assert!(check(&b, None).unwrap_err().starts_with("not normalized"));
    }
}
