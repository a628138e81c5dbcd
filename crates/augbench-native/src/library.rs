//! The native libraries by the names the support matrix uses (`image`, `imageproc`,
//! `fast_image_resize`, `kornia-rs`, `zune-image`); each has its adapter in `adapters/`.

use augbench_core::UsageError;

/// The native libraries, by the names the support matrix uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    Image,
    Imageproc,
    FastImageResize,
    KorniaRs,
    ZuneImage,
}

impl Library {
    pub const ALL: [Library; 5] = [
        Library::Image,
        Library::Imageproc,
        Library::FastImageResize,
        Library::KorniaRs,
        Library::ZuneImage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Library::Image => "image",
            Library::Imageproc => "imageproc",
            Library::FastImageResize => "fast_image_resize",
            Library::KorniaRs => "kornia-rs",
            Library::ZuneImage => "zune-image",
        }
    }

    pub fn parse(name: &str) -> Result<Library, UsageError> {
        Library::ALL
            .into_iter()
            .find(|l| l.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Library::ALL.iter().map(|l| l.name()).collect();
                UsageError::new(
                    format!("`{name}` is not a native Rust library"),
                    format!("use one of: {}", known.join(", ")),
                )
            })
    }
}
