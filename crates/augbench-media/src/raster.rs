//! Pixel geometry shared by the COCO reader and the annotated synthetic dataset: polygon fill
//! (even-odd rule, sampled at pixel centres) and COCO run-length masks (the compressed string
//! form, and column-major runs painted into a row-major mask).
//!
//! Fill rule: pixel `(x, y)` is inside a polygon when its centre `(x + 0.5, y + 0.5)` is, by the
//! even-odd rule, with edges half-open in y (a centre exactly on a top edge is in, on a bottom
//! edge out), so the square with corners (10, 10) and (20, 20) covers exactly 10 × 10 pixels.

/// Calls `span(row, x_start, x_end)` for every run of pixels of a `width`×`height` image inside
/// the polygon `coords` (`[x1, y1, x2, y2, …]`), clipped to the image. An odd trailing number is
/// ignored; fewer than 3 points fill nothing.
pub fn fill_polygon(
    coords: &[f64],
    width: u32,
    height: u32,
    mut span: impl FnMut(usize, usize, usize),
) {
    let points: Vec<[f64; 2]> = coords.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
    if points.len() < 3 {
        return;
    }
    let (top, bottom) = row_range(&points, height);
    let mut xs = Vec::new();
    for row in top..bottom {
        let yc = row as f64 + 0.5;
        crossings(&points, yc, &mut xs);
        for pair in xs.chunks_exact(2) {
            let (start, end) = (pixel_from(pair[0], width), pixel_from(pair[1], width));
            if start < end {
                span(row, start, end);
            }
        }
    }
}

/// The rows whose centres can lie inside the polygon, clipped to `0..height`.
fn row_range(points: &[[f64; 2]], height: u32) -> (usize, usize) {
    let min = points.iter().map(|p| p[1]).fold(f64::INFINITY, f64::min);
    let max = points
        .iter()
        .map(|p| p[1])
        .fold(f64::NEG_INFINITY, f64::max);
    let top = pixel_from(min, height);
    let bottom = pixel_from(max, height);
    (top, bottom)
}

/// The first pixel index whose centre is at or after `v`, clamped to `0..=size`.
fn pixel_from(v: f64, size: u32) -> usize {
    let first = (v - 0.5).ceil();
    if first.is_nan() || first <= 0.0 {
        0
    } else {
        first.min(f64::from(size)) as usize
    }
}

/// The sorted x positions where the polygon's edges cross the horizontal line `y = yc`.
fn crossings(points: &[[f64; 2]], yc: f64, xs: &mut Vec<f64>) {
    xs.clear();
    let n = points.len();
    for i in 0..n {
        let [x0, y0] = points[i];
        let [x1, y1] = points[(i + 1) % n];
        if (y0 <= yc) != (y1 <= yc) {
            xs.push(x0 + (yc - y0) * (x1 - x0) / (y1 - y0));
        }
    }
    xs.sort_by(f64::total_cmp);
}

/// Paints `value` into the row-major `mask` (`width`×`height`) wherever the column-major COCO
/// runs `counts` (background first, then alternating) are foreground. The counts must sum to at
/// most `width * height`; positions past the mask are ignored.
pub fn paint_column_major(mask: &mut [u8], width: u32, height: u32, counts: &[u64], value: u8) {
    let (w, h) = (width as usize, height as usize);
    let total = w * h;
    let mut pos = 0usize;
    for (i, &count) in counts.iter().enumerate() {
        let end = pos.saturating_add(usize::try_from(count).unwrap_or(usize::MAX));
        if i % 2 == 1 {
            for p in pos..end.min(total) {
                let (x, y) = (p / h, p % h);
                if let Some(px) = mask.get_mut(y * w + x) {
                    *px = value;
                }
            }
        }
        pos = end;
    }
}

/// Decodes COCO's compressed RLE string (`maskApi.c`'s `rleFrString`: 6 bits per character
/// offset by 48, 5 value bits and a continuation bit, sign-extended, and each count after the
/// second stored as the difference to the count two before). Errors say what is malformed.
pub fn decode_coco_string(text: &str) -> Result<Vec<u64>, String> {
    let bytes = text.as_bytes();
    let mut counts: Vec<i64> = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        let (mut value, used) = read_varint(&bytes[p..])?;
        p += used;
        if counts.len() > 2 {
            value = value
                .checked_add(counts[counts.len() - 2])
                .ok_or("the RLE string decodes to a count too large")?;
        }
        counts.push(value);
    }
    counts
        .into_iter()
        .map(|c| {
            u64::try_from(c)
                .map_err(|_| format!("the RLE string decodes to a negative count ({c})"))
        })
        .collect()
}

/// One signed number of the compressed form; returns it and the bytes it used.
fn read_varint(bytes: &[u8]) -> Result<(i64, usize), String> {
    let mut value: i64 = 0;
    for (k, &b) in bytes.iter().enumerate() {
        let c = i64::from(b) - 48;
        if !(0..64).contains(&c) {
            return Err(format!(
                "the RLE string has a character out of range ({:?})",
                b as char
            ));
        }
        if k >= 12 {
            return Err("the RLE string has a number too long to be a count".to_string());
        }
        value |= (c & 0x1f) << (5 * k);
        if c & 0x20 == 0 {
            if c & 0x10 != 0 {
                value |= -1i64 << (5 * (k + 1));
            }
            return Ok((value, k + 1));
        }
    }
    Err("the RLE string ends in the middle of a number".to_string())
}

/// Encodes counts in COCO's compressed RLE string form (the inverse of [`decode_coco_string`]).
pub fn encode_coco_string(counts: &[u64]) -> String {
    let mut out = String::new();
    for (i, &count) in counts.iter().enumerate() {
        let mut x = count as i64;
        if i > 2 {
            x -= counts[i - 2] as i64;
        }
        loop {
            let mut c = x & 0x1f;
            x >>= 5;
            let more = if c & 0x10 != 0 { x != -1 } else { x != 0 };
            if more {
                c |= 0x20;
            }
            out.push(char::from(48 + c as u8));
            if !more {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(coords: &[f64], w: u32, h: u32) -> Vec<u8> {
        let mut mask = vec![0u8; (w * h) as usize];
        fill_polygon(coords, w, h, |row, a, b| {
            mask[row * w as usize + a..row * w as usize + b].fill(1);
        });
        mask
    }

    #[test]
    fn a_square_fills_exactly_its_pixels() {
        let square = [10.0, 10.0, 20.0, 10.0, 20.0, 20.0, 10.0, 20.0];
        let mask = filled(&square, 40, 30);
        assert_eq!(mask.iter().filter(|&&v| v == 1).count(), 100);
        assert_eq!(mask[10 * 40 + 10], 1);
        assert_eq!(mask[19 * 40 + 19], 1);
        assert_eq!(mask[20 * 40 + 19], 0);
        assert_eq!(mask[10 * 40 + 20], 0);
    }

    #[test]
    fn a_polygon_past_the_border_is_clipped() {
        let square = [-5.0, -5.0, 5.0, -5.0, 5.0, 5.0, -5.0, 5.0];
        let mask = filled(&square, 8, 8);
        assert_eq!(mask.iter().filter(|&&v| v == 1).count(), 25);
    }

    #[test]
    fn a_triangle_covers_half_a_square_by_centres() {
        // Below the diagonal of a 4x4 square: centres (x+.5, y+.5) with x+.5 < y+.5 -> 6 pixels.
        let mask = filled(&[0.0, 0.0, 0.0, 4.0, 4.0, 4.0], 4, 4);
        assert_eq!(mask.iter().filter(|&&v| v == 1).count(), 6);
    }

    #[test]
    fn coco_string_matches_a_hand_computed_example() {
        // 3 -> '3'; 2 -> '2'; 40 = 8 + 1*32 -> (8|0x20)+48 = 'X', then '1';
        // 1 - counts[1] = -1 -> 31 (sign bit set, ends) -> 'O'.
        assert_eq!(encode_coco_string(&[3, 2, 40, 1]), "32X1O");
        assert_eq!(decode_coco_string("32X1O").unwrap(), vec![3, 2, 40, 1]);
    }

    #[test]
    fn malformed_coco_strings_are_errors() {
        assert!(decode_coco_string("X").unwrap_err().contains("ends"));
        assert!(
            decode_coco_string("3 ")
                .unwrap_err()
                .contains("out of range")
        );
        // 1, 1, 1, then 'N' (-2) added to counts[1] = 1 gives -1.
        assert!(decode_coco_string("111N").unwrap_err().contains("negative"));
    }

    #[test]
    fn column_major_runs_become_row_major() {
        // h=2, w=3; column-major positions 1 and 2 are foreground: (x0,y1) and (x1,y0).
        let mut mask = vec![0u8; 6];
        paint_column_major(&mut mask, 3, 2, &[1, 2, 3], 7);
        assert_eq!(mask, vec![0, 7, 0, 7, 0, 0]);
    }

    proptest::proptest! {
        #[test]
        fn coco_strings_round_trip(counts in proptest::collection::vec(0u64..100_000, 0..40)) {
            let text = encode_coco_string(&counts);
            proptest::prop_assert_eq!(decode_coco_string(&text).unwrap(), counts);
        }
    }
}
