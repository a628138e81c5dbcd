//! Variants of a library (A/B in one run, docs/ab.md): a library named more than once, each time
//! with its own environment (a version pin, a requirement file, or a local checkout) and a label
//! that names its column and result file. This module owns the config type, default labels, the
//! baseline rule and the checks that need no process; building the environments is the exec side.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use augbench_catalog::config_error::{ConfigError, Source, suggest};
use augbench_catalog::matrix::{Backend, Matrix, Mode};

pub use crate::config::VariantConfig;

/// What a variant installs over its library's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VariantSource {
    Pin(String),
    Requirements(PathBuf),
    Path(PathBuf),
}

impl std::fmt::Display for VariantSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VariantSource::Pin(p) => write!(f, "pin {p}"),
            VariantSource::Requirements(r) => write!(f, "requirements {}", r.display()),
            VariantSource::Path(p) => write!(f, "checkout {}", p.display()),
        }
    }
}

/// A variant of a planned job: the library its worker runs, its source, and the run's baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variant {
    pub library: String,
    pub label: String,
    pub source: VariantSource,
    /// The label of the variant the others are compared against.
    pub baseline: String,
}

/// A variant as its result file records it (metadata `variant`): the library its worker ran,
/// its label (the file's `library`), what was installed, and the run's baseline label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantRecord {
    pub library: String,
    pub label: String,
    pub installed: String,
    pub baseline: String,
}

impl VariantRecord {
    pub fn of(v: &Variant) -> Self {
        VariantRecord {
            library: v.library.clone(),
            label: v.label.clone(),
            installed: v.source.to_string(),
            baseline: v.baseline.clone(),
        }
    }
}

impl VariantConfig {
    /// The one source it names, if exactly one.
    pub fn source(&self) -> Option<VariantSource> {
        match (&self.pin, &self.requirements, &self.path) {
            (Some(p), None, None) => Some(VariantSource::Pin(p.trim().to_string())),
            (None, Some(r), None) => Some(VariantSource::Requirements(r.clone())),
            (None, None, Some(p)) => Some(VariantSource::Path(p.clone())),
            _ => None,
        }
    }

    /// The label, or the default one for its source.
    pub fn label_or_default(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        let tail = match self.source() {
            Some(VariantSource::Pin(p)) => pin_version(&p).unwrap_or_else(|| sanitize(&p)),
            Some(VariantSource::Requirements(r)) => r
                .file_stem()
                .map_or("requirements".into(), |s| sanitize(&s.to_string_lossy())),
            Some(VariantSource::Path(_)) => "local".into(),
            None => "variant".into(),
        };
        format!("{}@{tail}", self.library)
    }
}

/// `11.3.0` of `pillow==11.3.0`.
fn pin_version(pin: &str) -> Option<String> {
    let (_, v) = pin.split_once("==")?;
    let v = v.trim();
    (!v.is_empty()).then(|| sanitize(v))
}

/// Keeps the characters a label may hold (see `valid_label`), replacing others with `-`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if label_char(c) { c } else { '-' })
        .collect()
}

fn label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "@._+-".contains(c)
}

/// A label names a column and a file: ASCII letters, digits and `@._+-`, not starting with `.`.
pub fn valid_label(label: &str) -> bool {
    !label.is_empty() && !label.starts_with('.') && label.chars().all(label_char)
}

/// Parses `--variant [LABEL=]SOURCE`: LABEL is `<library>[@tag]`; SOURCE is an existing folder
/// (a checkout), an existing file (requirements) or else a pin. Without LABEL, SOURCE is a pin and
/// its distribution names the library (`pillow==11.3.0`).
pub fn parse_flag(text: &str) -> Result<VariantConfig, String> {
    let split = text.find('=').filter(|&i| {
        let next = text[i + 1..].chars().next();
        let prev = text[..i].chars().last();
        next != Some('=') && !prev.is_some_and(|c| "<>!~".contains(c))
    });
    let (label, source) = match split {
        Some(i) => (Some(&text[..i]), &text[i + 1..]),
        None => (None, text),
    };
    if source.is_empty() {
        return Err(format!("`{text}` names no source after `=`"));
    }
    let mut v = VariantConfig::default();
    let p = Path::new(source);
    if label.is_some() && p.is_dir() {
        v.path = Some(p.to_path_buf());
    } else if label.is_some() && p.is_file() {
        v.requirements = Some(p.to_path_buf());
    } else {
        v.pin = Some(source.to_string());
    }
    match label {
        Some(l) => {
            let (library, tag) = l.split_once('@').unwrap_or((l, ""));
            v.library = library.to_string();
            v.label = (!tag.is_empty()).then(|| l.to_string());
        }
        None => v.library = library_of_pin(source)?,
    }
    Ok(v)
}

/// The matrix library whose distribution a pin names (`Pillow>=12` → `pillow`).
fn library_of_pin(pin: &str) -> Result<String, String> {
    let end = pin
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(pin.len());
    let dist = pin[..end].to_ascii_lowercase().replace('_', "-");
    Matrix::get()
        .libraries
        .iter()
        .find(|l| l.package.eq_ignore_ascii_case(&dist) || l.name == dist)
        .map(|l| l.name.clone())
        .ok_or_else(|| {
            format!("`{pin}`: no library installs `{dist}`; write LIBRARY[@TAG]=SOURCE (e.g. pillow@next=pillow==12.0.0)")
        })
}

/// The variants of a resolved config as planned jobs see them (labels and baseline filled).
pub fn planned(cfg: &RunConfig) -> Vec<Variant> {
    let list = cfg.selection.variants.as_deref().unwrap_or_default();
    let baseline = baseline_label(cfg).unwrap_or_default();
    list.iter()
        .filter_map(|v| {
            Some(Variant {
                library: v.library.clone(),
                label: v.label_or_default(),
                source: v.source()?,
                baseline: baseline.clone(),
            })
        })
        .collect()
}

/// The baseline: `selection.baseline` when set, else the first variant listed.
pub fn baseline_label(cfg: &RunConfig) -> Option<String> {
    let list = cfg.selection.variants.as_deref().unwrap_or_default();
    cfg.selection
        .baseline
        .clone()
        .or_else(|| list.first().map(VariantConfig::label_or_default))
}

/// Fills each variant's label and the baseline, so the resolved config is explicit.
pub fn fill(cfg: &mut RunConfig) {
    let baseline = baseline_label(cfg);
    let Some(list) = cfg.selection.variants.as_mut() else {
        return;
    };
    for v in list.iter_mut() {
        v.label = Some(v.label_or_default());
    }
    if !list.is_empty() {
        cfg.selection.baseline = baseline;
    }
}

type Check = Result<(), ConfigError>;

/// The checks that need no process: known Python library, one source, a checkout that is a
/// Python project, a requirement file that exists, unique valid labels, a baseline that is one
/// of them, and a run that can measure variants (local, not a decode scenario, no spec file).
pub fn check(cfg: &RunConfig, src: &Source) -> Check {
    let Some(list) = cfg.selection.variants.as_deref() else {
        return no_baseline_without_variants(cfg, src);
    };
    run_can_measure_variants(cfg, src)?;
    let mut labels: Vec<String> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        check_one(v, i, src)?;
        let label = v.label_or_default();
        let plain = cfg.selection.libraries.iter().flatten();
        if labels.contains(&label) || plain.clone().any(|l| *l == label) {
            return Err(src.error(
                &["selection", "variants", "label"],
                format!("two columns would be labelled `{label}`"),
                "give each variant its own `label:` (e.g. `pillow@11.3.0`, `pillow@local`)",
            ));
        }
        labels.push(label);
    }
    if let Some(b) = &cfg.selection.baseline
        && !labels.contains(b)
    {
        let names: Vec<&str> = labels.iter().map(String::as_str).collect();
        return Err(src.error(
            &["selection", "baseline"],
            format!("baseline `{b}` is not the label of a variant"),
            suggest(b, &names),
        ));
    }
    Ok(())
}

fn no_baseline_without_variants(cfg: &RunConfig, src: &Source) -> Check {
    if cfg.selection.baseline.is_some() {
        return Err(src.error(
            &["selection", "baseline"],
            "`baseline` names a variant, and this run has no `variants`".into(),
            "add `variants:` under `selection`, or remove `baseline`",
        ));
    }
    Ok(())
}

fn run_can_measure_variants(cfg: &RunConfig, src: &Source) -> Check {
    let key = ["selection", "variants"];
    if cfg.execution.check_equivalence == Some(true) {
        let msg = "the in-run equivalence check compares libraries, not variants of one";
        return Err(src.error(
            &["execution", "check_equivalence"],
            msg.into(),
            "run `augbench check equivalence` separately, or remove `check_equivalence` for an A/B run",
        ));
    }
    if cfg.is_cloud() {
        let msg = "variants run on this machine only (a checkout path or pin is built here)";
        return Err(src.error(
            &key,
            msg.into(),
            "remove the `cloud:` section for an A/B run",
        ));
    }
    if cfg.selection.mode == Some(Mode::Decode) {
        let msg = "a decode scenario measures decoders: library variants do not apply";
        return Err(src.error(&key, msg.into(), "pick a transform scenario for an A/B run"));
    }
    if cfg.selection.spec.is_some() {
        let msg = "a spec file runs its one library alone: variants do not apply";
        return Err(src.error(&key, msg.into(), "remove `spec` (or `variants`)"));
    }
    Ok(())
}

fn check_one(v: &VariantConfig, i: usize, src: &Source) -> Check {
    let m = Matrix::get();
    let Some(lib) = m.library(&v.library) else {
        return Err(src.error(
            &["selection", "variants", "library"],
            format!("variant {}: unknown library `{}`", i + 1, v.library),
            suggest(&v.library, &m.library_names()),
        ));
    };
    if lib.backend == Backend::DaliPipeline {
        return Err(src.error(
            &["selection", "variants", "library"],
            format!(
                "variant {}: `{}` is a pipeline backend measured in its locked environment only: it has no variants",
                i + 1,
                v.library
            ),
            "to compare two DALI versions, pin each in envs/dali.in in turn (`augbench env lock dali`) and compare the runs with `augbench compare --baseline … --current …`",
        ));
    }
    if lib.backend != Backend::PythonWorker {
        return Err(src.error(
            &["selection", "variants", "library"],
            format!(
                "variant {}: `{}` is a Rust crate compiled into augbench: it has no variants",
                i + 1,
                v.library
            ),
            "variants are Python libraries (each gets its own environment); to compare two versions of a crate, build augbench twice and compare the runs with `augbench compare --baseline … --current …`",
        ));
    }
    if let Some(label) = &v.label
        && !valid_label(label)
    {
        return Err(src.error(
            &["selection", "variants", "label"],
            format!("variant {}: label `{label}` cannot name a file", i + 1),
            "use ASCII letters, digits and `@._+-` (e.g. `pillow@11.3.0`)",
        ));
    }
    check_source(v, i, src)
}

fn check_source(v: &VariantConfig, i: usize, src: &Source) -> Check {
    let n = i + 1;
    match v.source() {
        None => Err(src.error(
            &["selection", "variants"],
            format!(
                "variant {n} (`{}`) needs exactly one of `pin`, `requirements`, `path`",
                v.library
            ),
            "e.g. `pin: pillow==11.3.0`, `requirements: envs/pillow-next.txt` or `path: ../Pillow`",
        )),
        Some(VariantSource::Pin(p)) if p.is_empty() || p.contains(char::is_whitespace) => {
            Err(src.error(
                &["selection", "variants", "pin"],
                format!("variant {n}: pin `{p}` is not one requirement"),
                "write one requirement such as `pillow==11.3.0`",
            ))
        }
        Some(VariantSource::Requirements(r)) if !r.is_file() => Err(src.error(
            &["selection", "variants", "requirements"],
            format!("variant {n}: requirement file {} does not exist", r.display()),
            "paths are relative to the folder augbench runs in",
        )),
        Some(VariantSource::Path(p)) if !is_python_project(&p) => Err(src.error(
            &["selection", "variants", "path"],
            format!("variant {n}: {} is not a Python package", p.display()),
            "a checkout folder has a pyproject.toml, setup.py or setup.cfg (paths are relative to the folder augbench runs in)",
        )),
        Some(_) => Ok(()),
    }
}

/// A folder pip can install: it has `pyproject.toml`, `setup.py` or `setup.cfg`.
pub fn is_python_project(dir: &Path) -> bool {
    ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .any(|f| dir.join(f).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(lib: &str, p: &str) -> VariantConfig {
        VariantConfig {
            library: lib.into(),
            pin: Some(p.into()),
            ..VariantConfig::default()
        }
    }

    #[test]
    fn default_labels_carry_the_version_stem_or_local() {
        assert_eq!(
            pin("pillow", "pillow==11.3.0").label_or_default(),
            "pillow@11.3.0"
        );
        assert_eq!(
            pin("pillow", "pillow>=12").label_or_default(),
            "pillow@pillow--12"
        );
        let r = VariantConfig {
            library: "pillow".into(),
            requirements: Some("envs/next.txt".into()),
            ..VariantConfig::default()
        };
        assert_eq!(r.label_or_default(), "pillow@next");
        let p = VariantConfig {
            library: "albumentationsx".into(),
            path: Some("../albumentations".into()),
            ..VariantConfig::default()
        };
        assert_eq!(p.label_or_default(), "albumentationsx@local");
    }

    #[test]
    fn labels_that_cannot_name_a_file_are_invalid() {
        assert!(valid_label("pillow@11.3.0"));
        assert!(valid_label("albumentationsx@local+fix"));
        for bad in ["", ".hidden", "a/b", "a b", "a:b"] {
            assert!(!valid_label(bad), "{bad}");
        }
    }

    #[test]
    fn flags_read_label_then_source() {
        let v = parse_flag("pillow==11.3.0").unwrap();
        assert_eq!((v.library.as_str(), v.label.as_deref()), ("pillow", None));
        assert_eq!(v.pin.as_deref(), Some("pillow==11.3.0"));
        let v = parse_flag("pillow@old=pillow<12").unwrap();
        assert_eq!(v.label.as_deref(), Some("pillow@old"));
        assert_eq!(v.pin.as_deref(), Some("pillow<12"));
        let d = tempfile::tempdir().unwrap();
        let v = parse_flag(&format!("albumentationsx@local={}", d.path().display())).unwrap();
        assert_eq!(v.path.as_deref(), Some(d.path()));
        assert_eq!(v.library, "albumentationsx");
        assert!(parse_flag("nosuchlib==1").is_err());
        assert!(parse_flag("pillow@x=").is_err());
    }

    #[test]
    fn two_sources_or_none_have_no_source() {
        let mut v = pin("pillow", "pillow==1");
        v.path = Some("x".into());
        assert_eq!(v.source(), None);
        v.pin = None;
        v.path = None;
        assert_eq!(v.source(), None);
    }
}
