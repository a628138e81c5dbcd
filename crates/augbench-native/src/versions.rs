//! Versions the native worker reports in `hello`: the image crates it links (a table checked
//! against the workspace Cargo.lock by a test, so it cannot drift) and the rustc that built it
//! (captured by build.rs).

use crate::library::Library;

/// Crate versions linked into this binary, as locked in the workspace Cargo.lock.
pub const CRATE_VERSIONS: &[(&str, &str)] = &[
    ("image", "0.25.10"),
    ("imageproc", "0.27.0"),
    ("fast_image_resize", "6.1.0"),
    ("kornia-image", "0.2.0"),
    ("kornia-imgproc", "0.2.0"),
    ("zune-jpeg", "0.5.15"),
    ("zune-image", "0.5.0"),
    ("zune-imageprocs", "0.5.1"),
    ("zune-core", "0.5.1"),
];

/// The JPEG decoder every native library reads files with (the `image` crate's).
pub fn decoder() -> String {
    let version = |name: &str| {
        CRATE_VERSIONS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("?", |(_, v)| *v)
    };
    format!(
        "image {} (zune-jpeg {})",
        version("image"),
        version("zune-jpeg")
    )
}

/// zune-image's own decoder: the `zune-image` library's pipeline rows read files with it (its
/// micro media are decoded once by `image`, like every native library's, outside timing).
pub fn zune_decoder() -> String {
    format!(
        "zune-image {} (zune-jpeg {})",
        version("zune-image"),
        version("zune-jpeg")
    )
}

fn version(name: &str) -> &'static str {
    CRATE_VERSIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("?", |(_, v)| *v)
}

/// `rustc --version` of the compiler that built this crate, without the `rustc ` prefix.
pub const RUSTC_VERSION: &str = env!("AUGBENCH_RUSTC_VERSION");

/// The crates a library's measurements depend on (the decoder `image` is always listed).
pub fn for_library(lib: Library) -> Vec<(&'static str, &'static str)> {
    let names: &[&str] = match lib {
        Library::Image => &["image"],
        Library::Imageproc => &["imageproc", "image"],
        Library::FastImageResize => &["fast_image_resize", "image"],
        Library::KorniaRs => &["kornia-imgproc", "kornia-image", "image"],
        Library::ZuneImage => &[
            "zune-image",
            "zune-imageprocs",
            "zune-core",
            "zune-jpeg",
            "image",
        ],
    };
    CRATE_VERSIONS
        .iter()
        .copied()
        .filter(|(n, _)| names.contains(n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name = "x"` followed by `version = "y"` blocks of Cargo.lock.
    fn locked(lock: &str) -> Vec<(String, String)> {
        let lines: Vec<&str> = lock.lines().collect();
        lines
            .windows(2)
            .filter_map(|w| {
                let name = w[0].strip_prefix("name = \"")?.strip_suffix('"')?;
                let version = w[1].strip_prefix("version = \"")?.strip_suffix('"')?;
                Some((name.to_string(), version.to_string()))
            })
            .collect()
    }

    #[test]
    fn table_matches_the_workspace_lock() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock");
        let lock = std::fs::read_to_string(path).unwrap();
        let locked = locked(&lock);
        for (name, version) in CRATE_VERSIONS {
            let found: Vec<&str> = locked
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .collect();
            assert_eq!(found, vec![*version], "{name} in Cargo.lock");
        }
    }

    #[test]
    fn every_library_reports_its_crate_and_the_decoder() {
        for lib in Library::ALL {
            let v = for_library(lib);
            assert!(v.iter().any(|(n, _)| *n == "image"), "{}", lib.name());
            assert!(!v.is_empty());
        }
        let digit = RUSTC_VERSION.starts_with(|c: char| c.is_ascii_digit());
        assert!(digit || RUSTC_VERSION == "unknown", "{RUSTC_VERSION}");
    }
}
