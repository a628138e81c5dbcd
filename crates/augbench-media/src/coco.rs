//! Reading COCO instances annotations (`instances.json`) into the targets of each image, and
//! matching them to the items of a data folder.
//!
//! - Boxes: COCO `[x, y, w, h]` becomes `[x_min, y_min, x_max, y_max]` in pixels, clamped into
//!   the image once it passed the bounds check (which allows 1 px of rounding).
//! - Mask: one semantic `u8` mask per image, each annotation painted with its category id
//!   clamped into 1..=255, in file order (later over earlier). Polygons are filled by the
//!   even-odd rule at pixel centres (`raster`), the polygons of one annotation united; RLE
//!   segmentations (uncompressed counts, or COCO's compressed string) are column-major as COCO
//!   defines and are painted row-major. Crowd annotations (`iscrowd: 1`) are kept like the rest.
//! - Keypoints: the `(x, y)` of every keypoint with visibility > 0.
//!
//! Every problem names the file, the annotation id and what is wrong. Under
//! [`AnnotationErrors::Refuse`] the first one is a [`UsageError`]; under [`AnnotationErrors::Skip`] the bad
//! annotation is left out and recorded in [`Annotations::skipped`]. Masks are rendered only for
//! the images asked for ([`Annotations::targets`], [`for_items`]), so a large file costs little.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use augbench_core::UsageError;
use augbench_core::config::AnnotationErrors;
use augbench_host::fsutil::files_under;
use serde::Deserialize;

use crate::raster;
use crate::targets::ItemTargets;

/// Pixels a box may reach past its image before it counts as outside (rounding in tools).
pub const BOX_TOLERANCE_PX: f64 = 1.0;

/// An annotation left out under [`AnnotationErrors::Skip`], and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub annotation_id: u64,
    /// The image it belongs to (`None` when its `image_id` names no image).
    pub file_name: Option<String>,
    pub reason: String,
}

/// A COCO instances file, validated: its images by `file_name`, and what was skipped.
#[derive(Debug, Clone)]
pub struct Annotations {
    pub path: PathBuf,
    pub strictness: AnnotationErrors,
    pub skipped: Vec<Skipped>,
    images: BTreeMap<String, ImageEntry>,
}

#[derive(Debug, Clone)]
struct ImageEntry {
    width: u32,
    height: u32,
    instances: Vec<Instance>,
}

/// One kept annotation, validated, not yet rasterized.
#[derive(Debug, Clone)]
struct Instance {
    bbox: [f64; 4],
    label: u32,
    keypoints: Vec<[f64; 2]>,
    shape: Shape,
}

#[derive(Debug, Clone)]
enum Shape {
    None,
    Polygons(Vec<Vec<f64>>),
    /// Column-major COCO counts, background first.
    Rle(Vec<u64>),
}

#[derive(Deserialize)]
struct RawFile {
    images: Vec<RawImage>,
    #[serde(default)]
    annotations: Vec<RawAnnotation>,
}

#[derive(Deserialize)]
struct RawImage {
    id: u64,
    file_name: String,
    width: u32,
    height: u32,
}

#[derive(Deserialize)]
struct RawAnnotation {
    id: u64,
    image_id: u64,
    category_id: u32,
    bbox: Vec<f64>,
    #[serde(default)]
    segmentation: Option<RawSegmentation>,
    #[serde(default)]
    keypoints: Option<Vec<f64>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSegmentation {
    Polygons(Vec<Vec<f64>>),
    Rle { size: [u64; 2], counts: RawCounts },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawCounts {
    Runs(Vec<u64>),
    Compressed(String),
}

const SKIP_HINT: &str = "fix or remove the annotation, or set `data.annotation_errors: skip` to leave bad ones out (counted)";

impl Annotations {
    /// Reads and validates the COCO instances file at `path`.
    pub fn read(path: &Path, strictness: AnnotationErrors) -> anyhow::Result<Annotations> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(UsageError::new(
                    format!("annotations file {} does not exist", path.display()),
                    "point data.annotations at a COCO instances JSON file",
                )
                .into());
            }
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("reading annotations {}", path.display())));
            }
        };
        Annotations::parse(&text, path, strictness)
    }

    /// Validates the text of a COCO instances file; `path` names it in messages.
    pub fn parse(
        text: &str,
        path: &Path,
        strictness: AnnotationErrors,
    ) -> anyhow::Result<Annotations> {
        let raw: RawFile = serde_json::from_str(text).map_err(|e| json_error(path, &e))?;
        let (mut images, by_id) = image_entries(path, raw.images)?;
        let mut out = Annotations {
            path: path.to_path_buf(),
            strictness,
            skipped: Vec::new(),
            images: BTreeMap::new(),
        };
        for ann in raw.annotations {
            let image = by_id.get(&ann.image_id).map(|name| name.as_str());
            let entry = image.and_then(|name| images.get(name));
            match check(&ann, entry) {
                Ok(instance) => {
                    if let Some(entry) = image.and_then(|name| images.get_mut(name)) {
                        entry.instances.push(instance);
                    }
                }
                Err(reason) => out.reject(ann.id, image, reason)?,
            }
        }
        out.images = images;
        Ok(out)
    }

    /// Refuses (an error) or records a bad annotation, by the strictness.
    fn reject(&mut self, id: u64, image: Option<&str>, reason: String) -> anyhow::Result<()> {
        match self.strictness {
            AnnotationErrors::Refuse => {
                let on = image.map(|n| format!(" (image {n})")).unwrap_or_default();
                let message = format!("{}: annotation {id}{on}: {reason}", self.path.display());
                Err(UsageError::new(message, SKIP_HINT).into())
            }
            AnnotationErrors::Skip => {
                self.skipped.push(Skipped {
                    annotation_id: id,
                    file_name: image.map(str::to_string),
                    reason,
                });
                Ok(())
            }
        }
    }

    /// The `file_name` of every image, sorted.
    pub fn file_names(&self) -> impl Iterator<Item = &str> {
        self.images.keys().map(String::as_str)
    }

    /// How many annotations were kept.
    pub fn annotation_count(&self) -> usize {
        self.images.values().map(|e| e.instances.len()).sum()
    }

    /// Whether the image `file_name` has at least one kept annotation.
    pub fn is_annotated(&self, file_name: &str) -> bool {
        self.images
            .get(file_name)
            .is_some_and(|e| !e.instances.is_empty())
    }

    /// The targets of image `file_name` (mask rendered now), `None` when no image has that name.
    pub fn targets(&self, file_name: &str) -> Option<ItemTargets> {
        self.images.get(file_name).map(render)
    }
}

/// A file that does not parse, or does not have COCO's shape: file, line, column.
fn json_error(path: &Path, e: &serde_json::Error) -> anyhow::Error {
    let what = match e.classify() {
        serde_json::error::Category::Data => {
            "does not have the shape of COCO instances annotations"
        }
        _ => "is not valid JSON",
    };
    UsageError::new(
        format!(
            "{} {what} (line {}, column {}): {e}",
            path.display(),
            e.line(),
            e.column()
        ),
        "point data.annotations at a COCO instances file: {\"images\": [...], \"annotations\": [...]}",
    )
    .into()
}

/// COCO `file_name`s are compared with `/` separators and no leading `./`.
fn normalize_name(name: &str) -> String {
    let name = name.replace('\\', "/");
    name.strip_prefix("./").unwrap_or(&name).to_string()
}

type ImageIndex = (BTreeMap<String, ImageEntry>, HashMap<u64, String>);

/// The images by file name and their ids; a repeated id or name, or an empty size, is an error.
fn image_entries(path: &Path, raw: Vec<RawImage>) -> anyhow::Result<ImageIndex> {
    let mut images = BTreeMap::new();
    let mut by_id = HashMap::new();
    for image in raw {
        let name = normalize_name(&image.file_name);
        let problem = if image.width == 0 || image.height == 0 {
            Some(format!(
                "has an empty size {}x{}",
                image.width, image.height
            ))
        } else if by_id.contains_key(&image.id) {
            Some("repeats an image id".to_string())
        } else if images.contains_key(&name) {
            Some("repeats a file_name".to_string())
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(UsageError::new(
                format!("{}: image {} ({name}) {problem}", path.display(), image.id),
                "every entry of `images` needs its own id, its own file_name and a size",
            )
            .into());
        }
        let entry = ImageEntry {
            width: image.width,
            height: image.height,
            instances: Vec::new(),
        };
        images.insert(name.clone(), entry);
        by_id.insert(image.id, name);
    }
    Ok((images, by_id))
}

/// Validates one annotation against its image; `Err` says what is wrong.
fn check(ann: &RawAnnotation, image: Option<&ImageEntry>) -> Result<Instance, String> {
    let image = image.ok_or_else(|| format!("image_id {} names no image", ann.image_id))?;
    let bbox = check_bbox(&ann.bbox, image)?;
    let shape = match &ann.segmentation {
        None => Shape::None,
        Some(RawSegmentation::Polygons(polys)) => check_polygons(polys)?,
        Some(RawSegmentation::Rle { size, counts }) => check_rle(*size, counts, image)?,
    };
    let keypoints = check_keypoints(ann.keypoints.as_deref().unwrap_or_default())?;
    Ok(Instance {
        bbox,
        label: ann.category_id,
        keypoints,
        shape,
    })
}

/// COCO `[x, y, w, h]` to `[x_min, y_min, x_max, y_max]`.
pub fn xywh_to_xyxy([x, y, w, h]: [f64; 4]) -> [f64; 4] {
    [x, y, x + w, y + h]
}

/// A box of positive size within its image (±[`BOX_TOLERANCE_PX`]), as xyxy clamped inside.
fn check_bbox(bbox: &[f64], image: &ImageEntry) -> Result<[f64; 4], String> {
    let &[x, y, w, h] = bbox else {
        return Err(format!(
            "bbox has {} numbers, not 4 (x, y, width, height)",
            bbox.len()
        ));
    };
    if w <= 0.0 || h <= 0.0 {
        return Err(format!("bbox {bbox:?} has a negative or zero size"));
    }
    let (iw, ih) = (f64::from(image.width), f64::from(image.height));
    let [x0, y0, x1, y1] = xywh_to_xyxy([x, y, w, h]);
    let t = BOX_TOLERANCE_PX;
    let clamped = [x0.max(0.0), y0.max(0.0), x1.min(iw), y1.min(ih)];
    if x0 < -t || y0 < -t || x1 > iw + t || y1 > ih + t || !positive(clamped) {
        return Err(format!(
            "bbox {bbox:?} lies outside its {}x{} image",
            image.width, image.height
        ));
    }
    Ok(clamped)
}

fn positive([x0, y0, x1, y1]: [f64; 4]) -> bool {
    x1 > x0 && y1 > y0
}

fn check_polygons(polys: &[Vec<f64>]) -> Result<Shape, String> {
    for (i, poly) in polys.iter().enumerate() {
        if poly.len() % 2 == 1 {
            return Err(format!(
                "polygon {i} of the segmentation has an odd number of coordinates ({})",
                poly.len()
            ));
        }
        if poly.len() < 6 {
            return Err(format!(
                "polygon {i} of the segmentation has fewer than 3 points ({} numbers)",
                poly.len()
            ));
        }
    }
    Ok(Shape::Polygons(polys.to_vec()))
}

fn check_rle(size: [u64; 2], counts: &RawCounts, image: &ImageEntry) -> Result<Shape, String> {
    let (w, h) = (u64::from(image.width), u64::from(image.height));
    if size != [h, w] {
        return Err(format!(
            "RLE size {size:?} (height, width) differs from its image's [{h}, {w}]"
        ));
    }
    let counts = match counts {
        RawCounts::Runs(runs) => runs.clone(),
        RawCounts::Compressed(text) => raster::decode_coco_string(text)?,
    };
    let sum = counts.iter().fold(0u64, |a, &c| a.saturating_add(c));
    if sum != h * w {
        return Err(format!(
            "RLE counts sum to {sum}, not height*width = {}",
            h * w
        ));
    }
    Ok(Shape::Rle(counts))
}

fn check_keypoints(flat: &[f64]) -> Result<Vec<[f64; 2]>, String> {
    if !flat.len().is_multiple_of(3) {
        return Err(format!(
            "keypoints has {} numbers, not a multiple of 3 (x, y, visibility)",
            flat.len()
        ));
    }
    let visible = flat.chunks_exact(3).filter(|k| k[2] > 0.0);
    Ok(visible.map(|k| [k[0], k[1]]).collect())
}

/// The targets of one image: boxes, labels and keypoints in order, the mask painted. Keypoints
/// outside `[0, width − 1] × [0, height − 1]` are left out: some libraries refuse a point past
/// the last pixel's centre, so every library gets only the points all of them take.
fn render(entry: &ImageEntry) -> ItemTargets {
    let mut t = ItemTargets::empty(entry.width, entry.height);
    let (w, h) = (f64::from(entry.width) - 1.0, f64::from(entry.height) - 1.0);
    let inside = |p: &&[f64; 2]| (0.0..=w).contains(&p[0]) && (0.0..=h).contains(&p[1]);
    for inst in &entry.instances {
        t.boxes.push(inst.bbox);
        t.labels.push(inst.label);
        t.keypoints.extend(inst.keypoints.iter().filter(inside));
        paint(&mut t.mask, entry, inst);
    }
    t
}

/// The mask value of a category: its id clamped into 1..=255.
pub fn mask_value(category_id: u32) -> u8 {
    category_id.clamp(1, 255) as u8
}

fn paint(mask: &mut [u8], entry: &ImageEntry, inst: &Instance) {
    let value = mask_value(inst.label);
    let (w, h) = (entry.width, entry.height);
    match &inst.shape {
        Shape::None => {}
        Shape::Polygons(polys) => {
            for poly in polys {
                fill_into(mask, poly, w, h, value);
            }
        }
        Shape::Rle(counts) => raster::paint_column_major(mask, w, h, counts, value),
    }
}

/// Fills one polygon with `value` into a row-major mask of `width`×`height`.
pub(crate) fn fill_into(mask: &mut [u8], poly: &[f64], width: u32, height: u32, value: u8) {
    let w = width as usize;
    raster::fill_polygon(poly, width, height, |row, a, b| {
        if let Some(span) = mask.get_mut(row * w + a..row * w + b) {
            span.fill(value);
        }
    });
}

/// An item of the folder matched to its COCO image, with its targets.
#[derive(Debug, Clone)]
pub struct MatchedItem {
    pub item: PathBuf,
    pub file_name: String,
    pub targets: ItemTargets,
}

/// The items of a folder split by whether they have annotations.
#[derive(Debug, Clone, Default)]
pub struct Matched {
    /// Items with at least one kept annotation, in the order given.
    pub with: Vec<MatchedItem>,
    /// Items with no COCO image, or an image without annotations (measured image-only).
    pub without: Vec<PathBuf>,
    /// COCO `file_name`s with no file in the folder (only under [`AnnotationErrors::Skip`]).
    pub missing: Vec<String>,
}

/// Matches `items` (files under `data_dir`) to the images of `annotations`. An item matches the
/// image whose `file_name` is its path relative to `data_dir` (`/`-separated), or, for a
/// `file_name` without a folder, its file name. A COCO image that neither an item nor any other
/// file under `data_dir` matches (so a truncated item list is fine) is missing: an error under
/// [`AnnotationErrors::Refuse`], listed in [`Matched::missing`] under [`AnnotationErrors::Skip`].
pub fn for_items(
    annotations: &Annotations,
    data_dir: &Path,
    items: &[PathBuf],
) -> anyhow::Result<Matched> {
    let mut matched = Matched::default();
    let mut present: HashSet<&str> = HashSet::new();
    for item in items {
        let Some(name) = image_of(annotations, data_dir, item) else {
            matched.without.push(item.clone());
            continue;
        };
        present.insert(name);
        match annotations
            .images
            .get(name)
            .filter(|e| !e.instances.is_empty())
        {
            Some(entry) => matched.with.push(MatchedItem {
                item: item.clone(),
                file_name: name.to_string(),
                targets: render(entry),
            }),
            None => matched.without.push(item.clone()),
        }
    }
    matched.missing = absent(annotations, data_dir, &present);
    if annotations.strictness == AnnotationErrors::Refuse && !matched.missing.is_empty() {
        return Err(missing_error(annotations, data_dir, &matched.missing).into());
    }
    Ok(matched)
}

/// The COCO images no file under `data_dir` matches (by the rule items match by), beyond the
/// `present` ones; the folder is walked only when some image is unmatched.
fn absent(annotations: &Annotations, data_dir: &Path, present: &HashSet<&str>) -> Vec<String> {
    let unmatched: Vec<&str> = annotations
        .file_names()
        .filter(|n| !present.contains(n))
        .collect();
    if unmatched.is_empty() {
        return Vec::new();
    }
    let files = files_under(data_dir);
    let on_disk: HashSet<&str> = files
        .iter()
        .filter_map(|f| image_of(annotations, data_dir, f))
        .collect();
    unmatched
        .into_iter()
        .filter(|n| !on_disk.contains(n))
        .map(str::to_string)
        .collect()
}

/// The COCO `file_name` an item matches, if any.
fn image_of<'a>(annotations: &'a Annotations, data_dir: &Path, item: &Path) -> Option<&'a str> {
    let relative = item.strip_prefix(data_dir).unwrap_or(item);
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let by_path = annotations.images.get_key_value(&parts.join("/"));
    let by_name = || {
        let name = item.file_name()?.to_string_lossy().into_owned();
        annotations.images.get_key_value(&name)
    };
    by_path.or_else(by_name).map(|(k, _)| k.as_str())
}

fn missing_error(annotations: &Annotations, data_dir: &Path, missing: &[String]) -> UsageError {
    let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
    let more = if missing.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    UsageError::new(
        format!(
            "{}: {} image(s) it names have no file in {}: {}{more}",
            annotations.path.display(),
            missing.len(),
            data_dir.display(),
            shown.join(", ")
        ),
        "point `data.annotations` at the annotations of this folder, or set `data.annotation_errors: skip`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: u32, h: u32) -> ImageEntry {
        ImageEntry {
            width: w,
            height: h,
            instances: Vec::new(),
        }
    }

    #[test]
    fn boxes_convert_to_corners() {
        assert_eq!(
            xywh_to_xyxy([10.0, 20.0, 5.0, 2.5]),
            [10.0, 20.0, 15.0, 22.5]
        );
        let img = image(100, 50);
        assert_eq!(
            check_bbox(&[10.0, 20.0, 5.0, 2.5], &img).unwrap(),
            [10.0, 20.0, 15.0, 22.5]
        );
    }

    #[test]
    fn boxes_within_the_tolerance_are_clamped_and_beyond_it_refused() {
        let img = image(100, 50);
        assert_eq!(
            check_bbox(&[-0.5, 0.0, 100.9, 50.0], &img).unwrap(),
            [0.0, 0.0, 100.0, 50.0]
        );
        assert!(
            check_bbox(&[-1.5, 0.0, 10.0, 10.0], &img)
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            check_bbox(&[95.0, 0.0, 6.5, 10.0], &img)
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            check_bbox(&[100.5, 0.0, 0.4, 10.0], &img)
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            check_bbox(&[1.0, 1.0, 0.0, 1.0], &img)
                .unwrap_err()
                .contains("zero size")
        );
        assert!(
            check_bbox(&[1.0, 1.0, 1.0], &img)
                .unwrap_err()
                .contains("not 4")
        );
    }

    #[test]
    fn an_rle_annotation_paints_row_major() {
        let mut entry = image(3, 2);
        let counts = RawCounts::Compressed(raster::encode_coco_string(&[1, 2, 3]));
        let shape = check_rle([2, 3], &counts, &entry).unwrap();
        entry.instances.push(Instance {
            bbox: [0.0, 0.0, 2.0, 2.0],
            label: 300,
            keypoints: vec![],
            shape,
        });
        assert_eq!(render(&entry).mask, vec![0, 255, 0, 255, 0, 0]);
        assert!(
            check_rle([3, 2], &counts, &entry)
                .unwrap_err()
                .contains("differs")
        );
        let short = RawCounts::Runs(vec![1, 2]);
        assert!(
            check_rle([2, 3], &short, &entry)
                .unwrap_err()
                .contains("sum to 3")
        );
    }

    #[test]
    fn only_visible_keypoints_are_kept() {
        let kept = check_keypoints(&[1.0, 2.0, 2.0, 0.0, 0.0, 0.0, 5.0, 6.0, 1.0]).unwrap();
        assert_eq!(kept, vec![[1.0, 2.0], [5.0, 6.0]]);
        assert!(
            check_keypoints(&[1.0, 2.0])
                .unwrap_err()
                .contains("multiple of 3")
        );
    }

    #[test]
    fn mask_values_are_clamped() {
        assert_eq!(mask_value(0), 1);
        assert_eq!(mask_value(7), 7);
        assert_eq!(mask_value(1000), 255);
    }
}
