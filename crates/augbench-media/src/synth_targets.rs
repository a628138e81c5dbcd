//! The objects of the annotated synthetic dataset: 3–8 filled shapes per image (convex polygons
//! of 3–8 vertices, and ellipses as 24-gons), drawn in a flat colour per category (1..=5) over
//! the image `synth::image` renders, and their COCO instances document (polygon segmentation,
//! bbox, area, 4 keypoints: the top-, right-, bottom- and left-most vertices, visibility 2).
//!
//! Shapes of image `i` come from their own ChaCha stream (`i | 1 << 63`, never one of the
//! images' streams `i`), so the image under them is byte-for-byte the plain synthetic one.
//! Vertices are clipped to `[0, width − 1] × [0, height − 1]` and rounded to 0.01 px, so
//! every box and keypoint is inside the image under either pixel convention (AlbumentationsX
//! refuses a keypoint past `width − 0.5`) and the JSON holds the exact coordinates
//! the pixels were painted from (the mask and the reader's rasterization agree exactly).

use image::RgbImage;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::coco::fill_into;
use crate::synth;
use crate::targets::ItemTargets;

/// Bump when the shapes or the annotations change: part of the annotated dataset's cache key.
pub const ANNOTATED_VERSION: u32 = 2;
/// Categories are `1..=CATEGORY_COUNT`.
pub const CATEGORY_COUNT: u32 = 5;
/// The keypoints of every instance, in order.
pub const KEYPOINT_NAMES: [&str; 4] = ["top", "right", "bottom", "left"];
/// Category names and their flat colours, category `i + 1` at index `i`.
const CATEGORIES: [(&str, [u8; 3]); 5] = [
    ("red", [220, 30, 40]),
    ("green", [40, 180, 70]),
    ("yellow", [250, 220, 30]),
    ("blue", [20, 110, 220]),
    ("magenta", [200, 40, 200]),
];
/// Vertices of an ellipse.
const ELLIPSE_VERTICES: usize = 24;
/// How far inside the right and bottom borders vertices stay: the last pixel's centre under the
/// convention that puts pixel centres on integers (AlbumentationsX refuses keypoints past
/// `width − 0.5`; others refuse `x == width`).
const EDGE_MARGIN: f64 = 1.0;

/// One object: its category and its polygon (clipped to the image, rounded to 0.01 px).
#[derive(Debug, Clone, PartialEq)]
pub struct SynthShape {
    pub category: u32,
    pub vertices: Vec<[f64; 2]>,
}

impl SynthShape {
    /// `[x_min, y_min, x_max, y_max]` of the vertices.
    pub fn bbox(&self) -> [f64; 4] {
        let mut b = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        for &[x, y] in &self.vertices {
            b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
        }
        b
    }

    /// The top-, right-, bottom- and left-most vertices (the first one on a tie).
    pub fn keypoints(&self) -> [[f64; 2]; 4] {
        let pick = |better: fn(&[f64; 2], &[f64; 2]) -> bool| {
            let mut best = self.vertices.first().copied().unwrap_or_default();
            for v in &self.vertices {
                if better(v, &best) {
                    best = *v;
                }
            }
            best
        };
        [
            pick(|a, b| a[1] < b[1]),
            pick(|a, b| a[0] > b[0]),
            pick(|a, b| a[1] > b[1]),
            pick(|a, b| a[0] < b[0]),
        ]
    }

    /// The polygon's area (shoelace formula).
    pub fn area(&self) -> f64 {
        let n = self.vertices.len();
        let twice: f64 = (0..n)
            .map(|i| {
                let ([x0, y0], [x1, y1]) = (self.vertices[i], self.vertices[(i + 1) % n]);
                x0 * y1 - x1 * y0
            })
            .sum();
        twice.abs() / 2.0
    }

    /// `[x1, y1, x2, y2, …]`, COCO's polygon form.
    pub fn flat(&self) -> Vec<f64> {
        self.vertices.iter().flatten().copied().collect()
    }
}

/// The generator of image `index`'s shapes: a stream no image uses.
fn shapes_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index | 1 << 63);
    rng
}

/// The shapes of image `index` of the set with `seed`, in painting order.
pub fn shapes(seed: u64, index: u64) -> Vec<SynthShape> {
    let (w, h) = synth::image_size(seed, index);
    shapes_sized(seed, index, w, h)
}

/// The shapes stream `(seed, index)` draws over a `w`×`h` image (images of a size the dataset
/// does not pick: the equivalence check's inputs).
pub fn shapes_sized(seed: u64, index: u64, w: u32, h: u32) -> Vec<SynthShape> {
    let mut rng = shapes_rng(seed, index);
    let count = rng.random_range(3..=8);
    (0..count).map(|_| random_shape(&mut rng, w, h)).collect()
}

/// One shape: a convex polygon or an ellipse around a centre inside the image, clipped to it.
fn random_shape(rng: &mut ChaCha8Rng, w: u32, h: u32) -> SynthShape {
    let (wf, hf) = (f64::from(w), f64::from(h));
    let r = wf.min(hf);
    let centre = [rng.random_range(0.0..wf), rng.random_range(0.0..hf)];
    let radii = [
        rng.random_range(0.06 * r..0.3 * r),
        rng.random_range(0.06 * r..0.3 * r),
    ];
    let (sin, cos) = rng.random_range(0.0..std::f64::consts::TAU).sin_cos();
    let category = rng.random_range(1..=CATEGORY_COUNT);
    let angles = if rng.random_bool(0.5) {
        (0..ELLIPSE_VERTICES)
            .map(|k| k as f64 / ELLIPSE_VERTICES as f64)
            .collect()
    } else {
        polygon_angles(rng)
    };
    let points = angles.iter().map(|a| {
        let (s, c) = (a * std::f64::consts::TAU).sin_cos();
        let (dx, dy) = (radii[0] * c, radii[1] * s);
        [
            centre[0] + dx * cos - dy * sin,
            centre[1] + dx * sin + dy * cos,
        ]
    });
    let limit = [wf - EDGE_MARGIN, hf - EDGE_MARGIN];
    SynthShape {
        category,
        vertices: tidy(clip_to_box(points.collect(), limit)),
    }
}

/// 3–8 increasing angles (in turns), each jittered within its share of the circle: every gap is
/// under half a turn, so the polygon stays convex and holds its centre.
fn polygon_angles(rng: &mut ChaCha8Rng) -> Vec<f64> {
    let n = rng.random_range(3..=8u32);
    (0..n)
        .map(|k| (f64::from(k) + rng.random_range(0.0..0.4)) / f64::from(n))
        .collect()
}

/// Clips a convex polygon to `[0, limit[0]] × [0, limit[1]]` (Sutherland–Hodgman).
fn clip_to_box(mut poly: Vec<[f64; 2]>, limit: [f64; 2]) -> Vec<[f64; 2]> {
    for (axis, &bound) in limit.iter().enumerate() {
        poly = clip_half(&poly, axis, 0.0, false);
        poly = clip_half(&poly, axis, bound, true);
    }
    poly
}

/// Keeps the part of `poly` with `p[axis] <= bound` (`below`) or `>= bound`.
fn clip_half(poly: &[[f64; 2]], axis: usize, bound: f64, below: bool) -> Vec<[f64; 2]> {
    let inside = |p: &[f64; 2]| {
        if below {
            p[axis] <= bound
        } else {
            p[axis] >= bound
        }
    };
    let mut out = Vec::with_capacity(poly.len() + 2);
    for (i, &cur) in poly.iter().enumerate() {
        let prev = poly[(i + poly.len() - 1) % poly.len()];
        if inside(&cur) != inside(&prev) {
            let t = (bound - prev[axis]) / (cur[axis] - prev[axis]);
            let mut p = [
                prev[0] + t * (cur[0] - prev[0]),
                prev[1] + t * (cur[1] - prev[1]),
            ];
            p[axis] = bound;
            out.push(p);
        }
        if inside(&cur) {
            out.push(cur);
        }
    }
    out
}

/// Rounds to 0.01 px and drops vertices equal to the one before (cyclically).
fn tidy(poly: Vec<[f64; 2]>) -> Vec<[f64; 2]> {
    let round = |v: f64| (v * 100.0).round() / 100.0;
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(poly.len());
    for p in poly.into_iter().map(|p| p.map(round)) {
        if out.last() != Some(&p) {
            out.push(p);
        }
    }
    while out.len() > 1 && out.first() == out.last() {
        out.pop();
    }
    out
}

/// The targets as drawn: boxes, categories, 4 keypoints per shape and the painted mask.
pub fn drawn_targets(seed: u64, index: u64) -> ItemTargets {
    let (w, h) = synth::image_size(seed, index);
    drawn_targets_sized(seed, index, w, h)
}

/// The targets of [`shapes_sized`] over a `w`×`h` image.
pub fn drawn_targets_sized(seed: u64, index: u64, w: u32, h: u32) -> ItemTargets {
    let mut t = ItemTargets::empty(w, h);
    for shape in shapes_sized(seed, index, w, h) {
        t.boxes.push(shape.bbox());
        t.labels.push(shape.category);
        t.keypoints.extend(shape.keypoints());
        fill_into(&mut t.mask, &shape.flat(), w, h, shape.category as u8);
    }
    t
}

/// Image `index` with its shapes: `synth::image` with every mask pixel in its category colour.
pub fn annotated_image(seed: u64, index: u64) -> RgbImage {
    let mut img = synth::image(seed, index);
    paint(&mut img, &drawn_targets(seed, index).mask);
    img
}

/// Paints every pixel of `img` whose `mask` value is a category in that category's colour.
pub fn paint(img: &mut RgbImage, mask: &[u8]) {
    for (px, &class) in img.pixels_mut().zip(mask) {
        if let Some((_, colour)) = CATEGORIES.get(usize::from(class).wrapping_sub(1)) {
            px.0 = *colour;
        }
    }
}

#[derive(Serialize)]
struct CocoDocument {
    images: Vec<CocoImage>,
    annotations: Vec<CocoAnnotation>,
    categories: Vec<CocoCategory>,
}

#[derive(Serialize)]
struct CocoImage {
    id: u64,
    file_name: String,
    width: u32,
    height: u32,
}

#[derive(Serialize)]
struct CocoAnnotation {
    id: u64,
    image_id: u64,
    category_id: u32,
    bbox: [f64; 4],
    area: f64,
    segmentation: Vec<Vec<f64>>,
    keypoints: Vec<f64>,
    num_keypoints: usize,
    iscrowd: u8,
}

#[derive(Serialize)]
struct CocoCategory {
    id: u32,
    name: &'static str,
    supercategory: &'static str,
    keypoints: [&'static str; 4],
    skeleton: Vec<[u32; 2]>,
}

/// One image's annotations, ids counting on from `next_id`.
fn annotations_of(seed: u64, index: u64, next_id: &mut u64) -> Vec<CocoAnnotation> {
    let shapes = shapes(seed, index);
    shapes
        .iter()
        .map(|s| {
            let [x0, y0, x1, y1] = s.bbox();
            let keypoints = s
                .keypoints()
                .iter()
                .flat_map(|&[x, y]| [x, y, 2.0])
                .collect();
            *next_id += 1;
            CocoAnnotation {
                id: *next_id,
                image_id: index + 1,
                category_id: s.category,
                bbox: [x0, y0, x1 - x0, y1 - y0],
                area: s.area(),
                segmentation: vec![s.flat()],
                keypoints,
                num_keypoints: KEYPOINT_NAMES.len(),
                iscrowd: 0,
            }
        })
        .collect()
}

fn categories() -> Vec<CocoCategory> {
    (1..)
        .zip(CATEGORIES)
        .map(|(id, (name, _))| CocoCategory {
            id,
            name,
            supercategory: "shape",
            keypoints: KEYPOINT_NAMES,
            skeleton: vec![[1, 2], [2, 3], [3, 4], [4, 1]],
        })
        .collect()
}

/// The COCO instances document of images `0..count` (image ids and annotation ids from 1).
pub fn coco_json(seed: u64, count: u64) -> anyhow::Result<Vec<u8>> {
    let mut next_id = 0;
    let mut doc = CocoDocument {
        images: Vec::new(),
        annotations: Vec::new(),
        categories: categories(),
    };
    for index in 0..count {
        let (width, height) = synth::image_size(seed, index);
        doc.images.push(CocoImage {
            id: index + 1,
            file_name: synth::image_name(index),
            width,
            height,
        });
        doc.annotations
            .extend(annotations_of(seed, index, &mut next_id));
    }
    Ok(serde_json::to_vec(&doc)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coco::Annotations;
    use augbench_core::config::AnnotationErrors;
    use proptest::prelude::*;

    #[test]
    fn shapes_are_seeded_and_inside_their_image() {
        assert_eq!(shapes(3, 1), shapes(3, 1));
        assert_ne!(shapes(3, 1), shapes(3, 2));
        for index in 0..50 {
            let (w, h) = synth::image_size(3, index);
            let all = shapes(3, index);
            assert!((3..=8).contains(&all.len()));
            for s in all {
                let [x0, y0, x1, y1] = s.bbox();
                assert!(s.vertices.len() >= 3, "{s:?}");
                assert!(x0 >= 0.0 && y0 >= 0.0 && x1 < f64::from(w) && y1 < f64::from(h));
                assert!(x1 > x0 && y1 > y0 && s.area() > 0.0, "{s:?}");
                assert!((1..=CATEGORY_COUNT).contains(&s.category));
            }
        }
    }

    #[test]
    fn the_image_under_the_shapes_is_the_plain_one() {
        let plain = synth::image(5, 2);
        let drawn = annotated_image(5, 2);
        let mask = drawn_targets(5, 2).mask;
        let mut painted = 0;
        for ((a, b), &m) in plain.pixels().zip(drawn.pixels()).zip(&mask) {
            if m == 0 {
                assert_eq!(a, b);
            } else {
                assert_eq!(b.0, CATEGORIES[usize::from(m) - 1].1);
                painted += 1;
            }
        }
        assert!(painted > 0);
    }

    #[test]
    fn clipping_keeps_the_inside_part_of_a_square() {
        let square = vec![[-5.0, -5.0], [5.0, -5.0], [5.0, 5.0], [-5.0, 5.0]];
        let clipped = tidy(clip_to_box(square, [3.0, 100.0]));
        let shape = SynthShape {
            category: 1,
            vertices: clipped,
        };
        assert_eq!(shape.bbox(), [0.0, 0.0, 3.0, 5.0]);
        assert_eq!(shape.area(), 15.0);
        let [top, right, bottom, left] = shape.keypoints();
        assert_eq!([top[1], right[0], bottom[1], left[0]], [0.0, 3.0, 5.0, 0.0]);
    }

    fn close(a: &[[f64; 4]], b: &[[f64; 4]]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.iter().zip(q).all(|(x, y)| (x - y).abs() < 1e-9))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(8))]
        #[test]
        fn coco_json_reads_back_as_drawn(seed in any::<u64>(), count in 1u64..4) {
            let json = coco_json(seed, count).unwrap();
            let text = String::from_utf8(json).unwrap();
            let path = std::path::Path::new("annotations.json");
            let read = Annotations::parse(&text, path, AnnotationErrors::Refuse).unwrap();
            prop_assert!(read.skipped.is_empty());
            for index in 0..count {
                let drawn = drawn_targets(seed, index);
                let back = read.targets(&synth::image_name(index)).unwrap();
                prop_assert!(close(&back.boxes, &drawn.boxes), "{:?} vs {:?}", back.boxes, drawn.boxes);
                prop_assert_eq!(&back.labels, &drawn.labels);
                prop_assert_eq!(&back.keypoints, &drawn.keypoints);
                prop_assert!(back.mask == drawn.mask, "masks differ for image {}", index);
                prop_assert_eq!((back.width, back.height), (drawn.width, drawn.height));
            }
        }
    }
}
