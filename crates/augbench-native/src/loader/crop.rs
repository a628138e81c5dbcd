//! The recipe's shared crop for native rows (a uniformly placed `width×height` window, seeded):
//! the crates are compared on their transform, so every native row crops with this one
//! implementation, as every row normalizes with [`super::Normalize`]. A clip draws one window
//! ([`Crop::place`]) and cuts every frame there ([`Crop::apply_at`]).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Pixels;

/// A random crop with its own seeded generator and a reusable output buffer.
pub struct Crop {
    width: usize,
    height: usize,
    rng: ChaCha8Rng,
    buf: Vec<u8>,
}

impl Crop {
    pub fn new(width: usize, height: usize, seed: u64) -> Crop {
        Crop {
            width,
            height,
            rng: ChaCha8Rng::seed_from_u64(seed),
            buf: Vec::new(),
        }
    }

    /// Draws a window's top-left corner for an item of `px`'s size.
    pub fn place(&mut self, px: Pixels<'_>) -> Result<(usize, usize), String> {
        let (w, h) = (self.width, self.height);
        if px.width < w || px.height < h {
            return Err(format!(
                "a {}×{} item is smaller than the {w}×{h} crop",
                px.width, px.height
            ));
        }
        let x = self.rng.random_range(0..=px.width - w);
        let y = self.rng.random_range(0..=px.height - h);
        Ok((x, y))
    }

    /// Crops at a freshly drawn window into the reusable buffer and returns a view of it.
    pub fn apply(&mut self, px: Pixels<'_>) -> Result<Pixels<'_>, String> {
        let at = self.place(px)?;
        self.apply_at(px, at)
    }

    /// Crops at the window `at` (from [`Crop::place`]) into the reusable buffer.
    pub fn apply_at(&mut self, px: Pixels<'_>, at: (usize, usize)) -> Result<Pixels<'_>, String> {
        let mut buf = std::mem::take(&mut self.buf);
        self.crop_into(px, at, &mut buf)?;
        self.buf = buf;
        Ok(Pixels {
            width: self.width,
            height: self.height,
            channels: px.channels,
            data: &self.buf,
        })
    }

    /// Crops at the window `at` into a new buffer (the next stage takes ownership of it).
    pub fn apply_owned_at(&self, px: Pixels<'_>, at: (usize, usize)) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.crop_into(px, at, &mut out)?;
        Ok(out)
    }

    /// Crops at a freshly drawn window into a new buffer.
    pub fn apply_owned(&mut self, px: Pixels<'_>) -> Result<Vec<u8>, String> {
        let at = self.place(px)?;
        self.apply_owned_at(px, at)
    }

    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    fn crop_into(
        &self,
        px: Pixels<'_>,
        at: (usize, usize),
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let (w, h) = (self.width, self.height);
        let (x, y) = at;
        if px.width < x + w || px.height < y + h {
            return Err(format!(
                "a {}×{} item has no {w}×{h} window at ({x}, {y})",
                px.width, px.height
            ));
        }
        let c = px.channels;
        out.clear();
        out.reserve(w * h * c);
        for row in y..y + h {
            let start = (row * px.width + x) * c;
            out.extend_from_slice(&px.data[start..start + w * c]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crop_copies_a_window_of_the_item() {
        // 4×3 RGB item whose pixel (x, y) holds 10·y + x in every channel.
        let data: Vec<u8> = (0..3u8)
            .flat_map(|y| (0..4u8).flat_map(move |x| [10 * y + x; 3]))
            .collect();
        let px = Pixels {
            width: 4,
            height: 3,
            channels: 3,
            data: &data,
        };
        let mut crop = Crop::new(2, 2, 7);
        for _ in 0..20 {
            let out = crop.apply(px).unwrap();
            let v = out.data;
            let (x0, y0) = (v[0] % 10, v[0] / 10);
            assert!(x0 <= 2 && y0 <= 1);
            assert_eq!(v[3], v[0] + 1);
            assert_eq!(v[6], v[0] + 10);
            assert_eq!(v.len(), 12);
        }
        assert_eq!(Crop::new(2, 2, 7).apply_owned(px).unwrap(), {
            let mut again = Crop::new(2, 2, 7);
            again.apply(px).unwrap().data.to_vec()
        });
        assert!(
            Crop::new(5, 2, 0)
                .apply(px)
                .unwrap_err()
                .contains("smaller")
        );
        // One window for several frames: the same place cuts the same pixels.
        let mut crop = Crop::new(2, 2, 3);
        let at = crop.place(px).unwrap();
        let a = crop.apply_at(px, at).unwrap().data.to_vec();
        assert_eq!(crop.apply_owned_at(px, at).unwrap(), a);
        assert!(
            crop.apply_at(px, (3, 0))
                .unwrap_err()
                .contains("no 2×2 window")
        );
    }
}
