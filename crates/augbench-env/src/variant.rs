//! A variant's environment (A/B runs, docs/ab.md): its group's committed lock with the variant
//! installed over it (a pin, a requirement file, or a local checkout), cached under
//! `<cache>/envs/variant-<label>-<key>`. The key hashes the lock, the Python version and the
//! variant: the pin text, the requirement file's bytes, or the checkout's file names, sizes and
//! modification times, so an edited checkout gets a fresh environment.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use augbench_core::variant::{Variant, VariantSource};
use augbench_core::{UsageError, policy};
use augbench_host::child;
use indicatif::MultiProgress;
use sha2::{Digest, Sha256};

use crate::assets::group_assets;
use crate::build::{COMPLETE, EnvInfo, build_into, env_key, ready, spinner, venv_python};
use crate::uv::{Installer, find_python, installer};

/// Where a variant's environment lives and whether it is built.
#[derive(Debug, Clone)]
pub struct VariantEnv {
    pub dir: PathBuf,
    pub built: bool,
    /// What is installed over the group's lock, as the plan shows it.
    pub installs: String,
}

/// Folders of a checkout that are build output or tool state, not its source.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "__pycache__",
    "build",
    "dist",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "node_modules",
];

/// The cache folder of `variant` over `group` (nothing is built).
pub fn variant_env(group: &str, variant: &Variant) -> anyhow::Result<VariantEnv> {
    let (_, version) = find_python()?;
    let lock = committed_lock(group)?;
    let dir = env_dir(group, variant, lock, &version)?;
    Ok(VariantEnv {
        built: dir.join(COMPLETE).exists(),
        dir,
        installs: variant.source.to_string(),
    })
}

/// Returns the variant's environment, building it first if needed. A failed build names the
/// variant and ends with the installer's last lines.
pub fn ensure_variant(
    group: &str,
    variant: &Variant,
    mp: Option<&MultiProgress>,
) -> anyhow::Result<EnvInfo> {
    let (python, version) = find_python()?;
    let inst = installer(&python);
    let lock = committed_lock(group)?;
    let dir = env_dir(group, variant, lock, &version)?;
    let info = EnvInfo {
        group: variant.label.clone(),
        python: venv_python(&dir),
        dir: dir.clone(),
        built: true,
    };
    if ready(&dir, &variant.label, mp)? {
        return Ok(info);
    }
    let bar = spinner(mp, format!("Build environment ({})", variant.label));
    let result = build_into(&dir, &python, &inst, lock, &[install_args(&variant.source)]);
    bar.finish_and_clear();
    result.with_context(|| {
        format!(
            "building the environment of variant `{}` ({}) in {}",
            variant.label,
            variant.source,
            dir.display()
        )
    })?;
    Ok(info)
}

/// Resolves every pin against the package index before anything is built: a pin that does not
/// resolve is the user's to fix (exit 2), named with its variant.
pub fn check_pins(variants: &[&Variant]) -> anyhow::Result<()> {
    let pins: Vec<(&Variant, &str)> = variants
        .iter()
        .filter_map(|v| match &v.source {
            VariantSource::Pin(p) => Some((*v, p.as_str())),
            _ => None,
        })
        .collect();
    if pins.is_empty() {
        return Ok(());
    }
    let (python, _) = find_python()?;
    let Installer::Uv(uv) = installer(&python) else {
        return Ok(()); // pip has no dry resolution here; the build reports it instead
    };
    for (v, pin) in pins {
        if let Err(why) = resolve_pin(&uv, &python, pin) {
            return Err(UsageError::new(
                format!(
                    "selection.variants: pin `{pin}` of variant `{}` does not resolve:\n{why}",
                    v.label
                ),
                "check the version exists for this Python (`uv pip compile` shows the same), or fix the `pin:` of that variant",
            )
            .into());
        }
    }
    Ok(())
}

/// `uv pip compile -` of `pin` alone: `Err` with the last lines of uv's stderr when it fails.
fn resolve_pin(uv: &Path, python: &Path, pin: &str) -> Result<(), String> {
    let mut cmd = Command::new(uv);
    cmd.args(["pip", "compile", "--quiet", "--no-header", "-", "--python"])
        .arg(python)
        .env("UV_PYTHON_DOWNLOADS", "never");
    let mut running =
        child::spawn(&mut cmd, policy::STDERR_TAIL_LINES).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = running.take_stdin() {
        let _ = writeln!(stdin, "{pin}");
    }
    let done = running.finish().map_err(|e| e.to_string())?;
    if done.status.success() {
        Ok(())
    } else {
        Err(done.stderr)
    }
}

fn committed_lock(group: &str) -> anyhow::Result<&'static str> {
    group_assets(group).map(|a| a.lock).ok_or_else(|| {
        UsageError::new(
            format!("environment group `{group}` has no Python requirements here"),
            "variants are Python libraries",
        )
        .into()
    })
}

fn env_dir(
    group: &str,
    variant: &Variant,
    lock: &str,
    py_version: &str,
) -> anyhow::Result<PathBuf> {
    let mut keyed = String::from(lock);
    keyed.push('\0');
    keyed.push_str(&source_fingerprint(&variant.source)?);
    let key = env_key(group, &keyed, py_version);
    let name = format!("variant-{}-{key}", variant.label);
    Ok(augbench_host::cache::envs_dir().join(name))
}

/// What identifies the variant's installed content.
fn source_fingerprint(source: &VariantSource) -> anyhow::Result<String> {
    Ok(match source {
        VariantSource::Pin(p) => format!("pin:{p}"),
        VariantSource::Requirements(r) => {
            let text = std::fs::read(r).with_context(|| format!("reading {}", r.display()))?;
            format!("requirements:{:x}", Sha256::digest(&text))
        }
        VariantSource::Path(p) => format!("path:{}", checkout_fingerprint(p)?),
    })
}

/// Hash of a checkout's files (relative path, size, modification time), skipping build output
/// and tool state; any edit, added or removed file changes it.
pub fn checkout_fingerprint(dir: &Path) -> anyhow::Result<String> {
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.as_bytes());
        h.update([0]);
    }
    Ok(format!("{:x}", h.finalize()))
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().to_string();
        let meta = entry.metadata()?;
        let path = entry.path();
        if meta.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) && !name.ends_with(".egg-info") {
                walk(root, &path, out)?;
            }
            continue;
        }
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        out.push(format!("{rel}\t{}\t{mtime}", meta.len()));
    }
    Ok(())
}

/// Installer arguments that put the variant over the lock. A checkout is installed without the
/// installer's cache, so an edited checkout is never served an earlier build of itself.
fn install_args(source: &VariantSource) -> Vec<OsString> {
    match source {
        VariantSource::Pin(p) => vec![p.into()],
        VariantSource::Requirements(r) => vec!["-r".into(), absolute(r).into()],
        VariantSource::Path(p) => vec!["--no-cache".into(), absolute(p).into()],
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_checkout_changes_its_fingerprint() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pyproject.toml"), "[project]\nname='x'\n").unwrap();
        std::fs::create_dir(d.path().join("__pycache__")).unwrap();
        let a = checkout_fingerprint(d.path()).unwrap();
        std::fs::write(d.path().join("__pycache__/x.pyc"), "junk").unwrap();
        assert_eq!(
            a,
            checkout_fingerprint(d.path()).unwrap(),
            "caches are skipped"
        );
        std::fs::write(d.path().join("x.py"), "A = 1\n").unwrap();
        let b = checkout_fingerprint(d.path()).unwrap();
        assert_ne!(a, b);
        std::fs::write(d.path().join("x.py"), "A = 22\n").unwrap();
        assert_ne!(b, checkout_fingerprint(d.path()).unwrap());
    }

    #[test]
    fn pins_and_checkouts_are_installed_over_the_lock() {
        let pin = install_args(&VariantSource::Pin("pillow==11.3.0".into()));
        assert_eq!(pin, vec![OsString::from("pillow==11.3.0")]);
        let path = install_args(&VariantSource::Path("x".into()));
        assert_eq!(path[0], OsString::from("--no-cache"));
        assert!(Path::new(&path[1]).is_absolute());
    }
}
