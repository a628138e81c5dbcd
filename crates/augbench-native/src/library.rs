//! The native libraries by the names the support matrix uses (`image`, `imageproc`,
//! `fast_image_resize`, `kornia-rs`, `zune-image`); each has its adapter in `adapters/`.
//! The enum, `ALL` and the names come from one list, so `ALL` holds every variant.

use augbench_core::UsageError;

/// Declares the `Library` enum with `ALL` and `name` from one `Variant => "name"` list.
macro_rules! libraries {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// The native libraries, by the names the support matrix uses.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Library {
            $($variant),+
        }

        impl Library {
            /// Every variant, in declaration order.
            pub const ALL: [Library; [$($name),+].len()] = [$(Library::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $(Library::$variant => $name),+
                }
            }
        }
    };
}

libraries! {
    Image => "image",
    Imageproc => "imageproc",
    FastImageResize => "fast_image_resize",
    KorniaRs => "kornia-rs",
    ZuneImage => "zune-image",
}

impl Library {
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
