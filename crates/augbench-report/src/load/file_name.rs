//! The result file name: the suffix every result file carries, and the library and device a
//! name says (`<lib>[_<more>][_dev-<d>]_results.json`), which the reference format needs where
//! the file itself does not say them.

use std::path::Path;

/// Suffix of every result file augbench (and the reference benchmark) writes.
pub const RESULTS_SUFFIX: &str = "_results.json";

/// Library and device from a result file name: `<lib>[_<more>][_dev-<d>]_results.json`. Known
/// library names (which may contain `_`) win; otherwise the part before the first `_`.
pub(crate) fn name_parts(path: &Path) -> (String, Option<String>) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(RESULTS_SUFFIX)
        .unwrap_or(name.trim_end_matches(".json"));
    let device = stem.rsplit_once("_dev-").map(|(_, d)| d.to_string());
    let known = augbench_core::Matrix::get()
        .library_names()
        .into_iter()
        .filter(|l| stem == *l || stem.starts_with(&format!("{l}_")))
        .max_by_key(|l| l.len());
    let library = match known {
        Some(l) => l.to_string(),
        None => stem.split('_').next().unwrap_or(stem).to_string(),
    };
    (library, device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_and_device_from_file_names() {
        let p = |s: &str| name_parts(Path::new(s));
        assert_eq!(
            p("o/fast_image_resize_micro_results.json"),
            ("fast_image_resize".into(), None)
        );
        assert_eq!(
            p("kornia_micro_dev-cuda_results.json"),
            ("kornia".into(), Some("cuda".into()))
        );
        assert_eq!(
            p("albumentations_results.json"),
            ("albumentations".into(), None)
        );
        assert_eq!(
            p("mylib_augment_n10_r3_w4_b32_results.json"),
            ("mylib".into(), None)
        );
    }
}
