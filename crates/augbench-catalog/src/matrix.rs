//! The scenario × library support matrix, loaded from the embedded `specs/matrix.yaml`.
//! Closed choices (media, mode, device, backend) are enums; scenario and library names are data,
//! validated against this table so every error can list the valid names.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

const MATRIX_YAML: &str = include_str!("../../../specs/matrix.yaml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Media {
    Image,
    Video,
}

impl Media {
    /// The second unit of video rows: frames per second (clips/s × the clip's frames).
    pub const FRAMES_UNIT: &'static str = "frames/s";

    /// The throughput unit of rows: images per second, or clips per second for video.
    pub fn unit(self) -> &'static str {
        match self {
            Media::Image => "img/s",
            Media::Video => "clips/s",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Micro,
    Pipeline,
    /// Video decoders on the same files and clips (scenarios of kind `decode`): no transform.
    Decode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    Cpu,
    Cuda,
    /// CUDA where the library and machine have it, CPU otherwise.
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    NativeWorker,
    PythonWorker,
    DaliPipeline,
}

macro_rules! display_as_serde {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let v = serde_json::to_value(self).map_err(|_| std::fmt::Error)?;
                f.write_str(v.as_str().unwrap_or_default())
            }
        }
    )*};
}
/// What a scenario measures: augmentation transforms (libraries × transforms), or video decoders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScenarioKind {
    #[default]
    Transforms,
    Decode,
}

/// How a decoder reaches a clip's sampled frames (recorded with every decode row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// One seek to each sampled index, then one frame read.
    SeekPerFrame,
    /// Every frame decoded in order up to the last sampled one; the sampled ones kept.
    Sequential,
    /// The sampled indices handed to the decoder in one call.
    BatchFetch,
}

display_as_serde!(Media, Mode, Device, Backend, ScenarioKind, Access);

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInfo {
    pub name: String,
    #[serde(default)]
    pub kind: ScenarioKind,
    pub media: Media,
    pub channels: u64,
    #[serde(default)]
    pub clip_length: Option<u64>,
    /// Curated transform set (a file under `specs/sets/`); empty for a decode scenario.
    #[serde(default)]
    pub set: String,
    /// Augmentation libraries (transform scenarios).
    #[serde(default)]
    pub libraries: Vec<String>,
    /// Video decoders (decode scenarios).
    #[serde(default)]
    pub decoders: Vec<String>,
}

impl ScenarioInfo {
    pub fn is_decode(&self) -> bool {
        self.kind == ScenarioKind::Decode
    }
}

/// A video decoder of the decode scenarios: the Python environment it runs in, the distribution
/// whose version is reported, and its frame-access pattern (the worker reports the same one).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DecoderInfo {
    pub name: String,
    pub env_group: String,
    pub package: String,
    pub access: Access,
    /// What the decoder hands back for a clip (its native type and layout).
    pub output: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryInfo {
    pub name: String,
    /// The library's licence (SPDX expression where there is one), shown by `list libraries`.
    pub licence: String,
    pub backend: Backend,
    pub env_group: String,
    /// The distribution whose version is reported (PyPI or crates.io name).
    pub package: String,
    pub devices: Vec<Device>,
    pub modes: Vec<Mode>,
    /// Has a batched micro regime (`execution.micro_batch` > 1): a stacked batch, one call.
    #[serde(default)]
    pub batched: bool,
    /// Bytes per decoded sample of the native layout the worker holds its media in (memory
    /// estimate of the interleaved schedule); absent = `policy::DECODED_BYTES_PER_SAMPLE`.
    #[serde(default)]
    pub bytes_per_sample: Option<u64>,
    /// The environment group of pipeline runs when it differs from `env_group` (the loader is
    /// PyTorch's `DataLoader`, so a library without torch in its own group runs in one with it).
    #[serde(default)]
    pub pipeline_env_group: Option<String>,
    /// Scenarios the library is kept out of, each with why (said when a config names it there).
    #[serde(default)]
    pub refuses: std::collections::BTreeMap<String, String>,
    /// Moves masks, boxes and keypoints with the image through its own API (target rows,
    /// `selection.targets`); a library without it gets no target rows, and the plan says so.
    #[serde(default)]
    pub targets: bool,
}

impl LibraryInfo {
    /// The environment group the library runs in, in `mode`.
    pub fn env_group_for(&self, mode: Mode) -> &str {
        match (mode, &self.pipeline_env_group) {
            (Mode::Pipeline, Some(group)) => group,
            _ => &self.env_group,
        }
    }

    /// `auto` is accepted by every library (it falls back to CPU).
    pub fn supports_device(&self, device: Device) -> bool {
        device == Device::Auto || self.devices.contains(&device)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    pub version: u32,
    pub scenarios: Vec<ScenarioInfo>,
    pub libraries: Vec<LibraryInfo>,
    #[serde(default)]
    pub decoders: Vec<DecoderInfo>,
}

impl Matrix {
    /// The embedded matrix. Parsed once; a broken embedded file is a build defect caught by tests.
    pub fn get() -> &'static Matrix {
        static MATRIX: OnceLock<Matrix> = OnceLock::new();
        MATRIX.get_or_init(|| crate::embedded::parse("specs/matrix.yaml", MATRIX_YAML))
    }

    pub fn scenario(&self, name: &str) -> Option<&ScenarioInfo> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    pub fn library(&self, name: &str) -> Option<&LibraryInfo> {
        self.libraries.iter().find(|l| l.name == name)
    }

    pub fn decoder(&self, name: &str) -> Option<&DecoderInfo> {
        self.decoders.iter().find(|d| d.name == name)
    }

    pub fn decoder_names(&self) -> Vec<&str> {
        self.decoders.iter().map(|d| d.name.as_str()).collect()
    }

    /// The first scenario of `kind` (a config that says `mode: decode` and no scenario).
    pub fn scenario_of_kind(&self, kind: ScenarioKind) -> Option<&ScenarioInfo> {
        self.scenarios.iter().find(|s| s.kind == kind)
    }

    pub fn scenario_names(&self) -> Vec<&str> {
        self.scenarios.iter().map(|s| s.name.as_str()).collect()
    }

    pub fn library_names(&self) -> Vec<&str> {
        self.libraries.iter().map(|l| l.name.as_str()).collect()
    }

    /// The default scenario for a media and channel count.
    pub fn scenario_for(&self, media: Media, channels: u64) -> Option<&ScenarioInfo> {
        self.scenarios.iter().find(|s| {
            s.kind == ScenarioKind::Transforms
                && s.media == media
                && (media == Media::Video || s.channels == channels)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_library_exists_and_has_an_env_group() {
        let m = Matrix::get();
        for s in &m.scenarios {
            for lib in &s.libraries {
                let info = m
                    .library(lib)
                    .unwrap_or_else(|| panic!("{} lists unknown {lib}", s.name));
                assert!(!info.env_group.is_empty(), "{lib} has no environment group");
                assert!(!info.licence.is_empty(), "{lib} has no licence");
                assert!(!info.devices.is_empty() && !info.modes.is_empty(), "{lib}");
            }
        }
    }

    #[test]
    fn decode_scenarios_name_decoders_and_transform_scenarios_libraries() {
        let m = Matrix::get();
        assert!(m.scenarios.iter().any(ScenarioInfo::is_decode));
        for s in &m.scenarios {
            if s.is_decode() {
                assert!(s.set.is_empty() && s.libraries.is_empty(), "{}", s.name);
                assert!(!s.decoders.is_empty(), "{} has no decoders", s.name);
                for d in &s.decoders {
                    let info = m
                        .decoder(d)
                        .unwrap_or_else(|| panic!("{} lists unknown {d}", s.name));
                    assert!(
                        !info.env_group.is_empty() && !info.package.is_empty(),
                        "{d}"
                    );
                }
            } else {
                assert!(!s.set.is_empty() && s.decoders.is_empty(), "{}", s.name);
            }
        }
        let mut names = m.decoder_names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), m.decoders.len(), "decoder names are unique");
    }

    #[test]
    fn refusals_name_scenarios_the_library_is_not_in() {
        let m = Matrix::get();
        for l in &m.libraries {
            for (scenario, why) in &l.refuses {
                let s = m
                    .scenario(scenario)
                    .unwrap_or_else(|| panic!("{} refuses unknown {scenario}", l.name));
                assert!(
                    !s.libraries.contains(&l.name),
                    "{} is in {scenario}",
                    l.name
                );
                assert!(!why.is_empty());
            }
        }
        assert!(m.library("dali").unwrap().refuses.contains_key("video-16f"));
    }

    #[test]
    fn names_are_unique() {
        let m = Matrix::get();
        let mut libs = m.library_names();
        libs.sort();
        libs.dedup();
        assert_eq!(libs.len(), m.libraries.len());
    }

    #[test]
    fn display_matches_serde_names() {
        assert_eq!(Backend::PythonWorker.to_string(), "python_worker");
        assert_eq!(Device::Cuda.to_string(), "cuda");
        assert_eq!(Access::SeekPerFrame.to_string(), "seek-per-frame");
        assert_eq!(Mode::Decode.to_string(), "decode");
    }
}
