//! The example configs built into the binary (`configs/examples/*.yaml`, byte for byte), so
//! `augbench init <name>` can write one where there is no clone of the repository. One registry:
//! a test walks the folder and this list both ways.

/// One example: its name (the file's stem) and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    pub name: &'static str,
    pub text: &'static str,
}

impl Example {
    /// The file name it is written under (`quickstart.yaml`).
    pub fn file_name(&self) -> String {
        format!("{}.yaml", self.name)
    }

    /// The first sentence of its opening comment, at most `SUMMARY_CHARS` characters (cut at a
    /// word, with `…`): what it measures, in one line.
    pub fn summary(&self) -> String {
        let comment: Vec<&str> = self
            .text
            .lines()
            .map_while(|l| l.strip_prefix('#'))
            .map(str::trim)
            .collect();
        let joined = comment.join(" ");
        let sentence = joined.split_once(". ").map_or(joined.as_str(), |(s, _)| s);
        let sentence = sentence.trim_end_matches('.');
        if sentence.chars().count() <= SUMMARY_CHARS {
            return sentence.to_string();
        }
        let cut: String = sentence.chars().take(SUMMARY_CHARS).collect();
        let at_word = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
        format!("{}…", at_word.trim_end_matches([',', ';', ':']))
    }
}

/// The longest summary `augbench init` lists.
const SUMMARY_CHARS: usize = 120;

macro_rules! example {
    ($name:literal) => {
        Example {
            name: $name,
            text: include_str!(concat!("../../../configs/examples/", $name, ".yaml")),
        }
    };
}

/// Every example, in name order.
pub const EXAMPLES: &[Example] = &[
    example!("ab_versions"),
    example!("gpu_check_dali"),
    example!("gpu_check_micro"),
    example!("gpu_check_pipeline"),
    example!("gpu_check_production"),
    example!("instructions"),
    example!("kornia_batched"),
    example!("local_9ch_micro_cpu"),
    example!("local_rgb_micro_cpu"),
    example!("local_rgb_pipeline_cpu"),
    example!("local_video_decode"),
    example!("local_video_micro_cpu"),
    example!("local_video_pipeline_cpu"),
    example!("production_rgb"),
    example!("production_rgb_gpu"),
    example!("production_rgb_native"),
    example!("production_rgb_small"),
    example!("production_workers_sweep"),
    example!("quickstart"),
    example!("rgb_micro_matrix"),
    example!("targets_micro"),
    example!("targets_pipeline"),
];

/// The example called `name`.
pub fn find(name: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry and `configs/examples/` hold the same files, byte for byte.
    #[test]
    fn every_example_file_is_built_in_and_nothing_else_is() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/examples");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".yaml"))
            .collect();
        on_disk.sort();
        let built_in: Vec<String> = EXAMPLES.iter().map(Example::file_name).collect();
        assert_eq!(
            on_disk, built_in,
            "add the file to EXAMPLES (or remove it from both)"
        );
        for e in EXAMPLES {
            let file = std::fs::read_to_string(dir.join(e.file_name())).unwrap();
            assert_eq!(file, e.text, "{}", e.name);
            assert!(
                !e.summary().is_empty(),
                "{} opens with no comment line",
                e.name
            );
        }
        assert_eq!(find("quickstart").map(|e| e.name), Some("quickstart"));
        let quickstart = find("quickstart").unwrap().summary();
        assert!(
            quickstart.starts_with("Quickstart: ~100 synthetic") && quickstart.ends_with("Pillow"),
            "{quickstart}"
        );
        assert!(
            EXAMPLES
                .iter()
                .all(|e| e.summary().chars().count() <= SUMMARY_CHARS + 1)
        );
        assert_eq!(find("nope"), None);
    }
}
