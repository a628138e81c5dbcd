//! The reference library every table, the HTML report, `compare` and the run summary compare
//! against, chosen by one rule: the one asked for on the command line, else the run config's
//! `output.reference_library`, else AlbumentationsX (policy), else the library measured (status
//! ok) on the most rows, ties broken by name.

use serde::Serialize;

use crate::output::usage;

/// Why a library is the reference (shown next to it in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// `--reference-library`.
    Requested,
    /// `output.reference_library` of the run's config.
    Config,
    /// Policy's default reference.
    Default,
    /// Measured on the most rows.
    MostRows,
}

impl Why {
    pub fn describe(self) -> &'static str {
        match self {
            Why::Requested => "asked for with --reference-library",
            Why::Config => "from the run config (output.reference_library)",
            Why::Default => "the default reference",
            Why::MostRows => "measured on the most rows",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    pub library: String,
    pub why: Why,
}

/// Picks the reference among `measured` (each present library with the rows it measured).
/// A requested library must be present (usage error otherwise); a configured one that is
/// absent from these results is passed over for the next rule.
pub fn choose(
    requested: Option<&str>,
    configured: Option<&str>,
    measured: &[(String, usize)],
) -> anyhow::Result<Choice> {
    let present = |l: &str| measured.iter().any(|(m, _)| m == l);
    let pick = |library: &str, why| Choice {
        library: library.to_string(),
        why,
    };
    if let Some(r) = requested {
        if present(r) {
            return Ok(pick(r, Why::Requested));
        }
        let names: Vec<&str> = measured.iter().map(|(m, _)| m.as_str()).collect();
        return Err(usage(
            format!(
                "reference library `{r}` is not in the results; present: {}",
                names.join(", ")
            ),
            "pass one of the present libraries with --reference-library",
        ));
    }
    if let Some(c) = configured.filter(|c| present(c)) {
        return Ok(pick(c, Why::Config));
    }
    let default = augbench_core::policy::DEFAULT_REFERENCE_LIBRARY;
    if present(default) {
        return Ok(pick(default, Why::Default));
    }
    let most = measured
        .iter()
        .min_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(most.map_or_else(|| pick("", Why::MostRows), |(l, _)| pick(l, Why::MostRows)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libs(list: &[(&str, usize)]) -> Vec<(String, usize)> {
        list.iter().map(|(l, n)| (l.to_string(), *n)).collect()
    }

    #[test]
    fn order_of_the_rules() {
        let m = libs(&[
            ("albumentationsx", 40),
            ("fast_image_resize", 6),
            ("pillow", 50),
        ]);
        let c = choose(Some("pillow"), Some("fast_image_resize"), &m).unwrap();
        assert_eq!((c.library.as_str(), c.why), ("pillow", Why::Requested));
        let c = choose(None, Some("fast_image_resize"), &m).unwrap();
        assert_eq!(c.why, Why::Config);
        let c = choose(None, Some("kornia"), &m).unwrap();
        assert_eq!(
            (c.library.as_str(), c.why),
            ("albumentationsx", Why::Default),
            "a configured library absent from the results is passed over"
        );
        let c = choose(None, None, &m[1..]).unwrap();
        assert_eq!((c.library.as_str(), c.why), ("pillow", Why::MostRows));
    }

    #[test]
    fn ties_go_to_the_first_name_and_absent_requests_fail() {
        let m = libs(&[("kornia-rs", 6), ("image", 6), ("pillow", 2)]);
        assert_eq!(choose(None, None, &m).unwrap().library, "image");
        assert!(choose(Some("torchvision"), None, &m).is_err());
        assert_eq!(choose(None, None, &[]).unwrap().library, "");
    }
}
