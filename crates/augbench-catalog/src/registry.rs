//! The transform registry, loaded from the embedded `specs/transforms.yaml` and `specs/sets/*.txt`:
//! canonical parameters, the expected output shape rule and dtype of every transform, and the
//! curated sets. Adapters read parameters from here; nobody restates them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

const TRANSFORMS_YAML: &str = include_str!("../../../specs/transforms.yaml");
const SETS: &[(&str, &str)] = &[
    ("rgb", include_str!("../../../specs/sets/rgb.txt")),
    (
        "rgb_pipeline",
        include_str!("../../../specs/sets/rgb_pipeline.txt"),
    ),
    ("9ch", include_str!("../../../specs/sets/9ch.txt")),
    ("video", include_str!("../../../specs/sets/video.txt")),
];

/// How the output shape relates to the input shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "lowercase", deny_unknown_fields)]
pub enum OutputRule {
    /// Same shape as the input.
    Same,
    /// Fixed spatial size `[height, width]`; channels (and frames) unchanged.
    Fixed { size: [u64; 2] },
    /// Depends on the input (e.g. padding, aspect-preserving resize); only rank and channels are checked.
    Depends,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DtypeRule {
    /// The library's native input dtype.
    Same,
    Float32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformSpec {
    pub name: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub output: OutputRule,
    pub dtype: DtypeRule,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegistryFile {
    #[allow(dead_code)]
    version: u32,
    transforms: Vec<TransformSpec>,
}

#[derive(Debug)]
pub struct Registry {
    pub transforms: Vec<TransformSpec>,
    pub sets: BTreeMap<String, Vec<String>>,
}

impl Registry {
    /// The embedded registry, parsed once. Its validity is a build-time fact checked by tests.
    pub fn get() -> &'static Registry {
        static REG: OnceLock<Registry> = OnceLock::new();
        REG.get_or_init(|| {
            let file: RegistryFile =
                crate::embedded::parse("specs/transforms.yaml", TRANSFORMS_YAML);
            let sets = SETS
                .iter()
                .map(|(name, text)| (name.to_string(), parse_set(text)))
                .collect();
            Registry {
                transforms: file.transforms,
                sets,
            }
        })
    }

    pub fn spec(&self, name: &str) -> Option<&TransformSpec> {
        self.transforms.iter().find(|t| t.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.transforms.iter().map(|t| t.name.as_str()).collect()
    }

    pub fn set(&self, name: &str) -> Option<&[String]> {
        self.sets.get(name).map(Vec::as_slice)
    }
}

/// One name per line; `#` starts a comment; blank lines are ignored.
pub fn parse_set(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_has_all_canonical_transforms() {
        assert_eq!(Registry::get().transforms.len(), 107);
    }

    #[test]
    fn curated_sets_have_reference_sizes() {
        let r = Registry::get();
        assert_eq!(r.set("rgb").map(<[String]>::len), Some(58));
        assert_eq!(r.set("rgb_pipeline").map(<[String]>::len), Some(58));
        assert_eq!(r.set("9ch").map(<[String]>::len), Some(42));
        assert_eq!(r.set("video").map(<[String]>::len), Some(52));
    }

    #[test]
    fn every_set_entry_exists_in_the_registry() {
        let r = Registry::get();
        for (set, names) in &r.sets {
            for n in names {
                assert!(r.spec(n).is_some(), "{set} lists unknown transform {n}");
            }
        }
    }

    #[test]
    fn names_are_unique_and_fixed_rules_have_positive_sizes() {
        let r = Registry::get();
        let mut names = r.names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), r.transforms.len());
        for t in &r.transforms {
            if let OutputRule::Fixed { size } = t.output {
                assert!(size[0] > 0 && size[1] > 0, "{}", t.name);
            }
        }
    }

    #[test]
    fn set_parser_skips_comments_and_blanks() {
        assert_eq!(parse_set("# c\nA\n\n B # x\n"), vec!["A", "B"]);
    }
}
